#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# start_peer.sh -- starts a DynamoDB-compatible test peer (dynalite, moto, or
# ddb-listener: tabletheoryd's own DynamoDB listener on its memory backend)
# on 127.0.0.1 at a free port, installing it first when missing (npm ci from
# package-lock.json / pip install -r requirements.txt into a venv), waits
# until it answers, and prints ENDPOINT=http://127.0.0.1:PORT, PID=... and
# LOG=... . Stop it with stop_peer.sh PID. Exit 1 (reason on stderr) when the
# peer cannot be installed or started.
#
# Usage: start_peer.sh dynalite|moto|ddb-listener
# Env:   TT_DAEMON        the tabletheoryd that ddb-listener runs
#                         (default _build/tabletheoryd)
#        TT_PEER_WORKDIR  where to install when this directory is read-only
#                         (default: $TMPDIR/tabletheoryd-peers)
#        TT_PEER_TIMEOUT  seconds to wait for the peer to answer (default 60)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
kind=${1:-}
wait_s=${TT_PEER_TIMEOUT:-60}
tmp=${TMPDIR:-/tmp}

die() { echo "start_peer.sh: $*" >&2; exit 1; }

command -v python3 >/dev/null || die "python3 is required"

# Installs next to this script, or in a scratch copy when it is read-only
# (make distcheck).
workdir=$here
if [ ! -w "$here" ]; then
  workdir=${TT_PEER_WORKDIR:-$tmp/tabletheoryd-peers}
  mkdir -p "$workdir"
  cp "$here/package.json" "$here/package-lock.json" "$here/requirements.txt" \
    "$here/requirements.lock" "$workdir/"
fi

install_dynalite() {
  command -v node >/dev/null || die "node is required for dynalite (apt-get install nodejs npm)"
  command -v npm >/dev/null || die "npm is required for dynalite (apt-get install npm)"
  local stamp=$workdir/node_modules/.package-lock.json
  if [ ! -f "$workdir/node_modules/dynalite/cli.js" ] || [ "$workdir/package-lock.json" -nt "$stamp" ]; then
    (cd "$workdir" && npm ci --no-audit --no-fund --loglevel=error >&2) ||
      die "npm ci failed in $workdir"
  fi
}

moto_version=$(sed -n 's/^moto\[server\]==\([0-9.]*\).*/\1/p' "$here/requirements.txt")
py=python3
install_moto() {
  # The python3 on PATH will do when it already has the pinned moto.
  if python3 - "$moto_version" 2>/dev/null <<'PY'
import sys, moto, flask, flask_cors
sys.exit(0 if moto.__version__ == sys.argv[1] else 1)
PY
  then
    py=python3
    return
  fi
  local venv=$workdir/.venv
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" - "$moto_version" 2>/dev/null <<'PY'
import sys, moto, flask, flask_cors
sys.exit(0 if moto.__version__ == sys.argv[1] else 1)
PY
  then
    python3 -m venv "$venv" >&2 || die "python3 -m venv failed (apt-get install python3-venv)"
    # requirements.lock pins every dependency (pip freeze); requirements.txt
    # names what we ask for.
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$workdir/requirements.lock" >&2 ||
      die "pip install -r requirements.lock failed"
  fi
  py=$venv/bin/python
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Waits until the peer answers a ListTables call (any JSON answer will do:
# dynalite does not check signatures, moto only needs the region in the
# credential scope). Returns 1 when the process died or time ran out.
wait_ready() {
  python3 - "$1" "$2" "$wait_s" <<'PY'
import json, os, sys, time, urllib.request, urllib.error
port, pid, limit = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
deadline = time.time() + limit
hdrs = {"Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": "DynamoDB_20120810.ListTables",
        "Authorization": "AWS4-HMAC-SHA256 Credential=probe/20200101/us-east-1/dynamodb/aws4_request, "
                         "SignedHeaders=content-type;host, Signature=00"}
while time.time() < deadline:
    try:
        os.kill(pid, 0)
    except OSError:
        sys.exit(1)
    req = urllib.request.Request("http://127.0.0.1:%d/" % port, data=b"{}", headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=2) as r:
            json.load(r)
            sys.exit(0)
    except urllib.error.HTTPError as e:
        try:
            json.load(e)
            sys.exit(0)
        except Exception:
            pass
    except Exception:
        pass
    time.sleep(0.02)
sys.exit(1)
PY
}

# ddb-listener: a second tabletheoryd, memory backend, serving DynamoDB's
# wire protocol on a port of its choosing (--dynamodb-listen 127.0.0.1:0);
# its daemon.ready log line names the port ("dynamodb_listen":"HOST:PORT").
start_listener() {
  local daemon=${TT_DAEMON:-$here/../../_build/tabletheoryd}
  [ -x "$daemon" ] || die "no tabletheoryd at $daemon (bash scripts/build.sh, or set TT_DAEMON)"
  log=$(mktemp "$tmp/tabletheoryd-peer-ddb-listener.XXXXXX")
  # Settings from the environment (TABLETHEORYD_*) are the daemon under
  # test's, not the peer's.
  local unset=()
  while IFS= read -r v; do unset+=(-u "$v"); done < <(env | sed -n 's/^\(TABLETHEORYD_[A-Za-z0-9_]*\)=.*/\1/p')
  setsid env "${unset[@]}" "$daemon" --listen 127.0.0.1:0 --dynamodb-listen 127.0.0.1:0 \
    --log-level warn </dev/null 2>"$log" >/dev/null &
  pid=$!
  local addr="" deadline=$((SECONDS + wait_s))
  while [ $SECONDS -lt "$deadline" ] && kill -0 "$pid" 2>/dev/null; do
    addr=$(sed -n 's/.*"dynamodb_listen":"\([^"]*\)".*/\1/p' "$log" | head -1)
    [ -n "$addr" ] && break
    sleep 0.02
  done
  if [ -z "$addr" ] || ! wait_ready "${addr##*:}" "$pid"; then
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    die "ddb-listener did not start; log: $log"
  fi
  echo "ENDPOINT=http://$addr"
  echo "PID=$pid"
  echo "LOG=$log"
  exit 0
}

case "$kind" in
  dynalite) install_dynalite ;;
  moto) install_moto ;;
  ddb-listener) start_listener ;;
  *) die "usage: start_peer.sh dynalite|moto|ddb-listener" ;;
esac

for attempt in 1 2 3; do
  port=$(free_port)
  log=$tmp/tabletheoryd-peer-$kind-$port.log
  # setsid: the peer leads its own process group, so stop_peer.sh can end
  # it and anything it spawned, and it never holds our caller's pipes.
  case "$kind" in
    dynalite)
      setsid node "$workdir/node_modules/dynalite/cli.js" --host 127.0.0.1 --port "$port" \
        --createTableMs 0 --deleteTableMs 0 --updateTableMs 0 </dev/null >"$log" 2>&1 &
      ;;
    moto)
      # moto_server.py: moto with DynamoDB's isolation (see its header).
      setsid "$py" "$here/moto_server.py" -H 127.0.0.1 -p "$port" </dev/null >"$log" 2>&1 &
      ;;
  esac
  pid=$!
  if wait_ready "$port" "$pid"; then
    echo "ENDPOINT=http://127.0.0.1:$port"
    echo "PID=$pid"
    echo "LOG=$log"
    exit 0
  fi
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  echo "start_peer.sh: $kind did not answer on port $port (attempt $attempt); log: $log" >&2
done
die "$kind could not be started"
