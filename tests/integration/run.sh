#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs the integration suite against the daemon that `make` built.
set -e
here=$(cd "$(dirname "$0")" && pwd)
: "${PYTHON3:=python3}"
exec "$PYTHON3" -m pytest -q -p no:cacheprovider "$here" "$@"
