// SPDX-License-Identifier: Apache-2.0

// JSON in and out with exact numbers: Jackson trees converted to plain Java values.

package com.theorycloud.tabletheoryd;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

final class Json {
    private Json() {}

    /**
     * Writes byte[] and ByteBuffer as standard base64, BigDecimal as a JSON
     * number with every digit, collections (sets too) as arrays. Reads every
     * number as BigDecimal (never through a double).
     */
    static final ObjectMapper MAPPER = JsonMapper.builder()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .disable(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES)
            .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
            .build();

    static byte[] write(Object body) {
        try {
            return MAPPER.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("a value that cannot be sent as JSON: " + e.getOriginalMessage(), e);
        }
    }

    static Object read(byte[] data) throws IOException {
        if (data.length == 0) {
            return null;
        }
        return toJava(MAPPER.readTree(data));
    }

    /** A Jackson tree as plain Java: Map, List, String, BigDecimal, Boolean, null. */
    static Object toJava(JsonNode n) {
        if (n == null || n.isNull() || n.isMissingNode()) {
            return null;
        }
        if (n.isObject()) {
            Map<String, Object> m = new LinkedHashMap<>();
            Iterator<Map.Entry<String, JsonNode>> it = n.fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                m.put(e.getKey(), toJava(e.getValue()));
            }
            return m;
        }
        if (n.isArray()) {
            List<Object> l = new ArrayList<>(n.size());
            for (JsonNode e : n) {
                l.add(toJava(e));
            }
            return l;
        }
        if (n.isNumber()) {
            return n.isIntegralNumber() ? new BigDecimal(n.bigIntegerValue()) : n.decimalValue();
        }
        if (n.isBoolean()) {
            return n.booleanValue();
        }
        return n.asText();
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> asMap(Object o) {
        return o instanceof Map<?, ?> m ? (Map<String, Object>) m : new LinkedHashMap<>();
    }

    @SuppressWarnings("unchecked")
    static List<Object> asList(Object o) {
        return o instanceof List<?> l ? (List<Object>) l : new ArrayList<>();
    }

    static String str(Object o) {
        return o == null ? null : o.toString();
    }

    static long num(Object o) {
        if (o instanceof BigDecimal b) {
            return b.longValue();
        }
        if (o instanceof Number x) {
            return x.longValue();
        }
        if (o instanceof String s && !s.isEmpty()) {
            return new BigDecimal(s).longValue();
        }
        return 0;
    }
}
