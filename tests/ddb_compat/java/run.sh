#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run.sh -- the AWS SDK for Java v2 smoke test against DDB_ENDPOINT: Maven
# resolves the SDK (pom.xml) into a classpath, javac compiles Smoke.java and
# java runs it. Exit 77 (skipped) when javac or mvn is missing or Maven
# cannot resolve the SDK (no registry and not in the local repository);
# otherwise the smoke test's status.
set -u
here=$(cd "$(dirname "$0")" && pwd)
for tool in java javac mvn; do
  command -v "$tool" >/dev/null 2>&1 || { echo "java smoke: SKIPPED ($tool is not installed)"; exit 77; }
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mkdir -p "$out/classes"
if ! mvn -q -B -Dstyle.color=never -f "$here/pom.xml" dependency:build-classpath \
    -Dmdep.outputFile="$out/classpath.txt" >"$out/mvn.log" 2>&1; then
  echo "java smoke: SKIPPED (Maven could not resolve software.amazon.awssdk:dynamodb):"
  sed 's/\x1b\[[0-9;]*m//g' "$out/mvn.log" | grep -m 3 'ERROR' || true
  exit 77
fi
cp=$(cat "$out/classpath.txt")
javac -Xlint:all -Werror --release 17 -d "$out/classes" -cp "$cp" "$here/Smoke.java" || exit 1
java -cp "$out/classes:$cp" Smoke
