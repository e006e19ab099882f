#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Packaging test: npm pack gives a tarball (ESM and CommonJS, each with its .d.ts) that
# installs into a fresh project; a file importing it compiles with tsc --strict and runs,
# making a call to a daemon ($TT_DAEMON) started for the purpose, and a CommonJS file
# that requires it compiles and runs too. Offline: the package has no
# dependencies, and tsc and @types/node come from this directory's node_modules.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
: "${TT_DAEMON:?set TT_DAEMON to the daemon binary}"
work=$(mktemp -d)
daemon_pid=""
trap '[ -z "$daemon_pid" ] || kill "$daemon_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$here"
tarball=$(npm pack --silent --pack-destination "$work" | tail -n 1)
tar tzf "$work/$tarball" | grep -q 'package/dist/src/index.d.ts'
mkdir "$work/app"
cd "$work/app"
printf '{"name":"app","version":"1.0.0","private":true,"type":"module"}\n' > package.json
npm install --silent --no-audit --no-fund --offline "$work/$tarball"
cat > main.ts <<'TS'
import { Client, ItemNotFound } from "tabletheoryd-client";

const client = new Client({ url: process.argv[2] });
const health = await client.health();
const models = await client.models();
try {
  await client.model("Nope").get("x");
} catch (e) {
  if (e instanceof ItemNotFound) throw e;
}
console.log(JSON.stringify({ health, models: models.length }));
TS
cat > check.cts <<'TS'
import tt = require("tabletheoryd-client");
const c: tt.Client = new tt.Client({ url: "http://127.0.0.1:9" });
console.log(typeof c.model("User").get === "function" && new tt.ItemNotFound("x") instanceof tt.TableTheoryError);
TS
"$here/node_modules/.bin/tsc" --strict --target ES2022 --module NodeNext --moduleResolution NodeNext \
    --typeRoots "$here/node_modules/@types" --types node --skipLibCheck false main.ts check.cts
[ "$(node check.cjs)" = true ]
"$TT_DAEMON" --listen 127.0.0.1:0 --backend memory 2> daemon.log &
daemon_pid=$!
url=""
for _ in $(seq 1 500); do
    url=$(sed -n 's/.*"event":"daemon.ready".*"listen":"\([^"]*\)".*/\1/p' daemon.log | head -n 1)
    [ -z "$url" ] || break
    sleep 0.02
done
[ -n "$url" ] || { cat daemon.log >&2; exit 1; }
out=$(node main.js "http://$url")
case $out in *'"models":0'*) ;; *) echo "install-test: unexpected output: $out" >&2; exit 1 ;; esac
echo "install-test: $tarball installs into a fresh project, compiles with tsc --strict and runs"
