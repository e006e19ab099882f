#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run.sh -- installs the dependencies, builds, and starts tabletheoryd on the
# embedded memory backend with the example models (Ctrl-C drains and exits),
# keeping its tables in ./data of the repository across restarts
# (docs/local-dynamodb.md#durability; TABLETHEORYD_DATA_DIR picks another),
# with the REST API on 127.0.0.1:8737 and DynamoDB's own protocol on
# 127.0.0.1:8000 (docs/local-dynamodb.md).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bash "$top/scripts/deps.sh"
bash "$top/scripts/build.sh"
data=${TABLETHEORYD_DATA_DIR:-$top/data}
echo "run.sh: the tables live in $data (delete it to start empty)" >&2
cat >&2 <<'HOW'
tabletheoryd: REST API on http://127.0.0.1:8737, DynamoDB API on http://127.0.0.1:8000
  AWS CLI: AWS_ACCESS_KEY_ID=x AWS_SECRET_ACCESS_KEY=x aws dynamodb list-tables \
             --endpoint-url http://127.0.0.1:8000 --region us-east-1
  boto3:   boto3.client("dynamodb", endpoint_url="http://127.0.0.1:8000", region_name="us-east-1",
                        aws_access_key_id="x", aws_secret_access_key="x")
HOW
exec "$top/_build/tabletheoryd" --backend memory --data-dir "$data" --models "$top/examples/models" \
  --dynamodb-listen 127.0.0.1:8000 "$@"
