#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# build.sh [asan] -- configures and builds into _build (or _build_asan with
# AddressSanitizer + UndefinedBehaviorSanitizer), warnings as errors.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
# scripts/test.sh starts both builds at once: on a fresh clone one runs
# autoreconf while the other waits for it (a lock on configure.ac).
flock "$top/configure.ac" sh -c '[ -x configure ] || autoreconf -fi >/dev/null'
if [ "${1:-}" = asan ]; then
  dir=_build_asan
  flags=(CFLAGS="-g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
         LDFLAGS="-fsanitize=address,undefined")
else
  dir=_build
  flags=(CFLAGS="-g -O2")
fi
mkdir -p "$dir"
cd "$dir"
[ -f Makefile ] || ../configure --enable-werror "${flags[@]}" >/dev/null
make -j"$(nproc)" >/dev/null
echo "built $top/$dir/tabletheoryd"
