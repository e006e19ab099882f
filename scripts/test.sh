#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test.sh -- the whole test suite (docs/testing.md): static checks; a plain
# build with `make check` (unit tests, the in-process ORM and ledger suites,
# the conformance runner's self-test) and the integration tier
# (scripts/integration.sh: the integration suite and the conformance scenarios
# on memory, dynalite, moto and ddb-listener at once); the same under
# AddressSanitizer +
# UBSan; the fuzz targets; the openapi.yaml checks; Schemathesis against the
# running daemon; every client's tests and the cross-language test; the
# systemd unit check.
#
# After the static checks the stages run in two lanes at once, each stage
# after the one before it in its lane:
#   plain: build, make check, integration tier, openapi.yaml, Schemathesis,
#          clients, systemd
#   asan:  build, make check, integration tier, fuzz
# Every line is prefixed with its lane; each stage prints its progress as it
# runs and its time when it ends. The first failing stage stops both lanes.
# The run ends with a table of the stages' times.
#
# TT_TEST_SERIAL=1 runs the lanes one after the other (unprefixed output).
# `test.sh --lane plain|asan` runs one lane only (no dependency install).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
jobs=$(nproc)

# stage NAME COMMAND...: runs one stage and records its time in
# $TT_TEST_REPORT; returns non-zero when the stage failed.
stage() {
  local name=$1 t0=$SECONDS rc=0
  shift
  printf '== %s  [started %s]\n' "$name" "$(date -u +%H:%M:%S)"
  "$@" || rc=$?
  local took=$((SECONDS - t0)) verdict=passed
  [ $rc -eq 0 ] || verdict=FAILED
  printf -- '-- %s: %s in %d s\n' "$name" "$verdict" "$took"
  printf '%-46s %5ds  %s\n' "$name" "$took" "$verdict" >>"${TT_TEST_REPORT:-/dev/null}"
  return $rc
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

integration() {
  TT_INTEGRATION_LOGS="$top/$1/tests/integration/logs" bash scripts/integration.sh "$1"
}

lane_plain() {
  stage "plain: build (-Wall -Wextra -Werror)" bash scripts/build.sh &&
  stage "plain: make check" make_check _build &&
  stage "plain: integration tier (4 backends)" integration _build &&
  stage "openapi.yaml: spectral, validator, generators" bash scripts/openapi-check.sh &&
  stage "Schemathesis against the running daemon" \
    bash scripts/schemathesis.sh "$top/_build/tabletheoryd" &&
  stage "clients and the cross-language test" bash scripts/test-clients.sh &&
  stage "systemd unit" bash tests/integration/verify_systemd.sh "$top/_build/tabletheoryd"
}

lane_asan() {
  stage "ASan+UBSan: build" bash scripts/build.sh asan &&
  stage "ASan+UBSan: make check" make_check _build_asan &&
  stage "ASan+UBSan: integration tier (4 backends)" integration _build_asan &&
  stage "fuzz targets (libFuzzer, 15 s each)" bash scripts/fuzz.sh 15
}

if [ "${1:-}" = --lane ]; then
  lane=$2 rc=0
  if [ -n "${TT_TEST_PREFIX:-}" ]; then
    exec > >(sed -u "s/^/[$lane] /") 2>&1
    prefixer=$!
  fi
  "lane_$lane" || rc=$?
  if [ -n "${TT_TEST_PREFIX:-}" ]; then
    exec >&- 2>&-
    wait "$prefixer" || true  # its last lines are out before the lane ends
  fi
  exit $rc
fi

bash scripts/deps.sh
t_start=$SECONDS
report=$(mktemp "${TMPDIR:-/tmp}/tt-test-report.XXXXXX")
export TT_TEST_REPORT=$report
pids=()
stop_lanes() {
  for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done
}
trap 'stop_lanes; exit 130' INT TERM

finish() {
  printf '\n%-46s %6s\n' "stage" "time"
  cat "$report"
  printf '%-46s %5ds\n' "whole run (wall clock)" $((SECONDS - t_start))
  rm -f "$report"
  if [ "$1" -eq 0 ]; then echo "all stages passed"; else echo "a stage FAILED"; fi
  exit "$1"
}

stage "static checks" sh tests/static/check.sh || finish 1

if [ -n "${TT_TEST_SERIAL:-}" ]; then
  bash "$0" --lane plain && bash "$0" --lane asan && finish 0
  finish 1
fi

# Each lane in its own process group, so that a failure can stop the other
# with everything it started (builds, daemons, peers).
for lane in plain asan; do
  TT_TEST_PREFIX=1 setsid bash "$0" --lane "$lane" &
  pids+=($!)
done
status=0
for _ in "${pids[@]}"; do
  if ! wait -n; then
    status=1
    stop_lanes
  fi
done
finish $status
