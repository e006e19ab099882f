#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Fetches the Java client's pinned dependencies, builds it and its xlang
# program, and runs its JUnit tests against a real daemon (TT_DAEMON, default
# ../../_build/tabletheoryd) on the memory backend.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
TT_DAEMON=${TT_DAEMON:-$here/../../_build/tabletheoryd}
case $TT_DAEMON in /*) ;; *) TT_DAEMON=$(pwd)/$TT_DAEMON ;; esac
export TT_DAEMON
if [ ! -x "$TT_DAEMON" ]; then
    echo "clients/java: no daemon binary at $TT_DAEMON (build it: bash scripts/build.sh)" >&2
    exit 1
fi
rm -rf target/surefire-reports
# -q keeps Maven quiet (its errors and failing tests still print); Surefire's
# "Tests run:" summary is printed from its reports below.
mkdir -p target
mvn -q -B -Dstyle.color=never -Pdaemon-tests -Dtt.daemon="$TT_DAEMON" package > target/mvn.log 2>&1 && rc=0 || rc=$?
# Maven 3.8's -q still writes stray colour resets; drop them and blank lines.
sed 's/\x1b\[[0-9;]*m//g' target/mvn.log | grep -v '^[[:space:]]*$' || true
if ls target/surefire-reports/*.txt >/dev/null 2>&1; then
    grep -h 'Tests run:' target/surefire-reports/*.txt
fi
[ $rc -eq 0 ] || exit $rc
# The xlang program and the bench: not part of the library's jar.
rm -rf target/xlang
mkdir -p target/xlang
javac -Xlint:all -Werror --release 17 -d target/xlang -cp "target/classes:target/lib/*" \
    src/xlang/java/com/theorycloud/tabletheoryd/xlang/XLang.java \
    src/bench/java/com/theorycloud/tabletheoryd/bench/Bench.java \
    ../../examples/java/models/Models.java
sh "$here/install-test.sh"
