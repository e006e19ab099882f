// SPDX-License-Identifier: Apache-2.0
// Exact JSON for the daemon: bigint and Num travel as JSON numbers (never through a
// double), Uint8Array as base64, Set as an array. Reading turns a model's N/B/SS/NS/BS
// attributes into decimal strings, Uint8Array and Sets.

/** An exact decimal number given as text, sent as a JSON number (e.g. inside a map). */
export class Num {
  readonly text: string;
  constructor(text: string | number | bigint) {
    const t = String(text);
    if (!/^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(t)) throw new TypeError(`not a decimal number: ${t}`);
    this.text = t;
  }
  toString(): string { return this.text; }
  toJSON(): string { return this.text; }
}

/** Shorthand for new Num(text). */
export function num(text: string | number | bigint): Num { return new Num(text); }

export function b64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

export function unb64(text: string): Uint8Array {
  const buf = Buffer.from(text, "base64");
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

function sortedSet(s: Set<unknown>): unknown[] {
  const arr = [...s];
  if (arr.every((x) => typeof x === "string")) return (arr as string[]).sort();
  return arr;
}

/** The JSON text of a value (see the file comment for the non-JSON types). */
export function encode(value: unknown): string {
  const out: string[] = [];
  enc(value, out);
  return out.join("");
}

function enc(v: unknown, out: string[]): void {
  switch (typeof v) {
    case "string": out.push(JSON.stringify(v)); return;
    case "boolean": out.push(v ? "true" : "false"); return;
    case "bigint": out.push(v.toString()); return;
    case "number":
      if (!Number.isFinite(v)) throw new TypeError("a number must be finite");
      out.push(String(v));
      return;
    case "undefined": out.push("null"); return;
    case "object": break;
    default: throw new TypeError(`cannot send a ${typeof v} as JSON`);
  }
  if (v === null) { out.push("null"); return; }
  if (v instanceof Num) { out.push(v.text); return; }
  if (v instanceof Uint8Array) { out.push(`"${b64(v)}"`); return; }
  if (Array.isArray(v)) {
    out.push("[");
    v.forEach((x, i) => { if (i) out.push(","); enc(x, out); });
    out.push("]");
    return;
  }
  if (v instanceof Set) { enc(sortedSet(v), out); return; }
  const withJson = v as { toJSON?: () => unknown };
  if (typeof withJson.toJSON === "function") { enc(withJson.toJSON(), out); return; }
  out.push("{");
  let first = true;
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (x === undefined) continue;
    if (!first) out.push(",");
    first = false;
    out.push(JSON.stringify(k), ":");
    enc(x, out);
  }
  out.push("}");
}

/** Exact decimal text of a JSON number the daemon sent: it sends a JSON number only when
 * a double carries it exactly (up to 15 significant digits), so String() recovers it. */
export function decimalText(v: unknown): string {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "bigint") return String(v);
  if (v instanceof Num) return v.text;
  throw new TypeError(`not a number: ${String(v)}`);
}

export interface ModelDoc {
  name: string;
  keys: { partition: { attribute: string; type: string }; sort?: { attribute: string; type: string } };
  attributes: { attribute: string; type: string; format?: string; roles?: string[]; [k: string]: unknown }[];
  [k: string]: unknown;
}

/** What the reader needs of a model. */
export class ModelTypes {
  readonly types = new Map<string, string>();
  readonly ints = new Set<string>();
  readonly pk: string;
  readonly sk?: string;
  constructor(readonly doc: ModelDoc) {
    for (const a of doc.attributes) {
      this.types.set(a.attribute, a.type);
      const roles = a.roles ?? [];
      if (a.format === "int" || a.format === "unix_seconds" || roles.includes("version") ||
        roles.includes("ttl")) this.ints.add(a.attribute);
    }
    this.pk = doc.keys.partition.attribute;
    this.sk = doc.keys.sort?.attribute;
  }

  /** Converts a wire item in place: N -> decimal string (integers of `format: int`,
   * version and ttl -> number, or bigint past 2^53), B -> Uint8Array, sets -> Set. */
  decodeItem<T = Item>(item: unknown): T {
    if (!item || typeof item !== "object") return item as T;
    const obj = item as Record<string, unknown>;
    for (const [name, v] of Object.entries(obj)) {
      const t = this.types.get(name);
      if (t === undefined || v === null) continue;
      switch (t) {
        case "N":
          if (this.ints.has(name)) {
            if (typeof v === "string") obj[name] = /^-?\d+$/.test(v) ? toInt(BigInt(v)) : v;
          } else {
            obj[name] = decimalText(v);
          }
          break;
        case "B": obj[name] = unb64(v as string); break;
        case "SS": obj[name] = new Set(v as string[]); break;
        case "NS": obj[name] = new Set((v as unknown[]).map(decimalText)); break;
        case "BS": obj[name] = new Set((v as string[]).map(unb64)); break;
      }
    }
    return obj as T;
  }
}

function toInt(b: bigint): number | bigint {
  return b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
}

export type Item = Record<string, unknown>;
export type KeyValue = string | number | bigint | Num | Uint8Array;

/** One percent-encoded path segment: strings as they are, numbers as decimal text,
 * binaries as base64url (docs/api.md). */
export function keySegment(v: unknown): string {
  let text: string;
  if (typeof v === "string") text = v;
  else if (typeof v === "number" || typeof v === "bigint") text = String(v);
  else if (v instanceof Num) text = v.text;
  else if (v instanceof Uint8Array) text = Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("base64url");
  else throw new TypeError(`a key must be a string, number, bigint, Num or Uint8Array, not ${typeof v}`);
  return encodeURIComponent(text);
}
