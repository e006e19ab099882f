#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Fast static checks of the source tree (part of `make check`, no build
# products needed): no banned C function (docs/testing.md), every shell script
# parses, openapi.yaml is YAML with the paths the tests expect.
set -u
top=${TT_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top" || exit 99
status=0
echo "== banned functions"
if grep -rnE '(^|[^a-z_])(sprintf|strcpy|strcat|strtok|atoi|gets)\(' \
    src api daemon tests/unit tests/fuzz --include='*.c' --include='*.h'; then
  echo "use snprintf, memcpy with a length, strtol, ... instead"
  status=1
else
  echo "none"
fi
echo "== shell scripts parse"
for f in scripts/*.sh tests/*/*.sh clients/*/test.sh .ci/run; do
  [ -f "$f" ] || continue
  if ! bash -n "$f"; then
    echo "$f: does not parse"
    status=1
  fi
done
echo "== openapi.yaml"
if ! "${PYTHON3:-python3}" -c '
import sys, yaml
doc = yaml.safe_load(open("openapi.yaml"))
assert doc["openapi"].startswith("3."), doc["openapi"]
assert "/v1/models" in doc["paths"], "no /v1/models"
print(len(doc["paths"]), "paths")
'; then
  status=1
fi
exit $status
