#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# release.sh [--quick] [OUTDIR] -- builds every release artifact into OUTDIR (default
# _release): the daemon's source tarball (checked by `make distcheck`; --quick: `make
# dist` only), the Python client's wheel and sdist, the TypeScript client's npm tarball,
# the Java client's jar and pom (after `mvn install`, which needs no daemon), and the Go
# module's source tarball; then SHA256SUMS. Tools are the ones the clients' test.sh use,
# at the same pinned versions.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
quick=0
if [ "${1:-}" = --quick ]; then
  quick=1
  shift
fi
out=${1:-$top/_release}
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
mkdir -p "$out"
cd "$top"

step() { printf '== %s\n' "$*"; }

step "daemon source tarball"
bash scripts/build.sh
if [ $quick = 1 ]; then
  make -C _build dist >/dev/null
else
  make -C _build distcheck >"$out/distcheck.log" 2>&1 || { tail -n 40 "$out/distcheck.log" >&2; exit 1; }
fi
version=$(sed -n 's/^AC_INIT(\[tabletheoryd\], \[\([^]]*\)\].*/\1/p' configure.ac)
cp "_build/tabletheoryd-$version.tar.gz" "$out/"

step "Python client (wheel and sdist)"
(
  cd clients/python
  [ -x .venv/bin/python ] || "${PYTHON3:-python3}" -m venv .venv
  .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements-test.txt
  .venv/bin/python -m build --no-isolation --outdir "$out" . >/dev/null
)

step "TypeScript client (npm pack)"
(
  cd clients/typescript
  npm ci --no-audit --no-fund --prefer-offline >/dev/null
  npm pack --silent --pack-destination "$out" >/dev/null
)

step "Java client (mvn install)"
(
  cd clients/java
  env -u TT_DAEMON mvn -q -B -Dstyle.color=never install >/dev/null
  jv=$(sed -n 's:^  <version>\(.*\)</version>:\1:p' pom.xml | head -n 1)
  cp "target/tabletheoryd-client-$jv.jar" "$out/"
  cp pom.xml "$out/tabletheoryd-client-$jv.pom"
)

step "Go client (module source)"
gv=v$version
git ls-files -z clients/go | tar -czf "$out/tabletheoryd-go-client-$gv.tar.gz" --null -T - \
  --transform 's:^clients/go:tabletheoryd-go-client:'

step "checksums"
(cd "$out" && rm -f SHA256SUMS && sha256sum -- *.tar.gz *.tgz *.whl *.jar *.pom > SHA256SUMS)
cat "$out/SHA256SUMS"
