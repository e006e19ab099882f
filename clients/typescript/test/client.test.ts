// SPDX-License-Identifier: Apache-2.0
// The TypeScript client against a real daemon on the memory backend.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import * as tt from "../src/index.js";
import { Client, Update, attr, num } from "../src/index.js";
import { Daemon } from "./daemon.js";

const uid = (p = "t") => `${p}-${randomUUID().slice(0, 12)}`;
let daemon: Daemon;
let client: Client;

before(async () => {
  // --test-clock: the lease tests move the daemon's clock instead of waiting.
  daemon = await Daemon.start("--enable-fault-injection", "--test-clock");
  process.env.TABLETHEORYD_URL = daemon.url;
  delete process.env.TABLETHEORYD_TOKEN_FILE;
  client = Client.fromEnv({ backoffMs: [10, 200] });
});
after(async () => { await daemon.stop(); });

describe("configuration", () => {
  test("reads the URL and the token file from the environment", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ttd-ts-"));
    const tokenFile = join(dir, "token");
    writeFileSync(tokenFile, "s3cret-token-0123456789\n");
    const d = await Daemon.start("--auth-token-file", tokenFile);
    try {
      const anonymous = new Client({ url: d.url });
      await assert.rejects(anonymous.models(), (e: tt.TableTheoryError) =>
        e instanceof tt.Unauthorized && e.status === 401 && !e.retryable);
      const saved = process.env.TABLETHEORYD_URL;
      process.env.TABLETHEORYD_URL = d.url;
      process.env.TABLETHEORYD_TOKEN_FILE = tokenFile;
      try {
        const names = (await Client.fromEnv().models()).map((m) => m.name);
        assert.ok(names.includes("User"));
      } finally {
        process.env.TABLETHEORYD_URL = saved;
        delete process.env.TABLETHEORYD_TOKEN_FILE;
      }
    } finally {
      await d.stop();
    }
  });

  test("ready() is true on a ready daemon, false on a 503, and throws without a daemon", async () => {
    assert.equal(await client.ready(), true);
    const notReady = createServer((_req, res) => {
      res.writeHead(503, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ error: { code: "BackendUnavailable", message: "models not loaded", retryable: true } }));
    });
    notReady.listen(0, "127.0.0.1");
    await once(notReady, "listening");
    try {
      const { port } = notReady.address() as AddressInfo;
      assert.equal(await new Client({ url: `http://127.0.0.1:${port}`, backoffMs: [1, 1] }).ready(), false);
    } finally {
      notReady.close();
    }
    const gone = new Client({ url: "http://127.0.0.1:9", maxAttempts: 1 });
    await assert.rejects(gone.ready(), tt.TransportError);
  });

  test("an unreachable daemon is a retryable transport error", async () => {
    const c = new Client({ url: "http://127.0.0.1:9", maxAttempts: 2, backoffMs: [1, 1] });
    await assert.rejects(c.models(), (e: tt.TableTheoryError) => e instanceof tt.TransportError && e.retryable);
  });
});

