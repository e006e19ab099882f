#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run.sh -- installs the dependencies, builds, and starts tabletheoryd on the
# embedded memory backend with the example models (Ctrl-C drains and exits),
# keeping its tables in ./data of the repository across restarts
# (docs/local-dynamodb.md#durability; TABLETHEORYD_DATA_DIR picks another).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bash "$top/scripts/deps.sh"
bash "$top/scripts/build.sh"
data=${TABLETHEORYD_DATA_DIR:-$top/data}
echo "run.sh: the tables live in $data (delete it to start empty)" >&2
exec "$top/_build/tabletheoryd" --backend memory --data-dir "$data" --models "$top/examples/models" "$@"
