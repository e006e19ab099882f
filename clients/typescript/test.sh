#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs the pinned dependencies (npm ci, once per package-lock.json; offline
# afterwards), compiles with tsc, and runs the tests with node's test runner against the
# daemon binary $TT_DAEMON (default ../../_build/tabletheoryd).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
: "${TT_DAEMON:=$here/../../_build/tabletheoryd}"
case $TT_DAEMON in /*) ;; *) TT_DAEMON=$(pwd)/$TT_DAEMON ;; esac
export TT_DAEMON
if [ ! -x "$TT_DAEMON" ]; then
    echo "test.sh: no daemon binary at $TT_DAEMON (bash scripts/build.sh, or set TT_DAEMON)" >&2
    exit 1
fi
want=$(cksum < package-lock.json)
if [ ! -d node_modules ] || [ "$(cat node_modules/.tt-lock 2>/dev/null)" != "$want" ]; then
    npm ci --no-audit --no-fund --prefer-offline
    echo "$want" > node_modules/.tt-lock
fi
rm -rf dist
npx --no-install tsc -p tsconfig.json
node --test dist/test/*.test.js
sh install-test.sh
