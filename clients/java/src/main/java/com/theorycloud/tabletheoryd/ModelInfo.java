// SPDX-License-Identifier: Apache-2.0

// A model as the daemon describes it, and the conversion of answers by its declared types.

package com.theorycloud.tabletheoryd;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** A normalized DMS model (GET /v1/models/{m}). */
public final class ModelInfo {
    private final Map<String, Object> raw;
    private final String name;
    private final String table;
    private final String partitionKey;
    private final String sortKey;
    private final Map<String, String> types = new HashMap<>();

    ModelInfo(Map<String, Object> raw) {
        this.raw = raw;
        this.name = Json.str(raw.get("name"));
        this.table = Json.str(Json.asMap(raw.get("table")).get("name"));
        Map<String, Object> keys = Json.asMap(raw.get("keys"));
        this.partitionKey = Json.str(Json.asMap(keys.get("partition")).get("attribute"));
        Object sort = keys.get("sort");
        this.sortKey = sort == null ? null : Json.str(Json.asMap(sort).get("attribute"));
        for (Object a : Json.asList(raw.get("attributes"))) {
            Map<String, Object> m = Json.asMap(a);
            String type = Json.str(m.get("type"));
            if (Boolean.TRUE.equals(m.get("json")) && "S".equals(type)) {
                type = ""; // a JSON document stored as a string: inferred
            }
            types.put(Json.str(m.get("attribute")), type);
        }
    }

    public String name() { return name; }

    public String tableName() { return table; }

    public String partitionKey() { return partitionKey; }

    /** The sort key attribute, or null. */
    public String sortKey() { return sortKey; }

    /** The declared type of an attribute ("S", "N", "SS", ...), or null. */
    public String typeOf(String attribute) { return types.get(attribute); }

    /** The whole normalized model. */
    public Map<String, Object> raw() { return raw; }

    Map<String, Object> keyObject(Key k) {
        Map<String, Object> o = new LinkedHashMap<>();
        o.put(partitionKey, k.partition());
        if (sortKey != null) {
            o.put(sortKey, k.sort());
        }
        return o;
    }

    Key keyOf(Map<String, Object> item) {
        return new Key(item.get(partitionKey), sortKey == null ? null : item.get(sortKey));
    }

    /** An answer's item with N, B and set attributes converted to their Java types. */
    Item typed(Object rawItem) {
        if (rawItem == null) {
            return null;
        }
        Item it = new Item(Json.asMap(rawItem));
        for (Map.Entry<String, Object> e : it.entrySet()) {
            if (e.getValue() != null) {
                e.setValue(convert(types.get(e.getKey()), e.getValue()));
            }
        }
        return it;
    }

    private static Object convert(String type, Object v) {
        if (type == null) {
            return v;
        }
        switch (type) {
            case "N":
                return v instanceof String s ? new BigDecimal(s) : v;
            case "B":
                return v instanceof String s ? Base64.getDecoder().decode(s) : v;
            case "SS": {
                Set<String> out = new LinkedHashSet<>();
                for (Object e : (List<?>) v) {
                    out.add(String.valueOf(e));
                }
                return out;
            }
            case "NS": {
                Set<BigDecimal> out = new LinkedHashSet<>();
                for (Object e : (List<?>) v) {
                    out.add(e instanceof BigDecimal b ? b : new BigDecimal(String.valueOf(e)));
                }
                return out;
            }
            case "BS": {
                Set<ByteBuffer> out = new LinkedHashSet<>();
                for (Object e : (List<?>) v) {
                    out.add(ByteBuffer.wrap(Base64.getDecoder().decode(String.valueOf(e))).asReadOnlyBuffer());
                }
                return out;
            }
            default:
                return v;
        }
    }

    /** A key value as path text: S as is, N as decimal text, B as base64url. */
    static String keyText(Object v) {
        if (v instanceof byte[] b) {
            return Base64.getUrlEncoder().encodeToString(b);
        }
        if (v instanceof BigDecimal d) {
            return d.toPlainString();
        }
        if (v == null) {
            throw new IllegalArgumentException("a key value is missing");
        }
        return v.toString();
    }
}
