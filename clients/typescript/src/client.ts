// SPDX-License-Identifier: Apache-2.0
// The client: configuration, requests with retries and request ids, models and items,
// query/scan iterators, batches and transactions.
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";

import {
  BatchIncomplete, ItemNotFound, TableTheoryError, TransportError, fromEnvelope,
} from "./errors.js";
import { Cond, CondJson, Update, condJson } from "./expr.js";
import { Jobs } from "./ledger.js";
import { Item, KeyValue, ModelDoc, ModelTypes, Num, encode, keySegment } from "./values.js";

export const DEFAULT_URL = "http://127.0.0.1:8737";

const requestIdContext = new AsyncLocalStorage<string>();

/** Runs fn with this X-Request-Id on every call it makes (through async calls too). */
export function withRequestId<T>(requestId: string, fn: () => T): T {
  return requestIdContext.run(requestId, fn);
}

// Codes that mean the daemon did not apply the request: any request may be resent.
const NOT_APPLIED = new Set(["Throttled", "Draining"]);

export interface ClientOptions {
  /** http://host:port (default $TABLETHEORYD_URL, then http://127.0.0.1:8737). */
  url?: string;
  /** Bearer token; default: the contents of the file $TABLETHEORYD_TOKEN_FILE. */
  token?: string;
  tokenFile?: string;
  /** Milliseconds per HTTP exchange (default 30000). */
  timeoutMs?: number;
  /** Tries of a retryable failure (default 4; 1 = no retries). */
  maxAttempts?: number;
  /** [base, cap] milliseconds of the full-jitter exponential backoff (default [50, 2000]). */
  backoffMs?: [number, number];
}

export interface CallOptions {
  requestId?: string;
  signal?: AbortSignal;
}

export interface RequestOptions extends CallOptions {
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined | null>;
  headers?: Record<string, string>;
  /** May be resent after an ambiguous failure (default false). */
  idempotent?: boolean;
}

export interface Response<T = any> {
  status: number;
  headers: Record<string, string>;
  body: T;
}

/** A connection to one tabletheoryd. Node's fetch keeps connections alive and reuses them
 * (undici's global pool), so share one Client per process. */
export class Client {
  readonly url: string;
  readonly timeoutMs: number;
  readonly maxAttempts: number;
  readonly backoffMs: [number, number];
  readonly jobs: Jobs;
  private readonly auth?: string;
  private readonly models_ = new Map<string, Promise<ModelTypes>>();
  private readonly loaded_ = new Map<string, ModelTypes>();

  constructor(opts: ClientOptions = {}) {
    this.url = (opts.url ?? process.env.TABLETHEORYD_URL ?? DEFAULT_URL).replace(/\/+$/, "");
    if (!/^https?:\/\//.test(this.url)) {
      throw new TypeError("TABLETHEORYD_URL must be http://host:port (unix sockets: use the Python or Go client)");
    }
    let token = opts.token;
    const tokenFile = opts.tokenFile ?? process.env.TABLETHEORYD_TOKEN_FILE;
    if (token === undefined && tokenFile) token = readFileSync(tokenFile, "utf8").trim();
    if (token) this.auth = `Bearer ${token}`;
    this.timeoutMs = opts.timeoutMs ?? 30000;
    this.maxAttempts = Math.max(1, opts.maxAttempts ?? 4);
    this.backoffMs = opts.backoffMs ?? [50, 2000];
    this.jobs = new Jobs(this);
  }

  /** A client configured from TABLETHEORYD_URL and TABLETHEORYD_TOKEN_FILE. */
  static fromEnv(opts: Omit<ClientOptions, "url" | "token" | "tokenFile"> = {}): Client {
    return new Client(opts);
  }

