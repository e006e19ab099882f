# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures: a daemon per test module, stopped cleanly at the end."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from daemon import Daemon, served  # noqa: E402


@pytest.fixture(scope="module")
def daemon():
    yield from served("--enable-fault-injection")


@pytest.fixture(scope="module")
def ld():
    """A daemon per module for the job ledger's tests, on the test clock:
    expiry is tested by moving the clock (Daemon.advance_clock), and times
    the daemon writes are known exactly (Daemon.clock)."""
    yield from served("--test-clock")


@pytest.fixture
def fresh_daemon():
    """Factory for tests that need their own flags; every daemon made is
    stopped with a clean-exit check unless the test already did."""
    made = []

    def make(*args, **kw):
        d = Daemon(*args, **kw)
        made.append(d)
        return d

    yield make
    for d in made:
        try:
            if d.proc.poll() is None:
                d.stop()
        finally:
            d.kill()
