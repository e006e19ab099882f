// SPDX-License-Identifier: Apache-2.0

// Tests of the asynchronous view (client.async()) against a real daemon on the memory backend.

package com.theorycloud.tabletheoryd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
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
        assertInstanceOf(VersionConflictException.class,
                failure(things.updateFields(Map.of("PK", pk, "SK", "a", "note", "w", "version", 0), "note")));
        Item fields = await(things.updateFields(Map.of("PK", pk, "SK", "a", "note", "w", "version", 1), "note"));
        assertEquals("w", fields.getString("note"));
        assertEquals(2, fields.version());
        assertInstanceOf(VersionConflictException.class, failure(things.delete(Key.of(pk, "a"), 0)));
        await(things.putIfVersion(Map.of("PK", pk, "SK", "a", "note", "y"), 2));
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
    void batchesAsynchronously() throws Exception {
        AsyncClient.Model things = client.model("Thing");
        String pk = uniq("abatch");
        List<Map<String, Object>> puts = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            puts.add(Item.of("PK", pk, "SK", String.format("%02d", i), "n", i));
        }
        assertEquals(30, await(things.batchWrite(puts, null)));
        ModelClient.BatchGetResult r = await(things.batchGet(List.of(Key.of(pk, "07"), Key.of(pk, "99"),
                Key.of(pk, "03")), true, "PK", "SK", "n"));
        assertEquals(List.of("07", "03"), r.items().stream().map(i -> i.getString("SK")).collect(Collectors.toList()));
        assertEquals(new BigDecimal("7"), r.items().get(0).getNumber("n"));
        assertEquals(1, r.missing().size());
        assertEquals("99", r.missing().get(0).getString("SK"));
        assertEquals(30L, await(things.scanCount(Scan.all().filter(Cond.eq("PK", pk)).limit(4))));
        assertEquals(2, await(things.batchWrite(List.of(Item.of("PK", pk, "SK", "30")), List.of(Key.of(pk, "00")))));
        assertEquals(List.of("30"), await(things.batchGet(List.of(Key.of(pk, "00"), Key.of(pk, "30")))).items()
                .stream().map(i -> i.getString("SK")).collect(Collectors.toList()));
        assertInstanceOf(ValidationException.class, failure(things.batchWrite(null, List.of(Key.of(pk)))));
        assertInstanceOf(ModelNotFoundException.class,
                failure(client.model("NoSuchModel").batchGet(List.of(Key.of("x")))));
    }

    @Test
    void transactionsAsynchronously() throws Exception {
        String pk = uniq("atx");
        await(client.transactWrite(new Tx().create("Thing", Item.of("PK", pk, "SK", "a", "count", 1))
                .put("Counter", Item.of("id", pk, "value", 10))));
        TransactionCanceledException e = assertInstanceOf(TransactionCanceledException.class,
                failure(client.transactWrite(new Tx()
                        .update("Thing", Key.of(pk, "a"), Update.create().add("count", 1).expectedVersion(0))
                        .create("Counter", Item.of("id", pk, "value", 11)))));
        assertEquals(List.of("None", "ConditionalCheckFailed"),
                e.reasons().stream().map(TransactionCanceledException.Reason::code).collect(Collectors.toList()));
        await(client.transactWrite(new Tx()
                .update("Thing", Key.of(pk, "a"), Update.create().add("count", 1).expectedVersion(0))
                .check("Counter", Key.of(pk), Cond.eq("value", 10))));
        List<Item> got = await(client.transactGet(List.of(new TableTheoryClient.TxGet("Thing", Key.of(pk, "a")),
                new TableTheoryClient.TxGet("Counter", Key.of(pk + "-none")),
                new TableTheoryClient.TxGet("Counter", Key.of(pk), List.of("value")))));
        assertEquals(3, got.size());
        assertEquals(new BigDecimal("2"), got.get(0).getNumber("count"));
        assertNull(got.get(1));
        assertEquals(new BigDecimal("10"), got.get(2).getNumber("value"));
        // One client token, sent twice: applied once.
        Tx tx = new Tx().update("Counter", Key.of(pk), Update.create().add("value", 5)).clientToken("tok-" + pk);
        await(client.transactWrite(tx));
        await(client.transactWrite(tx));
        assertEquals(new BigDecimal("15"), await(client.model("Counter").get(Key.of(pk))).getNumber("value"));
        assertInstanceOf(ModelNotFoundException.class, failure(client.transactGet(
                List.of(new TableTheoryClient.TxGet("NoSuchModel", Key.of("x"))))));
    }

    @Test
    void ledgerListsFollowEveryCursor() throws Exception {
        AsyncClient.Jobs jobs = client.ledger();
        await(jobs.ensureTable());
        String tenant = uniq("atenant");
        String id = uniq("ajob");
        await(jobs.createJob(tenant, id, "PENDING", Duration.ofDays(1)));
        for (int i = 0; i < 3; i++) {
            await(jobs.createJob(tenant, null));
        }
        List<Ledger.Job> all = await(jobs.listJobs(null, tenant, false, 1));
        assertEquals(4, all.size());
        assertTrue(all.stream().allMatch(j -> tenant.equals(j.tenantId())));
        List<Ledger.Job> desc = await(jobs.listJobs("PENDING", tenant, true, 3));
        assertEquals(4, desc.size());
        assertEquals(all.stream().map(Ledger.Job::jobId).collect(Collectors.toSet()),
                desc.stream().map(Ledger.Job::jobId).collect(Collectors.toSet()));
        assertTrue(desc.get(0).createdAt().compareTo(desc.get(3).createdAt()) >= 0);
        for (String rid : List.of("r1", "r2", "r3")) {
            await(jobs.putRecord(id, rid, "PENDING", null));
        }
        await(jobs.putRecord(id, "r2", "FAILED", Map.of("type", "HttpError", "message", "no")));
        assertEquals(List.of("r1", "r3"), await(jobs.listRecords(id, "PENDING")).stream()
                .map(Ledger.JobRecord::recordId).collect(Collectors.toList()));
        assertEquals(List.of("r1", "r2", "r3"), await(jobs.listRecords(id, null)).stream()
                .map(Ledger.JobRecord::recordId).collect(Collectors.toList()));
        assertInstanceOf(ValidationException.class, failure(jobs.listJobs(null, null, false, 0)));
    }

    @Test
    void batchWriteResendsOnlyTheUnprocessed() throws Exception {
        // As the blocking client's test: a short deadline makes a batch whose last item is never
        // processed answer BatchIncomplete; the recording proxy clears the fault after that answer.
        try (TestDaemon d = new TestDaemon("--enable-fault-injection", "--request-timeout-ms", "1500");
             RecordingProxy proxy = new RecordingProxy(d.url)) {
            HttpClient http = HttpClient.newHttpClient();
            HttpRequest add = HttpRequest.newBuilder(URI.create(d.url + "/v1/_faults"))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"op\":\"BatchWriteItem\",\"model\":\"Thing\","
                            + "\"error\":\"Unprocessed\",\"unprocessed\":1,\"times\":100000}"))
                    .build();
            assertEquals(201, http.send(add, HttpResponse.BodyHandlers.discarding()).statusCode());
            AsyncClient.Model things = TableTheoryClient.builder().url(proxy.url()).build().async().model("Thing");
            List<Item> puts = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                puts.add(Item.of("PK", "abw", "SK", String.format("%02d", i)));
            }
            assertEquals(32, await(things.batchWrite(puts, List.of(Key.of("abw", "x1"), Key.of("abw", "x2")))));
            List<String> bodies = proxy.batchBodies();
            assertEquals(2, bodies.size());
            Map<String, Object> second = Json.asMap(Json.read(bodies.get(1).getBytes(StandardCharsets.UTF_8)));
            assertEquals(List.of(Map.of("PK", "abw", "SK", "24")), second.get("put"));
            assertEquals(List.of(Map.of("PK", "abw", "SK", "x2")), second.get("delete"));
            assertEquals(2, await(things.batchGet(List.of(Key.of("abw", "24"), Key.of("abw", "29")), true))
                    .items().size());
        }
    }

    @Test
    void unreachableDaemonFailsTheFuture() {
        AsyncClient c = TableTheoryClient.builder().url("http://127.0.0.1:9").maxAttempts(2)
                .backoff(Duration.ofMillis(1), Duration.ofMillis(5)).build().async();
        assertInstanceOf(ConnectionException.class, failure(c.models()));
    }
}