  /** One API call; resolves to the parsed answer or throws the error class of its code.
   * Retryable failures are retried with backoff when the call is idempotent, and always
   * when the daemon did not apply the request (Throttled, Draining, no connection). */
  async request<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<Response<T>> {
    const rid = opts.requestId ?? requestIdContext.getStore() ?? randomUUID().replaceAll("-", "");
    const headers: Record<string, string> = { "X-Request-Id": rid };
    if (this.auth) headers.Authorization = this.auth;
    Object.assign(headers, opts.headers);
    let payload: string | undefined;
    if (opts.body !== undefined) {
      payload = encode(opts.body);
      headers["Content-Type"] = "application/json";
    }
    if (opts.query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(opts.query)) if (v !== undefined && v !== null) q.set(k, String(v));
      const s = q.toString();
      if (s) path += "?" + s.replaceAll("+", "%20");
    }
    for (let attempt = 1; ; attempt++) {
      let res: globalThis.Response;
      try {
        const timeout = AbortSignal.timeout(this.timeoutMs);
        const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
        res = await fetch(this.url + path, { method, headers, body: payload, signal });
      } catch (e) {
        if (opts.signal?.aborted) throw e;
        const refused = (e as { cause?: { code?: string } }).cause?.code === "ECONNREFUSED";
        const err = new TransportError(`request to ${this.url} failed: ${(e as Error).message}`,
          { requestId: rid, cause: e });
        if ((refused || opts.idempotent) && attempt < this.maxAttempts) {
          await this.sleep(attempt, undefined);
          continue;
        }
        throw err;
      }
      const text = await res.text();
      const rh: Record<string, string> = {};
      res.headers.forEach((v, k) => { rh[k] = v; });
      if (res.status < 300) {
        return { status: res.status, headers: rh, body: (text ? JSON.parse(text) : undefined) as T };
      }
      let parsed: unknown;
      try { parsed = text ? JSON.parse(text) : undefined; } catch { parsed = undefined; }
      const err = fromEnvelope(res.status, parsed, rh, rid);
      if (err.retryable && attempt < this.maxAttempts && (opts.idempotent || NOT_APPLIED.has(err.code))) {
        await this.sleep(attempt, rh["retry-after"]);
        continue;
      }
      throw err;
    }
  }

  /** @internal */
  async sleep(attempt: number, retryAfter: string | undefined): Promise<void> {
    const [base, cap] = this.backoffMs;
    let delay = Math.random() * Math.min(cap, base * 2 ** (attempt - 1));
    const ra = retryAfter === undefined ? NaN : Number(retryAfter);
    if (!Number.isNaN(ra)) delay = Math.max(delay, Math.min(ra, 30) * 1000);
    await new Promise((r) => setTimeout(r, delay));
  }

  // -- system and models -------------------------------------------------------------

  async health(): Promise<unknown> {
    return (await this.request("GET", "/healthz", { idempotent: true })).body;
  }

  /** GET /readyz: true when the daemon is ready for traffic, false when it answers 503
   * (models not loaded yet, or draining). Other failures are thrown. */
  async ready(opts: CallOptions = {}): Promise<boolean> {
    try {
      await this.request("GET", "/readyz", { ...opts, idempotent: false });
      return true;
    } catch (e) {
      if (e instanceof TableTheoryError && e.status === 503) return false;
      throw e;
    }
  }

  /** Every registered model (normalized DMS documents). */
  async models(opts: CallOptions = {}): Promise<ModelDoc[]> {
    return (await this.request("GET", "/v1/models", { ...opts, idempotent: true })).body.models;
  }

  /** PUT a DMS model; true when it was new or replaced, false when identical. allowUnsafe
   * (with replace) lets through a replace that stored items do not survive
   * (UnsafeModelChange otherwise; docs/models.md "Replacing a model"). */
  async registerModel(
    doc: ModelDoc, opts: CallOptions & { replace?: boolean; allowUnsafe?: boolean } = {},
  ): Promise<boolean> {
    const r = await this.request("PUT", `/v1/models/${encodeURIComponent(doc.name)}`, {
      ...opts, body: doc, idempotent: true,
      query: { replace: opts.replace ? "true" : undefined, allow_unsafe: opts.allowUnsafe ? "true" : undefined },
    });
    this.models_.delete(doc.name);
    this.loaded_.delete(doc.name);
    return r.status === 201;
  }

  /** The handle of one model (its definition is fetched once, when first needed). */
  model<T extends Item = Item>(name: string): Model<T> {
    return new Model<T>(this, name);
  }

  /** @internal The model's types when already loaded (no promise to await). */
  loadedTypes(name: string): ModelTypes | undefined {
    return this.loaded_.get(name);
  }

  /** @internal */
  types(name: string, requestId?: string): Promise<ModelTypes> {
    let p = this.models_.get(name);
    if (!p) {
      p = this.request("GET", `/v1/models/${encodeURIComponent(name)}`, { idempotent: true, requestId })
        .then((r) => {
          const t = new ModelTypes(r.body);
          this.loaded_.set(name, t);
          return t;
        });
      p.catch(() => this.models_.delete(name));
      this.models_.set(name, p);
    }
    return p;
  }

  // -- transactions --------------------------------------------------------------------

  /** A write transaction to fill and commit(). */
  transaction(opts: { clientToken?: string; retryConflicts?: boolean } = {}): Transaction {
    return new Transaction(this, opts.clientToken ?? randomUUID(), opts.retryConflicts ?? false);
  }

  /** Reads items of any models at one point in time; null for a missing one. */
  async transactGet(gets: { model: string; key: Item; select?: string[] }[],
    opts: CallOptions = {}): Promise<(Item | null)[]> {
    const r = await this.request("POST", "/v1/transactions/get", {
      ...opts, idempotent: true, body: { items: gets.map((g) => ({ model: g.model, key: g.key, select: g.select })) },
    });
    const out: (Item | null)[] = [];
    for (const [i, it] of (r.body.items as (Item | null)[]).entries()) {
      out.push(it === null ? null : (await this.types(gets[i].model)).decodeItem(it));
    }
    return out;
  }

  /** Test helper: POST /v1/_faults (daemon started with --enable-fault-injection). */
  async injectFault(spec: Record<string, unknown>): Promise<void> {
    await this.request("POST", "/v1/_faults", { body: spec });
  }

  async clearFaults(): Promise<void> {
    await this.request("DELETE", "/v1/_faults");
  }
}

