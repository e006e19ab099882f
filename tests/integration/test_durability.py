# SPDX-License-Identifier: Apache-2.0
"""The memory backend's data dir (docs/local-dynamodb.md, Durability): writers
on threads (single items, conditional updates with versions, transactions,
batches) against a daemon started with --data-dir, `kill -9` after a
seeded random number of answers, a restart on the same data dir: every acknowledged write is
there with its acknowledged content and version, and no transaction is half
applied. TT_DURABILITY_ROUNDS (default 3) sets the number of rounds,
TT_DURABILITY_SEED the seed (docs/testing.md).

It is the memory backend's feature: skipped on the DynamoDB peers."""
import contextlib
import os
import random
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import pytest

from daemon import DAEMON, PEER, Daemon
from items_fixtures import MY_MODELS, item_path

pytestmark = pytest.mark.skipif(
    bool(PEER), reason="--data-dir is the memory backend's feature; a DynamoDB peer keeps "
                       "its own data")

ROUNDS = int(os.environ.get("TT_DURABILITY_ROUNDS", "3"))
SEED = int(os.environ.get("TT_DURABILITY_SEED", "20261204"))


class Ledger:
    """What the writers were told: acknowledged items and attempted
    transactions."""

    def __init__(self):
        self.lock = threading.Lock()
        self.items = {}      # (tenant, n) -> (version, label), the last acknowledged
        self.tx = {}         # tx tenant -> acknowledged?
        self.acks = 0        # answers received, to pick the moment of the kill

    def ack(self, key, version, label):
        with self.lock:
            self.acks += 1
            old = self.items.get(key)
            if old is None or version >= old[0]:
                self.items[key] = (version, label)


def writer(d, ledger, wid, stop, rnd):
    conn = None
    i = 0
    while not stop.is_set():
        i += 1
        tenant = "w%d" % wid
        kind = rnd.random()
        try:
            if kind < 0.4:
                label = "c%d" % i
                status, _, body = d.json("POST", "/v1/models/Line/items",
                                         body={"tenant": tenant, "n": i, "label": label},
                                         timeout=10)
                if status == 201:
                    ledger.ack((tenant, i), body["version"], label)
            elif kind < 0.7:
                with ledger.lock:
                    mine = [k for k in ledger.items if k[0] == tenant]
                if not mine:
                    continue
                key = rnd.choice(mine)
                with ledger.lock:
                    version, _ = ledger.items[key]
                label = "u%d" % i
                status, _, body = d.json(
                    "PUT", item_path("Line", key[0], key[1]),
                    body={"tenant": key[0], "n": key[1], "label": label},
                    headers={"If-Match": '"%d"' % version}, timeout=10)
                if status == 200:
                    ledger.ack(key, body["version"], label)
            elif kind < 0.85:
                t = "tx-%d-%d" % (wid, i)
                with ledger.lock:
                    ledger.tx[t] = False
                status, _, _ = d.json("POST", "/v1/transactions/write", body={"items": [
                    {"op": "put", "model": "Line", "item": {"tenant": t, "n": 1, "label": "a"}},
                    {"op": "put", "model": "Line", "item": {"tenant": t, "n": 2, "label": "b"}},
                ]}, timeout=10)
                if status == 200:
                    with ledger.lock:
                        ledger.tx[t] = True
                        ledger.acks += 1
            else:
                t = "b-%d-%d" % (wid, i)
                put = [{"tenant": t, "n": k, "label": "batch"} for k in range(5)]
                status, _, body = d.json("POST", "/v1/models/Line/batch-write",
                                         body={"put": put}, timeout=10)
                if status == 200 and not body.get("unprocessed"):
                    for k in range(5):
                        ledger.ack((t, k), 0, "batch")
        except (OSError, ValueError):
            # The daemon was killed: this write is not acknowledged.
            time.sleep(0.01)
    del conn


def start(data, *extra):
    return Daemon("--models", MY_MODELS, "--data-dir", data, *extra)


def check(d, ledger):
    for (tenant, n), (version, label) in sorted(ledger.items.items()):
        status, _, body = d.json("GET", item_path("Line", tenant, n))
        assert status == 200, ("acknowledged item lost", tenant, n, body)
        # A write applied after the last answer may be there (the crash came
        # after its record was durable, before its answer).
        assert body["version"] >= version, (tenant, n, body, version)
        if body["version"] == version:
            assert body["label"] == label, (tenant, n, body, label)
    for t, acked in sorted(ledger.tx.items()):
        got = [d.json("GET", item_path("Line", t, k))[0] for k in (1, 2)]
        if acked:
            assert got == [200, 200], ("acknowledged transaction lost", t, got)
        else:
            assert got in ([200, 200], [404, 404]), ("transaction half applied", t, got)


