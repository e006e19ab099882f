#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# openapi-tools.sh -- installs the pinned tools that check openapi.yaml: the npm
# packages of tests/openapi/package-lock.json (npm ci) and a Python venv from
# tests/openapi/requirements.txt. Sourced by openapi-check.sh and
# schemathesis.sh; sets OPENAPI_VENV. Both installs are skipped when their
# lock file has not changed since the last one.
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tools=$top/tests/openapi
OPENAPI_VENV=${OPENAPI_VENV:-$top/_build/openapi-venv}

openapi_tools_npm() {
  local stamp=$tools/node_modules/.lock-stamp
  if [ ! -f "$stamp" ] || ! cmp -s "$stamp" "$tools/package-lock.json"; then
    # --ignore-scripts: no install hook runs (one dependency would phone home).
    (cd "$tools" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    cp "$tools/package-lock.json" "$stamp"
  fi
}

openapi_tools_python() {
  local stamp=$OPENAPI_VENV/.requirements-stamp
  if [ ! -f "$stamp" ] || ! cmp -s "$stamp" "$tools/requirements.txt"; then
    rm -rf "$OPENAPI_VENV"
    python3 -m venv "$OPENAPI_VENV"
    "$OPENAPI_VENV/bin/pip" install -q --disable-pip-version-check -r "$tools/requirements.txt"
    cp "$tools/requirements.txt" "$stamp"
  fi
}
