// SPDX-License-Identifier: Apache-2.0

// The update builder: the operator form of PATCH bodies.

package com.theorycloud.tabletheoryd;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An update in the operator form:
 * {@code Update.create().set("flag", true).remove("note").add("count", 1).expectedVersion(3)}.
 */
public final class Update {
    private final Map<String, Object> body = new LinkedHashMap<>();

    public static Update create() {
        return new Update();
    }

    @SuppressWarnings("unchecked")
    private Update member(String op, String attr, Object v) {
        ((Map<String, Object>) body.computeIfAbsent(op, k -> new LinkedHashMap<String, Object>())).put(attr, v);
        return this;
    }

    /** Sets attr (a path such as "a.b[0]") to v. */
    public Update set(String attr, Object v) { return member("set", attr, v); }

    /** Sets attr only when it has no value. */
    public Update setIfNotExists(String attr, Object v) { return member("set_if_not_exists", attr, v); }

    /** Removes attributes. */
    @SuppressWarnings("unchecked")
    public Update remove(String... attrs) {
        List<String> l = (List<String>) body.computeIfAbsent("remove", k -> new ArrayList<String>());
        l.addAll(List.of(attrs));
        return this;
    }

    /** Adds a number to attr, or the elements of a Set to a set attribute. */
    public Update add(String attr, Object v) { return member("add", attr, v); }

    /** Removes the elements of a Set from a set attribute. */
    public Update delete(String attr, Object set) { return member("delete", attr, set); }

    /** Appends the elements of a list to a list attribute. */
    public Update append(String attr, List<?> v) { return member("append", attr, v); }

    /** Puts the elements of a list in front of a list attribute. */
    public Update prepend(String attr, List<?> v) { return member("prepend", attr, v); }

    /** A condition, ANDed with the version check. */
    public Update condition(Cond c) { body.put("condition", c); return this; }

    /** Makes the update conditional on the item's version. */
    public Update expectedVersion(long v) { body.put("expected_version", v); return this; }

    /** Lets the update create a missing item. */
    public Update upsert() { body.put("upsert", true); return this; }

    Map<String, Object> body() { return body; }
}
