#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# verify_systemd.sh -- runs `systemd-analyze verify` on systemd/tabletheoryd.service
# and systemd/tabletheoryd.socket and fails on any warning it prints.
#
# verify refuses a unit whose ExecStart binary does not exist, and the real one
# (/usr/local/bin/tabletheoryd) exists only after `make install`. So the units
# are copied to a temporary directory and only the ExecStart path is changed,
# to $1 when given (e.g. the freshly built ./tabletheoryd), else to the built
# binary next to the current directory, else to /bin/true. Everything else is
# verified exactly as shipped.
#
# Usage: tests/integration/verify_systemd.sh [EXECUTABLE]
# Exit: 0 clean, 1 warnings or a failed check, 77 (automake "skip") when
# systemd-analyze is not installed.
set -u

top=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
units="$top/systemd"

if ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "verify_systemd: systemd-analyze not found (apt-get install systemd); skipped"
  exit 77
fi

exe=${1:-}
if [ -z "$exe" ]; then
  if [ -x ./tabletheoryd ]; then exe=$(pwd)/tabletheoryd; else exe=/bin/true; fi
fi
case $exe in
  /*) ;;
  *) exe=$(pwd)/$exe ;;
esac
if [ ! -x "$exe" ]; then
  echo "verify_systemd: $exe is not an executable"
  exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tt-verify-systemd.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

fail=0
for u in tabletheoryd.service tabletheoryd.socket; do
  if [ ! -f "$units/$u" ]; then
    echo "verify_systemd: missing $units/$u"
    exit 1
  fi
  cp "$units/$u" "$tmp/$u"
done

# Check the shipped ExecStart before rewriting it: it is what `make install`
# with the default prefix produces.
if ! grep -q '^ExecStart=/usr/local/bin/tabletheoryd ' "$units/tabletheoryd.service"; then
  echo "verify_systemd: ExecStart does not start /usr/local/bin/tabletheoryd"
  fail=1
fi
sed "s#^ExecStart=/usr/local/bin/tabletheoryd #ExecStart=$exe #" \
  "$units/tabletheoryd.service" >"$tmp/tabletheoryd.service"

# A few properties the daemon relies on; verify does not know about them.
want() {
  if ! grep -qx "$1" "$tmp/$2"; then
    echo "verify_systemd: $2 lacks the line: $1"
    fail=1
  fi
}
want 'Type=notify' tabletheoryd.service
want 'NotifyAccess=main' tabletheoryd.service
want 'EnvironmentFile=-/etc/tabletheoryd/env' tabletheoryd.service
want 'ListenStream=127.0.0.1:8737' tabletheoryd.socket
# The stop timeout must leave room for the default drain (10 s).
stop=$(sed -n 's/^TimeoutStopSec=\([0-9]*\)s\{0,1\}$/\1/p' "$tmp/tabletheoryd.service")
if [ -z "$stop" ] || [ "$stop" -le 10 ]; then
  echo "verify_systemd: TimeoutStopSec must be a number of seconds above 10 (the drain timeout)"
  fail=1
fi

out=$(cd "$tmp" && SYSTEMD_LOG_COLOR=0 systemd-analyze verify --man=no \
  ./tabletheoryd.service ./tabletheoryd.socket 2>&1)
rc=$?
if [ $rc -ne 0 ] || [ -n "$out" ]; then
  echo "verify_systemd: systemd-analyze verify (exit $rc) said:"
  printf '%s\n' "$out"
  fail=1
fi

if [ $fail -eq 0 ]; then
  echo "verify_systemd: systemd/tabletheoryd.service and .socket verified (ExecStart -> $exe)"
fi
exit $fail
