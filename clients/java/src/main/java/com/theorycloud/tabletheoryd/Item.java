// SPDX-License-Identifier: Apache-2.0

// An item: attribute name to plain Java value, with typed accessors.

package com.theorycloud.tabletheoryd;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * One item in the model's logical form, keyed by attribute name.
 *
 * <p>Values you send: String, Boolean, null, BigDecimal (or any Number),
 * byte[] or ByteBuffer (B, sent as base64), Set (SS/NS/BS), List (L), Map (M).
 *
 * <p>Values you get back, for attributes the model declares: S String,
 * N BigDecimal, B byte[], BOOL Boolean, NULL null, SS Set&lt;String&gt;,
 * NS Set&lt;BigDecimal&gt;, BS Set&lt;ByteBuffer&gt; (ByteBuffer compares by
 * content, byte[] does not), L List, M Map. Inside L and M values are inferred
 * from JSON: numbers BigDecimal, strings String (the daemon sends a nested
 * number that a double cannot carry as a decimal string, which then reads as
 * a String).
 */
public class Item extends LinkedHashMap<String, Object> {
    private static final long serialVersionUID = 1L;

    public Item() {}

    public Item(Map<String, ?> m) {
        super(m);
    }

    /** Item.of("PK", "USER#1", "SK", "PROFILE", ...): name, value pairs. */
    public static Item of(Object... pairs) {
        if (pairs.length % 2 != 0) {
            throw new IllegalArgumentException("Item.of takes name, value pairs");
        }
        Item it = new Item();
        for (int i = 0; i < pairs.length; i += 2) {
            it.put((String) pairs[i], pairs[i + 1]);
        }
        return it;
    }

    /** Adds one attribute and returns this item. */
    public Item with(String name, Object value) {
        put(name, value);
        return this;
    }

    public String getString(String name) {
        Object v = get(name);
        return v == null ? null : v.toString();
    }

    public BigDecimal getNumber(String name) {
        Object v = get(name);
        if (v instanceof BigDecimal b) {
            return b;
        }
        if (v instanceof Number || v instanceof String) {
            return new BigDecimal(v.toString());
        }
        return null;
    }

    public byte[] getBytes(String name) {
        Object v = get(name);
        if (v instanceof byte[] b) {
            return b;
        }
        if (v instanceof ByteBuffer bb) {
            byte[] out = new byte[bb.remaining()];
            bb.duplicate().get(out);
            return out;
        }
        return null;
    }

    public Boolean getBoolean(String name) {
        Object v = get(name);
        return v instanceof Boolean b ? b : null;
    }

    @SuppressWarnings("unchecked")
    public <T> Set<T> getSet(String name) {
        Object v = get(name);
        return v instanceof Set<?> s ? (Set<T>) s : null;
    }

    /** The "version" attribute (0 when absent). */
    public long version() {
        BigDecimal v = getNumber("version");
        return v == null ? 0 : v.longValueExact();
    }
}