export interface Page<T> {
  items: T[];
  cursor: string | null;
  count: number;
  scannedCount: number;
}

export type KeyInput = Item | KeyValue;
export type KeyConditions = Record<string, unknown> | (Cond | CondJson)[];

export interface ReadOptions extends CallOptions {
  filter?: Cond | CondJson;
  select?: string[];
  consistent?: boolean;
}

export interface QueryOptions extends ReadOptions {
  index?: string;
  order?: "asc" | "desc";
}

export interface ScanOptions extends ReadOptions {
  segments?: number;
}

export interface IterateOptions {
  /** Stop after this many items. */
  limit?: number;
  /** Items asked for per request. */
  pageSize?: number;
  /** Start from this cursor. */
  cursor?: string;
}

/** Items of one model. A key is an object ({PK, SK}), an item (its key attributes are
 * used), or the partition key value with the sort key value as a separate argument. */
export class Model<T extends Item = Item> {
  private readonly base: string;
  constructor(readonly client: Client, readonly name: string) {
    this.base = `/v1/models/${encodeURIComponent(name)}`;
  }

  async definition(): Promise<ModelDoc> { return (await this.client.types(this.name)).doc; }

  private async keyPath(key: KeyInput, sk: KeyValue | undefined, rid?: string): Promise<string> {
    const t = this.client.loadedTypes(this.name) ?? await this.client.types(this.name, rid);
    let pkV: unknown, skV: unknown;
    if (key !== null && typeof key === "object" && !(key instanceof Uint8Array) && !(key instanceof Num)) {
      const k = key as Item;
      if (k[t.pk] === undefined) throw new TypeError(`the key of ${this.name} needs ${t.pk}`);
      pkV = k[t.pk];
      skV = t.sk ? k[t.sk] : undefined;
    } else {
      pkV = key;
      skV = sk;
    }
    let path = `${this.base}/items/${keySegment(pkV)}`;
    if (t.sk) {
      if (skV === undefined) throw new TypeError(`model ${this.name} needs a sort key (${t.sk})`);
      path += `/${keySegment(skV)}`;
    }
    return path;
  }

