// SPDX-License-Identifier: Apache-2.0

// The job ledger: jobs, records, leases (with a worker helper that holds one), idempotency.

package com.theorycloud.tabletheoryd;

import com.theorycloud.tabletheoryd.TableTheoryClient.Call;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/** The job ledger's endpoints (docs/ledger.md); get it with {@link TableTheoryClient#ledger()}. */
public final class Ledger {
    private final TableTheoryClient c;

    Ledger(TableTheoryClient c) {
        this.c = c;
    }

    /** A job's META item. */
    public record Job(String jobId, String tenantId, String status, long version, String createdAt,
                      String updatedAt, Long ttl, Map<String, Object> raw) {
        static Job of(Object body) {
            Map<String, Object> m = Json.asMap(body);
            return new Job(Json.str(m.get("job_id")), Json.str(m.get("tenant_id")), Json.str(m.get("status")),
                    Json.num(m.get("version")), Json.str(m.get("created_at")), Json.str(m.get("updated_at")),
                    m.get("ttl") == null ? null : Json.num(m.get("ttl")), m);
        }

        public boolean terminal() {
            return "SUCCEEDED".equals(status) || "FAILED".equals(status) || "CANCELED".equals(status);
        }
    }

    /** A record's outcome; error is the sanitized envelope or null. */
    public record JobRecord(String jobId, String recordId, String status, Map<String, Object> error, long version,
                            String createdAt, String updatedAt) {
        static JobRecord of(Object body) {
            Map<String, Object> m = Json.asMap(body);
            return new JobRecord(Json.str(m.get("job_id")), Json.str(m.get("record_id")), Json.str(m.get("status")),
                    m.get("error") == null ? null : Json.asMap(m.get("error")), Json.num(m.get("version")),
                    Json.str(m.get("created_at")), Json.str(m.get("updated_at")));
        }
    }

    /** A held lease; expiresAt is unix seconds by the daemon's clock. */
    public record Lease(String jobId, String owner, long expiresAt) {
        static Lease of(Object body) {
            Map<String, Object> m = Json.asMap(body);
            return new Lease(Json.str(m.get("job_id")), Json.str(m.get("owner")), Json.num(m.get("expires_at")));
        }
    }

    /** Outcome of the idempotency endpoints: created, already_in_progress, already_completed, completed. */
    public record RequestOutcome(String outcome, Object result, Object error) {
        static RequestOutcome of(Object body) {
            Map<String, Object> m = Json.asMap(body);
            return new RequestOutcome(Json.str(m.get("outcome")), m.get("result"), m.get("error"));
        }

        /** True when the caller owns the effect (do it, then complete). */
        public boolean created() { return "created".equals(outcome); }
    }

    private static String job(String id) { return "/v1/jobs/" + TableTheoryClient.seg(id); }

    /** Creates the ledger's table when missing (PUT /v1/jobs/table). */
    public void ensureTable() { c.send(new Call("PUT", "/v1/jobs/table", null, true)); }

    /**
     * Creates a job (version 1) of tenantId; jobId null lets the daemon generate one.
     * AlreadyExistsException if taken. The tenant comes first, as in every client.
     */
    public Job createJob(String tenantId, String jobId) { return createJob(tenantId, jobId, null, null); }

    public Job createJob(String tenantId, String jobId, String status, Duration ttl) {
        Map<String, Object> body = new LinkedHashMap<>();
        if (jobId != null) {
            body.put("job_id", jobId);
        }
        body.put("tenant_id", tenantId);
        if (status != null) {
            body.put("status", status);
        }
        if (ttl != null) {
            body.put("ttl_seconds", ttl.toSeconds());
        }
        return Job.of(c.send(new Call("POST", "/v1/jobs", body, false)).body());
    }

    /** Reads a job; JobNotFoundException if unknown. */
    public Job getJob(String id) { return Job.of(c.send(new Call("GET", job(id), null, true)).body()); }

