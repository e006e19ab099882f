// SPDX-License-Identifier: Apache-2.0
package com.theorycloud.tabletheoryd;

import com.theorycloud.tabletheoryd.TableTheoryClient.Answer;
import com.theorycloud.tabletheoryd.TableTheoryClient.Call;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The asynchronous view of a {@link TableTheoryClient} ({@code client.async()}): the calls of
 * the client, its models and its ledger, with the same arguments in the same order, each
 * returning a {@link CompletableFuture} sent with {@code HttpClient.sendAsync}. A list call
 * (listJobs, listRecords) follows every cursor and completes with all the pages' items in one
 * {@link List}, where the blocking call returns a lazy {@code Stream}. Retries wait
 * on {@code CompletableFuture.delayedExecutor}, so no thread blocks. A failed future holds
 * the same {@link TableTheoryException} the synchronous call throws (as the cause of the
 * ExecutionException or CompletionException). Shares the client's connections and model
 * cache; cheap and thread-safe.
 */
public final class AsyncClient {
    private final TableTheoryClient c;

    AsyncClient(TableTheoryClient c) {
        this.c = c;
    }

    /** The synchronous client this view belongs to. */
    public TableTheoryClient sync() { return c; }

    /** All user models (GET /v1/models). */
    public CompletableFuture<List<ModelInfo>> models() {
        return c.sendAsync(new Call("GET", "/v1/models", null, true)).thenApply(a -> {
            List<ModelInfo> out = new ArrayList<>();
            for (Object m : Json.asList(Json.asMap(a.body()).get("models"))) {
                out.add(new ModelInfo(Json.asMap(m)));
            }
            return out;
        });
    }

    /** One model (GET /v1/models/{m}); ModelNotFoundException if unknown. */
    public CompletableFuture<ModelInfo> describeModel(String name) {
        return c.sendAsync(new Call("GET", "/v1/models/" + TableTheoryClient.seg(name), null, true))
                .thenApply(a -> c.cacheModel(name, new ModelInfo(Json.asMap(a.body()))));
    }

    CompletableFuture<ModelInfo> schema(String name) {
        ModelInfo m = c.cachedModel(name);
        return m != null ? CompletableFuture.completedFuture(m) : describeModel(name);
    }

    /** As {@link TableTheoryClient#transactWrite}: the same client token rule, retried alike. */
    public CompletableFuture<Void> transactWrite(Tx tx) {
        List<String> keyed = new ArrayList<>();
        for (Tx.Op op : tx.ops()) {
            if (op.key() != null) {
                keyed.add(op.model());
            }
        }
        return schemas(keyed).thenCompose(infos -> c.sendAsync(new Call("POST", "/v1/transactions/write",
                TableTheoryClient.transactWriteBody(tx, infos::get), true))).thenApply(a -> null);
    }

    /** As {@link TableTheoryClient#transactGet}: a missing item is null. */
    public CompletableFuture<List<Item>> transactGet(List<TableTheoryClient.TxGet> gets) {
        List<String> names = new ArrayList<>();
        for (TableTheoryClient.TxGet g : gets) {
            names.add(g.model());
        }
        return schemas(names).thenCompose(byName -> {
            List<ModelInfo> infos = new ArrayList<>();
            for (TableTheoryClient.TxGet g : gets) {
                infos.add(byName.get(g.model()));
            }
            return c.sendAsync(new Call("POST", "/v1/transactions/get",
                    TableTheoryClient.transactGetBody(gets, infos), true))
                    .thenApply(a -> TableTheoryClient.transactGetResult(a.body(), infos));
        });
    }

    /** The models of these names, each described once when not cached. */
    private CompletableFuture<Map<String, ModelInfo>> schemas(List<String> names) {
        Map<String, CompletableFuture<ModelInfo>> each = new LinkedHashMap<>();
        for (String n : names) {
            each.computeIfAbsent(n, this::schema);
        }
        return CompletableFuture.allOf(each.values().toArray(new CompletableFuture<?>[0])).thenApply(x -> {
            Map<String, ModelInfo> out = new LinkedHashMap<>();
            each.forEach((n, f) -> out.put(n, f.join()));
            return out;
        });
    }