  private async decode(item: unknown): Promise<T> {
    const t = this.client.loadedTypes(this.name) ?? await this.client.types(this.name);
    return t.decodeItem<T>(item);
  }

  // -- tables ------------------------------------------------------------------------

  /** Creates the table (indexes, TTL) if missing; true when it was created. */
  async ensureTable(opts: CallOptions = {}): Promise<boolean> {
    return (await this.client.request("PUT", `${this.base}/table`, { ...opts, idempotent: true })).status === 201;
  }

  async table(opts: CallOptions = {}): Promise<Record<string, unknown>> {
    return (await this.client.request("GET", `${this.base}/table`, { ...opts, idempotent: true })).body;
  }

  /** Deletes the table (Forbidden unless the daemon runs with --allow-table-delete). */
  async deleteTable(opts: CallOptions = {}): Promise<void> {
    await this.client.request("DELETE", `${this.base}/table`, { ...opts });
  }

  // -- items -------------------------------------------------------------------------

  /** Creates the item; ConditionFailed if its key exists. Resolves to the stored item. */
  async create(item: T | Item, opts: CallOptions = {}): Promise<T> {
    await this.client.types(this.name, opts.requestId);
    return this.decode((await this.client.request("POST", `${this.base}/items`, { ...opts, body: item })).body);
  }

  /** Creates or replaces the whole item. ifNoneMatch: only create; ifMatch: only replace
   * that version (the new one is ifMatch + 1). */
  async put(item: T | Item, opts: CallOptions & { ifMatch?: number; ifNoneMatch?: boolean } = {}): Promise<T> {
    const headers: Record<string, string> = {};
    if (opts.ifNoneMatch) headers["If-None-Match"] = "*";
    if (opts.ifMatch !== undefined) headers["If-Match"] = `"${opts.ifMatch}"`;
    const path = await this.keyPath(item, undefined, opts.requestId);
    // An unconditional put is idempotent; a conditional one may already have been applied.
    const r = await this.client.request("PUT", path, {
      ...opts, body: item, headers, idempotent: Object.keys(headers).length === 0,
    });
    return this.decode(r.body);
  }

  /** The item; throws ItemNotFound when absent. */
  async get(key: KeyInput, sk?: KeyValue, opts: CallOptions & { select?: string[]; consistent?: boolean } = {}): Promise<T> {
    const path = await this.keyPath(key, sk, opts.requestId);
    const r = await this.client.request("GET", path, {
      ...opts, idempotent: true,
      query: opts.select || opts.consistent
        ? { select: opts.select?.join(","), consistent: opts.consistent ? "true" : undefined } : undefined,
    });
    const t = this.client.loadedTypes(this.name);
    return t ? t.decodeItem<T>(r.body) : this.decode(r.body);
  }

  /** Like get, but null when the item is absent. */
  async find(key: KeyInput, sk?: KeyValue, opts: CallOptions & { select?: string[]; consistent?: boolean } = {}): Promise<T | null> {
    try {
      return await this.get(key, sk, opts);
    } catch (e) {
      if (e instanceof ItemNotFound) return null;
      throw e;
    }
  }

