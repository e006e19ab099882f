#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs the pinned test dependencies into .venv (once; offline afterwards), then runs
# the client's tests against the daemon binary $TT_DAEMON (default ../../_build/tabletheoryd).
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
if [ ! -x .venv/bin/python ]; then
    "${PYTHON3:-python3}" -m venv .venv
fi
want=$(cksum < requirements-test.txt)
if [ "$(cat .venv/.tt-requirements 2>/dev/null)" != "$want" ]; then
    .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements-test.txt
    echo "$want" > .venv/.tt-requirements
fi
.venv/bin/python -m pytest -p no:cacheprovider tests "$@"
sh install-test.sh
