// SPDX-License-Identifier: Apache-2.0
// The job ledger (docs/ledger.md): jobs, records, leases, idempotency, and a worker
// helper that holds a lease while it works.
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";

import type { CallOptions, Client } from "./client.js";
import { LeaseNotOwned, TableTheoryError } from "./errors.js";

const q = encodeURIComponent;

export type JobStatus = "PENDING" | "RUNNING" | "SUCCEEDED" | "FAILED" | "CANCELED";
export type RecordStatus = "PENDING" | "PROCESSING" | "SUCCEEDED" | "FAILED" | "SKIPPED";

export interface Job {
  job_id: string; tenant_id: string; status: JobStatus; version: number;
  created_at: string; updated_at: string; ttl?: number; [k: string]: unknown;
}
export interface JobRecord {
  job_id: string; record_id: string; status: RecordStatus; error?: ErrorEnvelope;
  version: number; created_at: string; updated_at: string; [k: string]: unknown;
}
export interface ErrorEnvelope {
  type?: string; code?: string; message?: string; retryable?: boolean;
  fields?: Record<string, unknown>; [k: string]: unknown;
}
export interface LeaseInfo { job_id: string; owner: string; expires_at: number }
export interface Outcome {
  outcome: "created" | "already_in_progress" | "already_completed" | "completed";
  result?: unknown; error?: unknown;
}