    /** The asynchronous endpoints of one model. */
    public Model model(String name) { return new Model(name); }

    /** The asynchronous endpoints of the job ledger. */
    public Jobs ledger() { return new Jobs(); }

    private static <T> CompletableFuture<Optional<T>> orEmpty(CompletableFuture<T> f,
                                                             Class<? extends Throwable> absent) {
        return f.handle((v, t) -> {
            if (t == null) {
                return Optional.ofNullable(v);
            }
            Throwable cause = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
            if (absent.isInstance(cause)) {
                return Optional.<T>empty();
            }
            throw t instanceof CompletionException ce ? ce : new CompletionException(cause);
        });
    }

    /** {@link ModelClient}'s item, query and scan calls, asynchronous. */
    public final class Model {
        private final String name;
        private final String path;

        Model(String name) {
            this.name = name;
            this.path = "/v1/models/" + TableTheoryClient.seg(name);
        }

        public String name() { return name; }

        private String itemPath(ModelInfo info, Key k) {
            StringBuilder p = new StringBuilder(path).append("/items/")
                    .append(TableTheoryClient.seg(ModelInfo.keyText(k.partition())));
            if (info.sortKey() != null) {
                if (k.sort() == null) {
                    throw new IllegalArgumentException("model " + name + " needs a sort key value");
                }
                p.append('/').append(TableTheoryClient.seg(ModelInfo.keyText(k.sort())));
            } else if (k.sort() != null) {
                throw new IllegalArgumentException("model " + name + " has no sort key");
            }
            return p.toString();
        }

        private CompletableFuture<Item> item(java.util.function.Function<ModelInfo, Call> call) {
            return schema(name).thenCompose(info -> c.sendAsync(call.apply(info))
                    .thenApply(a -> info.typed(a.body())));
        }

        /** As {@link ModelClient#create}. */
        public CompletableFuture<Item> create(Map<String, Object> item) {
            return item(info -> new Call("POST", path + "/items", item, false));
        }

        /** As {@link ModelClient#put}. */
        public CompletableFuture<Item> put(Map<String, Object> item) {
            return item(info -> new Call("PUT", itemPath(info, info.keyOf(item)), item, true));
        }

        /** As {@link ModelClient#putIfVersion}. */
        public CompletableFuture<Item> putIfVersion(Map<String, Object> item, long version) {
            return item(info -> new Call("PUT", itemPath(info, info.keyOf(item)), null, item,
                    Map.of("If-Match", "\"" + version + "\""), false));
        }

        /** As {@link ModelClient#putIfAbsent}. */
        public CompletableFuture<Item> putIfAbsent(Map<String, Object> item) {
            return item(info -> new Call("PUT", itemPath(info, info.keyOf(item)), null, item,
                    Map.of("If-None-Match", "*"), false));
        }

        /** As {@link ModelClient#get(Key)}. */
        public CompletableFuture<Item> get(Key key) { return get(key, false); }

        /** As {@link ModelClient#get(Key, boolean, String...)}. */
        public CompletableFuture<Item> get(Key key, boolean consistent, String... select) {
            Map<String, String> q = new LinkedHashMap<>();
            if (select.length > 0) {
                q.put("select", String.join(",", select));
            }
            if (consistent) {
                q.put("consistent", "true");
            }
            return item(info -> new Call("GET", itemPath(info, key), q, null, null, true));
        }

        /** As {@link ModelClient#find}: empty when absent. */
        public CompletableFuture<Optional<Item>> find(Key key) {
            return orEmpty(get(key), ItemNotFoundException.class);
        }

