// Quickstart: the typed TypeScript client with models generated from examples/models.
//
// Generate the types (from the repository's root):
//   python3 tools/typegen/typegen.py --models examples/models \
//       --lang typescript --out examples/typescript/models_gen.ts
// Build and run it from examples/typescript, with the client installed
// (npm install of clients/typescript, built by its test.sh or npm run build), against
// a daemon started with --models examples/models:
//   npx tsc -p tsconfig.json && TABLETHEORYD_URL=http://127.0.0.1:8737 node dist/quickstart.js
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";

import { TypedClient, beginsWith } from "tabletheoryd-client";

import { ORDER, USER, OrderIndex, type OrderKey, type UserKey } from "./models_gen.js";

async function main(): Promise<void> {
  const run = randomUUID().slice(0, 8); // keys of this run
  const tt = new TypedClient();
  // Register the generated models (no-op when the daemon loaded the same ones).
  await tt.register(USER);
  await tt.register(ORDER);
  const users = tt.model(USER);
  const orders = tt.model(ORDER);
  await users.ensureTable();
  await orders.ensureTable();

  // Create, then update only if nobody changed the item in between.
  const key: UserKey = { PK: `USER#${run}`, SK: "PROFILE" };
  let ann = await users.create({ ...key, nickname: "ann", tags: new Set(["admin"]) });
  assert.equal(ann.version, 0);
  ann = await users.update(key, { nickname: "anna" }, ann.version);
  console.log("updated", ann.nickname, "to version", ann.version);
  assert.equal(await users.get({ PK: `USER#${run}`, SK: "NONE" }), null);

  // A batch: five orders written together, read back together.
  const batch = orders.batch();
  for (let i = 0; i < 5; i++) {
    batch.put({ PK: `CUST#${run}`, SK: `ORDER#${i}`, amount: `${i}.25`, status: "new" });
  }
  await batch.commit();
  const missingKey: OrderKey = { PK: `CUST#${run}`, SK: "ORDER#9" };
  const { items, missing } = await orders.batchGet([{ PK: `CUST#${run}`, SK: "ORDER#0" }, missingKey]);
  assert.equal(items.length, 1);
  assert.deepEqual(missing, [missingKey]);

  // A query across pages: two orders per request, the iterator follows the cursor.
  let cents = 0;
  for await (const o of orders.query(OrderIndex.TABLE, `CUST#${run}`, beginsWith("ORDER#"), { pageSize: 2 })) {
    cents += Math.round(Number(o.amount ?? "0") * 100); // amounts are exact decimal strings
  }
  console.log("total", (cents / 100).toFixed(2));
  assert.equal(cents, 1125);

  // A transaction: all or nothing.
  await tt.transaction()
    .create(ORDER, { PK: `CUST#${run}`, SK: "ORDER#5", amount: "1.50" })
    .update(USER, key, { nickname: "ann (customer)" }, ann.version)
    .commit();

  // A job with a lease: only its holder works on the job.
  await tt.jobs.ensureTable();
  const job = await tt.jobs.create({ tenant_id: `tenant-${run}`, job_id: `import-${run}` });
  await tt.jobs.withLease(job.job_id, async (lease) => {
    lease.check();
    await tt.jobs.transition(job.job_id, job.version, null, "RUNNING");
  }, { durationSeconds: 30 });
  console.log("job", (await tt.jobs.get(job.job_id)).status);
}

await main();