    private static <T> Stream<T> pages(Function<String, Map<String, Object>> next, String member, Function<Object, T> conv) {
        Iterator<T> it = new Iterator<>() {
            private Iterator<Object> cur = List.of().iterator();
            private String cursor;
            private boolean started;

            @Override
            public boolean hasNext() {
                while (!cur.hasNext()) {
                    if (started && cursor == null) {
                        return false;
                    }
                    Map<String, Object> page = next.apply(cursor);
                    started = true;
                    Object cv = page.get("cursor");
                    cursor = cv == null || cv.toString().isEmpty() ? null : cv.toString();
                    cur = Json.asList(page.get(member)).iterator();
                }
                return true;
            }

            @Override
            public T next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                return conv.apply(cur.next());
            }
        };
        return StreamSupport.stream(Spliterators.spliteratorUnknownSize(it, Spliterator.ORDERED), false);
    }

    /**
     * Every job of a status and/or tenant (one is required), oldest first
     * (desc: newest first), fetched lazily page by page (pageSize 1-1000, 0 = the daemon's default).
     */
    public Stream<Job> listJobs(String status, String tenantId, boolean desc, int pageSize) {
        return pages(cursor -> {
            Map<String, String> q = new LinkedHashMap<>();
            if (status != null) {
                q.put("status", status);
            }
            if (tenantId != null) {
                q.put("tenant_id", tenantId);
            }
            if (desc) {
                q.put("order", "desc");
            }
            if (pageSize > 0) {
                q.put("limit", Integer.toString(pageSize));
            }
            if (cursor != null) {
                q.put("cursor", cursor);
            }
            return Json.asMap(c.send(new Call("GET", "/v1/jobs", q, null, null, true)).body());
        }, "jobs", Job::of);
    }

    /**
     * Moves a job to status to when its version is expectedVersion (and its
     * status is from, when not null). VersionConflictException, InvalidTransitionException.
     */
    public Job transition(String id, long expectedVersion, String from, String to) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("expected_version", expectedVersion);
        body.put("to", to);
        if (from != null) {
            body.put("from", from);
        }
        return Job.of(c.send(new Call("POST", job(id) + "/transition", body, false)).body());
    }

    /** Writes a record's status and error envelope (or none); an upsert, retried. */
    public JobRecord putRecord(String jobId, String recordId, String status, Map<String, Object> error) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("status", status);
        if (error != null) {
            body.put("error", error);
        }
        return JobRecord.of(c.send(new Call("PUT", job(jobId) + "/records/" + TableTheoryClient.seg(recordId), body, true)).body());
    }

    /** Reads a record; ItemNotFoundException if absent. */
    public JobRecord getRecord(String jobId, String recordId) {
        return JobRecord.of(c.send(new Call("GET", job(jobId) + "/records/" + TableTheoryClient.seg(recordId), null, true)).body());
    }

    /** A job's records (of one status when not null), in record_id order, fetched lazily. */
    public Stream<JobRecord> listRecords(String jobId, String status) {
        return pages(cursor -> {
            Map<String, String> q = new LinkedHashMap<>();
            if (status != null) {
                q.put("status", status);
            }
            if (cursor != null) {
                q.put("cursor", cursor);
            }
            return Json.asMap(c.send(new Call("GET", job(jobId) + "/records", q, null, null, true)).body());
        }, "records", JobRecord::of);
    }

    private static Map<String, Object> leaseBody(String owner, Duration d) {
        long s = Math.max(1, (d.toMillis() + 999) / 1000);
        return Map.of("owner", owner, "duration_seconds", s);
    }

    /** Takes the lease (or extends our own); LeaseHeldException when another owner holds it. */
    public Lease acquireLease(String jobId, String owner, Duration d) {
        return Lease.of(c.send(new Call("POST", job(jobId) + "/lease", leaseBody(owner, d), true)).body());
    }

    /** Extends our unexpired lease; LeaseNotOwnedException when lost: stop working on the job. */
    public Lease refreshLease(String jobId, String owner, Duration d) {
        return Lease.of(c.send(new Call("POST", job(jobId) + "/lease/refresh", leaseBody(owner, d), true)).body());
    }

    /** Gives the lease up (fine when already gone); LeaseNotOwnedException when another owner holds it. */
    public void releaseLease(String jobId, String owner) {
        c.send(new Call("DELETE", job(jobId) + "/lease", Map.of("owner", owner), null, null, true));
    }

    /** Claims an idempotency key (ttl null = 24 h). Not retried: a retry would see its own claim. */
    public RequestOutcome beginRequest(String jobId, String key, Duration ttl) {
        Object body = ttl == null ? null : Map.of("ttl_seconds", ttl.toSeconds());
        return RequestOutcome.of(c.send(new Call("POST", job(jobId) + "/requests/" + TableTheoryClient.seg(key), body, false)).body());
    }

    /** Stores the result or error of a key; the first completion wins. */
    public RequestOutcome completeRequest(String jobId, String key, Object result, Object error) {
        Map<String, Object> body = new LinkedHashMap<>();
        if (result != null) {
            body.put("result", result);
        }
        if (error != null) {
            body.put("error", error);
        }
        return RequestOutcome.of(c.send(new Call("POST", job(jobId) + "/requests/" + TableTheoryClient.seg(key) + "/complete", body, true)).body());
    }

    /** The work of {@link #withLease}. */
    @FunctionalInterface
    public interface LeaseWork<T> {
        T run() throws Exception;
    }

    /**
     * Acquires the job's lease, runs work on this thread while a background
     * thread refreshes the lease every d/3, and releases it when work ends.
     * When a refresh finds the lease lost, this thread is interrupted (the
     * Java way to ask work to stop) and LeaseLostException is thrown after work
     * returns. LeaseHeldException (work not run) when another owner holds it.
     * Unchecked exceptions of work propagate as they are; checked ones as the
     * cause of a {@link java.util.concurrent.CompletionException}.
     */
    public <T> T withLease(String jobId, String owner, Duration d, LeaseWork<T> work) {
        acquireLease(jobId, owner, d);
        Thread worker = Thread.currentThread();
        Object lock = new Object();
        LeaseNotOwnedException[] lost = new LeaseNotOwnedException[1];
        boolean[] running = {true};
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "tabletheoryd-lease-" + jobId);
            t.setDaemon(true);
            return t;
        });
        long every = Math.max(100, d.toMillis() / 3);
        timer.scheduleWithFixedDelay(() -> {
            try {
                refreshLease(jobId, owner, d);
            } catch (LeaseNotOwnedException e) {
                synchronized (lock) {
                    if (running[0] && lost[0] == null) {
                        lost[0] = e;
                        worker.interrupt();
                    }
                }
                throw e; // ends the schedule
            } catch (RuntimeException e) {
                // transient: the next refresh tries again while the lease outlives it
            }
        }, every, every, TimeUnit.MILLISECONDS);
        T result = null;
        Throwable failure = null;
        try {
            result = work.run();
        } catch (Throwable t) {
            failure = t;
        } finally {
            synchronized (lock) {
                running[0] = false;
            }
            timer.shutdownNow();
            try {
                timer.awaitTermination(30, TimeUnit.SECONDS);
            } catch (InterruptedException ignored) {
                // the interrupt of a lost lease; cleared below
            }
        }
        LeaseNotOwnedException gone;
        synchronized (lock) {
            gone = lost[0];
        }
        if (gone != null) {
            Thread.interrupted(); // the interrupt was ours, for the work
            LeaseLostException e = new LeaseLostException(gone);
            if (failure != null) {
                e.addSuppressed(failure);
            }
            throw e;
        }
        try {
            releaseLease(jobId, owner);
        } catch (RuntimeException e) {
            if (failure == null) {
                throw e;
            }
            failure.addSuppressed(e);
        }
        if (failure instanceof RuntimeException re) {
            throw re;
        }
        if (failure instanceof Error err) {
            throw err;
        }
        if (failure != null) {
            throw new java.util.concurrent.CompletionException(failure);
        }
        return result;
    }

}