        /** As {@link ModelClient#patch}. */
        public CompletableFuture<Item> patch(Key key, Update u) {
            return item(info -> new Call("PATCH", itemPath(info, key), u.body(), false));
        }

        /** As {@link ModelClient#updateFields}. */
        public CompletableFuture<Item> updateFields(Map<String, Object> item, String... fields) {
            return item(info -> new Call("PATCH", itemPath(info, info.keyOf(item)),
                    ModelClient.updateFieldsBody(item, fields), false));
        }

        /** As {@link ModelClient#delete(Key)}. */
        public CompletableFuture<Void> delete(Key key) {
            return schema(name).thenCompose(info -> c.sendAsync(new Call("DELETE", itemPath(info, key), null, false)))
                    .thenApply(a -> null);
        }

        /** As {@link ModelClient#delete(Key, long)}. */
        public CompletableFuture<Void> delete(Key key, long expectedVersion) {
            return schema(name).thenCompose(info -> c.sendAsync(new Call("DELETE", itemPath(info, key), null, null,
                    Map.of("If-Match", "\"" + expectedVersion + "\""), false))).thenApply(a -> null);
        }

        private CompletableFuture<Page> page(String op, Map<String, Object> body) {
            return schema(name).thenCompose(info -> c.sendAsync(new Call("POST", path + "/" + op, body, true))
                    .thenApply(a -> {
                        Map<String, Object> m = Json.asMap(a.body());
                        List<Item> items = new ArrayList<>();
                        for (Object raw : Json.asList(m.get("items"))) {
                            items.add(info.typed(raw));
                        }
                        Object cur = m.get("cursor");
                        return new Page(items, Json.num(m.get("count")), Json.num(m.get("scanned_count")),
                                cur == null || cur.toString().isEmpty() ? null : cur.toString());
                    }));
        }

        /** One page of a query (follow {@link Page#cursor()} with {@code q.cursor(...)}). */
        public CompletableFuture<Page> query(Query q) { return page("query", q.body()); }

        /** One page of a scan. */
        public CompletableFuture<Page> scan(Scan s) { return page("scan", s.body()); }

        /** Counts the query's items over all pages. */
        public CompletableFuture<Long> count(Query q) {
            Query copy = q.copy();
            copy.body().put("count", true);
            copy.body().remove("limit");
            return countFrom(copy, 0L);
        }

        private CompletableFuture<Long> countFrom(Query q, long sofar) {
            return query(q).thenCompose(p -> p.cursor() == null
                    ? CompletableFuture.completedFuture(sofar + p.count())
                    : countFrom(q.cursor(p.cursor()), sofar + p.count()));
        }

        /** As {@link ModelClient#scanCount}: counts the scan's items over all pages. */
        public CompletableFuture<Long> scanCount(Scan s) {
            Scan copy = s.copy();
            copy.body().put("count", true);
            copy.body().remove("limit");
            return scanCountFrom(copy, 0L);
        }

        private CompletableFuture<Long> scanCountFrom(Scan s, long sofar) {
            return scan(s).thenCompose(p -> p.cursor() == null
                    ? CompletableFuture.completedFuture(sofar + p.count())
                    : scanCountFrom(s.cursor(p.cursor()), sofar + p.count()));
        }

        /** As {@link ModelClient#batchGet(List)}. */
        public CompletableFuture<ModelClient.BatchGetResult> batchGet(List<Key> keys) {
            return batchGet(keys, false);
        }

        /** As {@link ModelClient#batchGet(List, boolean, String...)}: the found items in key order, and the missing keys. */
        public CompletableFuture<ModelClient.BatchGetResult> batchGet(List<Key> keys, boolean consistent,
                                                                      String... select) {
            return schema(name).thenCompose(info -> c.sendAsync(new Call("POST", path + "/batch-get",
                    ModelClient.batchGetBody(info, keys, consistent, select), true))
                    .thenApply(a -> ModelClient.batchGetResult(info, a.body())));
        }

