// SPDX-License-Identifier: Apache-2.0
// clients_ts.mjs -- the TypeScript client's overhead per call against raw HTTP.
//
// Starts a daemon on the memory backend, stores one User item, then times N GETs of it
// through raw fetch (+ res.json()) and N through the client's model("User").get() (request
// id, retries, error mapping, Set decoding) and N through the typed layer
// (TypedClient.model(USER).get(key), USER as tools/typegen generates it), alternating call
// by call; prints the median and 10th percentile time per call of each and their ratios
// (target <= 1.3). Build the client first
// (clients/typescript/test.sh, or npm ci && npx tsc there).
//
//     node bench/clients_ts.mjs [--calls N] [--daemon PATH]
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const { Client, TypedClient, wire } = await import(join(ROOT, "clients", "typescript", "dist", "src", "index.js"));

const { values } = parseArgs({ options: {
  calls: { type: "string", default: "20000" },
  daemon: { type: "string", default: process.env.TT_DAEMON ?? join(ROOT, "_build", "tabletheoryd") },
} });
const calls = Number(values.calls);

const proc = spawn(values.daemon, ["--listen", "127.0.0.1:0", "--backend", "memory",
  "--models", join(ROOT, "examples", "models")], { stdio: ["ignore", "ignore", "pipe"] });
const listen = await new Promise((resolve, reject) => {
  let buf = "";
  const onData = (c) => {
    buf += c;
    const lines = buf.split("\n");
    buf = lines.pop();
    for (const line of lines) {
      try {
        const j = JSON.parse(line);
        if (j.event === "daemon.ready") {
          proc.stderr.off("data", onData);
          resolve(j.listen);
        }
      } catch { /* not JSON */ }
    }
  };
  proc.stderr.on("data", onData);
  proc.on("exit", () => reject(new Error("daemon exited")));
});
proc.stderr.resume();

try {
  const base = `http://${listen}`;
  const client = new Client({ url: base });
  const users = client.model("User");
  await users.put({ PK: "USER#1", SK: "PROFILE", nickname: "al", tags: new Set(["a", "b"]) });
  const url = `${base}/v1/models/User/items/USER%231/PROFILE`;
  const raw = async () => {
    const res = await fetch(url);
    const body = await res.json();
    if (res.status !== 200 || body.nickname !== "al") throw new Error("bad answer");
  };
  const typed = async () => {
    const item = await users.get("USER#1", "PROFILE");
    if (item.nickname !== "al") throw new Error("bad answer");
  };
  // examples/typescript/models_gen.ts's USER (the conversions it generates), in plain JS.
  const USER = {
    name: "User",
    fromWire(d) {
      const o = { PK: d.PK, SK: d.SK };
      if (d.createdAt != null) o.createdAt = d.createdAt;
      if (d.emailHash != null) o.emailHash = d.emailHash;
      if (d.nickname != null) o.nickname = d.nickname;
      if (d.profile != null) o.profile = d.profile;
      if (d.tags != null) o.tags = wire.ss(d.tags);
      if (d.ttl != null) o.ttl = wire.int(d.ttl);
      if (d.updatedAt != null) o.updatedAt = d.updatedAt;
      if (d.version != null) o.version = wire.int(d.version);
      return o;
    },
    keyParts(k) { return [k.PK, k.SK]; },
  };
  const genUsers = new TypedClient({ url: base }).model(USER);
  const genKey = { PK: "USER#1", SK: "PROFILE" };
  const generated = async () => {
    const item = await genUsers.get(genKey);
    if (item === null || item.nickname !== "al") throw new Error("bad answer");
  };
  for (const fn of [raw, typed, generated]) for (let i = 0; i < 300; i++) await fn();
  // One call of each, alternately (the order swapped every time), each timed alone: the
  // machine's load changes both sides alike, and the medians ignore outliers.
  const per = { raw: [], client: [], typed: [] };
  for (let i = 0; i < calls; i++) {
    const order = i % 2 ? [["raw", raw], ["client", typed], ["typed", generated]]
      : [["typed", generated], ["client", typed], ["raw", raw]];
    for (const [name, fn] of order) {
      const t0 = process.hrtime.bigint();
      await fn();
      per[name].push(Number(process.hrtime.bigint() - t0) / 1000);
    }
  }
  const pct = (a, p) => [...a].sort((x, y) => x - y)[Math.floor(a.length * p)];
  const f = (x) => x.toFixed(1).padStart(8);
  console.log(`node ${process.version}: GET one item, ${calls} calls each way, alternating`);
  console.log("                                 median       p10   (us/call)");
  console.log(`  raw fetch + res.json()       ${f(pct(per.raw, 0.5))}  ${f(pct(per.raw, 0.1))}`);
  console.log(`  tabletheoryd client .get()   ${f(pct(per.client, 0.5))}  ${f(pct(per.client, 0.1))}`);
  console.log(`  typed .get(key) -> User      ${f(pct(per.typed, 0.5))}  ${f(pct(per.typed, 0.1))}`);
  for (const name of ["client", "typed"]) {
    console.log(`  ${`ratio ${name}/raw`.padEnd(29)}${(pct(per[name], 0.5) / pct(per.raw, 0.5)).toFixed(2).padStart(8)}  ${(pct(per[name], 0.1) / pct(per.raw, 0.1)).toFixed(2).padStart(8)}  (target <= 1.3)`);
  }
} finally {
  proc.kill("SIGTERM");
}
