#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs every client's own tests (clients/*/test.sh) against the daemon binary $TT_DAEMON
# (default _build/tabletheoryd), then the cross-language test (tests/clients). A client
# whose toolchain is missing is reported and skipped; any failure makes the exit non-zero.
# Also runs the AWS SDK smoke tests of the DynamoDB listener (tests/ddb_compat/run_sdk_smoke.sh).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
: "${TT_DAEMON:=$root/_build/tabletheoryd}"
case $TT_DAEMON in /*) ;; *) TT_DAEMON=$(pwd)/$TT_DAEMON ;; esac
export TT_DAEMON
if [ ! -x "$TT_DAEMON" ]; then
    echo "test-clients.sh: no daemon at $TT_DAEMON (run bash scripts/build.sh)" >&2
    exit 1
fi
need() {
    case $1 in
        python) echo python3 ;; typescript) echo npm ;; go) echo go ;; java) echo java ;;
        *) echo sh ;;
    esac
}
failed=""
for t in "$root"/clients/*/test.sh; do
    [ -f "$t" ] || continue
    lang=$(basename "$(dirname "$t")")
    tool=$(need "$lang")
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "== clients/$lang: SKIPPED ($tool is not installed)"
        continue
    fi
    echo "== clients/$lang"
    if ! sh "$t"; then
        failed="$failed $lang"
    fi
done
echo "== AWS SDKs against the DynamoDB listener (tests/ddb_compat)"
if ! bash "$root/tests/ddb_compat/run_sdk_smoke.sh"; then
    failed="$failed ddb-sdks"
fi
echo "== cross-language test"
if ! "${PYTHON3:-python3}" -m pytest -p no:cacheprovider -rs "$root/tests/clients"; then
    failed="$failed cross-language"
fi
if [ -n "$failed" ]; then
    echo "test-clients.sh: FAILED:$failed" >&2
    exit 1
fi
echo "test-clients.sh: all client tests passed"