describe("items", () => {
  test("create, get, put with If-Match/If-None-Match, delete", async () => {
    const users = client.model("User");
    const pk = `USER#${uid()}`;
    const created = await users.create({ PK: pk, SK: "PROFILE", nickname: "al", tags: new Set(["a", "b"]) });
    assert.equal(created.version, 0);
    assert.deepEqual(created.tags, new Set(["a", "b"]));
    await assert.rejects(users.create({ PK: pk, SK: "PROFILE" }), tt.ConditionFailed);
    assert.deepEqual(await users.get(pk, "PROFILE"), created);
    assert.deepEqual(await users.get({ PK: pk, SK: "PROFILE" }, undefined, { select: ["nickname"] }), { nickname: "al" });
    const replaced = await users.put({ PK: pk, SK: "PROFILE", nickname: "bo" }, { ifMatch: 0 });
    assert.equal(replaced.version, 1);
    await assert.rejects(users.put({ PK: pk, SK: "PROFILE" }, { ifMatch: 0 }),
      (e: tt.TableTheoryError) => e instanceof tt.VersionConflict && e.details.version === 1);
    await assert.rejects(users.put({ PK: pk, SK: "PROFILE" }, { ifNoneMatch: true }), tt.ConditionFailed);
    assert.equal((await users.put({ PK: pk, SK: "OTHER" }, { ifNoneMatch: true })).version, 0);
    await users.delete(pk, "OTHER");
    await assert.rejects(users.get(pk, "OTHER"), tt.ItemNotFound);
    assert.equal(await users.find(pk, "OTHER"), null);
    await assert.rejects(users.delete(pk, "PROFILE", { expectedVersion: 0 }), tt.VersionConflict);
    await users.delete(pk, "PROFILE", { expectedVersion: 1 });
    await assert.rejects(users.delete(pk, "PROFILE"), tt.ItemNotFound);
  });

  test("the update builder", async () => {
    const wallets = client.model("Wallet");
    const id = uid("w");
    await wallets.create({ id, balance: "10.5", labels: new Set(["a"]), history: [2], owner: "o", note: "n" });
    let w = await wallets.patch(id, new Update().set("owner", "p").add("balance", num("0.25"))
      .add("labels", new Set(["b", "c"])).append("history", [3]).remove("note")
      .setIfNotExists("settings", "{\"x\":1}"), { expectedVersion: 0, condition: attr("owner").eq("o") });
    assert.equal(w.owner, "p");
    assert.equal(w.balance, "10.75");
    assert.deepEqual(w.labels, new Set(["a", "b", "c"]));
    assert.deepEqual(w.history, [2, 3]);
    assert.equal(w.note, undefined);
    w = await wallets.patch(id, new Update().delete("labels", new Set(["a", "c"])).prepend("history", [1]));
    assert.deepEqual(w.labels, new Set(["b"]));
    assert.deepEqual(w.history, [1, 2, 3]);
    await assert.rejects(wallets.patch(id, new Update().set("owner", "q"), { expectedVersion: 0 }), tt.VersionConflict);
    await assert.rejects(wallets.patch(id, new Update().set("owner", "q"), { condition: attr("owner").eq("zz") }), tt.ConditionFailed);
    await assert.rejects(wallets.patch(uid("absent"), new Update().set("owner", "q")), tt.ItemNotFound);
    const up = await wallets.patch(uid("w"), new Update().set("owner", "u"), { upsert: true });
    assert.equal(up.owner, "u");
    await assert.rejects(wallets.patch(id, new Update().set("nope", 1)),
      (e: tt.TableTheoryError) => e instanceof tt.ValidationError && String(e.details.field).includes("nope"));
  });

  test("exact numbers, sets and binary", async () => {
    const x = client.model("XItem");
    const id = uid("x");
    const blob = Uint8Array.from({ length: 256 }, (_, i) => i);
    await x.create({
      id, n_big: 12345678901234567890123456789012345678n, n_frac: "0.12345678901234567890123456789012345678",
      n_neg_small: "-1E-130", tags: new Set(["alpha", "beta"]), nums: new Set(["1", "2.5", "1E+37"]),
      bins: new Set([Uint8Array.of(0, 1), Uint8Array.of(255)]), blob, flag: false, nothing: null,
      list: [1, "two", { three: num("3.25") }], map: { big: 12345678901234567890n },
    });
    const got = await x.get(id);
    assert.equal(got.n_big, "12345678901234567890123456789012345678");
    assert.equal(got.n_frac, "0.12345678901234567890123456789012345678");
    assert.equal(Number(got.n_neg_small), -1e-130);
    assert.deepEqual(got.tags, new Set(["alpha", "beta"]));
    assert.deepEqual([...(got.nums as Set<string>)].map(Number).sort((a, b) => a - b), [1, 2.5, 1e37]);
    assert.deepEqual(got.blob, blob);
    assert.deepEqual([...(got.bins as Set<Uint8Array>)].map((b) => [...b]).sort(), [[0, 1], [255]]);
    assert.equal(got.flag, false);
    assert.equal(got.nothing, null);
    assert.deepEqual(got.list, [1, "two", { three: 3.25 }]);
  });

  test("number, binary and percent-encoded keys", async () => {
    const counters = client.model("Counter");
    await counters.put({ n: num("12.5"), label: "a" });
    assert.equal((await counters.get("12.5")).label, "a");
    const blobs = client.model("Blob");
    const bid = Uint8Array.of(0, 1, 0xfe, 0xff, ...Buffer.from(randomUUID()));
    await blobs.put({ bid, label: "b" });
    assert.deepEqual(await blobs.get(bid), { bid, label: "b" });
    const users = client.model("User");
    const pk = `USER#${uid()}/a b?c%`;
    await users.create({ PK: pk, SK: "S/K#1" });
    assert.equal((await users.get(pk, "S/K#1")).PK, pk);
  });
});