  /** Applies an update; resolves to the new item. ItemNotFound (unless upsert),
   * VersionConflict, ConditionFailed. */
  async patch(key: KeyInput, update: Update | Record<string, unknown>, opts: CallOptions & {
    sk?: KeyValue; condition?: Cond | CondJson; expectedVersion?: number; upsert?: boolean;
  } = {}): Promise<T> {
    const body: Record<string, unknown> = update instanceof Update ? update.toJSON() : { ...update };
    if (opts.condition !== undefined) body.condition = condJson(opts.condition);
    if (opts.expectedVersion !== undefined) body.expected_version = opts.expectedVersion;
    if (opts.upsert) body.upsert = true;
    const path = await this.keyPath(key, opts.sk, opts.requestId);
    return this.decode((await this.client.request("PATCH", path, { ...opts, body })).body);
  }

  /** The TableTheory form: writes `fields` (default every non-key attribute present) from
   * the item; a version in the item is the expected version. */
  async updateFields(item: T | Item, fields?: string[], opts: CallOptions = {}): Promise<T> {
    const path = await this.keyPath(item, undefined, opts.requestId);
    const body = fields ? { item, fields } : { item };
    return this.decode((await this.client.request("PATCH", path, { ...opts, body })).body);
  }

  /** Deletes the item; ItemNotFound when absent; VersionConflict on a version mismatch. */
  async delete(key: KeyInput, sk?: KeyValue, opts: CallOptions & { expectedVersion?: number } = {}): Promise<void> {
    const headers: Record<string, string> = {};
    if (opts.expectedVersion !== undefined) headers["If-Match"] = `"${opts.expectedVersion}"`;
    await this.client.request("DELETE", await this.keyPath(key, sk, opts.requestId), { ...opts, headers });
  }

  // -- query and scan ------------------------------------------------------------------

  private static keyConds(key: KeyConditions): unknown {
    if (Array.isArray(key)) return key.map(condJson);
    if (key instanceof Cond) return [key.doc];
    if ("attr" in key) return [key];
    return Object.entries(key).map(([attr, value]) => ({ attr, op: "=", value }));
  }

  private static readBody(o: ReadOptions & { index?: string; order?: string }): Record<string, unknown> {
    const body: Record<string, unknown> = {};
    if (o.index !== undefined) body.index = o.index;
    if (o.filter !== undefined) body.filter = condJson(o.filter);
    if (o.select !== undefined) body.select = o.select;
    if (o.consistent) body.consistent = true;
    if (o.order !== undefined) body.order = o.order;
    return body;
  }

  /** One page of a query. key: {PK: v} (equalities) or conditions
   * ([attr("PK").eq(v), attr("SK").beginsWith("A")]). */
  async queryPage(key: KeyConditions, opts: QueryOptions & { limit?: number; cursor?: string | null } = {}): Promise<Page<T>> {
    const body = Model.readBody(opts);
    body.key = Model.keyConds(key);
    return this.page("query", body, opts);
  }

  async scanPage(opts: ScanOptions & { limit?: number; cursor?: string | null } = {}): Promise<Page<T>> {
    const body = Model.readBody(opts);
    if (opts.segments) body.segments = opts.segments;
    return this.page("scan", body, opts);
  }

  private async page(op: string, body: Record<string, unknown>,
    opts: CallOptions & { limit?: number; cursor?: string | null }): Promise<Page<T>> {
    if (opts.limit !== undefined) body.limit = opts.limit;
    if (opts.cursor) body.cursor = opts.cursor;
    const r = (await this.client.request("POST", `${this.base}/${op}`, {
      requestId: opts.requestId, signal: opts.signal, body, idempotent: true,
    })).body;
    const t = await this.client.types(this.name);
    return {
      items: (r.items ?? []).map((i: unknown) => t.decodeItem<T>(i)),
      cursor: r.cursor ?? null, count: r.count, scannedCount: r.scanned_count,
    };
  }

