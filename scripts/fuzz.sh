#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fuzz.sh [SECONDS] -- builds every libFuzzer target in tests/fuzz (clang,
# ASan + UBSan) against the library sources and runs each for SECONDS
# (default 20) on a scratch copy of its seed corpus. Fails on any crash.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-20}
out="$top/_build_fuzz"
mkdir -p "$out"
cd "$top"
# The library without the backends' network code: parsers are what we fuzz.
srcs=$(ls src/util/*.c src/value/*.c src/model/*.c src/expr/*.c src/ledger/sanitize.c 2>/dev/null)
flags="-std=gnu11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=all -Isrc -I. -Wall -Wextra -Wno-unused-parameter -Werror"
libs="$(pkg-config --cflags --libs jansson yaml-0.1) -lm"
status=0
for target in tests/fuzz/fuzz_*.c; do
  name=$(basename "$target" .c)
  corpus_name=${name#fuzz_}
  # shellcheck disable=SC2086
  clang $flags $srcs "$target" $libs -o "$out/$name"
  work="$out/corpus-$corpus_name"
  rm -rf "$work"
  mkdir -p "$work"
  [ -d "tests/fuzz/corpus/$corpus_name" ] && cp -r "tests/fuzz/corpus/$corpus_name/." "$work/"
  if "$out/$name" -max_total_time="$secs" -max_len=4096 -print_final_stats=0 "$work" \
      >"$out/$name.log" 2>&1; then
    echo "fuzz $name: $(grep -o 'Done [0-9]* runs' "$out/$name.log" | tail -n 1), no crash"
  else
    echo "fuzz $name: FAILED (see $out/$name.log)"
    tail -n 30 "$out/$name.log"
    status=1
  fi
done
exit $status