describe("query, scan, count", () => {
  test("query iterates over cursors", async () => {
    const events = client.model("Event");
    const tenant = uid("ten");
    const pad = (i: number) => `E#${String(i).padStart(3, "0")}`;
    await events.batchWrite({ put: Array.from({ length: 25 }, (_, i) => ({ tenant, sk: pad(i), score: i })) });
    const all = [];
    for await (const it of events.query({ tenant }, { pageSize: 4 })) all.push(it);
    assert.deepEqual(all.map((i) => i.sk), Array.from({ length: 25 }, (_, i) => pad(i)));
    assert.equal(all[3].score, "3");
    const desc = [];
    for await (const it of events.query([attr("tenant").eq(tenant), attr("sk").beginsWith("E#01")], { order: "desc", pageSize: 3 })) desc.push(it.sk);
    assert.deepEqual(desc, Array.from({ length: 10 }, (_, i) => pad(19 - i)));
    let n = 0;
    for await (const _ of events.query({ tenant }, { limit: 7, pageSize: 3 })) n++;
    assert.equal(n, 7);
    const page = await events.queryPage({ tenant }, { limit: 5 });
    assert.equal(page.items.length, 5);
    assert.ok(page.cursor);
    const next = await events.queryPage({ tenant }, { limit: 5, cursor: page.cursor });
    assert.equal(next.items[0].sk, "E#005");
    assert.equal(await events.count({ tenant }), 25);
    assert.equal(await events.count({ tenant }, { filter: attr("score").ge(20) }), 5);
    await assert.rejects(events.queryPage({ tenant }, { cursor: "bm9wZQ==" }), tt.InvalidCursor);
  });

  test("scan and count follow cursors, also in segments", async () => {
    const counters = client.model("Counter");
    const base = BigInt(Math.floor(Math.random() * 1e9)) * 1000n;
    await counters.batchWrite({ put: Array.from({ length: 30 }, (_, i) => ({ n: base + BigInt(i), label: "scan" })) });
    const filter = attr("n").between(base, base + 29n);
    const want = Array.from({ length: 30 }, (_, i) => String(base + BigInt(i)));
    for (const segments of [undefined, 3]) {
      const seen: string[] = [];
      for await (const it of counters.scan({ filter, pageSize: 7, segments })) seen.push(it.n as string);
      assert.deepEqual(seen.sort(), [...want].sort());
    }
    assert.equal(await counters.count(undefined, { filter }), 30);
  });
});