/** host:pid:random -- unique per process, as leases need. */
export function defaultOwner(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

/** client.jobs: the ledger endpoints. */
export class Jobs {
  constructor(readonly client: Client) {}

  private async r<T>(method: string, path: string, body: unknown, opts: CallOptions & { idempotent?: boolean; query?: Record<string, string | number | undefined> } = {}): Promise<T> {
    return (await this.client.request<T>(method, `/v1/jobs${path}`, { ...opts, body })).body;
  }

  async ensureTable(opts: CallOptions = {}): Promise<boolean> {
    return (await this.client.request("PUT", "/v1/jobs/table", { ...opts, idempotent: true })).status === 201;
  }

  /** A new job (version 1); AlreadyExists when jobId is taken. */
  create(job: { tenant_id: string; job_id?: string; status?: JobStatus; ttl_seconds?: number }, opts: CallOptions = {}): Promise<Job> {
    return this.r("POST", "", job, opts);
  }

  /** The job; JobNotFound when absent. */
  get(jobId: string, opts: CallOptions = {}): Promise<Job> {
    return this.r("GET", `/${q(jobId)}`, undefined, { ...opts, idempotent: true });
  }

  /** The jobs with this status and/or tenant, following cursors. */
  list(f: { status?: JobStatus; tenant_id?: string; order?: "asc" | "desc"; pageSize?: number }, opts: CallOptions = {}): AsyncGenerator<Job> {
    return this.pages<Job>("", "jobs", { status: f.status, tenant_id: f.tenant_id, order: f.order, limit: f.pageSize }, opts);
  }

  private async *pages<T>(path: string, member: string, query: Record<string, string | number | undefined>, opts: CallOptions): AsyncGenerator<T> {
    let cursor: string | undefined;
    for (;;) {
      const page = await this.r<Record<string, unknown>>("GET", path, undefined, { ...opts, idempotent: true, query: { ...query, cursor } });
      for (const x of page[member] as T[]) yield x;
      cursor = (page.cursor as string | null) ?? undefined;
      if (!cursor) return;
    }
  }

  /** Moves the job from `from` (null: from any status) to `to` when its version is
   * expectedVersion; VersionConflict, InvalidTransition. */
  transition(jobId: string, expectedVersion: number, from: JobStatus | null, to: JobStatus, opts: CallOptions = {}): Promise<Job> {
    if (typeof to !== "string") throw new TypeError("transition(jobId, expectedVersion, from, to): to is required");
    const body: Record<string, unknown> = { expected_version: expectedVersion, to };
    if (from) body.from = from;
    return this.r("POST", `/${q(jobId)}/transition`, body, opts);
  }

  /** Writes a record's status (and its sanitized error envelope); an upsert. */
  putRecord(jobId: string, recordId: string, status: RecordStatus,
    opts: CallOptions & { error?: ErrorEnvelope; ttlSeconds?: number } = {}): Promise<JobRecord> {
    const body: Record<string, unknown> = { status };
    if (opts.error) body.error = opts.error;
    if (opts.ttlSeconds !== undefined) body.ttl_seconds = opts.ttlSeconds;
    return this.r("PUT", `/${q(jobId)}/records/${q(recordId)}`, body, { ...opts, idempotent: true });
  }

  getRecord(jobId: string, recordId: string, opts: CallOptions = {}): Promise<JobRecord> {
    return this.r("GET", `/${q(jobId)}/records/${q(recordId)}`, undefined, { ...opts, idempotent: true });
  }

  /** A job's records in record_id order, following cursors. */
  records(jobId: string, f: { status?: RecordStatus; order?: "asc" | "desc"; pageSize?: number } = {}, opts: CallOptions = {}): AsyncGenerator<JobRecord> {
    return this.pages<JobRecord>(`/${q(jobId)}/records`, "records", { status: f.status, order: f.order, limit: f.pageSize }, opts);
  }

  // -- leases --------------------------------------------------------------------------

  /** LeaseHeld when another owner holds it. Idempotent for one owner, so it is retried. */
  acquireLease(jobId: string, owner: string, durationSeconds = 60, opts: CallOptions = {}): Promise<LeaseInfo> {
    return this.r("POST", `/${q(jobId)}/lease`, { owner, duration_seconds: durationSeconds }, { ...opts, idempotent: true });
  }

  /** LeaseNotOwned when it expired or is another's. */
  refreshLease(jobId: string, owner: string, durationSeconds = 60, opts: CallOptions = {}): Promise<LeaseInfo> {
    return this.r("POST", `/${q(jobId)}/lease/refresh`, { owner, duration_seconds: durationSeconds }, { ...opts, idempotent: true });
  }

  /** Fine when already gone; LeaseNotOwned when another owner holds it. */
  async releaseLease(jobId: string, owner: string, opts: CallOptions = {}): Promise<void> {
    await this.r("DELETE", `/${q(jobId)}/lease`, undefined, { ...opts, idempotent: true, query: { owner } });
  }

  /** Runs fn while holding the job's lease: acquires it (LeaseHeld if taken), refreshes it
   * every refreshEveryMs (default a third of the duration) while fn runs, releases it at
   * the end. If a refresh is refused, lease.signal aborts and lease.check() throws. */
  async withLease<R>(jobId: string, fn: (lease: Lease) => Promise<R> | R,
    o: { owner?: string; durationSeconds?: number; refreshEveryMs?: number } = {}): Promise<R> {
    const lease = new Lease(this, jobId, o.owner ?? defaultOwner(), o.durationSeconds ?? 60, o.refreshEveryMs);
    await lease.acquire();
    try {
      return await fn(lease);
    } finally {
      await lease.stop();
    }
  }

  // -- idempotency ---------------------------------------------------------------------

  /** Claims an idempotency key: outcome "created" means do the effect, then complete.
   * Not retried after an ambiguous failure (a retry would see our own claim). */
  beginRequest(jobId: string, key: string, opts: CallOptions & { ttlSeconds?: number } = {}): Promise<Outcome> {
    return this.r("POST", `/${q(jobId)}/requests/${q(key)}`, opts.ttlSeconds === undefined ? {} : { ttl_seconds: opts.ttlSeconds }, opts);
  }

  /** Stores the result; the first completion wins. */
  completeRequest(jobId: string, key: string, opts: CallOptions & { result?: unknown; error?: unknown } = {}): Promise<Outcome> {
    const body: Record<string, unknown> = {};
    if (opts.result !== undefined) body.result = opts.result;
    if (opts.error !== undefined) body.error = opts.error;
    return this.r("POST", `/${q(jobId)}/requests/${q(key)}/complete`, body, opts);
  }
}

/** A held lease (see Jobs.withLease). */
export class Lease {
  expiresAt = 0;
  lost = false;
  error?: TableTheoryError;
  refreshEveryMs: number;
  private readonly controller = new AbortController();
  private timer?: NodeJS.Timeout;
  private inflight?: Promise<void>;
  private stopped = false;

  constructor(readonly jobs: Jobs, readonly jobId: string, readonly owner: string,
    readonly durationSeconds: number, refreshEveryMs?: number) {
    this.refreshEveryMs = refreshEveryMs ?? Math.max(50, (durationSeconds * 1000) / 3);
  }

  /** Aborted once the lease is lost: pass it to your own I/O. */
  get signal(): AbortSignal { return this.controller.signal; }

  /** Throws LeaseNotOwned when the lease was lost: stop working on the job. */
  check(): void {
    if (this.lost) throw this.error ?? new LeaseNotOwned("the lease was lost");
  }

  /** @internal */
  async acquire(): Promise<void> {
    this.expiresAt = (await this.jobs.acquireLease(this.jobId, this.owner, this.durationSeconds)).expires_at;
    this.schedule();
  }

  private schedule(): void {
    clearTimeout(this.timer);
    if (this.stopped || this.lost) return;
    this.timer = setTimeout(() => {
      this.inflight = this.refresh().then(() => undefined, (e) => {
        if (e instanceof LeaseNotOwned) {
          this.lost = true;
          this.error = e;
          this.controller.abort(e);
        } else if (e instanceof TableTheoryError) {
          this.error = e; // transient: keep trying until the lease really is lost
        }
      }).finally(() => this.schedule());
    }, this.refreshEveryMs);
  }

  /** Refreshes now (also done in the background). */
  async refresh(): Promise<LeaseInfo> {
    const r = await this.jobs.refreshLease(this.jobId, this.owner, this.durationSeconds);
    this.expiresAt = r.expires_at;
    return r;
  }

  /** @internal Stops refreshing and releases the lease unless it was lost. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.inflight;
    if (!this.lost) {
      try {
        await this.jobs.releaseLease(this.jobId, this.owner);
      } catch (e) {
        if (!(e instanceof LeaseNotOwned)) throw e;
      }
    }
  }
}
