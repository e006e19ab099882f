#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fuzz.sh [SECONDS [TARGET...]] -- builds every libFuzzer target in tests/fuzz
# (clang, ASan + UBSan, leak detection) against the library (src/ and api/,
# compiled once with coverage into one archive) and runs each for SECONDS
# (default 20) on a scratch copy of its seed corpus. Fails on any crash.
# FUZZ_RUNS=N runs N inputs per target instead of a time limit (the long run
# of docs/fuzzing.md); TARGET names (e.g. fuzz_item) pick some targets only.
# FUZZ_JOBS=N runs N targets at once (default: the number of cores).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-20}
shift || true
out="$top/_build_fuzz"
mkdir -p "$out/obj"
cd "$top"
cflags="-std=gnu11 -D_GNU_SOURCE -g -O1 -fno-sanitize-recover=all -Isrc -I. -Wall -Wextra
        -Wno-unused-parameter -Werror $(pkg-config --cflags libuv libmicrohttpd libcurl jansson yaml-0.1)"
libs="$(pkg-config --libs libuv libmicrohttpd libcurl libssl libcrypto jansson yaml-0.1) -lm"
# The library: every source a request can reach (no daemon/main.c). Objects
# are rebuilt each run (headers change too); two at a time.
srcs=$(ls src/*/*.c src/backend/*/*.c api/*.c)
# FUZZ_REUSE_LIB=1 keeps the archive of the previous run (local iteration).
if [ -z "${FUZZ_REUSE_LIB:-}" ] || [ ! -f "$out/libfuzz.a" ]; then
  rm -f "$out"/obj/*.o "$out/libfuzz.a"
  # shellcheck disable=SC2086
  printf '%s\n' $srcs | xargs -P 2 -I{} sh -c \
    'clang '"$(echo $cflags)"' -fsanitize=fuzzer-no-link,address,undefined -c "$1" \
       -o "$2/obj/$(echo "$1" | tr / _).o"' _ {} "$out"
  ar rcs "$out/libfuzz.a" "$out"/obj/*.o
fi
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=($(ls tests/fuzz/fuzz_*.c | xargs -n1 basename | sed 's/\.c$//'))

# Builds and runs one target; prints one line when it ends (and the log's
# tail when it failed). Exit 1 on a crash.
run_target() {
  local name=$1 corpus_name=${1#fuzz_} limit start
  # shellcheck disable=SC2086
  clang $cflags -DFUZZ_SRCDIR="\"$top\"" -fsanitize=fuzzer,address,undefined "tests/fuzz/$name.c" tests/fuzz/harness.c \
    "$out/libfuzz.a" $libs -o "$out/$name" || { echo "fuzz $name: FAILED to build"; return 1; }
  local work="$out/corpus-$corpus_name"
  rm -rf "$work"
  mkdir -p "$work"
  [ -d "tests/fuzz/corpus/$corpus_name" ] && cp -r "tests/fuzz/corpus/$corpus_name/." "$work/"
  if [ -n "${FUZZ_RUNS:-}" ]; then
    limit="-runs=$FUZZ_RUNS"
  else
    limit="-max_total_time=$secs"
  fi
  start=$(date +%s)
  if (cd "$out" && "./$name" "$limit" -max_len=4096 -print_final_stats=1 "$work" \
      >"$out/$name.log" 2>&1); then
    echo "fuzz $name: $(grep -o 'Done [0-9]* runs' "$out/$name.log" | tail -n 1) in" \
      "$(($(date +%s) - start)) s, no crash"
  else
    echo "fuzz $name: FAILED (see $out/$name.log)"
    tail -n 40 "$out/$name.log"
    return 1
  fi
}

# FUZZ_JOBS targets at once (default: one per core); each prints its line
# as it ends.
jobs=${FUZZ_JOBS:-$(nproc)}
status=0
running=0
for name in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
  run_target "$name" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || status=1
  running=$((running - 1))
done
exit $status