describe("batches and transactions", () => {
  test("batch get and write", async () => {
    const wallets = client.model("Wallet");
    const ids = Array.from({ length: 5 }, () => uid("b"));
    assert.equal(await wallets.batchWrite({ put: ids.map((id, i) => ({ id, balance: i })) }), 5);
    const { items, missing } = await wallets.batchGet([{ id: ids[3] }, { id: `missing-${ids[0]}` }, { id: ids[1] }], { consistent: true });
    assert.deepEqual(items.map((i) => i.id), [ids[3], ids[1]]);
    assert.equal(items[0].balance, "3");
    assert.deepEqual(missing, [{ id: `missing-${ids[0]}` }]);
    assert.equal(await wallets.batchWrite({ delete: ids.slice(0, 2).map((id) => ({ id })) }), 2);
    const r = await wallets.batchGet(ids.map((id) => ({ id })));
    assert.equal(r.items.length, 3);
    assert.equal(r.missing.length, 2);
  });

  test("batchGet takes every key form of get", async () => {
    const users = client.model("User");
    const pk = `USER#${uid()}`;
    const stored = [];
    for (const sk of ["A", "B", "C"]) stored.push(await users.create({ PK: pk, SK: sk, nickname: sk }));
    const { items, missing } = await users.batchGet([{ PK: pk, SK: "A" }, stored[1], [pk, "C"], [pk, "absent"]]);
    assert.deepEqual(items.map((i) => i.nickname), ["A", "B", "C"]);
    assert.deepEqual(missing, [{ PK: pk, SK: "absent" }]);
    const wid = uid("w");
    await client.model("Wallet").create({ id: wid, balance: 4 });
    const w = await client.model("Wallet").batchGet([wid]);
    assert.equal(w.items[0].balance, "4");
    await assert.rejects(users.batchGet([pk]), TypeError);
  });

  test("transactions", async () => {
    const wid = uid("w");
    const pk = `USER#${uid()}`;
    const tx = client.transaction().create("Wallet", { id: wid, balance: 1 }).create("User", { PK: pk, SK: "P", nickname: "t" });
    await tx.commit();
    await tx.commit(); // the same client token: applied once, no error
    const got = await client.transactGet([{ model: "Wallet", key: { id: wid } },
      { model: "User", key: { PK: pk, SK: "P" }, select: ["nickname"] }, { model: "Wallet", key: { id: `absent-${wid}` } }]);
    assert.equal(got[0]!.balance, "1");
    assert.deepEqual(got[1], { nickname: "t" });
    assert.equal(got[2], null);
    const bad = client.transaction().update("Wallet", { id: wid }, new Update().add("balance", 5), { expectedVersion: 0 })
      .check("User", { PK: pk, SK: "P" }, { condition: attr("nickname").eq("nope") });
    await assert.rejects(bad.commit(), (e: tt.TableTheoryError) => e instanceof tt.TransactionCanceled &&
      e.reasons.map((r) => r.code).join() === "None,ConditionalCheckFailed");
    await client.transaction().update("Wallet", { id: wid }, new Update().add("balance", 5), { expectedVersion: 0 })
      .delete("User", { PK: pk, SK: "P" }).commit();
    assert.equal((await client.model("Wallet").get(wid)).balance, "6");
  });
});

describe("errors, retries, request ids", () => {
  test("X-Request-Id is propagated", async () => {
    await tt.withRequestId("trace-abc.1", async () => {
      const r = await client.request("GET", "/v1/models", { idempotent: true });
      assert.equal(r.headers["x-request-id"], "trace-abc.1");
      await assert.rejects(client.model("Wallet").get(uid("absent")),
        (e: tt.TableTheoryError) => e instanceof tt.ItemNotFound && e.requestId === "trace-abc.1");
    });
    await assert.rejects(client.model("Nope").get("x", undefined, { requestId: "call-7" }),
      (e: tt.TableTheoryError) => e instanceof tt.ModelNotFound && e instanceof tt.NotFoundError && e.requestId === "call-7");
  });

  test("retryable errors are retried", async () => {
    const wallets = client.model("Wallet");
    const id = uid("w");
    await wallets.create({ id });
    // The daemon retries the backend 4 times itself; 4 faults exhaust that budget once.
    await client.injectFault({ op: "GetItem", error: "ServiceUnavailable", times: 4 });
    assert.equal((await wallets.get(id)).id, id);
    const once = new Client({ url: client.url, maxAttempts: 1 });
    await client.injectFault({ op: "GetItem", error: "ServiceUnavailable", times: 4 });
    await assert.rejects(once.model("Wallet").get(id), (e: tt.TableTheoryError) =>
      e instanceof tt.BackendUnavailable && e.retryable && e.status === 503);
    await client.injectFault({ op: "GetItem", error: "ProvisionedThroughputExceededException", times: 4 });
    await assert.rejects(once.model("Wallet").get(id), (e: tt.TableTheoryError) =>
      e instanceof tt.Throttled && e.headers["retry-after"] !== undefined);
    await client.clearFaults();
  });

  test("non-idempotent writes are not retried", async () => {
    const wallets = client.model("Wallet");
    await client.injectFault({ op: "PutItem", error: "ServiceUnavailable", times: 4 });
    await assert.rejects(wallets.create({ id: uid("w") }), tt.BackendUnavailable);
    await client.injectFault({ op: "PutItem", error: "ServiceUnavailable", times: 4 });
    assert.equal((await wallets.put({ id: uid("w"), owner: "o" })).owner, "o");
    await client.clearFaults();
  });

  test("batch write resends the unprocessed requests", async () => {
    const wallets = client.model("Wallet");
    await client.injectFault({ op: "BatchWriteItem", error: "Unprocessed", times: 6 });
    const ids = Array.from({ length: 30 }, () => uid("u"));
    assert.equal(await wallets.batchWrite({ put: ids.map((id) => ({ id })) }), 30);
    await client.clearFaults();
    const r = await wallets.batchGet(ids.map((id) => ({ id })));
    assert.equal(r.items.length, 30);
  });
});

