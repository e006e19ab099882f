// SPDX-License-Identifier: Apache-2.0

// Tests of the asynchronous view (client.async()) against a real daemon on the memory backend.

package com.theorycloud.tabletheoryd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("daemon")
class AsyncClientTest {
    private static TestDaemon daemon;
    private static AsyncClient client;
    private static final AtomicLong SEQ = new AtomicLong();

    @BeforeAll
    static void start() throws Exception {
        daemon = TestDaemon.shared();
        client = TableTheoryClient.builder().url(daemon.url).build().async();
    }

    static String uniq(String name) {
        return name + "-" + System.nanoTime() + "-" + SEQ.incrementAndGet();
    }

    static <T> T await(CompletableFuture<T> f) throws Exception {
        return f.get(30, TimeUnit.SECONDS);
    }

    static Throwable failure(CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS));
        return e.getCause();
    }

    @Test
    void itemsRoundTripAsynchronously() throws Exception {
        AsyncClient.Model things = client.model("Thing");
        String pk = uniq("async");
        Item created = await(things.create(Map.of("PK", pk, "SK", "a", "n", new BigDecimal("12345678901234567890.5"))));
        assertEquals(0, created.version());
        assertInstanceOf(ConditionFailedException.class, failure(things.create(Map.of("PK", pk, "SK", "a"))));
        Item got = await(things.get(Key.of(pk, "a"), true));
        assertEquals(new BigDecimal("12345678901234567890.5"), got.getNumber("n"));
        Item patched = await(things.patch(Key.of(pk, "a"), Update.create().set("note", "x")));
        assertEquals(1, patched.version());
        assertInstanceOf(VersionConflictException.class, failure(things.delete(Key.of(pk, "a"), 0)));
        await(things.putIfVersion(Map.of("PK", pk, "SK", "a", "note", "y"), 1));
        assertEquals("y", await(things.find(Key.of(pk, "a"))).orElseThrow().getString("note"));
        await(things.delete(Key.of(pk, "a")));
        assertTrue(await(things.find(Key.of(pk, "a"))).isEmpty());
        assertInstanceOf(ItemNotFoundException.class, failure(things.get(Key.of(pk, "a"))));
        assertInstanceOf(ModelNotFoundException.class, failure(client.model("NoSuchModel").get(Key.of("x"))));
    }

    @Test
    void manyCallsInFlightAndQueries() throws Exception {
        AsyncClient.Model things = client.model("Thing");
        String pk = uniq("many");
        List<CompletableFuture<Item>> puts = new ArrayList<>();
        for (int i = 0; i < 25; i++) {
            puts.add(things.put(Map.of("PK", pk, "SK", String.format("s%02d", i))));
        }
        CompletableFuture.allOf(puts.toArray(new CompletableFuture[0])).get(30, TimeUnit.SECONDS);
        Page page = await(things.query(Query.key(Cond.eq("PK", pk)).limit(10)));
        assertEquals(10, page.items().size());
        assertTrue(page.cursor() != null);
        assertEquals(25L, await(things.count(Query.key(Cond.eq("PK", pk)).limit(7))));
        assertTrue(await(client.models()).stream().anyMatch(m -> m.name().equals("Thing")));
    }

    @Test
    void retriesWithoutBlocking() throws Exception {
        AsyncClient.Model things = client.model("Thing");
        String pk = uniq("retry");
        await(things.put(Map.of("PK", pk, "SK", "a")));
        assertEquals(201, ClientTest.raw("POST", "/v1/_faults",
                "{\"op\":\"GetItem\",\"model\":\"Thing\",\"error\":\"ServiceUnavailable\",\"times\":4}"));
        try {
            assertEquals(pk, await(things.get(Key.of(pk, "a"))).getString("PK"));
        } finally {
            ClientTest.raw("DELETE", "/v1/_faults", null);
        }
    }

    @Test
    void ledgerTakesTheSameArgumentsAsTheSyncOne() throws Exception {
        AsyncClient.Jobs jobs = client.ledger();
        String id = uniq("job");
        Ledger.Job job = await(jobs.createJob("acme", id));
        assertEquals(1, job.version());
        assertEquals("acme", job.tenantId());
        Ledger.Job running = await(jobs.transition(id, 1, "PENDING", "RUNNING"));
        assertEquals(2, running.version());
        assertInstanceOf(VersionConflictException.class, failure(jobs.transition(id, 1, null, "SUCCEEDED")));
        assertEquals("w1", await(jobs.acquireLease(id, "w1", Duration.ofSeconds(30))).owner());
        assertInstanceOf(LeaseHeldException.class, failure(jobs.acquireLease(id, "w2", Duration.ofSeconds(30))));
        await(jobs.releaseLease(id, "w1"));
        assertTrue(await(jobs.beginRequest(id, "k", null)).created());
    }

    @Test
    void unreachableDaemonFailsTheFuture() {
        AsyncClient c = TableTheoryClient.builder().url("http://127.0.0.1:9").maxAttempts(2)
                .backoff(Duration.ofMillis(1), Duration.ofMillis(5)).build().async();
        assertInstanceOf(ConnectionException.class, failure(c.models()));
    }
}