  /** Every matching item, following cursors: for await (const item of m.query(...)). */
  query(key: KeyConditions, opts: QueryOptions & IterateOptions = {}): AsyncGenerator<T> {
    return this.iterate((cursor, limit) => this.queryPage(key, { ...opts, cursor, limit }), opts);
  }

  /** Every item of the model, following cursors. */
  scan(opts: ScanOptions & IterateOptions = {}): AsyncGenerator<T> {
    return this.iterate((cursor, limit) => this.scanPage({ ...opts, cursor, limit }), opts);
  }

  private async *iterate(fetchPage: (cursor: string | undefined, limit: number | undefined) => Promise<Page<T>>,
    opts: IterateOptions): AsyncGenerator<T> {
    let left = opts.limit;
    let cursor = opts.cursor;
    for (;;) {
      let n = opts.pageSize;
      if (left !== undefined) n = n === undefined ? left : Math.min(n, left);
      const page = await fetchPage(cursor, n);
      for (const item of page.items) yield item;
      if (left !== undefined) {
        left -= page.items.length;
        if (left <= 0) return;
      }
      if (!page.cursor) return;
      cursor = page.cursor;
    }
  }

  /** The number of matching items: a query when key is given, else a scan. */
  async count(key?: KeyConditions, opts: QueryOptions & ScanOptions = {}): Promise<number> {
    let total = 0;
    let cursor: string | undefined;
    for (;;) {
      const body = Model.readBody({ ...opts, select: undefined, order: undefined });
      body.count = true;
      let op = "scan";
      if (key !== undefined) {
        body.key = Model.keyConds(key);
        op = "query";
      } else if (opts.segments) body.segments = opts.segments;
      if (cursor) body.cursor = cursor;
      const r = (await this.client.request("POST", `${this.base}/${op}`, {
        requestId: opts.requestId, signal: opts.signal, body, idempotent: true,
      })).body;
      total += r.count ?? 0;
      cursor = r.cursor ?? undefined;
      if (!cursor) return total;
    }
  }

  // -- batches -----------------------------------------------------------------------

  /** The found items in the order of keys, and the missing keys. A key takes any form
   * get accepts: an object (a key, or an item whose key attributes are used), a
   * [pk, sk] pair, or the partition key value of a model without a sort key. */
  async batchGet(keys: (KeyInput | [KeyValue, KeyValue?])[], opts: CallOptions & { select?: string[]; consistent?: boolean } = {}): Promise<{ items: T[]; missing: Item[] }> {
    const items: T[] = [];
    const missing: Item[] = [];
    const t = await this.client.types(this.name, opts.requestId);
    keys = keys.map((k) => {
      let pkV: unknown, skV: unknown;
      if (Array.isArray(k)) {
        if (k.length !== (t.sk ? 2 : 1)) throw new TypeError(`a key of ${this.name} is [${[t.pk, t.sk].filter(Boolean).join(", ")}]`);
        [pkV, skV] = k;
      } else if (k !== null && typeof k === "object" && !(k instanceof Uint8Array) && !(k instanceof Num)) {
        const o = k as Item;
        if (o[t.pk] === undefined) throw new TypeError(`the key of ${this.name} needs ${t.pk}`);
        pkV = o[t.pk];
        skV = t.sk ? o[t.sk] : undefined;
      } else {
        pkV = k;
      }
      const out: Item = { [t.pk]: pkV };
      if (t.sk) {
        if (skV === undefined) throw new TypeError(`model ${this.name} needs a sort key (${t.sk})`);
        out[t.sk] = skV;
      }
      return out;
    });
    for (let i = 0; i < keys.length || i === 0; i += 10000) {
      const body: Record<string, unknown> = { keys: keys.slice(i, i + 10000) };
      if (opts.select) body.select = opts.select;
      if (opts.consistent) body.consistent = true;
      const r = (await this.client.request("POST", `${this.base}/batch-get`, {
        requestId: opts.requestId, signal: opts.signal, body, idempotent: true,
      })).body;
      for (const it of r.items) items.push(t.decodeItem<T>(it));
      missing.push(...r.missing);
      if (keys.length === 0) break;
    }
    return { items, missing };
  }

