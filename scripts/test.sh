#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test.sh -- the whole test suite: unit + integration tests on a plain build,
# again under AddressSanitizer + UBSan, the fuzz targets, the openapi.yaml
# checks, Schemathesis against the running daemon, every client's tests and
# the cross-language test, and the systemd unit check. Exits non-zero on the
# first failing stage.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash scripts/deps.sh

stage() { printf '\n== %s\n' "$*"; }

run_check() {
  local dir=$1
  if ! make -C "$dir" -j"$(nproc)" check >/dev/null 2>&1; then
    # Show what failed, then fail.
    grep -l -E '^(FAIL|ERROR)' "$dir"/tests/*/*.trs 2>/dev/null | while read -r trs; do
      echo "--- ${trs%.trs}.log"; tail -n 60 "${trs%.trs}.log"
    done
    grep -E '^# (TOTAL|PASS|FAIL|ERROR)' "$dir/test-suite.log" || true
    return 1
  fi
  grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR)' "$dir/test-suite.log"
  grep -h -E "^[0-9]+ passed" "$dir"/tests/integration/run.sh.log "$dir"/tests/conformance/run-daemon.sh.log || true
}

stage "banned functions (CONTRIBUTING.md)"
if grep -rnE '(^|[^a-z_])(sprintf|strcpy|strcat|strtok|atoi|gets)\(' \
    src api daemon tests/unit tests/fuzz --include='*.c' --include='*.h'; then
  echo "use snprintf, memcpy with a length, strtol, ... instead"
  exit 1
fi
echo "none"

stage "plain build, -Wall -Wextra -Werror"
bash scripts/build.sh
run_check _build

stage "AddressSanitizer + UndefinedBehaviorSanitizer"
bash scripts/build.sh asan
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 run_check _build_asan

stage "fuzz targets (libFuzzer, 15 s each)"
bash scripts/fuzz.sh 15

stage "openapi.yaml: spectral, openapi-spec-validator, openapi-python-client, openapi-typescript"
bash scripts/openapi-check.sh

stage "Schemathesis: the running daemon against its openapi.yaml"
bash scripts/schemathesis.sh "$top/_build/tabletheoryd"

stage "clients (python, typescript, go, java) and the cross-language test"
bash scripts/test-clients.sh

stage "systemd unit"
bash tests/integration/verify_systemd.sh "$top/_build/tabletheoryd"

stage "all stages passed"
