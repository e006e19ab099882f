#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run_dynalite_suite.sh -- runs dynalite's own mocha suite (recorded against
# real DynamoDB) against the DynamoDB listener. dynalite's npm package has no
# tests, so point DYNALITE_SRC at a checkout of github.com/architect/dynalite
# (Apache-2.0); without it the script skips (exit 77). The checkout is copied
# to a scratch directory, its test helper is pointed at the listener (the
# suite's REMOTE mode, i.e. the expectations of real DynamoDB, with the host
# replaced by 127.0.0.1:PORT), its dependencies installed with npm, and
# $TT_DAEMON (default _build/tabletheoryd) started with --dynamodb-listen.
# Prints passes and failures per test file; MOCHA_ARGS adds mocha options
# (e.g. "--grep PutItem"). Exit 0 whatever the counts: this is a
# compatibility report, not a gate.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
: "${TT_DAEMON:=$root/_build/tabletheoryd}"
if [ -z "${DYNALITE_SRC:-}" ] || [ ! -f "${DYNALITE_SRC}/test/helpers.js" ]; then
  echo "run_dynalite_suite.sh: SKIPPED (set DYNALITE_SRC to a dynalite checkout)"
  exit 77
fi
work=$(mktemp -d)
log="$work/daemon.log"
cleanup() {
  [ -n "${pid:-}" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
tar -C "$DYNALITE_SRC" --exclude=.git -cf - . | tar -C "$work" -xf -
cd "$work"
# REMOTE mode talks to "dynamodb.<region>.amazonaws.com" over HTTP: send it
# to the listener instead.
sed -i "s|{ host: 'dynamodb.' + [a-zA-Z.]*awsRegion + '.amazonaws.com', method: 'POST' }|{ host: '127.0.0.1', port: +process.env.DDB_PORT, method: 'POST' }|" test/helpers.js
! grep -q "'.amazonaws.com', method" test/helpers.js || { echo "run_dynalite_suite.sh: test/helpers.js changed upstream; adapt the patch" >&2; exit 1; }
[ -d node_modules ] || npm install --no-audit --no-fund --ignore-scripts >/dev/null 2>&1 ||
  { echo "run_dynalite_suite.sh: npm install failed" >&2; exit 1; }
"$TT_DAEMON" --listen 127.0.0.1:0 --dynamodb-listen 127.0.0.1:0 --region us-east-1 --table-transition-ms 1000 --log-level warn 2>"$log" &
pid=$!
for _ in $(seq 1500); do
  addr=$(sed -n 's/.*"dynamodb_listen":"\([^"]*\)".*/\1/p' "$log" | head -1)
  [ -n "$addr" ] && break
  sleep 0.02
done
[ -n "$addr" ] || { echo "run_dynalite_suite.sh: the daemon did not start" >&2; exit 1; }
export DDB_PORT=${addr##*:} REMOTE=1 AWS_ACCESS_KEY_ID=dummy AWS_SECRET_ACCESS_KEY=dummy \
  AWS_REGION=us-east-1 AWS_ACCOUNT_ID=000000000000
# shellcheck disable=SC2086
npx mocha --require should --timeout 30s --reporter json ${MOCHA_ARGS:-} test/*.js \
  >"$work/report.json" 2>"$work/mocha.err"
node -e '
const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const by = {};
const file = (t) => (t.file || "").replace(/.*\//, "");
for (const t of r.passes) (by[file(t)] ||= [0, 0])[0]++;
for (const t of r.failures) (by[file(t)] ||= [0, 0])[1]++;
for (const [f, [p, x]] of Object.entries(by).sort()) console.log(f.padEnd(24), "pass", String(p).padStart(4), "fail", String(x).padStart(4));
console.log("total".padEnd(24), "pass", String(r.stats.passes).padStart(4), "fail", String(r.stats.failures).padStart(4), "pending", r.stats.pending);
if (process.env.DYNALITE_FAILURES) for (const t of r.failures) console.log("FAIL", file(t), "|", t.fullTitle, "|", (t.err.message || "").split("\n")[0].slice(0, 200));
' "$work/report.json" || { echo "run_dynalite_suite.sh: no report; mocha said:" >&2; tail -20 "$work/mocha.err" >&2; }