  /** Puts and deletes in batches; resolves to the number processed. BatchIncomplete is
   * handled by resending exactly the unprocessed requests (they may be repeated). */
  async batchWrite(w: { put?: (T | Item)[]; delete?: Item[] }, opts: CallOptions = {}): Promise<number> {
    const puts = w.put ?? [];
    const dels = w.delete ?? [];
    let processed = 0;
    for (let i = 0; i < Math.max(puts.length, dels.length); i += 10000) {
      processed += await this.batchChunk(puts.slice(i, i + 10000), dels.slice(i, i + 10000), opts);
    }
    return processed;
  }

  private async batchChunk(put: (T | Item)[], del: Item[], opts: CallOptions): Promise<number> {
    let processed = 0;
    for (let attempt = 1; put.length || del.length; attempt++) {
      try {
        const r = await this.client.request("POST", `${this.base}/batch-write`, {
          ...opts, body: { put, delete: del }, idempotent: true,
        });
        return processed + r.body.processed;
      } catch (e) {
        if (!(e instanceof BatchIncomplete)) throw e;
        const un = (e.details.unprocessed ?? {}) as { put?: number[]; delete?: number[] };
        processed += Number(e.details.processed ?? 0);
        if (attempt >= this.client.maxAttempts || (!un.put && !un.delete)) throw e;
        put = (un.put ?? []).map((i) => put[i]);
        del = (un.delete ?? []).map((i) => del[i]);
        await this.client.sleep(attempt, undefined);
      }
    }
    return processed;
  }
}

/** Collects up to 100 writes and commits them all or none. Its client token (generated
 * when not given) makes the commit idempotent for 10 minutes, so it is resent safely. */
export class Transaction {
  readonly items: Record<string, unknown>[] = [];
  constructor(readonly client: Client, readonly clientToken: string, readonly retryConflicts: boolean) {}

  private add(entry: Record<string, unknown>, o: { condition?: Cond | CondJson; expectedVersion?: number }): this {
    if (o.condition !== undefined) entry.condition = condJson(o.condition);
    if (o.expectedVersion !== undefined) entry.expected_version = o.expectedVersion;
    this.items.push(entry);
    return this;
  }

  create(model: string, item: Item, o: { condition?: Cond | CondJson } = {}): this {
    return this.add({ op: "create", model, item }, o);
  }
  put(model: string, item: Item, o: { condition?: Cond | CondJson; expectedVersion?: number } = {}): this {
    return this.add({ op: "put", model, item }, o);
  }
  update(model: string, key: Item, update: Update | Record<string, unknown>,
    o: { condition?: Cond | CondJson; expectedVersion?: number; upsert?: boolean } = {}): this {
    const entry = { op: "update", model, key, ...(update instanceof Update ? update.toJSON() : update) } as Record<string, unknown>;
    if (o.upsert) entry.upsert = true;
    return this.add(entry, o);
  }
  delete(model: string, key: Item, o: { condition?: Cond | CondJson; expectedVersion?: number } = {}): this {
    return this.add({ op: "delete", model, key }, o);
  }
  check(model: string, key: Item, o: { condition?: Cond | CondJson; expectedVersion?: number }): this {
    return this.add({ op: "check", model, key }, o);
  }

  /** Writes everything; throws TransactionCanceled (see .reasons) otherwise. */
  async commit(opts: CallOptions = {}): Promise<void> {
    const body: Record<string, unknown> = { client_token: this.clientToken, items: this.items };
    if (this.retryConflicts) body.retry_conflicts = true;
    await this.client.request("POST", "/v1/transactions/write", { ...opts, body, idempotent: true });
  }
}

