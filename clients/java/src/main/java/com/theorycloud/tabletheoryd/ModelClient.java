// SPDX-License-Identifier: Apache-2.0

// One model's endpoints: table, items, query, scan, count, batches.

package com.theorycloud.tabletheoryd;

import com.theorycloud.tabletheoryd.TableTheoryClient.Answer;
import com.theorycloud.tabletheoryd.TableTheoryClient.Call;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.function.Function;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/** The endpoints of one model; get it with {@link TableTheoryClient#model(String)}. Cheap and thread-safe. */
public final class ModelClient {
    private final TableTheoryClient c;
    private final String name;
    private final String path;

    ModelClient(TableTheoryClient c, String name) {
        this.c = c;
        this.name = name;
        this.path = "/v1/models/" + TableTheoryClient.seg(name);
    }

    public String name() { return name; }

    public ModelInfo describe() { return c.describeModel(name); }

    /** The answer of the table endpoints. */
    public record TableInfo(String table, String status, long itemCount, List<Object> indexes, boolean created) {
        static TableInfo of(Answer a) {
            Map<String, Object> m = Json.asMap(a.body());
            return new TableInfo(Json.str(m.get("table")), Json.str(m.get("status")), Json.num(m.get("item_count")),
                    Json.asList(m.get("indexes")), a.status() == 201);
        }
    }

    /** Creates the table, its indexes and TTL when missing (PUT .../table). */
    public TableInfo ensureTable() { return TableInfo.of(c.send(new Call("PUT", path + "/table", null, true))); }

    public TableInfo table() { return TableInfo.of(c.send(new Call("GET", path + "/table", null, true))); }

    /** Deletes the table (ForbiddenException without --allow-table-delete). */
    public void deleteTable() { c.send(new Call("DELETE", path + "/table", null, false)); }

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

    /** Creates an item (POST .../items); ConditionFailedException if the key exists. Not retried when ambiguous. */
    public Item create(Map<String, Object> item) {
        ModelInfo info = c.schema(name);
        return info.typed(c.send(new Call("POST", path + "/items", item, false)).body());
    }

    /** Creates or replaces an item (PUT .../items/{key}); retried (writing it again is harmless). */
    public Item put(Map<String, Object> item) {
        ModelInfo info = c.schema(name);
        return info.typed(c.send(new Call("PUT", itemPath(info, info.keyOf(item)), item, true)).body());
    }

    /** Replaces an item only at this version (If-Match); VersionConflictException otherwise. */
    public Item putIfVersion(Map<String, Object> item, long version) {
        ModelInfo info = c.schema(name);
        return info.typed(c.send(new Call("PUT", itemPath(info, info.keyOf(item)), null, item,
                Map.of("If-Match", "\"" + version + "\""), false)).body());
    }

    /** Creates an item only when absent (If-None-Match: *); ConditionFailedException otherwise. */
    public Item putIfAbsent(Map<String, Object> item) {
        ModelInfo info = c.schema(name);
        return info.typed(c.send(new Call("PUT", itemPath(info, info.keyOf(item)), null, item,
                Map.of("If-None-Match", "*"), false)).body());
    }

    /** Reads an item; ItemNotFoundException when absent. */
    public Item get(Key key) { return get(key, false); }

    /** Reads an item, strongly consistent when asked, projected to select when given. */
    public Item get(Key key, boolean consistent, String... select) {
        ModelInfo info = c.schema(name);
        Map<String, String> q = new LinkedHashMap<>();
        if (select.length > 0) {
            q.put("select", String.join(",", select));
        }
        if (consistent) {
            q.put("consistent", "true");
        }
        return info.typed(c.send(new Call("GET", itemPath(info, key), q, null, null, true)).body());
    }

    /** Reads an item; empty when absent. */
    public Optional<Item> find(Key key) {
        try {
            return Optional.of(get(key));
        } catch (ItemNotFoundException e) {
            return Optional.empty();
        }
    }

    /** Updates an item and returns the new item; ItemNotFoundException unless the update upserts. Not retried when ambiguous. */
    public Item patch(Key key, Update u) {
        ModelInfo info = c.schema(name);
        return info.typed(c.send(new Call("PATCH", itemPath(info, key), u.body(), false)).body());
    }

    /**
     * The TableTheory form of an update: writes fields (none given: every non-key attribute
     * present) from item, whose key attributes name the item; a version in item is the
     * expected version (VersionConflictException otherwise). Not retried when ambiguous.
     */
    public Item updateFields(Map<String, Object> item, String... fields) {
        ModelInfo info = c.schema(name);
        return info.typed(c.send(new Call("PATCH", itemPath(info, info.keyOf(item)), updateFieldsBody(item, fields),
                false)).body());
    }

