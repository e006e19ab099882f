#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Packaging test: builds the sdist and, from it, the wheel (python -m build, with the
# pinned build and setuptools of .venv), installs the wheel into a fresh venv in a
# temporary directory, and from outside the source tree imports it and makes calls,
# sync and asyncio, to a daemon ($TT_DAEMON) started for the purpose.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
: "${TT_DAEMON:?set TT_DAEMON to the daemon binary}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! "$here/.venv/bin/python" -m build --no-isolation --outdir "$work/dist" "$here" \
        > "$work/build.log" 2>&1; then
    cat "$work/build.log" >&2
    exit 1
fi
wheel=$(ls "$work"/dist/*.whl)
sdist=$(ls "$work"/dist/*.tar.gz)
tar tzf "$sdist" | grep -q '/src/tabletheoryd/aio.py$'
"${PYTHON3:-python3}" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --disable-pip-version-check --no-index "$wheel"
cd "$work"
"$work/venv/bin/python" - "$TT_DAEMON" <<'PY'
import asyncio, json, subprocess, sys, tempfile, time
import tabletheoryd
from tabletheoryd.aio import AsyncClient
assert "/venv/" in tabletheoryd.__file__, tabletheoryd.__file__
log = tempfile.NamedTemporaryFile(delete=False)
d = subprocess.Popen([sys.argv[1], "--listen", "127.0.0.1:0", "--backend", "memory"],
                     stdout=subprocess.DEVNULL, stderr=log)
try:
    url = None
    for _ in range(1000):
        for line in open(log.name, errors="replace"):
            if '"daemon.ready"' in line:
                url = "http://" + json.loads(line)["listen"]
        if url or d.poll() is not None:
            break
        time.sleep(0.02)
    assert url, open(log.name).read()
    with tabletheoryd.Client(url) as c:
        assert c.health()["status"] == "ok" and c.models() == []

    async def main():
        async with AsyncClient(url) as ac:
            return await ac.health()
    assert asyncio.run(main())["status"] == "ok"
finally:
    d.terminate()
    d.wait()
print("install-test: %s and %s install and work in a fresh venv" % (
    "tabletheoryd_client wheel", "sdist"))
PY