describe("job ledger", () => {
  test("jobs, records and idempotency", async () => {
    const jobs = client.jobs;
    const tenant = uid("tenant");
    const job = await jobs.create({ tenant_id: tenant, job_id: uid("job") });
    assert.equal(job.status, "PENDING");
    assert.equal(job.version, 1);
    await assert.rejects(jobs.create({ tenant_id: tenant, job_id: job.job_id }), tt.AlreadyExists);
    await assert.rejects(jobs.get(uid("nojob")), tt.JobNotFound);
    await daemon.advanceClock(1); // the list is in created_at order; the clock is frozen
    const other = await jobs.create({ tenant_id: tenant });
    const listed = [];
    for await (const j of jobs.list({ tenant_id: tenant, pageSize: 1 })) listed.push(j.job_id);
    assert.deepEqual(listed, [job.job_id, other.job_id]);
    assert.equal((await jobs.transition(job.job_id, 1, "PENDING", "RUNNING")).version, 2);
    await assert.rejects(jobs.transition(job.job_id, 1, null, "SUCCEEDED"), tt.VersionConflict);
    for (let i = 0; i < 5; i++) await jobs.putRecord(job.job_id, `r${i}`, "PENDING");
    const rec = await jobs.putRecord(job.job_id, "r1", "FAILED", { error: { type: "E", message: "password=hunter2", retryable: false } });
    assert.ok(!JSON.stringify(rec.error).includes("hunter2"));
    assert.equal((await jobs.getRecord(job.job_id, "r1")).status, "FAILED");
    const pending = [];
    for await (const r of jobs.records(job.job_id, { status: "PENDING", pageSize: 2 })) pending.push(r.record_id);
    assert.deepEqual(pending, ["r0", "r2", "r3", "r4"]);
    assert.equal((await jobs.beginRequest(job.job_id, "charge-1")).outcome, "created");
    assert.equal((await jobs.beginRequest(job.job_id, "charge-1")).outcome, "already_in_progress");
    const done = await jobs.completeRequest(job.job_id, "charge-1", { result: { id: "ch_1", n: 7 } });
    assert.deepEqual(done.result, { id: "ch_1", n: 7 });
    const again = await jobs.beginRequest(job.job_id, "charge-1");
    assert.equal(again.outcome, "already_completed");
    assert.deepEqual(again.result, done.result);
    const fin = await jobs.transition(job.job_id, 2, null, "SUCCEEDED");
    await assert.rejects(jobs.transition(job.job_id, fin.version, null, "RUNNING"), tt.InvalidTransition);
  });

  test("leases", async () => {
    const jobs = client.jobs;
    const jid = (await jobs.create({ tenant_id: "t", job_id: uid("job") })).job_id;
    const got = await jobs.acquireLease(jid, "a", 60);
    assert.equal(got.owner, "a");
    const again = await jobs.acquireLease(jid, "a", 90); // the clock is frozen: exactly 30 s more
    assert.equal(again.expires_at, got.expires_at + 30);
    assert.equal((await jobs.acquireLease(jid, "a", 60)).owner, "a");
    await assert.rejects(jobs.acquireLease(jid, "b", 60), tt.LeaseHeld);
    await assert.rejects(jobs.refreshLease(jid, "b", 60), tt.LeaseNotOwned);
    await jobs.refreshLease(jid, "a", 60);
    await assert.rejects(jobs.releaseLease(jid, "b"), tt.LeaseNotOwned);
    await jobs.releaseLease(jid, "a");
    await jobs.releaseLease(jid, "a");
    assert.equal((await jobs.acquireLease(jid, "b", 60)).owner, "b");
  });

  test("the worker helper holds, refreshes and releases the lease", async () => {
    const jobs = client.jobs;
    const jid = (await jobs.create({ tenant_id: "t", job_id: uid("job") })).job_id;
    const out = await jobs.withLease(jid, async (lease) => {
      const first = lease.expiresAt;
      await daemon.advanceClock(1000); // the next refresh moves the expiry a second on
      const deadline = Date.now() + 30000;
      while (lease.expiresAt === first && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.ok(lease.expiresAt > first, "the background refresh never ran");
      await assert.rejects(jobs.acquireLease(jid, "other", 60), tt.LeaseHeld);
      lease.check();
      return "done";
    }, { owner: "worker-1", durationSeconds: 30, refreshEveryMs: 100 });
    assert.equal(out, "done");
    assert.equal((await jobs.acquireLease(jid, "other", 60)).owner, "other");
  });

  test("the worker learns that its lease was lost", async () => {
    const jobs = client.jobs;
    const jid = (await jobs.create({ tenant_id: "t", job_id: uid("job") })).job_id;
    await jobs.withLease(jid, async (lease) => {
      lease.refreshEveryMs = 3_600_000;
      await daemon.advanceClock(2000); // past the 1 s lease's expiry on the daemon's clock
      await jobs.acquireLease(jid, "fast", 60);
      await assert.rejects(lease.refresh(), tt.LeaseNotOwned);
      lease.refreshEveryMs = 50;
      if (!lease.signal.aborted) {
        // The pending long timer is replaced by a short one through stop/acquire-less restart.
        (lease as unknown as { schedule(): void }).schedule();
        await new Promise((res) => lease.signal.addEventListener("abort", res, { once: true }));
      }
      assert.ok(lease.lost);
      assert.throws(() => lease.check(), tt.LeaseNotOwned);
    }, { owner: "slow", durationSeconds: 1, refreshEveryMs: 3_600_000 });
    await assert.rejects(jobs.acquireLease(jid, "third", 60), tt.LeaseHeld);
  });
});

describe("models and tables", () => {
  test("register a model, ensure and describe its table", async () => {
    const name = `Note${randomUUID().slice(0, 8)}`;
    const doc = {
      dms_version: "0.2", name, table: { name: `${name.toLowerCase()}_t` },
      keys: { partition: { attribute: "id", type: "S" } },
      attributes: [{ attribute: "id", type: "S", roles: ["pk"] }, { attribute: "n", type: "N", optional: true }],
    };
    assert.equal(await client.registerModel(doc), true);
    assert.equal(await client.registerModel(doc), false); // identical: nothing changed
    assert.ok((await client.models()).some((m) => m.name === name));
    const notes = client.model(name);
    assert.equal((await notes.definition()).keys.partition.attribute, "id");
    assert.equal(await notes.ensureTable(), false); // the memory backend made it with the model
    const info = await notes.table();
    assert.equal(info.status, "ACTIVE");
    assert.equal(info.item_count, 0);
    await notes.put({ id: "a", n: "1.50" });
    assert.equal(Number((await notes.get("a")).n), 1.5);
    const changed = { ...doc, attributes: [...doc.attributes, { attribute: "s", type: "S", optional: true }] };
    await assert.rejects(client.registerModel(changed), tt.AlreadyExists);
    const retyped = { ...doc, attributes: [doc.attributes[0], { attribute: "n", type: "S", optional: true }] };
    await assert.rejects(client.registerModel(retyped, { replace: true }), tt.UnsafeModelChange);
    assert.equal(await client.registerModel(retyped, { replace: true, allowUnsafe: true }), false);
    assert.equal((await notes.definition()).attributes[1].type, "S");
    await assert.rejects(client.model(`Absent${name}`).table(), tt.ModelNotFound);
  });

  test("deleteTable: Forbidden by default, deletes with --allow-table-delete", async () => {
    await assert.rejects(client.model("User").deleteTable(), tt.Forbidden);
    const d = await Daemon.start("--allow-table-delete");
    try {
      const c = new Client({ url: d.url });
      const name = `Gone${randomUUID().slice(0, 8)}`;
      await c.registerModel({
        dms_version: "0.2", name, table: { name: `${name.toLowerCase()}_t` },
        keys: { partition: { attribute: "id", type: "S" } },
        attributes: [{ attribute: "id", type: "S", roles: ["pk"] }],
      });
      const m = c.model(name);
      await m.ensureTable();
      await m.put({ id: "a" });
      assert.equal((await m.table()).item_count, 1);
      assert.equal(await m.deleteTable(), undefined);
      await assert.rejects(m.table(), tt.TableNotFound);
    } finally {
      await d.stop();
    }
  });
});
