#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# integration.sh [BUILD_DIR] -- the integration tier: the integration suite
# (tests/integration, the built daemon over HTTP) then the conformance
# scenarios (tests/conformance/run.py), on the memory backend and on the
# dynamodb backend against dynalite, against moto and against ddb-listener (a
# second tabletheoryd, the same binary, serving its memory backend with
# --dynamodb-listen), each peer started on a free loopback port and stopped
# after. The four backends run at once; every
# line they print is prefixed with the backend ("[moto] ..."), and each
# backend's whole output is kept in $TT_INTEGRATION_LOGS/<backend>.log.
#
# BUILD_DIR defaults to _build (its tabletheoryd; TT_DAEMON overrides it).
# Env: TT_BACKENDS         backends to run (default
#                          "memory dynalite moto ddb-listener")
#      TT_SERIAL=1         one backend after another instead of at once
#      TT_PYTEST_ARGS      more pytest arguments (e.g. "-k ledger -x")
#      TT_INTEGRATION_LOGS where the logs go (default a new temporary directory)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-_build}
case $build in /*) ;; *) build=$top/$build ;; esac
TT_DAEMON=${TT_DAEMON:-$build/tabletheoryd}
[ -x "$TT_DAEMON" ] || { echo "integration.sh: no daemon at $TT_DAEMON (bash scripts/build.sh)" >&2; exit 1; }
export TT_DAEMON
export TT_SRCDIR=${TT_SRCDIR:-$top}
export TT_TEST_DATA=${TT_TEST_DATA:-$top/tests/data}
export PYTHONUNBUFFERED=1
: "${PYTHON3:=python3}"
logs=${TT_INTEGRATION_LOGS:-$(mktemp -d "${TMPDIR:-/tmp}/tt-integration.XXXXXX")}
mkdir -p "$logs"
backends=${TT_BACKENDS:-memory dynalite moto ddb-listener}

# One backend: its peer, the suite, the scenarios. Prints a last line
# "<backend>: ..." with the counts and the time taken.
run_backend() {
  local b=$1 t0=$SECONDS status=0 endpoint="" pid="" peer_log="" out summary
  if [ "$b" != memory ]; then
    if ! out=$(bash "$top/tests/peers/start_peer.sh" "$b" 2>&1); then
      echo "$out"
      echo "$b: FAILED: the peer did not start"
      return 1
    fi
    endpoint=$(echo "$out" | sed -n 's/^ENDPOINT=//p')
    pid=$(echo "$out" | sed -n 's/^PID=//p')
    peer_log=$(echo "$out" | sed -n 's/^LOG=//p')
    trap 'bash "$top/tests/peers/stop_peer.sh" '"$pid"' >/dev/null 2>&1' EXIT
    echo "peer $b at $endpoint (started in $((SECONDS - t0)) s)"
  fi
  local peer=$b
  [ "$b" = memory ] && peer=""
  echo "integration suite"
  # shellcheck disable=SC2086
  TT_PEER=$peer TT_PEER_ENDPOINT=$endpoint "$PYTHON3" -m pytest -q -p no:cacheprovider \
    ${TT_PYTEST_ARGS:-} "$top/tests/integration" || status=1
  echo "conformance scenarios"
  TT_PEER=$peer TT_PEER_ENDPOINT=$endpoint "$PYTHON3" "$top/tests/conformance/run.py" \
    --daemon "$TT_DAEMON" || status=1
  # ddb-listener is the daemon under test too (the same build): stopped
  # here, its log must hold no sanitizer report and its clean stop.
  if [ "$b" = ddb-listener ]; then
    bash "$top/tests/peers/stop_peer.sh" "$pid" >/dev/null 2>&1
    if grep -qE 'Sanitizer|runtime error' "$peer_log" ||
       ! grep -q '"event":"daemon.stopped"' "$peer_log"; then
      echo "the ddb-listener peer did not stop cleanly; its log ($peer_log):"
      tail -n 40 "$peer_log"
      status=1
    fi
  fi
  # The suite's and the scenarios' last count lines ("N passed, ... in Ts").
  summary=$(grep -hE '^(=+ )?[0-9]+ (passed|failed)' "$logs/$b.log" 2>/dev/null | tail -n 2 |
            tr -d '=' | sed 's/^ *//; s/ *$//' | paste -sd ';' | sed 's/;/; scenarios: /')
  local verdict=passed
  [ $status -eq 0 ] || verdict=FAILED
  echo "$b: $verdict (suite: $summary) in $((SECONDS - t0)) s"
  return $status
}

pids=()
status=0
# Ctrl-C or a kill: end the backends' runs (their peers stop on exit).
trap 'kill "${pids[@]}" 2>/dev/null; exit 130' INT TERM
for b in $backends; do
  (
    run_backend "$b" 2>&1 | tee "$logs/$b.log" | sed -u "s/^/[$b] /"
    exit "${PIPESTATUS[0]}"
  ) &
  if [ -n "${TT_SERIAL:-}" ]; then
    wait $! || status=1
  else
    pids+=($!)
  fi
done
for p in "${pids[@]}"; do
  wait "$p" || status=1
done
echo "== integration tier: $( [ $status -eq 0 ] && echo passed || echo FAILED ) (logs in $logs)"
for b in $backends; do
  tail -n 1 "$logs/$b.log" | sed 's/^/   /'
done
exit $status
