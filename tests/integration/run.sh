#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs the integration suite against the daemon that `make` built, on every
# backend: memory, then the dynamodb backend against dynalite, against
# moto's server and against ddb-listener (this tabletheoryd's DynamoDB
# listener; each started on a free loopback port and stopped after).
# TT_BACKENDS narrows the list, e.g. TT_BACKENDS=memory.
set -u
# The daemon under test, and the one ddb-listener runs.
TT_DAEMON=${TT_DAEMON:-$PWD/tabletheoryd}
export TT_DAEMON
here=$(cd "$(dirname "$0")" && pwd)
peers="$here/../peers"
: "${PYTHON3:=python3}"
status=0
for backend in ${TT_BACKENDS:-memory dynalite moto ddb-listener}; do
  echo "== integration suite on $backend"
  if [ "$backend" = memory ]; then
    TT_PEER= TT_PEER_ENDPOINT= "$PYTHON3" -m pytest -q -p no:cacheprovider "$here" || status=1
    continue
  fi
  out=$(bash "$peers/start_peer.sh" "$backend" 2>&1) || {
    echo "$out"
    echo "could not start $backend"
    status=1
    continue
  }
  endpoint=$(echo "$out" | sed -n 's/^ENDPOINT=//p')
  pid=$(echo "$out" | sed -n 's/^PID=//p')
  TT_PEER=$backend TT_PEER_ENDPOINT=$endpoint "$PYTHON3" -m pytest -q -p no:cacheprovider "$here" ||
    status=1
  bash "$peers/stop_peer.sh" "$pid" >/dev/null 2>&1
done
exit $status
