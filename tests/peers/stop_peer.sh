#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# stop_peer.sh -- stops a peer that start_peer.sh started: TERM to its process
# group, KILL after 5 s. Refuses a PID that is not a dynalite or moto server
# or a tabletheoryd serving --dynamodb-listen (ddb-listener).
# Usage: stop_peer.sh PID
set -euo pipefail
pid=${1:-}
case "$pid" in ''|*[!0-9]*) echo "usage: stop_peer.sh PID" >&2; exit 2 ;; esac
[ -r "/proc/$pid/cmdline" ] || exit 0 # already gone
cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline")
case "$cmd" in
  *dynalite*|*moto_server.py*|*tabletheoryd*--dynamodb-listen*) ;;
  *) echo "stop_peer.sh: $pid is not a test peer" >&2; exit 1 ;;
esac
kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
for _ in $(seq 250); do
  kill -0 "$pid" 2>/dev/null || exit 0
  sleep 0.02
done
kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
