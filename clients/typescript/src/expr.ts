// SPDX-License-Identifier: Apache-2.0
// Builders for the daemon's condition language and operator-form updates (docs/api.md).
// Values are sent as values; the daemon binds them as placeholders.

export type CondJson = Record<string, unknown> | CondJson[];

/** A condition; combine with and(), or(), not(). Plain objects work too. */
export class Cond {
  constructor(readonly doc: CondJson) {}
  and(...others: (Cond | CondJson)[]): Cond { return new Cond({ and: [this.doc, ...others.map(condJson)] }); }
  or(...others: (Cond | CondJson)[]): Cond { return new Cond({ or: [this.doc, ...others.map(condJson)] }); }
  not(): Cond { return new Cond({ not: this.doc }); }
  toJSON(): CondJson { return this.doc; }
}

export function condJson(c: Cond | CondJson): CondJson {
  if (c instanceof Cond) return c.doc;
  if (Array.isArray(c)) return c.map(condJson);
  return c;
}

export const and = (...cs: (Cond | CondJson)[]): Cond => new Cond({ and: cs.map(condJson) });
export const or = (...cs: (Cond | CondJson)[]): Cond => new Cond({ or: cs.map(condJson) });
export const not = (c: Cond | CondJson): Cond => new Cond({ not: condJson(c) });

class Size {
  constructor(private readonly path: string) {}
  private op(op: string, n: number): Cond { return new Cond({ attr: this.path, size: op, value: n }); }
  eq(n: number): Cond { return this.op("=", n); }
  ne(n: number): Cond { return this.op("<>", n); }
  lt(n: number): Cond { return this.op("<", n); }
  le(n: number): Cond { return this.op("<=", n); }
  gt(n: number): Cond { return this.op(">", n); }
  ge(n: number): Cond { return this.op(">=", n); }
}

/** An attribute path ("a.b[0]") to build conditions on: attr("a").eq(1). */
export class Attr {
  constructor(readonly path: string) {}
  private op(op: string, value?: unknown): Cond {
    return new Cond(value === undefined ? { attr: this.path, op } : { attr: this.path, op, value });
  }
  eq(v: unknown): Cond { return this.op("=", v); }
  ne(v: unknown): Cond { return this.op("<>", v); }
  lt(v: unknown): Cond { return this.op("<", v); }
  le(v: unknown): Cond { return this.op("<=", v); }
  gt(v: unknown): Cond { return this.op(">", v); }
  ge(v: unknown): Cond { return this.op(">=", v); }
  between(lo: unknown, hi: unknown): Cond { return this.op("between", [lo, hi]); }
  in(values: Iterable<unknown>): Cond { return this.op("in", [...values]); }
  beginsWith(prefix: string | Uint8Array): Cond { return this.op("begins_with", prefix); }
  contains(v: unknown): Cond { return this.op("contains", v); }
  notContains(v: unknown): Cond { return this.op("not_contains", v); }
  exists(): Cond { return this.op("exists"); }
  notExists(): Cond { return this.op("not_exists"); }
  isType(t: string): Cond { return this.op("type", t); }
  get size(): Size { return new Size(this.path); }
}

export const attr = (path: string): Attr => new Attr(path);

type OpName = "set" | "set_if_not_exists" | "add" | "delete" | "append" | "prepend";

/** An operator-form update: new Update().set("a", 1).remove("b").add("n", 2)... */
export class Update {
  private readonly doc: Record<string, unknown> = {};
  private put(op: OpName, path: string | Record<string, unknown>, value?: unknown): this {
    const d = (this.doc[op] ??= {}) as Record<string, unknown>;
    if (typeof path === "string") d[path] = value;
    else Object.assign(d, path);
    return this;
  }
  set(path: string | Record<string, unknown>, value?: unknown): this { return this.put("set", path, value); }
  setIfNotExists(path: string | Record<string, unknown>, value?: unknown): this { return this.put("set_if_not_exists", path, value); }
  /** Adds to a number, or members to a set. */
  add(path: string | Record<string, unknown>, value?: unknown): this { return this.put("add", path, value); }
  /** Removes members from a set. */
  delete(path: string | Record<string, unknown>, value?: unknown): this { return this.put("delete", path, value); }
  append(path: string | Record<string, unknown>, value?: unknown[]): this { return this.put("append", path, value); }
  prepend(path: string | Record<string, unknown>, value?: unknown[]): this { return this.put("prepend", path, value); }
  remove(...paths: string[]): this {
    ((this.doc.remove ??= []) as string[]).push(...paths);
    return this;
  }
  toJSON(): Record<string, unknown> { return { ...this.doc }; }
}
