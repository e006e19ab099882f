#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run.sh -- installs the dependencies, builds, and starts tabletheoryd on the
# embedded memory backend with the example models (Ctrl-C drains and exits).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bash "$top/scripts/deps.sh"
bash "$top/scripts/build.sh"
exec "$top/_build/tabletheoryd" --backend memory --models "$top/examples/models" "$@"
