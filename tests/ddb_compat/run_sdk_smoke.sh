#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run_sdk_smoke.sh -- starts $TT_DAEMON (default _build/tabletheoryd) with
# --dynamodb-listen on a free port and runs, against it, the smoke tests of
# the AWS SDK for JavaScript v3 (js/, npm), aws-sdk-go-v2 (go/, the Go module
# proxy), the AWS SDK for Java v2 (java/, Maven; skipped as well when Maven
# cannot resolve it) and the AWS CLI (`aws`, pip's awscli) -- each skipped
# with a note when its toolchain is missing. Exit 1 when any that ran failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
: "${TT_DAEMON:=$root/_build/tabletheoryd}"
log=$(mktemp)
"$TT_DAEMON" --listen 127.0.0.1:0 --dynamodb-listen 127.0.0.1:0 2>"$log" &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 1500); do
  addr=$(sed -n 's/.*"dynamodb_listen":"\([^"]*\)".*/\1/p' "$log" | head -1)
  [ -n "$addr" ] && break
  sleep 0.02
done
[ -n "$addr" ] || { echo "run_sdk_smoke.sh: the daemon did not start:" >&2; cat "$log" >&2; exit 1; }
export DDB_ENDPOINT="http://$addr"
failed=""
if command -v npm >/dev/null 2>&1; then
  echo "== AWS SDK for JavaScript v3"
  (cd "$here/js" && { [ -d node_modules ] || npm ci --no-audit --no-fund >/dev/null; } &&
     node smoke.mjs) || failed="$failed js"
else
  echo "== AWS SDK for JavaScript v3: SKIPPED (npm is not installed)"
fi
if command -v go >/dev/null 2>&1; then
  echo "== aws-sdk-go-v2"
  (cd "$here/go" && go run .) || failed="$failed go"
else
  echo "== aws-sdk-go-v2: SKIPPED (go is not installed)"
fi
echo "== AWS SDK for Java v2"
bash "$here/java/run.sh"
case $? in 0|77) ;; *) failed="$failed java" ;; esac
if command -v aws >/dev/null 2>&1; then
  echo "== AWS CLI"
  (
    set -e
    export AWS_ACCESS_KEY_ID=dummy AWS_SECRET_ACCESS_KEY=dummy AWS_DEFAULT_REGION=us-east-1
    a() { aws --endpoint-url "$DDB_ENDPOINT" dynamodb "$@"; }
    a create-table --table-name cli_smoke --billing-mode PAY_PER_REQUEST \
      --attribute-definitions AttributeName=pk,AttributeType=S \
      --key-schema AttributeName=pk,KeyType=HASH >/dev/null
    a put-item --table-name cli_smoke --item '{"pk":{"S":"a"},"v":{"N":"1"}}'
    [ "$(a get-item --table-name cli_smoke --key '{"pk":{"S":"a"}}' \
         --query Item.v.N --output text)" = 1 ]
    a list-tables --output text | grep cli_smoke >/dev/null
    echo "aws cli smoke: ok"
  ) || failed="$failed cli"
else
  echo "== AWS CLI: SKIPPED (aws is not installed)"
fi
if [ -n "$failed" ]; then
  echo "run_sdk_smoke.sh: FAILED:$failed" >&2
  exit 1
fi
