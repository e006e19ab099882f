# SPDX-License-Identifier: Apache-2.0
"""The cross-language client test (clients/XLANG.md): every client writes the XItem with
its typed API, every client reads every writer's item and prints it in the canonical
form, all equal to the spec's values; then worker processes of two different languages
race for the same leases and each lease has exactly one winner.

Standard library and pytest only. A client whose clients/<lang>/xlang is missing, or
whose toolchain is absent, is skipped with the reason."""
import base64
import itertools
import json
import os
import shutil
import subprocess
import sys
import uuid
from decimal import Decimal
from urllib.parse import quote

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
if not os.environ.get("TT_DAEMON") and not os.path.exists(os.path.join(os.getcwd(),
                                                                       "tabletheoryd")):
    os.environ["TT_DAEMON"] = os.path.join(ROOT, "_build", "tabletheoryd")
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
from daemon import Daemon  # noqa: E402

# The language of each client directory, with the program its xlang wrapper needs.
TOOLCHAINS = {"python": "python3", "typescript": "node", "go": "go", "java": "java"}
TIMEOUT = 120  # seconds per xlang run: JVM start-up on a loaded 2-core machine included
LEASE_JOBS = 8
# Every backend call of the race is slowed down by this much (fault injection), so that
# the two workers' acquires of one job are in the daemon at the same time although the
# processes start a few hundred milliseconds apart (a JVM more): a real race.
RACE_LATENCY_MS = 500


def availability():
    """{lang: None if usable, else the reason it is skipped}."""
    out = {}
    for lang, tool in TOOLCHAINS.items():
        prog = os.path.join(ROOT, "clients", lang, "xlang")
        if not os.path.exists(prog):
            out[lang] = "clients/%s/xlang does not exist (yet)" % lang
        elif not os.access(prog, os.X_OK):
            out[lang] = "clients/%s/xlang is not executable" % lang
        elif shutil.which(tool) is None:
            out[lang] = "the %s toolchain (%s) is not installed" % (lang, tool)
        else:
            out[lang] = None
    return out


AVAILABLE = availability()
LANGS = [lang for lang, why in AVAILABLE.items() if why is None]


def lang_param(lang):
    why = AVAILABLE[lang]
    return pytest.param(lang, id=lang, marks=[pytest.mark.skip(reason=why)] if why else [])


ALL_LANGS = [lang_param(lang) for lang in TOOLCHAINS]
PAIRS = [pytest.param(a, b, id="%s-vs-%s" % (a, b))
         for a, b in itertools.combinations(TOOLCHAINS, 2)]
RUN = uuid.uuid4().hex[:8]


@pytest.fixture(scope="module")
def daemon():
    d = Daemon("--backend", "memory", "--enable-fault-injection",
               "--models", os.path.join(ROOT, "tests", "clients", "models"))
    yield d
    try:
        d.stop()
    finally:
        d.kill()


