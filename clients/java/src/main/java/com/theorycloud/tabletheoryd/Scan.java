// SPDX-License-Identifier: Apache-2.0

// The body of a scan: filter, projection, limit, parallel segments, cursor.

package com.theorycloud.tabletheoryd;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A scan: {@code Scan.all().filter(Cond.eq("status", "A")).segments(4).limit(100)}. */
public final class Scan {
    private final Map<String, Object> body = new LinkedHashMap<>();

    private Scan() {}

    public static Scan all() { return new Scan(); }

    public Scan filter(Cond c) { body.put("filter", c); return this; }

    public Scan select(String... paths) { body.put("select", List.of(paths)); return this; }

    public Scan limit(int n) { body.put("limit", n); return this; }

    public Scan consistent() { body.put("consistent", true); return this; }

    /** Parallel segments (1-64), joined by the daemon before it answers. */
    public Scan segments(int n) { body.put("segments", n); return this; }

    public Scan cursor(String cursor) {
        if (cursor == null) {
            body.remove("cursor");
        } else {
            body.put("cursor", cursor);
        }
        return this;
    }

    Scan copy() {
        Scan s = new Scan();
        s.body.putAll(body);
        return s;
    }

    Map<String, Object> body() { return body; }
}
