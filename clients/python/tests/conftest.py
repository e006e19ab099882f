# SPDX-License-Identifier: Apache-2.0
"""Starts a real tabletheoryd on the memory backend for the client tests
($TT_DAEMON, default ../../_build/tabletheoryd)."""
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
CLIENT_DIR = os.path.dirname(HERE)
ROOT = os.path.abspath(os.path.join(CLIENT_DIR, "..", ".."))
sys.path.insert(0, os.path.join(CLIENT_DIR, "src"))

MODELS = [os.path.join(ROOT, "examples", "models"),
          os.path.join(ROOT, "tests", "integration", "models", "itest.yml"),
          os.path.join(ROOT, "tests", "clients", "models")]


class Daemon:
    def __init__(self, *extra):
        binary = os.environ.get("TT_DAEMON") or os.path.join(ROOT, "_build", "tabletheoryd")
        self.log = tempfile.NamedTemporaryFile(prefix="ttd-py-", delete=False)
        argv = [binary, "--listen", "127.0.0.1:0", "--backend", "memory"]
        for m in MODELS:
            argv += ["--models", m]
        env = {k: v for k, v in os.environ.items() if not k.startswith("TABLETHEORYD_")}
        self.proc = subprocess.Popen(argv + list(extra), stdout=subprocess.DEVNULL,
                                     stderr=self.log, env=env)
        self.url = "http://" + self._wait_ready()

    def _wait_ready(self):
        deadline = time.time() + 20
        while time.time() < deadline:
            with open(self.log.name, errors="replace") as f:
                for raw in f:
                    try:
                        line = json.loads(raw)
                    except ValueError:
                        continue
                    if line.get("event") == "daemon.ready":
                        return line["listen"]
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        with open(self.log.name, errors="replace") as f:
            text = f.read()
        self.stop()
        raise AssertionError("daemon did not start: " + text)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        os.unlink(self.log.name)

    def now_s(self):
        """The frozen clock of a --test-clock daemon, in whole seconds."""
        with urllib.request.urlopen(self.url + "/v1/_test/clock", timeout=30) as resp:
            return json.loads(resp.read())["now_s"]

    def advance_clock(self, ms):
        """Moves the frozen clock of a --test-clock daemon `ms` ms forward."""
        req = urllib.request.Request(self.url + "/v1/_test/clock", method="POST",
                                     data=json.dumps({"advance_ms": ms}).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            assert resp.status == 200


@pytest.fixture(scope="session")
def daemon():
    # --test-clock: the lease tests move the daemon's clock instead of waiting.
    d = Daemon("--enable-fault-injection", "--test-clock")
    yield d
    d.stop()


@pytest.fixture
def client(daemon, monkeypatch):
    import tabletheoryd
    monkeypatch.setenv("TABLETHEORYD_URL", daemon.url)
    monkeypatch.delenv("TABLETHEORYD_TOKEN_FILE", raising=False)
    c = tabletheoryd.Client.from_env(backoff=(0.01, 0.2))
    yield c
    c.close()


@pytest.fixture
def make_daemon():
    made = []

    def make(*extra):
        d = Daemon(*extra)
        made.append(d)
        return d

    yield make
    for d in made:
        d.stop()
