# SPDX-License-Identifier: Apache-2.0
"""The Python client's program of the cross-language test (clients/XLANG.md):
xlang write PREFIX | read PREFIX | lease JOBPREFIX WORKER N."""
import base64
import json
import sys
from decimal import Decimal

import tabletheoryd as tt


def write(client, prefix):
    x = client.model("XItem")
    x.create({
        "id": prefix + "-1",
        "n_big": Decimal("12345678901234567890123456789012345678"),
        "n_frac": Decimal("0.12345678901234567890123456789012345678"),
        "n_neg_small": Decimal("-1E-130"),
        "tags": {"alpha", "beta", "gamma"},
        "nums": {Decimal(1), Decimal("2.5"), Decimal(-3),
                 Decimal("10000000000000000000000000000000000000")},
        "bins": {b"\x00\x01", b"\xff"},
        "blob": bytes(range(256)),
        "flag": False,
        "nothing": None,
        "list": [1, "two", {"three": 3}],
        "map": {"k": "v", "n": 42, "deep": {"x": [True, None]}},
    })
    x.patch(prefix + "-1", tt.Update().set("flag", True))


def canonical(v):
    """Nested values: numbers as decimal strings, the rest as JSON has them."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, (int, Decimal)):
        return str(v)
    if isinstance(v, (bytes, bytearray)):
        return base64.b64encode(bytes(v)).decode("ascii")
    if isinstance(v, dict):
        return {k: canonical(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [canonical(x) for x in v]
    raise TypeError("unexpected %s" % type(v).__name__)


def read(client, prefix):
    item = client.model("XItem").get(prefix + "-1", consistent=True)
    out = {}
    for name, v in item.items():
        if isinstance(v, (set, frozenset)):
            members = list(v)
            if all(isinstance(m, str) for m in members):
                out[name] = sorted(members)
            elif all(isinstance(m, (bytes, bytearray)) for m in members):
                out[name] = sorted(base64.b64encode(bytes(m)).decode("ascii") for m in members)
            else:
                out[name] = [str(m) for m in sorted(members)]
        else:
            out[name] = canonical(v)
    sys.stdout.write(json.dumps(out, sort_keys=True) + "\n")


def lease(client, job_prefix, worker, n):
    for i in range(1, int(n) + 1):
        job = "%s-%d" % (job_prefix, i)
        try:
            client.jobs.acquire_lease(job, worker, 60)
            print(job, "won", flush=True)
        except tt.LeaseHeld:
            print(job, "lost", flush=True)


def main(argv):
    cmds = {"write": (write, 1), "read": (read, 1), "lease": (lease, 3)}
    if len(argv) < 2 or argv[1] not in cmds or len(argv) != 2 + cmds[argv[1]][1]:
        sys.stderr.write("usage: xlang write PREFIX | read PREFIX | lease JOBPREFIX WORKER N\n")
        return 2
    fn = cmds[argv[1]][0]
    try:
        with tt.Client.from_env() as client:
            fn(client, *argv[2:])
    except Exception as e:  # any error: say it and exit 1 (XLANG.md)
        sys.stderr.write("xlang (python): %s: %s\n" % (type(e).__name__, e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
