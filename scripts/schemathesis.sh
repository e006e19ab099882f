#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# schemathesis.sh -- property-based tests of the running daemon against the
# openapi.yaml it serves (Schemathesis, pinned in tests/openapi/requirements.txt).
# Starts the built daemon on the memory backend with examples/models, then
# runs every phase (examples, coverage, fuzzing, stateful through the
# document's links) with the checks not_a_server_error,
# status_code_conformance, content_type_conformance,
# response_schema_conformance and response_headers_conformance. Bounded:
# SCHEMATHESIS_MAX_EXAMPLES (default 10) cases per operation and
# SCHEMATHESIS_MAX_TIME seconds (default 120) in all. The /v1/_faults and
# /v1/_test routes exist only with --enable-fault-injection and are not
# tested. Fails on any server error or answer that contradicts the document.
# SCHEMATHESIS_ARGS adds options (e.g. "--phases stateful"). One worker: with
# two, Hypothesis' lambda-source parsing raced under Python 3.11 (a tool
# error, "AST constructor recursion depth mismatch", not a daemon failure).
# Usage: scripts/schemathesis.sh [path/to/tabletheoryd] (default _build/tabletheoryd)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
daemon=${1:-$top/_build/tabletheoryd}
[ -x "$daemon" ] || { echo "no daemon at $daemon: run scripts/build.sh first" >&2; exit 2; }
# shellcheck source=scripts/openapi-tools.sh
. scripts/openapi-tools.sh
openapi_tools_python

work=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# Port 0: the kernel picks a free one; the ready log line names it.
: >"$work/daemon.log"
env -u TABLETHEORYD_BACKEND "$daemon" --listen 127.0.0.1:0 --backend memory \
  --models examples/models --log-level info 2>"$work/daemon.log" &
pid=$!
addr=
for _ in $(seq 1 1500); do
  addr=$(sed -n 's/.*"event":"daemon.ready","listen":"\([^"]*\)".*/\1/p' "$work/daemon.log" \
         2>/dev/null | head -n 1 || true)
  [ -n "$addr" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/daemon.log"; exit 1; }
  sleep 0.02
done
[ -n "$addr" ] || { echo "daemon not ready"; cat "$work/daemon.log"; exit 1; }
base=http://$addr
echo "daemon at $base"

cd "$work"
rc=0
"$OPENAPI_VENV/bin/schemathesis" --config-file "$top/tests/openapi/schemathesis.toml" run \
  "$base/openapi.yaml" --url "$base" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance \
  --exclude-path-regex '^/v1/_' \
  --max-examples "${SCHEMATHESIS_MAX_EXAMPLES:-10}" --max-time "${SCHEMATHESIS_MAX_TIME:-120}" \
  --seed "${SCHEMATHESIS_SEED:-20261201}" --workers 1 --request-timeout 30 \
  --no-color ${SCHEMATHESIS_ARGS:-} || rc=$?
if ! kill -0 "$pid" 2>/dev/null; then
  echo "the daemon died during the run:"
  tail -n 50 "$work/daemon.log"
  rc=1
fi
if grep -q '"level":"error"' "$work/daemon.log"; then
  echo "the daemon logged errors:"
  grep '"level":"error"' "$work/daemon.log" | tail -n 20
  rc=1
fi
exit "$rc"
