#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs the TableTheory contract scenarios against the daemon `make` built.
# The scenarios come from $TT_SHARED/conformance/tabletheory or ../shared.
set -e
here=$(cd "$(dirname "$0")" && pwd)
: "${PYTHON3:=python3}"
exec "$PYTHON3" "$here/run.py" --daemon "${TT_DAEMON:-./tabletheoryd}"
