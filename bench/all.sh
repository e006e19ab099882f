#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# all.sh -- runs every benchmark of bench/README.md one after the other
# (about 20 minutes) and keeps each one's output and JSON in OUTDIR.
# Usage: bench/all.sh [DAEMON] [OUTDIR]   (default ./tabletheoryd, a new /tmp dir)
# Copy the daemon binary first if a build may replace it during the run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
daemon=${1:-./tabletheoryd}
out=${2:-$(mktemp -d /tmp/tt-bench-all.XXXXXX)}
mkdir -p "$out"
rc=0
run() {
  local name=$1; shift
  echo "== $name: $* (load average $(cut -d' ' -f1-3 /proc/loadavg))" | tee "$out/$name.txt"
  "$@" --json "$out/$name.json" 2>&1 | tee -a "$out/$name.txt" || rc=1
  echo "   load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/$name.txt"
}
run items "$here/run.py" "$daemon" -s healthz -s get-item -s post-item -d 10 --rounds 3
run targets "$here/run.py" "$daemon" -s query -s scan -s post-growth -s footprint -s peer-get \
  -d 5 --rounds 3
run load "$here/load.py" "$daemon"
run peer "$here/peer.py" "$daemon"
run batch "$here/batch.py" "$daemon"
echo "outputs in $out"
exit $rc