def xlang(daemon, lang, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLETHEORYD_")}
    env["TABLETHEORYD_URL"] = "http://%s:%d" % (daemon.host, daemon.port)
    return subprocess.run([os.path.join(ROOT, "clients", lang, "xlang")] + list(args),
                          env=env, capture_output=True, text=True, timeout=TIMEOUT)


def check_ok(proc, what):
    assert proc.returncode == 0, "%s exited %d\nstdout: %s\nstderr: %s" % (
        what, proc.returncode, proc.stdout, proc.stderr)


# -- write / read --------------------------------------------------------------------------

def b64(raw):
    return base64.b64encode(raw).decode("ascii")


def expected(prefix):
    """The canonical item of XLANG.md, numbers as Decimal."""
    return {
        "id": prefix + "-1",
        "n_big": Decimal("12345678901234567890123456789012345678"),
        "n_frac": Decimal("0.12345678901234567890123456789012345678"),
        "n_neg_small": Decimal("-1E-130"),
        "tags": ["alpha", "beta", "gamma"],
        "nums": [Decimal(-3), Decimal(1), Decimal("2.5"),
                 Decimal("10000000000000000000000000000000000000")],
        "bins": sorted([b64(b"\x00\x01"), b64(b"\xff")]),
        "blob": b64(bytes(range(256))),
        "flag": True,
        "nothing": None,
        "list": [Decimal(1), "two", {"three": Decimal(3)}],
        "map": {"k": "v", "n": Decimal(42), "deep": {"x": [True, None]}},
        "version": Decimal(1),
    }


def number(v, where):
    assert isinstance(v, str), "%s must be printed as a JSON string, got %r" % (where, v)
    try:
        return Decimal(v)
    except ArithmeticError:
        raise AssertionError("%s is not a decimal number: %r" % (where, v))


def normalize(out):
    """The reader's canonical output with every number (known by the spec) as Decimal."""
    got = dict(out)
    for name in ("n_big", "n_frac", "n_neg_small", "version"):
        if name in got:
            got[name] = number(got[name], name)
    if isinstance(got.get("nums"), list):
        got["nums"] = [number(v, "nums[%d]" % i) for i, v in enumerate(got["nums"])]
    lst = got.get("list")
    if isinstance(lst, list) and len(lst) == 3 and isinstance(lst[2], dict):
        got["list"] = [number(lst[0], "list[0]"), lst[1],
                       dict(lst[2], three=number(lst[2].get("three"), "list[2].three"))]
    mp = got.get("map")
    if isinstance(mp, dict) and "n" in mp:
        got["map"] = dict(mp, n=number(mp["n"], "map.n"))
    return got


@pytest.fixture(scope="module")
def written(daemon):
    """Runs `xlang write` once per available client; {lang: prefix}."""
    out = {}
    for lang in LANGS:
        prefix = "%s-%s" % (RUN, lang)
        check_ok(xlang(daemon, lang, "write", prefix), "%s write" % lang)
        out[lang] = prefix
    return out


@pytest.mark.parametrize("writer", ALL_LANGS)
@pytest.mark.parametrize("reader", ALL_LANGS)
def test_every_reader_reads_every_writer(daemon, written, writer, reader):
    prefix = written[writer]
    proc = xlang(daemon, reader, "read", prefix)
    check_ok(proc, "%s read of %s's item" % (reader, writer))
    lines = proc.stdout.splitlines()
    assert len(lines) == 1, "%s read must print one line, printed %r" % (reader, proc.stdout)
    got = normalize(json.loads(lines[0]))
    status, _, raw = daemon.json("GET", "/v1/models/XItem/items/%s" % quote(prefix + "-1",
                                                                              safe=""))
    assert status == 200, raw
    want = expected(prefix)
    want["created_at"] = raw["created_at"]
    want["updated_at"] = raw["updated_at"]
    assert raw["created_at"] != raw["updated_at"], "the patch must have moved updated_at"
    diff = {k: (got.get(k, "<missing>"), want.get(k, "<extra>"))
            for k in set(got) | set(want) if got.get(k, "<missing>") != want.get(k, "<extra>")}
    assert not diff, "%s reading %s's item: {attribute: (read, expected)} %r" % (
        reader, writer, diff)


# -- lease race ----------------------------------------------------------------------------

@pytest.mark.parametrize("a,b", PAIRS)
def test_lease_race_has_one_winner_per_job(daemon, a, b):
    for lang in (a, b):
        if AVAILABLE[lang]:
            pytest.skip(AVAILABLE[lang])
    jobs = "%s-race-%s-%s" % (RUN, a, b)
    for i in range(1, LEASE_JOBS + 1):
        status, _, body = daemon.json("POST", "/v1/jobs", {"job_id": "%s-%d" % (jobs, i),
                                                          "tenant_id": "xlang"})
        assert status == 201, body
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLETHEORYD_")}
    env["TABLETHEORYD_URL"] = "http://%s:%d" % (daemon.host, daemon.port)
    status, _, body = daemon.json("POST", "/v1/_faults", {"op": "*", "times": 1000000,
                                                          "latency_ms": RACE_LATENCY_MS})
    assert status in (200, 201), body
    workers, results = {}, {}
    try:
        for lang in (a, b):  # started together, before either is waited for
            workers[lang] = subprocess.Popen(
                [os.path.join(ROOT, "clients", lang, "xlang"), "lease", jobs, "w-" + lang,
                 str(LEASE_JOBS)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True)
        for lang, proc in workers.items():
            out, err = proc.communicate(timeout=TIMEOUT)
            assert proc.returncode == 0, "%s lease exited %d: %s" % (lang, proc.returncode,
                                                                     err)
            results[lang] = out.splitlines()
    finally:
        for proc in workers.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert daemon.request("DELETE", "/v1/_faults")[0] == 204
    winners = {}
    for lang, lines in results.items():
        seen = [line.rsplit(" ", 1)[0] for line in lines]
        assert sorted(seen) == sorted("%s-%d" % (jobs, i) for i in range(1, LEASE_JOBS + 1)), (
            "%s must print one line per job: %r" % (lang, lines))
        for line in lines:
            job, verdict = line.rsplit(" ", 1)
            assert verdict in ("won", "lost"), line
            if verdict == "won":
                winners.setdefault(job, []).append(lang)
    for i in range(1, LEASE_JOBS + 1):
        job = "%s-%d" % (jobs, i)
        assert len(winners.get(job, [])) == 1, "%s won by %r" % (job, winners.get(job))
        # The ledger's tables are sealed from the model API, so the stored owner is read
        # through the ledger: the winner's acquire succeeds (the lease is already its own)
        # and any other owner's is refused.
        path = "/v1/jobs/%s/lease" % quote(job, safe="")
        status, _, lease = daemon.json("POST", path, {"owner": "w-" + winners[job][0],
                                                      "duration_seconds": 60})
        assert status == 200 and lease["owner"] == "w-" + winners[job][0], (job, status, lease)
        status, _, err = daemon.json("POST", path, {"owner": "w-observer",
                                                    "duration_seconds": 60})
        assert status == 409 and err["error"]["code"] == "LeaseHeld", (job, status, err)
