#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# openapi-check.sh -- checks openapi.yaml with four pinned tools and fails on
# any error or warning: Spectral (spectral:oas), openapi-spec-validator,
# openapi-python-client (every operation generated, no warning) and
# openapi-typescript (tests/openapi/typecheck.ts, which calls every operation
# through openapi-fetch, must type-check against the generated types).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
# shellcheck source=scripts/openapi-tools.sh
. scripts/openapi-tools.sh
openapi_tools_npm
openapi_tools_python
bin=$tools/node_modules/.bin
spec=$top/openapi.yaml
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "-- spectral lint (spectral:oas; warnings fail)"
"$bin/spectral" lint --ruleset "$tools/.spectral.yaml" --fail-severity=warn "$spec"

echo "-- openapi-spec-validator"
"$OPENAPI_VENV/bin/openapi-spec-validator" "$spec"

echo "-- openapi-python-client generate"
"$OPENAPI_VENV/bin/openapi-python-client" generate --path "$spec" \
  --config "$tools/python-client.yaml" --output-path "$out/pyclient" --meta none \
  >"$out/gen.log" 2>&1 || { cat "$out/gen.log"; exit 1; }
if grep -qiE 'warning|unable|could not|will not be generated' "$out/gen.log"; then
  cat "$out/gen.log"
  echo "openapi-python-client warned: see above"
  exit 1
fi
want=$(grep -c '^      operationId:' "$spec")
got=$(find "$out/pyclient/api" -name '*.py' ! -name '__init__.py' | wc -l)
if [ "$got" -ne "$want" ]; then
  echo "openapi-python-client generated $got operations of $want"
  exit 1
fi
echo "$got operations generated"

echo "-- openapi-typescript + tsc (tests/openapi/typecheck.ts)"
mkdir -p "$tools/generated"
"$bin/openapi-typescript" "$spec" -o "$tools/generated/schema.d.ts" >"$out/ts.log" 2>&1 ||
  { cat "$out/ts.log"; exit 1; }
if grep -qiE 'warn|error' "$out/ts.log"; then
  cat "$out/ts.log"
  exit 1
fi
(cd "$tools" && "$bin/tsc" -p tsconfig.json)
echo "typecheck.ts type-checks"
echo "openapi.yaml: all checks passed"
