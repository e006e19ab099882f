#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Builds the Go client, its xlang program, and runs its tests against a real
# daemon (TT_DAEMON, default ../../_build/tabletheoryd) on the memory backend.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
TT_DAEMON=${TT_DAEMON:-$here/../../_build/tabletheoryd}
case $TT_DAEMON in /*) ;; *) TT_DAEMON=$(pwd)/$TT_DAEMON ;; esac
export TT_DAEMON
if [ ! -x "$TT_DAEMON" ]; then
    echo "clients/go: no daemon binary at $TT_DAEMON (build it: bash scripts/build.sh)" >&2
    exit 1
fi
go mod download
go vet ./...
# The examples (a module of their own, using this client): vetted, run by typed_test.go.
(cd ../../examples/go && gofmt -l . | grep . && exit 1; go vet ./...)
mkdir -p .build
go build -o .build/xlang ./cmd/xlang
# -count=1: always run against the daemon, never from the test cache.
go test -count=1 -v ./... > .build/test.log 2>&1 && rc=0 || rc=$?
grep -E '^(--- FAIL|FAIL|ok|PASS|panic)|_test.go:[0-9]+:' .build/test.log || true
echo "clients/go: $(grep -c '^--- PASS' .build/test.log) passed, $(grep -c '^--- FAIL' .build/test.log) failed"
[ $rc -ne 0 ] || sh "$here/install-test.sh" || rc=1
exit $rc
