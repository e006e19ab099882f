#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Packaging test: `mvn install` builds, tests and installs the client without a daemon
# (the tests tagged "daemon" run only in the daemon-tests profile), and a fresh Maven
# project that depends on the documented coordinates compiles against the installed jar.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
mkdir -p target
rm -rf target/surefire-reports
if ! env -u TT_DAEMON mvn -q -B -Dstyle.color=never install > target/install.log 2>&1; then
    sed 's/\x1b\[[0-9;]*m//g' target/install.log
    exit 1
fi
if grep -l 'ClientTest' target/surefire-reports/*.txt 2>/dev/null; then
    echo "install-test: mvn install ran the daemon tests" >&2
    exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/main/java/app"
cat > "$work/pom.xml" <<'POM'
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>app</groupId>
  <artifactId>app</artifactId>
  <version>1</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency>
      <groupId>com.theorycloud</groupId>
      <artifactId>tabletheoryd-client</artifactId>
      <version>0.1.0</version>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-resources-plugin</artifactId>
        <version>3.3.1</version>
      </plugin>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>3.13.0</version>
      </plugin>
    </plugins>
  </build>
</project>
POM
cat > "$work/src/main/java/app/App.java" <<'JAVA'
package app;

import com.theorycloud.tabletheoryd.AsyncClient;
import com.theorycloud.tabletheoryd.Item;
import com.theorycloud.tabletheoryd.Key;
import com.theorycloud.tabletheoryd.TableTheoryClient;
import java.util.concurrent.CompletableFuture;

public final class App {
    public static void main(String[] args) {
        TableTheoryClient client = TableTheoryClient.fromEnv();
        AsyncClient async = client.async();
        CompletableFuture<Item> f = async.model("User").get(Key.of("USER#1", "PROFILE"));
        System.out.println(f.isDone());
    }
}
JAVA
if ! (cd "$work" && mvn -q -B -o -Dstyle.color=never compile > build.log 2>&1); then
    sed 's/\x1b\[[0-9;]*m//g' "$work/build.log"
    exit 1
fi
echo "install-test: mvn install without a daemon, and a project using com.theorycloud:tabletheoryd-client:0.1.0 compiles"
