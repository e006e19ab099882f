#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs the TableTheory contract scenarios against the daemon `make` built, on
# the memory backend and on the dynamodb backend against dynalite, moto and
# ddb-listener (TT_BACKENDS narrows the list). Scenarios come from
# tests/data/tabletheory.
set -u
# The daemon under test, and the one ddb-listener runs.
TT_DAEMON=${TT_DAEMON:-$PWD/tabletheoryd}
export TT_DAEMON
here=$(cd "$(dirname "$0")" && pwd)
peers="$here/../peers"
: "${PYTHON3:=python3}"
status=0
for backend in ${TT_BACKENDS:-memory dynalite moto ddb-listener}; do
  echo "== conformance on $backend"
  if [ "$backend" = memory ]; then
    TT_PEER_ENDPOINT= "$PYTHON3" "$here/run.py" --daemon "${TT_DAEMON:-./tabletheoryd}" || status=1
    continue
  fi
  out=$(bash "$peers/start_peer.sh" "$backend" 2>&1) || { echo "$out"; status=1; continue; }
  endpoint=$(echo "$out" | sed -n 's/^ENDPOINT=//p')
  pid=$(echo "$out" | sed -n 's/^PID=//p')
  TT_PEER=$backend TT_PEER_ENDPOINT=$endpoint "$PYTHON3" "$here/run.py" --daemon "${TT_DAEMON:-./tabletheoryd}" ||
    status=1
  bash "$peers/stop_peer.sh" "$pid" >/dev/null 2>&1
done
exit $status
