#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# flake-hunt.sh [K] -- runs the integration suite and the conformance runner K
# times (default 5) on every backend (memory, dynalite, moto, ddb-listener) against the
# plain build, then once more on every backend against the ASan+UBSan build,
# and reports every test that failed at least once, with its failure. A test
# that fails by chance is a bug (in the test, the daemon or the peer): this
# finds them. Exit 1 when anything failed.
#
# Env: TT_BACKENDS narrows the backends; FLAKE_OUT keeps the logs (default
# a temporary directory, printed at the end).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
runs=${1:-5}
out=${FLAKE_OUT:-$(mktemp -d -t tt-flake-XXXXXX)}
mkdir -p "$out"
bash scripts/build.sh >/dev/null || exit 1
bash scripts/build.sh asan >/dev/null || exit 1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
# The data dir's crash test (test_durability.py, memory backend) kills and
# restarts the daemon 20 times a pass, each pass with its own seed (in the log).
export TT_DURABILITY_ROUNDS=${TT_DURABILITY_ROUNDS:-20}

# one BUILD TAG BACKEND: one pass of both suites; failures go to $out/TAG.failures
one() {
  local build=$1 tag=$2 backend=$3
  local log=$out/$tag.log
  local seed=${TT_DURABILITY_SEED:-$RANDOM$RANDOM}
  echo "TT_DURABILITY_SEED=$seed" >"$log"
  (cd "$build" || exit 1
    export TT_DURABILITY_SEED=$seed
    TT_BACKENDS=$backend PYTHON3=python3 PYTEST_ADDOPTS="-rfE" sh "$top/tests/integration/run.sh"
    TT_BACKENDS=$backend sh "$top/tests/conformance/run-daemon.sh") >>"$log" 2>&1
  # pytest's short summary ("FAILED file::test - reason", "ERROR ...") and the
  # runner's "FAIL scenario: reason" lines; "could not start" when a peer did not.
  grep -E '^(FAILED|ERROR) |^FAIL |could not start' "$log" |
    sed "s|^|$backend: |" >"$out/$tag.failures"
  printf '%-28s %s\n' "$tag" "$(grep -hE '^[0-9]+ passed|passed|failed' "$log" | grep -E '(passed|failed)' | tail -n 3 | tr '\n' ' ')"
}

for backend in ${TT_BACKENDS:-memory dynalite moto ddb-listener}; do
  for i in $(seq "$runs"); do
    one _build "plain-$backend-$i" "$backend"
  done
  one _build_asan "asan-$backend" "$backend"
done

echo
echo "== tests that failed at least once (logs in $out)"
cat "$out"/*.failures | sed -E 's/ - .{200}.*/ .../' | sort | uniq -c | sort -rn
if cat "$out"/*.failures | grep -q .; then
  exit 1
fi
echo "none"
