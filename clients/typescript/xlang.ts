// SPDX-License-Identifier: Apache-2.0
// The TypeScript client's program of the cross-language test (clients/XLANG.md):
// xlang write PREFIX | read PREFIX | lease JOBPREFIX WORKER N.
import { Client, LeaseHeld, Update, b64 } from "./src/index.js";

async function write(client: Client, prefix: string): Promise<void> {
  const x = client.model("XItem");
  await x.create({
    id: `${prefix}-1`,
    n_big: 12345678901234567890123456789012345678n,
    n_frac: "0.12345678901234567890123456789012345678",
    n_neg_small: "-1E-130",
    tags: new Set(["alpha", "beta", "gamma"]),
    nums: new Set(["1", "2.5", "-3", "10000000000000000000000000000000000000"]),
    bins: new Set([Uint8Array.of(0x00, 0x01), Uint8Array.of(0xff)]),
    blob: Uint8Array.from({ length: 256 }, (_, i) => i),
    flag: false,
    nothing: null,
    list: [1, "two", { three: 3 }],
    map: { k: "v", n: 42, deep: { x: [true, null] } },
  });
  await x.patch(`${prefix}-1`, new Update().set("flag", true));
}

function byCodePoint(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0)!);
  const y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

// Exact comparison of two decimal strings by value.
function decimalParts(s: string): { neg: boolean; digits: string; exp: number } {
  const m = /^([-+]?)(\d*)(?:\.(\d*))?(?:[eE]([-+]?\d+))?$/.exec(s.trim());
  if (!m) throw new TypeError(`not a decimal: ${s}`);
  let digits = (m[2] ?? "") + (m[3] ?? "");
  let exp = Number(m[4] ?? 0) - (m[3] ?? "").length;
  digits = digits.replace(/^0+/, "");
  const trimmed = digits.replace(/0+$/, "");
  exp += digits.length - trimmed.length;
  return { neg: m[1] === "-" && trimmed !== "", digits: trimmed, exp };
}

function compareDecimal(a: string, b: string): number {
  const x = decimalParts(a);
  const y = decimalParts(b);
  if (x.neg !== y.neg) return x.neg ? -1 : 1;
  const sign = x.neg ? -1 : 1;
  if (!x.digits || !y.digits) return sign * ((x.digits ? 1 : 0) - (y.digits ? 1 : 0));
  const mx = x.digits.length + x.exp;
  const my = y.digits.length + y.exp;
  if (mx !== my) return sign * (mx - my);
  const len = Math.max(x.digits.length, y.digits.length);
  const dx = x.digits.padEnd(len, "0");
  const dy = y.digits.padEnd(len, "0");
  return sign * (dx < dy ? -1 : dx > dy ? 1 : 0);
}

function canonical(v: unknown): unknown {
  if (v === null || typeof v === "boolean" || typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "bigint") return String(v);
  if (v instanceof Uint8Array) return b64(v);
  if (Array.isArray(v)) return v.map(canonical);
  if (typeof v === "object") return Object.fromEntries(Object.entries(v as object).map(([k, x]) => [k, canonical(x)]));
  throw new TypeError(`unexpected ${typeof v}`);
}

async function read(client: Client, prefix: string, types: Map<string, string>): Promise<void> {
  const item = await client.model("XItem").get(`${prefix}-1`, undefined, { consistent: true });
  const out: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(item)) {
    if (v instanceof Set) {
      const t = types.get(name);
      if (t === "SS") out[name] = [...(v as Set<string>)].sort(byCodePoint);
      else if (t === "NS") out[name] = [...(v as Set<string>)].sort(compareDecimal);
      else out[name] = [...(v as Set<Uint8Array>)].map(b64).sort();
    } else {
      out[name] = canonical(v);
    }
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}

async function lease(client: Client, jobPrefix: string, worker: string, n: string): Promise<void> {
  for (let i = 1; i <= Number(n); i++) {
    const job = `${jobPrefix}-${i}`;
    try {
      await client.jobs.acquireLease(job, worker, 60);
      process.stdout.write(`${job} won\n`);
    } catch (e) {
      if (!(e instanceof LeaseHeld)) throw e;
      process.stdout.write(`${job} lost\n`);
    }
  }
}

async function main(argv: string[]): Promise<number> {
  const [cmd, ...args] = argv;
  const arity: Record<string, number> = { write: 1, read: 1, lease: 3 };
  if (!(cmd in arity) || args.length !== arity[cmd]) {
    process.stderr.write("usage: xlang write PREFIX | read PREFIX | lease JOBPREFIX WORKER N\n");
    return 2;
  }
  try {
    const client = Client.fromEnv();
    if (cmd === "write") await write(client, args[0]);
    else if (cmd === "read") {
      const doc = await client.model("XItem").definition();
      await read(client, args[0], new Map(doc.attributes.map((a) => [a.attribute, a.type])));
    } else await lease(client, args[0], args[1], args[2]);
    return 0;
  } catch (e) {
    process.stderr.write(`xlang (typescript): ${String(e)}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
