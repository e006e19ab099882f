// SPDX-License-Identifier: Apache-2.0

// The Java side of the cross-language client test (clients/XLANG.md): write, read and lease.

package com.theorycloud.tabletheoryd.xlang;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.theorycloud.tabletheoryd.Item;
import com.theorycloud.tabletheoryd.Key;
import com.theorycloud.tabletheoryd.LeaseHeldException;
import com.theorycloud.tabletheoryd.Ledger;
import com.theorycloud.tabletheoryd.TableTheoryClient;
import com.theorycloud.tabletheoryd.Update;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

public final class XLang {
    private XLang() {}

    public static void main(String[] args) {
        try {
            run(args);
        } catch (Exception e) {
            System.err.println("xlang (java): " + e);
            System.exit(1);
        }
    }

    static void run(String[] args) throws Exception {
        if (args.length < 2) {
            throw new IllegalArgumentException("usage: xlang write PREFIX | read PREFIX | lease JOBPREFIX WORKER N");
        }
        TableTheoryClient c = TableTheoryClient.fromEnv();
        switch (args[0]) {
            case "write" -> write(c, args[1]);
            case "read" -> read(c, args[1]);
            case "lease" -> {
                if (args.length != 4) {
                    throw new IllegalArgumentException("usage: xlang lease JOBPREFIX WORKER N");
                }
                lease(c, args[1], args[2], Integer.parseInt(args[3]));
            }
            default -> throw new IllegalArgumentException("unknown command " + args[0]);
        }
    }

    static void write(TableTheoryClient c, String prefix) {
        byte[] blob = new byte[256];
        for (int i = 0; i < 256; i++) {
            blob[i] = (byte) i;
        }
        Set<ByteBuffer> bins = new LinkedHashSet<>(List.of(ByteBuffer.wrap(new byte[] {0x00, 0x01}),
                ByteBuffer.wrap(new byte[] {(byte) 0xff})));
        Map<String, Object> deep = new LinkedHashMap<>();
        deep.put("x", Arrays.asList(true, null));
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("k", "v");
        map.put("n", new BigDecimal("42"));
        map.put("deep", deep);
        Item it = new Item()
                .with("id", prefix + "-1")
                .with("n_big", new BigDecimal("12345678901234567890123456789012345678"))
                .with("n_frac", new BigDecimal("0.12345678901234567890123456789012345678"))
                .with("n_neg_small", new BigDecimal("-1E-130"))
                .with("tags", Set.of("alpha", "beta", "gamma"))
                .with("nums", Set.of(new BigDecimal("1"), new BigDecimal("2.5"), new BigDecimal("-3"),
                        new BigDecimal("10000000000000000000000000000000000000")))
                .with("bins", bins)
                .with("blob", blob)
                .with("flag", false)
                .with("nothing", null)
                .with("list", List.of(new BigDecimal("1"), "two", Map.of("three", new BigDecimal("3"))))
                .with("map", map);
        c.model("XItem").create(it);
        c.model("XItem").patch(Key.of(prefix + "-1"), Update.create().set("flag", true));
    }

    /** The client's native values in the harness's canonical JSON form. */
    static Object canon(Object v) {
        if (v == null || v instanceof String || v instanceof Boolean) {
            return v;
        }
        if (v instanceof BigDecimal b) {
            return b.toString();
        }
        if (v instanceof byte[] b) {
            return Base64.getEncoder().encodeToString(b);
        }
        if (v instanceof Set<?> s) {
            List<Object> out = new ArrayList<>();
            if (!s.isEmpty() && s.iterator().next() instanceof BigDecimal) {
                List<BigDecimal> nums = new ArrayList<>();
                s.forEach(e -> nums.add((BigDecimal) e));
                nums.sort(BigDecimal::compareTo);
                nums.forEach(n -> out.add(n.toString()));
                return out;
            }
            List<String> strs = new ArrayList<>();
            for (Object e : s) {
                if (e instanceof ByteBuffer bb) {
                    byte[] b = new byte[bb.remaining()];
                    bb.duplicate().get(b);
                    strs.add(Base64.getEncoder().encodeToString(b));
                } else {
                    strs.add((String) e);
                }
            }
            strs.sort(null); // UTF-16 order equals code point order for these ASCII strings
            out.addAll(strs);
            return out;
        }
        if (v instanceof Collection<?> l) {
            List<Object> out = new ArrayList<>();
            l.forEach(e -> out.add(canon(e)));
            return out;
        }
        if (v instanceof Map<?, ?> m) {
            Map<String, Object> out = new LinkedHashMap<>();
            m.forEach((k, e) -> out.put(k.toString(), canon(e)));
            return out;
        }
        throw new IllegalStateException("unexpected value of type " + v.getClass());
    }

    static void read(TableTheoryClient c, String prefix) throws Exception {
        Item it = c.model("XItem").get(Key.of(prefix + "-1"), true);
        System.out.println(new ObjectMapper().writeValueAsString(canon(it)));
    }

    static void lease(TableTheoryClient c, String prefix, String worker, int n) {
        Ledger l = c.ledger();
        for (int i = 1; i <= n; i++) {
            String job = prefix + "-" + i;
            try {
                l.acquireLease(job, worker, Duration.ofSeconds(60));
                System.out.println(job + " won");
            } catch (LeaseHeldException e) {
                System.out.println(job + " lost");
            }
        }
        System.out.flush();
    }
}
