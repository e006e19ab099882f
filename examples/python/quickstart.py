"""Quickstart: the typed Python client with models generated from examples/models.

Generate the types (from the repository's root):
    python3 tools/typegen/typegen.py --models examples/models \\
        --lang python --out examples/python/models_gen.py
Run it from examples/python, with the client installed (pip install ./clients/python),
against a daemon started with --models examples/models:
    TABLETHEORYD_URL=http://127.0.0.1:8737 python3 quickstart.py
"""
import uuid
from decimal import Decimal

from tabletheoryd.typed import TypedClient, begins_with

from models_gen import ORDER, USER, Order, OrderIndex, OrderKey, User, UserKey


def main() -> None:
    run = uuid.uuid4().hex[:8]  # keys of this run
    with TypedClient() as tt:
        # Register the generated models (no-op when the daemon loaded the same ones).
        tt.register(USER)
        tt.register(ORDER)
        users, orders = tt.model(USER), tt.model(ORDER)
        users.ensure_table()
        orders.ensure_table()

        # Create, then update only if nobody changed the item in between.
        key = UserKey(PK="USER#" + run, SK="PROFILE")
        ann = users.create(User(PK=key.PK, SK=key.SK, nickname="ann", tags={"admin"}))
        assert ann.version == 0
        ann = users.update(key, {"nickname": "anna"}, expected_version=ann.version)
        print("updated", ann.nickname, "to version", ann.version)
        assert users.get(UserKey(PK="USER#" + run, SK="NONE")) is None

        # A batch: five orders written together, read back together.
        batch = orders.batch()
        for i in range(5):
            batch.put(Order(PK="CUST#" + run, SK="ORDER#%d" % i, amount=Decimal("9.99") * i,
                            status="new"))
        batch.commit()
        found, missing = orders.batch_get([OrderKey(PK="CUST#" + run, SK="ORDER#0"),
                                           OrderKey(PK="CUST#" + run, SK="ORDER#9")])
        assert len(found) == 1 and missing == [OrderKey(PK="CUST#" + run, SK="ORDER#9")]

        # A query across pages: two orders per request, the iterator follows the cursor.
        total = sum(o.amount or 0 for o in orders.query(
            OrderIndex.TABLE, "CUST#" + run, begins_with("ORDER#"), page_size=2))
        print("total", total)
        assert total == Decimal("99.90")

        # A transaction: all or nothing.
        tx = tt.transaction()
        tx.create(ORDER, Order(PK="CUST#" + run, SK="ORDER#5", amount=Decimal("1.50")))
        tx.on(USER).update(key, {"nickname": "ann (customer)"}, expected_version=ann.version)
        tx.commit()

        # A job with a lease: only its holder works on the job.
        tt.jobs.ensure_table()
        job = tt.jobs.create("tenant-" + run, job_id="import-" + run)
        with tt.jobs.lease(job["job_id"], duration_seconds=30) as lease:
            lease.check()
            tt.jobs.transition(job["job_id"], job["version"], None, "RUNNING")
        print("job", tt.jobs.get(job["job_id"])["status"])


if __name__ == "__main__":
    main()
