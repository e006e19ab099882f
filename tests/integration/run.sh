#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs the integration suite against the daemon that `make` built, on every
# backend: memory, then the dynamodb backend against dynalite and against
# moto's server (each started on a free loopback port and stopped after).
# TT_BACKENDS narrows the list, e.g. TT_BACKENDS=memory.
set -u
here=$(cd "$(dirname "$0")" && pwd)
peers="$here/../peers"
: "${PYTHON3:=python3}"
status=0
for backend in ${TT_BACKENDS:-memory dynalite moto}; do
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
