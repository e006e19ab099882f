#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test.sh -- the whole test suite (docs/testing.md): static checks; a plain
# build with `make check` (unit tests, the in-process ORM and ledger suites,
# the conformance runner's self-test) and the integration tier
# (scripts/integration.sh: the integration suite and the conformance scenarios
# on memory, dynalite and moto at once); the same under AddressSanitizer +
# UBSan; the fuzz targets; the openapi.yaml checks; Schemathesis against the
# running daemon; every client's tests and the cross-language test; the
# systemd unit check. Each stage prints its progress as it runs, then its
# time; the run stops at the first failing stage and ends with a table of
# the stages' times.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash scripts/deps.sh

jobs=$(nproc)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
report=()
t_start=$SECONDS

print_times() {
  printf '\n%-44s %6s\n' "stage" "time"
  for line in "${report[@]}"; do printf '%s\n' "$line"; done
  printf '%-44s %5ds\n' "total" $((SECONDS - t_start))
}

# stage NAME COMMAND...: runs one stage; stops the run when it fails.
stage() {
  local name=$1 t0=$SECONDS rc=0
  shift
  printf '\n== %s  [%s, %d s into the run]\n' "$name" "$(date -u +%H:%M:%S)" $((SECONDS - t_start))
  "$@" || rc=$?
  report+=("$(printf '%-44s %5ds%s' "$name" $((SECONDS - t0)) "$([ $rc -eq 0 ] || echo '  FAILED')")")
  if [ $rc -ne 0 ]; then
    printf -- '-- %s: FAILED after %d s\n' "$name" $((SECONDS - t0))
    print_times
    exit 1
  fi
  printf -- '-- %s: passed in %d s\n' "$name" $((SECONDS - t0))
}

# make check in a build directory: automake's harness prints a PASS or FAIL
# line per test as it ends; a failing test's log is shown after.
make_check() {
  local dir=$1
  if ! make -C "$dir" -s -j"$jobs" check; then
    grep -l -E '^:test-result: (FAIL|ERROR)' "$dir"/tests/*/*.trs 2>/dev/null | while read -r trs; do
      echo "--- ${trs%.trs}.log"; tail -n 60 "${trs%.trs}.log"
    done
    return 1
  fi
}

stage "static checks" sh tests/static/check.sh
stage "plain build (-Wall -Wextra -Werror)" bash scripts/build.sh
stage "plain: make check" make_check _build
stage "plain: integration tier (3 backends)" \
  env TT_INTEGRATION_LOGS="$top/_build/tests/integration/logs" bash scripts/integration.sh _build
stage "ASan+UBSan build" bash scripts/build.sh asan
stage "ASan+UBSan: make check" make_check _build_asan
stage "ASan+UBSan: integration tier (3 backends)" \
  env TT_INTEGRATION_LOGS="$top/_build_asan/tests/integration/logs" bash scripts/integration.sh _build_asan
stage "fuzz targets (libFuzzer, 15 s each)" bash scripts/fuzz.sh 15
stage "openapi.yaml: spectral, validator, generators" bash scripts/openapi-check.sh
stage "Schemathesis against the running daemon" bash scripts/schemathesis.sh "$top/_build/tabletheoryd"
stage "clients and the cross-language test" bash scripts/test-clients.sh
stage "systemd unit" bash tests/integration/verify_systemd.sh "$top/_build/tabletheoryd"
print_times
echo "all stages passed"
