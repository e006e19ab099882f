// SPDX-License-Identifier: Apache-2.0

// The body of a query: key conditions, index, filter, projection, limit, order, cursor.

package com.theorycloud.tabletheoryd;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A query: {@code Query.key(Cond.eq("PK", "USER#1"), Cond.beginsWith("SK", "ORDER#")).limit(50).desc()}. */
public final class Query {
    private final Map<String, Object> body = new LinkedHashMap<>();

    private Query() {}

    /** The partition equality and at most one sort-key condition. */
    public static Query key(Cond... conds) {
        Query q = new Query();
        q.body.put("key", List.of(conds));
        return q;
    }

    public Query index(String name) { body.put("index", name); return this; }

    public Query filter(Cond c) { body.put("filter", c); return this; }

    public Query select(String... paths) { body.put("select", List.of(paths)); return this; }

    /** Items per page. */
    public Query limit(int n) { body.put("limit", n); return this; }

    public Query desc() { body.put("order", "desc"); return this; }

    public Query asc() { body.put("order", "asc"); return this; }

    public Query consistent() { body.put("consistent", true); return this; }

    public Query cursor(String cursor) {
        if (cursor == null) {
            body.remove("cursor");
        } else {
            body.put("cursor", cursor);
        }
        return this;
    }

    Query copy() {
        Query q = new Query();
        q.body.putAll(body);
        return q;
    }

    Map<String, Object> body() { return body; }
}