        /**
         * As {@link ModelClient#batchWrite}: how many puts and deletes were processed. On
         * BatchIncomplete exactly the unprocessed requests are sent again after a backoff on
         * {@code CompletableFuture.delayedExecutor}, within the client's attempts.
         */
        public CompletableFuture<Integer> batchWrite(List<? extends Map<String, Object>> puts, List<Key> deletes) {
            return schema(name).thenCompose(info -> {
                List<Object> p = new ArrayList<>(puts == null ? List.of() : puts);
                List<Object> d = new ArrayList<>();
                for (Key k : deletes == null ? List.<Key>of() : deletes) {
                    d.add(info.keyObject(k));
                }
                return batchWriteFrom(p, d, 0, 1);
            });
        }

        private CompletableFuture<Integer> batchWriteFrom(List<Object> p, List<Object> d, int done, int attempt) {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("put", p);
            body.put("delete", d);
            return c.sendAsync(new Call("POST", path + "/batch-write", body, true)).handle((a, t) -> {
                if (t == null) {
                    return CompletableFuture.completedFuture(done + (int) Json.num(Json.asMap(a.body()).get("processed")));
                }
                Throwable cause = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
                if (!(cause instanceof BatchIncompleteException e) || attempt >= c.maxAttempts()) {
                    return CompletableFuture.<Integer>failedFuture(cause);
                }
                Map<String, Object> un = Json.asMap(e.details().get("unprocessed"));
                List<Object> np = ModelClient.pick(p, un.get("put"));
                List<Object> nd = ModelClient.pick(d, un.get("delete"));
                int now = done + p.size() + d.size() - np.size() - nd.size();
                Executor later = CompletableFuture.delayedExecutor(c.backoff(attempt), TimeUnit.MILLISECONDS);
                return CompletableFuture.supplyAsync(() -> null, later)
                        .thenCompose(x -> batchWriteFrom(np, nd, now, attempt + 1));
            }).thenCompose(f -> f);
        }
    }

    /** {@link Ledger}'s calls, asynchronous, with the same arguments in the same order. */
    public final class Jobs {
        private static String job(String id) { return "/v1/jobs/" + TableTheoryClient.seg(id); }

        private <T> CompletableFuture<T> call(Call call, java.util.function.Function<Object, T> of) {
            return c.sendAsync(call).thenApply((Answer a) -> of.apply(a.body()));
        }

        /** As {@link Ledger#ensureTable}. */
        public CompletableFuture<Void> ensureTable() {
            return call(new Call("PUT", "/v1/jobs/table", null, true), b -> null);
        }

        /** As {@link Ledger#createJob(String, String)}: tenant first, jobId null = generated. */
        public CompletableFuture<Ledger.Job> createJob(String tenantId, String jobId) {
            return createJob(tenantId, jobId, null, null);
        }

        /** As {@link Ledger#createJob(String, String, String, Duration)}. */
        public CompletableFuture<Ledger.Job> createJob(String tenantId, String jobId, String status, Duration ttl) {
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
            return call(new Call("POST", "/v1/jobs", body, false), Ledger.Job::of);
        }

        public CompletableFuture<Ledger.Job> getJob(String id) {
            return call(new Call("GET", job(id), null, true), Ledger.Job::of);
        }

        /** As {@link Ledger#transition}: from null moves from any status. */
        public CompletableFuture<Ledger.Job> transition(String id, long expectedVersion, String from, String to) {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("expected_version", expectedVersion);
            body.put("to", to);
            if (from != null) {
                body.put("from", from);
            }
            return call(new Call("POST", job(id) + "/transition", body, false), Ledger.Job::of);
        }

        public CompletableFuture<Ledger.JobRecord> putRecord(String jobId, String recordId, String status,
                                                             Map<String, Object> error) {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("status", status);
            if (error != null) {
                body.put("error", error);
            }
            return call(new Call("PUT", job(jobId) + "/records/" + TableTheoryClient.seg(recordId), body, true),
                    Ledger.JobRecord::of);
        }