@pytest.mark.parametrize("mode", ["always", "everysec"])
def test_kill9_keeps_every_acknowledged_write(mode):
    rnd = random.Random("%d-%s" % (SEED, mode))
    tmp = tempfile.mkdtemp(prefix="ttd-durable-")
    data = os.path.join(tmp, "data")
    try:
        ledger = Ledger()
        for rnd_i in range(ROUNDS):
            d = start(data, "--fsync", mode)
            try:
                if rnd_i:
                    check(d, ledger)  # what the last round acknowledged
                stop = threading.Event()
                threads = [threading.Thread(target=writer,
                                            args=(d, ledger, w, stop, random.Random(rnd.random())))
                           for w in range(6)]
                for t in threads:
                    t.start()
                # The kill comes after a seeded number of answers: a moment in
                # the middle of the writes, whatever the machine's speed.
                target = ledger.acks + rnd.randint(50, 1000)
                give_up = time.monotonic() + 60  # a stuck daemon is killed all the same
                while ledger.acks < target and d.proc.poll() is None and \
                        time.monotonic() < give_up:
                    time.sleep(0.01)
                kill9(d, stop, threads)
            finally:
                d.kill()
        assert ledger.items, "no write was acknowledged"
        d = start(data, "--fsync", mode)
        try:
            check(d, ledger)
            d.stop()
        finally:
            d.kill()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_second_daemon_on_a_data_dir_is_refused():
    tmp = tempfile.mkdtemp(prefix="ttd-durable-")
    data = os.path.join(tmp, "data")
    try:
        d = start(data)
        try:
            with pytest.raises(AssertionError) as e:
                start(data)
            assert "in use by another process" in str(e.value)
        finally:
            d.stop()
            d.kill()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_clean_stop_and_restart_keep_the_tables():
    tmp = tempfile.mkdtemp(prefix="ttd-durable-")
    data = os.path.join(tmp, "data")
    try:
        d = start(data, "--fsync", "no")
        try:
            status, _, _ = d.json("POST", "/v1/models/Line/items",
                                  body={"tenant": "s", "n": 1, "label": "kept"})
            assert status == 201
            d.stop()  # the drain syncs and closes the log
        finally:
            d.kill()
        d = start(data)
        try:
            status, _, body = d.json("GET", item_path("Line", "s", 1))
            assert status == 200 and body["label"] == "kept", body
            d.stop()
        finally:
            d.kill()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_corrupt_log_stops_the_start_and_recover_truncate_keeps_the_rest():
    tmp = tempfile.mkdtemp(prefix="ttd-durable-")
    data = os.path.join(tmp, "data")
    try:
        d = start(data)
        try:
            for n in (1, 2, 3):
                status, _, _ = d.json("POST", "/v1/models/Line/items",
                                      body={"tenant": "c", "n": n, "label": "x"})
                assert status == 201
            d.stop()
        finally:
            d.kill()
        log = os.path.join(data, "log.0000000000000001")
        with open(log, "rb") as f:
            raw = bytearray(f.read())
        # The records of the tables come first; flip a byte of the second to
        # last record (the put of n=2): a record follows it, so it is no torn tail.
        offs, off = [], 0
        while off < len(raw):
            offs.append(off)
            off += 8 + int.from_bytes(raw[off:off + 4], "little")
        bad = offs[-2]
        raw[bad + 12] ^= 0x20
        with open(log, "wb") as f:
            f.write(raw)
        r = subprocess.run([DAEMON, "--listen", "127.0.0.1:0", "--models", MY_MODELS,
                            "--data-dir", data], capture_output=True, text=True, timeout=30)
        assert r.returncode == 2, r.stderr
        assert "at offset %d of log.0000000000000001" % bad in r.stderr, r.stderr
        assert "--data-dir-recover truncate" in r.stderr, r.stderr
        d = start(data, "--data-dir-recover", "truncate")
        try:
            assert any(line.get("event") == "memdb.log_recovered" and line.get("offset") == bad
                       for line in d.log_lines()), d.log_text()
            assert d.json("GET", item_path("Line", "c", 1))[0] == 200
            assert d.json("GET", item_path("Line", "c", 2))[0] == 404
            assert d.json("GET", item_path("Line", "c", 3))[0] == 404
            d.stop()
        finally:
            d.kill()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---- snapshots by a forked child ----
#
# A snapshot is due once the log passes 64 MiB: writers of large items get
# there in about a hundred requests. The child encoding it lives for the time
# of writing and syncing that much; a watcher sees it in /proc.

NOTE = "n" * (64 * 1024)


