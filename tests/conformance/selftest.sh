#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs the conformance runner's self-test (pytest, against fake_daemon.py, no real daemon).
set -e
here=$(cd "$(dirname "$0")" && pwd)
: "${PYTHON3:=python3}"
exec "$PYTHON3" -m pytest -q -p no:cacheprovider "$here/test_runner_selftest.py" "$@"