        public CompletableFuture<Ledger.JobRecord> getRecord(String jobId, String recordId) {
            return call(new Call("GET", job(jobId) + "/records/" + TableTheoryClient.seg(recordId), null, true),
                    Ledger.JobRecord::of);
        }

        /** Follows the cursors of a list endpoint, one page after the other, and gathers its member. */
        private <T> CompletableFuture<List<T>> pages(String path, Map<String, String> query, String member,
                                                    java.util.function.Function<Object, T> conv, String cursor,
                                                    List<T> sofar) {
            Map<String, String> q = new LinkedHashMap<>(query);
            if (cursor != null) {
                q.put("cursor", cursor);
            }
            return c.sendAsync(new Call("GET", path, q, null, null, true)).thenCompose(a -> {
                Map<String, Object> page = Json.asMap(a.body());
                for (Object raw : Json.asList(page.get(member))) {
                    sofar.add(conv.apply(raw));
                }
                Object cv = page.get("cursor");
                return cv == null || cv.toString().isEmpty() ? CompletableFuture.completedFuture(sofar)
                        : pages(path, query, member, conv, cv.toString(), sofar);
            });
        }

        /**
         * As {@link Ledger#listJobs}, with the same arguments: every job of a status and/or
         * tenant, all pages (pageSize jobs per request) gathered into one list.
         */
        public CompletableFuture<List<Ledger.Job>> listJobs(String status, String tenantId, boolean desc,
                                                            int pageSize) {
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
            return pages("/v1/jobs", q, "jobs", Ledger.Job::of, null, new ArrayList<>());
        }

        /** As {@link Ledger#listRecords}: a job's records (of one status when not null), in record_id order, all pages. */
        public CompletableFuture<List<Ledger.JobRecord>> listRecords(String jobId, String status) {
            Map<String, String> q = new LinkedHashMap<>();
            if (status != null) {
                q.put("status", status);
            }
            return pages(job(jobId) + "/records", q, "records", Ledger.JobRecord::of, null, new ArrayList<>());
        }

        private static Map<String, Object> leaseBody(String owner, Duration d) {
            long s = Math.max(1, (d.toMillis() + 999) / 1000);
            return Map.of("owner", owner, "duration_seconds", s);
        }

        public CompletableFuture<Ledger.Lease> acquireLease(String jobId, String owner, Duration d) {
            return call(new Call("POST", job(jobId) + "/lease", leaseBody(owner, d), true), Ledger.Lease::of);
        }

        public CompletableFuture<Ledger.Lease> refreshLease(String jobId, String owner, Duration d) {
            return call(new Call("POST", job(jobId) + "/lease/refresh", leaseBody(owner, d), true), Ledger.Lease::of);
        }

        public CompletableFuture<Void> releaseLease(String jobId, String owner) {
            return call(new Call("DELETE", job(jobId) + "/lease", Map.of("owner", owner), null, null, true), b -> null);
        }

        public CompletableFuture<Ledger.RequestOutcome> beginRequest(String jobId, String key, Duration ttl) {
            Object body = ttl == null ? null : Map.of("ttl_seconds", ttl.toSeconds());
            return call(new Call("POST", job(jobId) + "/requests/" + TableTheoryClient.seg(key), body, false),
                    Ledger.RequestOutcome::of);
        }

        public CompletableFuture<Ledger.RequestOutcome> completeRequest(String jobId, String key, Object result,
                                                                        Object error) {
            Map<String, Object> body = new LinkedHashMap<>();
            if (result != null) {
                body.put("result", result);
            }
            if (error != null) {
                body.put("error", error);
            }
            return call(new Call("POST", job(jobId) + "/requests/" + TableTheoryClient.seg(key) + "/complete", body,
                    true), Ledger.RequestOutcome::of);
        }
    }
}