def big_writer(d, ledger, wid, stop):
    i = 0
    while not stop.is_set():
        i += 1
        t = "big-%d-%d" % (wid, i)
        put = [{"tenant": t, "n": k, "label": "big", "note": NOTE} for k in range(8)]
        try:
            status, _, body = d.json("POST", "/v1/models/Line/batch-write",
                                     body={"put": put}, timeout=30)
        except (OSError, ValueError):
            time.sleep(0.01)  # the daemon was killed: not acknowledged
            continue
        if status == 200 and not body.get("unprocessed"):
            for k in range(8):
                ledger.ack((t, k), 0, "big")


def children(pid):
    out = []
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


def fd_targets(pid):
    """Where the descriptors of pid lead, or None once it is gone."""
    try:
        names = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        return None
    out = []
    for n in names:
        try:
            out.append(os.readlink("/proc/%d/fd/%s" % (pid, n)))
        except OSError:
            pass
    return out


def tmp_files(data):
    """Snapshot files left unfinished (snapshot.tmp, a child's snapshot.tmp.<pid>)."""
    return [f for f in os.listdir(data) if f.startswith("snapshot.tmp")]


def gone(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def watch_child(d, data, stop_writers, give_up=120):
    """The first snapshot child of d, once it has dropped the daemon's
    descriptors and while it still runs: (pid, its descriptors' targets)."""
    deadline = time.monotonic() + give_up
    while time.monotonic() < deadline and d.proc.poll() is None:
        for c in children(d.proc.pid):
            # Right after the fork it still holds the daemon's descriptors
            # (more than a dozen); it closes them before it encodes anything.
            # An exiting child holds none, not even the data dir's.
            while True:
                fds = fd_targets(c)
                if fds is None or len(fds) <= 6:
                    break
                time.sleep(0.001)
            if fds and os.path.realpath(data) in fds:
                return c, fds
        time.sleep(0.002)
    stop_writers.set()
    raise AssertionError("no snapshot child seen: %s" % d.log_text()[-2000:])


def kill9(d, stop, threads):
    """kill -9 of the daemon under its writers, then the writers stopped."""
    d.proc.send_signal(signal.SIGKILL)
    d.proc.wait()
    stop.set()
    for t in threads:
        t.join()


def restart_and_check(data, ledger):
    """A daemon on the data dir holds every acknowledged write, and stops cleanly."""
    d2 = start(data)
    try:
        check(d2, ledger)
        d2.stop()
    finally:
        d2.kill()


@contextlib.contextmanager
def big_round(*extra):
    """A daemon (--fsync everysec) on a new data dir, with three writers of
    large items: (data dir, daemon, ledger, stop event, writer threads). At
    the end the writers are told to stop, the daemon is killed if it still
    runs, and the data dir (logs of hundreds of MB) is removed."""
    tmp = tempfile.mkdtemp(prefix="ttd-durable-")
    data = os.path.join(tmp, "data")
    d = start(data, "--fsync", "everysec", "--max-body-bytes", str(4 << 20), *extra)
    ledger = Ledger()
    stop = threading.Event()
    threads = [threading.Thread(target=big_writer, args=(d, ledger, w, stop)) for w in range(3)]
    for t in threads:
        t.start()
    try:
        yield data, d, ledger, stop, threads
    finally:
        stop.set()
        d.kill()
        shutil.rmtree(tmp, ignore_errors=True)


def test_kill9_during_a_snapshot_restarts_at_once_with_every_write():
    with big_round() as (data, d, ledger, stop, threads):
        child, fds = watch_child(d, data, stop)
        # Not the LOCK, not a listening socket or connection of the daemon.
        assert not [f for f in fds if f.endswith("/LOCK") or f.startswith("socket:")], fds
        kill9(d, stop, threads)
        # The child dies with the daemon, and the data dir is lockable at once.
        d2 = start(data, "--fsync", "everysec")
        try:
            assert not tmp_files(data)
            check(d2, ledger)
            deadline = time.monotonic() + 30
            while not gone(child) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert gone(child), "the snapshot child outlived the daemon"
            d2.stop()
        finally:
            d2.kill()


def test_snapshot_while_writes_go_on_then_kill9_keeps_every_write():
    with big_round("--log-level", "info") as (data, d, ledger, stop, threads):
        d.wait_log(lambda l: l.get("event") == "memdb.snapshot_written", timeout=120)
        target = ledger.acks + 40  # writes after it, into the new log
        while ledger.acks < target and d.proc.poll() is None:
            time.sleep(0.01)
        kill9(d, stop, threads)
        assert os.path.exists(os.path.join(data, "snapshot"))
        restart_and_check(data, ledger)


def test_stop_during_a_snapshot_ends_its_child():
    with big_round() as (data, d, ledger, stop, threads):
        child, _ = watch_child(d, data, stop)
        stop.set()
        d.stop()  # a clean exit: the loop closed with the child reaped
        for t in threads:
            t.join()
        assert gone(child)
        assert not tmp_files(data)
        restart_and_check(data, ledger)