    static Map<String, Object> updateFieldsBody(Map<String, Object> item, String... fields) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("item", item);
        if (fields.length > 0) {
            body.put("fields", List.of(fields));
        }
        return body;
    }

    /** Deletes an item; ItemNotFoundException when absent. */
    public void delete(Key key) {
        ModelInfo info = c.schema(name);
        c.send(new Call("DELETE", itemPath(info, key), null, false));
    }

    /** Deletes an item at this version (If-Match); VersionConflictException otherwise. */
    public void delete(Key key, long expectedVersion) {
        ModelInfo info = c.schema(name);
        c.send(new Call("DELETE", itemPath(info, key), null, null, Map.of("If-Match", "\"" + expectedVersion + "\""), false));
    }

    private Page page(String op, Map<String, Object> body) {
        ModelInfo info = c.schema(name);
        Map<String, Object> m = Json.asMap(c.send(new Call("POST", path + "/" + op, body, true)).body());
        List<Item> items = new ArrayList<>();
        for (Object raw : Json.asList(m.get("items"))) {
            items.add(info.typed(raw));
        }
        Object cur = m.get("cursor");
        return new Page(items, Json.num(m.get("count")), Json.num(m.get("scanned_count")),
                cur == null || cur.toString().isEmpty() ? null : cur.toString());
    }

    /** One page of a query. */
    public Page query(Query q) { return page("query", q.body()); }

    /** One page of a scan. */
    public Page scan(Scan s) { return page("scan", s.body()); }

    /** Every item of the query, fetched page by page (lazily) as the stream is consumed. */
    public Stream<Item> queryAll(Query q) {
        Query copy = q.copy();
        return all(cursor -> query(copy.cursor(cursor)), (String) q.body().get("cursor"));
    }

    /** Every item of the scan, fetched page by page (lazily). */
    public Stream<Item> scanAll(Scan s) {
        Scan copy = s.copy();
        return all(cursor -> scan(copy.cursor(cursor)), (String) s.body().get("cursor"));
    }

    private static Stream<Item> all(Function<String, Page> next, String first) {
        Iterator<Item> it = new Iterator<>() {
            private Iterator<Item> cur = List.<Item>of().iterator();
            private String cursor = first;
            private boolean started;

            @Override
            public boolean hasNext() {
                while (!cur.hasNext()) {
                    if (started && cursor == null) {
                        return false;
                    }
                    Page p = next.apply(cursor);
                    started = true;
                    cursor = p.cursor();
                    cur = p.items().iterator();
                }
                return true;
            }

            @Override
            public Item next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                return cur.next();
            }
        };
        return StreamSupport.stream(Spliterators.spliteratorUnknownSize(it, Spliterator.ORDERED | Spliterator.NONNULL), false);
    }

    private static long countAll(Function<String, Page> next, String first) {
        long n = 0;
        String cursor = first;
        do {
            Page p = next.apply(cursor);
            n += p.count();
            cursor = p.cursor();
        } while (cursor != null);
        return n;
    }

    /** Counts the query's items over all pages (a limit is not sent: without one the daemon counts every page in one call). */
    public long count(Query q) {
        Query copy = q.copy();
        copy.body().put("count", true);
        copy.body().remove("limit");
        return countAll(cursor -> query(copy.cursor(cursor)), (String) q.body().get("cursor"));
    }

    /** Counts the scan's items over all pages (a limit is ignored, as in count). */
    public long scanCount(Scan s) {
        Scan copy = s.copy();
        copy.body().put("count", true);
        copy.body().remove("limit");
        return countAll(cursor -> scan(copy.cursor(cursor)), (String) s.body().get("cursor"));
    }

    /** The found items in the order of the keys, and the keys without an item. */
    public record BatchGetResult(List<Item> items, List<Item> missing) {}

    /** Reads up to 10,000 items by key. */
    public BatchGetResult batchGet(List<Key> keys, boolean consistent, String... select) {
        ModelInfo info = c.schema(name);
        Answer a = c.send(new Call("POST", path + "/batch-get", batchGetBody(info, keys, consistent, select), true));
        return batchGetResult(info, a.body());
    }

    static Map<String, Object> batchGetBody(ModelInfo info, List<Key> keys, boolean consistent, String... select) {
        List<Object> objs = new ArrayList<>();
        for (Key k : keys) {
            objs.add(info.keyObject(k));
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("keys", objs);
        if (select.length > 0) {
            body.put("select", List.of(select));
        }
        if (consistent) {
            body.put("consistent", true);
        }
        return body;
    }

    static BatchGetResult batchGetResult(ModelInfo info, Object body) {
        Map<String, Object> m = Json.asMap(body);
        List<Item> items = new ArrayList<>();
        for (Object raw : Json.asList(m.get("items"))) {
            items.add(info.typed(raw));
        }
        List<Item> missing = new ArrayList<>();
        for (Object raw : Json.asList(m.get("missing"))) {
            missing.add(info.typed(raw));
        }
        return new BatchGetResult(items, missing);
    }

    public BatchGetResult batchGet(List<Key> keys) { return batchGet(keys, false); }

    /**
     * Puts and deletes up to 10,000 items; returns how many were processed.
     * On BatchIncomplete exactly the unprocessed requests are sent again
     * (puts and deletes can be repeated), within the client's attempts.
     */
    public int batchWrite(List<? extends Map<String, Object>> puts, List<Key> deletes) {
        ModelInfo info = c.schema(name);
        List<Object> p = new ArrayList<>(puts == null ? List.of() : puts);
        List<Object> d = new ArrayList<>();
        for (Key k : deletes == null ? List.<Key>of() : deletes) {
            d.add(info.keyObject(k));
        }
        int done = 0;
        for (int attempt = 1; ; attempt++) {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("put", p);
            body.put("delete", d);
            try {
                Answer a = c.send(new Call("POST", path + "/batch-write", body, true));
                return done + (int) Json.num(Json.asMap(a.body()).get("processed"));
            } catch (BatchIncompleteException e) {
                if (attempt >= c.maxAttempts()) {
                    throw e;
                }
                Map<String, Object> un = Json.asMap(e.details().get("unprocessed"));
                List<Object> np = pick(p, un.get("put"));
                List<Object> nd = pick(d, un.get("delete"));
                done += p.size() + d.size() - np.size() - nd.size();
                p = np;
                d = nd;
                try {
                    Thread.sleep(c.backoff(attempt));
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    static List<Object> pick(List<Object> from, Object indexes) {
        List<Object> out = new ArrayList<>();
        for (Object i : Json.asList(indexes)) {
            int n = i instanceof BigDecimal b ? b.intValue() : Integer.parseInt(i.toString());
            if (n >= 0 && n < from.size()) {
                out.add(from.get(n));
            }
        }
        return out;
    }
}
