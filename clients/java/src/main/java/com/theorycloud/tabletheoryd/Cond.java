// SPDX-License-Identifier: Apache-2.0

// Conditions of the daemon's condition language, for conditions, filters and key conditions.

package com.theorycloud.tabletheoryd;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A condition (docs/api.md "Conditions"); values are always bound, never spliced. */
public final class Cond extends LinkedHashMap<String, Object> {
    private static final long serialVersionUID = 1L;

    private Cond() {}

    private static Cond of(Object... kv) {
        Cond c = new Cond();
        for (int i = 0; i < kv.length; i += 2) {
            c.put((String) kv[i], kv[i + 1]);
        }
        return c;
    }

    /** {"attr", "op", "value"}; op: = &lt;&gt; &lt; &lt;= &gt; &gt;= begins_with contains not_contains type. */
    public static Cond op(String attr, String op, Object value) { return of("attr", attr, "op", op, "value", value); }

    public static Cond eq(String attr, Object value) { return op(attr, "=", value); }

    public static Cond ne(String attr, Object value) { return op(attr, "<>", value); }

    public static Cond lt(String attr, Object value) { return op(attr, "<", value); }

    public static Cond le(String attr, Object value) { return op(attr, "<=", value); }

    public static Cond gt(String attr, Object value) { return op(attr, ">", value); }

    public static Cond ge(String attr, Object value) { return op(attr, ">=", value); }

    public static Cond between(String attr, Object lo, Object hi) { return op(attr, "between", List.of(lo, hi)); }

    public static Cond beginsWith(String attr, String prefix) { return op(attr, "begins_with", prefix); }

    public static Cond contains(String attr, Object v) { return op(attr, "contains", v); }

    public static Cond in(String attr, Object... values) { return op(attr, "in", Arrays.asList(values)); }

    public static Cond exists(String attr) { return of("attr", attr, "op", "exists"); }

    public static Cond notExists(String attr) { return of("attr", attr, "op", "not_exists"); }

    /** size(attr) op n. */
    public static Cond size(String attr, String op, long n) { return of("attr", attr, "size", op, "value", n); }

    public static Cond and(Cond... cs) { return of("and", List.of(cs)); }

    public static Cond or(Cond... cs) { return of("or", List.of(cs)); }

    public static Cond not(Cond c) { return of("not", c); }

    Map<String, Object> body() { return this; }
}
