// SPDX-License-Identifier: Apache-2.0

// Tests of the Java client against a real daemon on the memory backend.

package com.theorycloud.tabletheoryd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("daemon")
class ClientTest {
    private static TestDaemon daemon;
    private static TableTheoryClient client;
    private static final AtomicLong SEQ = new AtomicLong();

    @BeforeAll
    static void start() throws Exception {
        daemon = TestDaemon.shared();
        client = TableTheoryClient.builder().url(daemon.url).build();
    }

    @AfterEach
    void clearFaults() throws Exception {
        raw("DELETE", "/v1/_faults", null);
    }

    static String uniq(String name) {
        return name + "-" + System.nanoTime() + "-" + SEQ.incrementAndGet();
    }

    static int raw(String method, String path, String json) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(daemon.url + path));
        if (json != null) {
            b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(json));
        } else {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        }
        return HttpClient.newHttpClient().send(b.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    /** Lease refreshes the daemon answered so far. */
    static double refreshesAnswered() throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create(daemon.url + "/metrics")).GET().build();
        String text = HttpClient.newHttpClient().send(req, HttpResponse.BodyHandlers.ofString()).body();
        double n = 0;
        for (String line : text.split("\n")) {
            if (line.startsWith("tabletheoryd_http_requests_total{")
                    && line.contains("route=\"/v1/jobs/{id}/lease/refresh\"")) {
                n += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return n;
    }

    @Test
    void itemRoundTripKeepsExactValues() {
        ModelClient things = client.model("Thing");
        String pk = uniq("rt") + "#a/b c%+";
        byte[] blob = new byte[256];
        for (int i = 0; i < 256; i++) {
            blob[i] = (byte) i;
        }
        Item created = things.create(Item.of(
                "PK", pk, "SK", "S/1",
                "n", new BigDecimal("12345678901234567890123456789012345678"),
                "tags", Set.of("b", "a"),
                "nums", Set.of(new BigDecimal("0.12345678901234567890123456789012345678"), new BigDecimal("-1E-130"), BigDecimal.valueOf(3)),
                "bins", Set.of(ByteBuffer.wrap(new byte[] {0, 1}), ByteBuffer.wrap(new byte[] {(byte) 0xff})),
                "blob", blob,
                "flag", false,
                "list", List.of(1, "two", Map.of("three", 3)),
                "doc", Map.of("k", "v", "deep", Map.of("x", java.util.Arrays.asList(true, null))),
                "count", 1));
        assertEquals(0, created.version());
        assertNotNull(created.getString("createdAt"));
        Item got = things.get(Key.of(pk, "S/1"), true);
        assertEquals(new BigDecimal("12345678901234567890123456789012345678"), got.getNumber("n"));
        assertEquals(Set.of("a", "b"), got.getSet("tags"));
        Set<BigDecimal> nums = got.getSet("nums");
        TreeSet<BigDecimal> sorted = new TreeSet<>(nums);
        assertEquals(0, sorted.first().compareTo(new BigDecimal("-1E-130")));
        assertEquals(0, sorted.last().compareTo(BigDecimal.valueOf(3)));
        assertTrue(nums.stream().anyMatch(x -> x.compareTo(new BigDecimal("0.12345678901234567890123456789012345678")) == 0));
        assertArrayEquals(blob, got.getBytes("blob"));
        assertEquals(Set.of(ByteBuffer.wrap(new byte[] {0, 1}), ByteBuffer.wrap(new byte[] {(byte) 0xff})), got.getSet("bins"));
        List<?> list = (List<?>) got.get("list");
        assertEquals(BigDecimal.ONE, list.get(0));
        assertEquals("two", list.get(1));
        assertEquals(BigDecimal.valueOf(3), ((Map<?, ?>) list.get(2)).get("three"));
        assertEquals(Boolean.FALSE, got.getBoolean("flag"));
        Item sel = things.get(Key.of(pk, "S/1"), false, "n");
        assertFalse(sel.containsKey("blob"));
        assertNotNull(sel.getNumber("n"));
    }

    @Test
    void putConditionsAndErrors() {
        ModelClient things = client.model("Thing");
        String pk = uniq("put");
        assertEquals(0, things.putIfAbsent(Item.of("PK", pk, "SK", "x", "note", "one")).version());
        ConditionFailedException cf = assertThrows(ConditionFailedException.class,
                () -> things.putIfAbsent(Item.of("PK", pk, "SK", "x", "note", "two")));
        assertEquals(409, cf.status());
        assertFalse(cf.retryable());
        assertNotNull(cf.requestId());
        assertInstanceOf(ConflictException.class, cf);
        assertThrows(VersionConflictException.class, () -> things.putIfVersion(Item.of("PK", pk, "SK", "x"), 5));
        Item it = things.putIfVersion(Item.of("PK", pk, "SK", "x", "note", "two"), 0);
        assertEquals(1, it.version());
        assertEquals("two", it.getString("note"));
        assertThrows(VersionConflictException.class, () -> things.delete(Key.of(pk, "x"), 0));
        things.delete(Key.of(pk, "x"), 1);
        assertThrows(ItemNotFoundException.class, () -> things.get(Key.of(pk, "x")));
        assertTrue(things.find(Key.of(pk, "x")).isEmpty());
        ValidationException ve = assertThrows(ValidationException.class,
                () -> things.create(Item.of("PK", pk, "SK", "y", "nope", 1)));
        assertNotNull(ve.field());
        assertThrows(ModelNotFoundException.class, () -> client.model("NoSuchModel").get(Key.of("a")));
    }

    @Test
    void patchWithTheUpdateBuilder() {
        ModelClient things = client.model("Thing");
        String pk = uniq("patch");
        Key key = Key.of(pk, "p");
        things.create(Item.of("PK", pk, "SK", "p", "count", 1, "tags", Set.of("a", "b"), "list", List.of("m"), "note", "gone"));
        Item it = things.patch(key, Update.create()
                .set("flag", true)
                .setIfNotExists("status", "new")
                .remove("note")
                .add("count", new BigDecimal("41"))
                .delete("tags", Set.of("a"))
                .append("list", List.of("z"))
                .condition(Cond.exists("count"))
                .expectedVersion(0));
        assertEquals(Boolean.TRUE, it.getBoolean("flag"));
        assertEquals("new", it.getString("status"));
        assertFalse(it.containsKey("note"));
        assertEquals(new BigDecimal("42"), it.getNumber("count"));
        assertEquals(Set.of("b"), it.getSet("tags"));
        assertEquals(1, it.version());
        it = things.patch(key, Update.create().prepend("list", List.of("a")));
        assertEquals(List.of("a", "m", "z"), it.get("list"));
        assertThrows(VersionConflictException.class, () -> things.patch(key, Update.create().set("flag", false).expectedVersion(0)));
        assertThrows(ConditionFailedException.class, () -> things.patch(key, Update.create().set("flag", false).condition(Cond.gt("count", 100))));
        assertThrows(ItemNotFoundException.class, () -> things.patch(Key.of(pk, "absent"), Update.create().set("flag", true)));
        assertEquals(Boolean.TRUE, things.patch(Key.of(pk, "absent"), Update.create().set("flag", true).upsert()).getBoolean("flag"));
    }

    @Test
    void queryScanStreamsAndCounts() {
        ModelClient things = client.model("Thing");
        String pk = uniq("q");
        String status = "st-" + pk;
        List<Item> puts = new ArrayList<>();
        for (int i = 0; i < 25; i++) {
            puts.add(Item.of("PK", pk, "SK", String.format("%03d", i), "status", status, "n", i));
        }
        assertEquals(25, things.batchWrite(puts, null));
        Query q = Query.key(Cond.eq("PK", pk)).limit(4).consistent();
        Page p = things.query(q);
        assertEquals(4, p.items().size());
        assertNotNull(p.cursor());
        List<String> sks = things.queryAll(q).map(i -> i.getString("SK")).collect(Collectors.toList());
        assertEquals(25, sks.size());
        assertEquals("000", sks.get(0));
        assertEquals("024", sks.get(24));
        String desc = things.queryAll(Query.key(Cond.eq("PK", pk), Cond.beginsWith("SK", "01")).desc().limit(3))
                .map(i -> i.getString("SK")).collect(Collectors.joining(","));
        assertEquals("019,018,017,016,015,014,013,012,011,010", desc);
        assertEquals(5, things.count(Query.key(Cond.eq("PK", pk)).filter(Cond.ge("n", 20))));
        assertEquals(25, things.count(Query.key(Cond.eq("status", status))));
        Set<String> seen = things.scanAll(Scan.all().filter(Cond.eq("PK", pk)).limit(7).segments(3))
                .map(i -> i.getString("SK")).collect(Collectors.toSet());
        assertEquals(25, seen.size());
        assertEquals(25, things.scanCount(Scan.all().filter(Cond.eq("PK", pk))));
        assertEquals(1, things.queryAll(q).limit(1).count());
        assertThrows(InvalidCursorException.class, () -> things.query(Query.key(Cond.eq("PK", pk)).cursor("not-a-cursor")));
    }

    @Test
    void updateFieldsWritesOnlyTheListedFields() {
        ModelClient things = client.model("Thing");
        String pk = uniq("uf");
        things.create(Item.of("PK", pk, "SK", "a", "note", "x", "status", "s1"));
        Item u = things.updateFields(Item.of("PK", pk, "SK", "a", "note", "y", "status", "s2", "version", 0), "note");
        assertEquals("y", u.getString("note"));
        assertEquals("s1", u.getString("status"));
        assertEquals(1, u.version());
        assertThrows(VersionConflictException.class,
                () -> things.updateFields(Item.of("PK", pk, "SK", "a", "note", "z", "version", 0)));
        u = things.updateFields(Item.of("PK", pk, "SK", "a", "note", "z", "status", "s3"));
        assertEquals("z", u.getString("note"));
        assertEquals("s3", u.getString("status"));
        assertEquals(2, u.version());
    }

    @Test
    void batchGetAndDelete() {
        ModelClient things = client.model("Thing");
        String pk = uniq("batch");
        things.batchWrite(List.of(Item.of("PK", pk, "SK", "1", "n", 1), Item.of("PK", pk, "SK", "2", "n", 2)), null);
        ModelClient.BatchGetResult r = things.batchGet(List.of(Key.of(pk, "2"), Key.of(pk, "9"), Key.of(pk, "1")), true);
        assertEquals(List.of("2", "1"), r.items().stream().map(i -> i.getString("SK")).collect(Collectors.toList()));
        assertEquals(1, r.missing().size());
        assertEquals("9", r.missing().get(0).getString("SK"));
        assertEquals(2, things.batchWrite(null, List.of(Key.of(pk, "1"), Key.of(pk, "2"))));
        assertEquals(0, things.batchGet(List.of(Key.of(pk, "1"))).items().size());
    }

    @Test
    void transactions() {
        String pk = uniq("tx");
        client.transactWrite(new Tx().create("Thing", Item.of("PK", pk, "SK", "a", "count", 1))
                .put("Counter", Item.of("id", pk, "value", 10)));
        TransactionCanceledException e = assertThrows(TransactionCanceledException.class, () -> client.transactWrite(new Tx()
                .update("Thing", Key.of(pk, "a"), Update.create().add("count", 1).expectedVersion(0))
                .create("Counter", Item.of("id", pk, "value", 11))));
        assertEquals(List.of("None", "ConditionalCheckFailed"),
                e.reasons().stream().map(TransactionCanceledException.Reason::code).collect(Collectors.toList()));
        client.transactWrite(new Tx()
                .update("Thing", Key.of(pk, "a"), Update.create().add("count", 1).expectedVersion(0))
                .check("Counter", Key.of(pk), Cond.eq("value", 10)));
        List<Item> got = client.transactGet(List.of(new TableTheoryClient.TxGet("Thing", Key.of(pk, "a")),
                new TableTheoryClient.TxGet("Counter", Key.of(pk + "-none")),
                new TableTheoryClient.TxGet("Counter", Key.of(pk), List.of("value"))));
        assertEquals(new BigDecimal("2"), got.get(0).getNumber("count"));
        assertNull(got.get(1));
        assertEquals(new BigDecimal("10"), got.get(2).getNumber("value"));
        Tx tx = new Tx().update("Counter", Key.of(pk), Update.create().add("value", 5)).clientToken("tok-" + System.nanoTime());
        client.transactWrite(tx);
        client.transactWrite(tx);
        assertEquals(new BigDecimal("15"), client.model("Counter").get(Key.of(pk)).getNumber("value"));
    }

    @Test
    void modelsAndTables() {
        Set<String> names = client.models().stream().map(ModelInfo::name).collect(Collectors.toSet());
        // The job ledger's models are the daemon's own: not listed.
        assertTrue(names.contains("Thing") && !names.contains("JobMeta"), names.toString());
        ModelInfo info = client.model("Thing").describe();
        assertEquals("SK", info.sortKey());
        assertEquals("client_things", info.tableName());
        assertEquals("N", info.typeOf("n"));
        ModelClient.TableInfo t = client.model("Thing").ensureTable();
        assertFalse(t.created());
        assertEquals("client_things", t.table());
        String name = "JDyn" + (System.nanoTime() % 1_000_000_000L);
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("dms_version", "0.2");
        doc.put("name", name);
        doc.put("table", Map.of("name", name.toLowerCase()));
        doc.put("keys", Map.of("partition", Map.of("attribute", "id", "type", "S")));
        doc.put("attributes", List.of(Map.of("attribute", "id", "type", "S", "required", true, "roles", List.of("pk"))));
        assertTrue(client.putModel(name, doc, false));
        client.model(name).ensureTable();
        client.model(name).create(Item.of("id", "x"));
        assertThrows(ForbiddenException.class, () -> client.model(name).deleteTable());
    }

    @Test
    void ledger() {
        Ledger l = client.ledger();
        String id = "job/" + uniq("ledger");
        String tenant = "tenant-" + uniq("t");
        Ledger.Job job = l.createJob(tenant, id);
        assertEquals(1, job.version());
        assertEquals("PENDING", job.status());
        assertThrows(AlreadyExistsException.class, () -> l.createJob(tenant, id));
        assertThrows(JobNotFoundException.class, () -> l.getJob(id + "-none"));
        for (int i = 0; i < 3; i++) {
            l.createJob(tenant, null);
        }
        assertEquals(4, l.listJobs(null, tenant, false, 1).peek(j -> assertEquals(tenant, j.tenantId())).count());
        job = l.transition(id, 1, "PENDING", "RUNNING");
        assertEquals(2, job.version());
        assertThrows(VersionConflictException.class, () -> l.transition(id, 1, null, "SUCCEEDED"));
        for (String rid : List.of("r1", "r2", "r3")) {
            l.putRecord(id, rid, "PENDING", null);
        }
        Ledger.JobRecord rec = l.putRecord(id, "r2", "FAILED", Map.of("type", "HttpError",
                "message", "login failed: password=hunter2", "retryable", false,
                "fields", Map.of("api_key", "k-1", "row", 2)));
        assertFalse(rec.error().get("message").toString().contains("hunter2"));
        assertEquals("[REDACTED]", Json.asMap(rec.error().get("fields")).get("api_key"));
        assertEquals(List.of("r1", "r3"), l.listRecords(id, "PENDING").map(Ledger.JobRecord::recordId).collect(Collectors.toList()));
        assertEquals(2, l.getRecord(id, "r2").version());
        Ledger.Lease lease = l.acquireLease(id, "w1", Duration.ofMinutes(1));
        assertEquals("w1", lease.owner());
        assertTrue(lease.expiresAt() > 0);
        assertThrows(LeaseHeldException.class, () -> l.acquireLease(id, "w2", Duration.ofMinutes(1)));
        assertThrows(LeaseNotOwnedException.class, () -> l.refreshLease(id, "w2", Duration.ofMinutes(1)));
        l.refreshLease(id, "w1", Duration.ofMinutes(1));
        assertThrows(LeaseNotOwnedException.class, () -> l.releaseLease(id, "w2"));
        l.releaseLease(id, "w1");
        l.releaseLease(id, "w1");
        assertTrue(l.beginRequest(id, "charge/1", null).created());
        assertEquals("already_in_progress", l.beginRequest(id, "charge/1", null).outcome());
        BigDecimal big = new BigDecimal("98765432109876543210987654321098765432");
        assertEquals("completed", l.completeRequest(id, "charge/1", Map.of("amount", big), null).outcome());
        Ledger.RequestOutcome again = l.beginRequest(id, "charge/1", Duration.ofHours(1));
        assertEquals("already_completed", again.outcome());
        assertEquals(big, new BigDecimal(Json.asMap(again.result()).get("amount").toString()));
        assertThrows(ItemNotFoundException.class, () -> l.completeRequest(id, "never", null, null));
    }

    @Test
    void withLeaseRefreshesAndReleases() {
        Ledger l = client.ledger();
        String id = uniq("lease");
        l.createJob("t", id);
        // A 3 s lease, refreshed every second: a loaded machine may delay a
        // refresh by a lot before the lease runs out.
        String out = l.withLease(id, "worker-a", Duration.ofSeconds(3), () -> {
            assertThrows(LeaseHeldException.class, () -> l.acquireLease(id, "worker-b", Duration.ofMinutes(1)));
            // The daemon's clock is frozen (--test-clock). Move it 2 s on, wait for two
            // refreshes answered after that (the second one sent after the move), and move
            // it 2 s more: past the 3 s lease, which only the helper's refresh keeps held
            // (the ledger's tables are sealed from the model API, so the lease is observed
            // as another worker sees it).
            assertEquals(200, raw("POST", "/v1/_test/clock", "{\"advance_ms\":2000}"));
            double before = refreshesAnswered();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (refreshesAnswered() < before + 2 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertEquals(200, raw("POST", "/v1/_test/clock", "{\"advance_ms\":2000}"));
            try {
                l.acquireLease(id, "worker-b", Duration.ofMinutes(1));
                return "not refreshed";
            } catch (LeaseHeldException held) {
                return "refreshed";
            }
        });
        assertEquals("refreshed", out);
        l.acquireLease(id, "worker-b", Duration.ofMinutes(1));
        boolean[] ran = {false};
        assertThrows(LeaseHeldException.class, () -> l.withLease(id, "worker-a", Duration.ofMinutes(1), () -> ran[0] = true));
        assertFalse(ran[0]);
    }

    @Test
    void withLeaseInterruptsWorkWhenTheLeaseIsLost() {
        Ledger l = client.ledger();
        String id = uniq("lost");
        l.createJob("t", id);
        LeaseLostException e = assertThrows(LeaseLostException.class, () -> l.withLease(id, "worker-a", Duration.ofSeconds(1), () -> {
            l.releaseLease(id, "worker-a");
            l.acquireLease(id, "worker-b", Duration.ofMinutes(1));
            Thread.sleep(30_000); // interrupted when the helper sees the lease lost
            return "not interrupted";
        }));
        assertInstanceOf(LeaseNotOwnedException.class, e);
        assertEquals(1, e.getSuppressed().length);
        assertInstanceOf(InterruptedException.class, e.getSuppressed()[0]);
        assertFalse(Thread.currentThread().isInterrupted());
        l.refreshLease(id, "worker-b", Duration.ofMinutes(1));
    }

    @Test
    void retriesRetryableErrors() throws Exception {
        ModelClient things = client.model("Thing");
        String pk = uniq("retry");
        things.put(Item.of("PK", pk, "SK", "r"));
        // The daemon retries the backend itself (4 attempts); 6 failures
        // outlast its first answer but not the client's second attempt.
        assertEquals(201, raw("POST", "/v1/_faults", "{\"op\":\"GetItem\",\"model\":\"Thing\",\"error\":\"ServiceUnavailable\",\"times\":6}"));
        assertEquals(pk, things.get(Key.of(pk, "r")).getString("PK"));
        TableTheoryClient once = TableTheoryClient.builder().url(daemon.url).maxAttempts(1).build();
        assertEquals(201, raw("POST", "/v1/_faults", "{\"op\":\"GetItem\",\"model\":\"Thing\",\"error\":\"ServiceUnavailable\",\"times\":4}"));
        BackendUnavailableException bu = assertThrows(BackendUnavailableException.class, () -> once.model("Thing").get(Key.of(pk, "r")));
        assertTrue(bu.retryable());
        assertInstanceOf(TransientException.class, bu);
        raw("DELETE", "/v1/_faults", null);
        assertEquals(201, raw("POST", "/v1/_faults", "{\"op\":\"PutItem\",\"model\":\"Thing\",\"error\":\"ServiceUnavailable\",\"times\":6}"));
        assertThrows(BackendUnavailableException.class, () -> things.create(Item.of("PK", pk, "SK", "c")));
    }

    @Test
    void requestIdPropagation() {
        String rid = "trace-" + System.nanoTime();
        ItemNotFoundException e = assertThrows(ItemNotFoundException.class,
                () -> client.withRequestId(rid).model("Thing").get(Key.of("none", "none")));
        assertEquals(rid, e.requestId());
        e = assertThrows(ItemNotFoundException.class, () -> client.model("Thing").get(Key.of("none", "none")));
        assertEquals(32, e.requestId().length());
    }

    @Test
    void tokenFromAFileAndConnectionErrors(@TempDir Path dir) throws Exception {
        Path token = dir.resolve("token");
        Files.writeString(token, "s3cret-token-0123456789\n");
        try (TestDaemon d = new TestDaemon("--auth-token-file", token.toString())) {
            TableTheoryClient anon = TableTheoryClient.builder().url(d.url).build();
            assertThrows(UnauthorizedException.class, anon::models);
            TableTheoryClient c = TableTheoryClient.builder().url(d.url).tokenFile(token).build();
            assertTrue(c.models().size() > 0);
            c.healthz();
            assertTrue(c.ready());
        }
        TableTheoryClient gone = TableTheoryClient.builder().url("http://127.0.0.1:1").maxAttempts(2)
                .backoff(Duration.ofMillis(1), Duration.ofMillis(5)).build();
        ConnectionException ce = assertThrows(ConnectionException.class, gone::models);
        assertTrue(ce.retryable());
        assertEquals(0, ce.status());
        assertEquals(new HashSet<>(List.of()), new HashSet<>(ce.details().keySet()));
    }

    @Test
    void callTimeoutBoundsTheCall() throws Exception {
        String pk = uniq("timeout");
        client.model("Counter").put(Item.of("id", pk));
        // Every GetItem of Counter takes 5 s; the call may take 300 ms.
        assertEquals(201, raw("POST", "/v1/_faults", "{\"op\":\"GetItem\",\"model\":\"Counter\",\"latency_ms\":5000,\"times\":1}"));
        TableTheoryClient quick = TableTheoryClient.builder().url(daemon.url).callTimeout(Duration.ofMillis(300)).build();
        // Without the timeout the read would succeed after 5 s.
        ClientTimeoutException e = assertThrows(ClientTimeoutException.class, () -> quick.model("Counter").get(Key.of(pk)));
        assertInstanceOf(ConnectionException.class, e);
    }

    @Test
    void batchWriteResendsOnlyTheUnprocessed() throws Exception {
        // A daemon with a short deadline, so that a batch whose last item is
        // never processed answers BatchIncomplete quickly; a recording proxy
        // in front of it clears the fault after that answer.
        try (TestDaemon d = new TestDaemon("--enable-fault-injection", "--request-timeout-ms", "1500");
             RecordingProxy proxy = new RecordingProxy(d.url)) {
            HttpClient http = HttpClient.newHttpClient();
            HttpRequest add = HttpRequest.newBuilder(URI.create(d.url + "/v1/_faults"))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"op\":\"BatchWriteItem\",\"model\":\"Thing\",\"error\":\"Unprocessed\",\"unprocessed\":1,\"times\":100000}"))
                    .build();
            assertEquals(201, http.send(add, HttpResponse.BodyHandlers.discarding()).statusCode());
            TableTheoryClient c = TableTheoryClient.builder().url(proxy.url()).build();
            List<Item> puts = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                puts.add(Item.of("PK", "bw", "SK", String.format("%02d", i)));
            }
            assertEquals(32, c.model("Thing").batchWrite(puts, List.of(Key.of("bw", "x1"), Key.of("bw", "x2"))));
            List<String> bodies = proxy.batchBodies();
            assertEquals(2, bodies.size());
            Map<String, Object> second = Json.asMap(Json.read(bodies.get(1).getBytes(java.nio.charset.StandardCharsets.UTF_8)));
            // Chunk 0 (puts 0-24) never wrote put[24]; chunk 1 (puts 25-29, deletes 0-1) never delete[1].
            assertEquals(List.of(Map.of("PK", "bw", "SK", "24")), second.get("put"));
            assertEquals(List.of(Map.of("PK", "bw", "SK", "x2")), second.get("delete"));
            assertEquals(2, c.model("Thing").batchGet(List.of(Key.of("bw", "24"), Key.of("bw", "29")), true).items().size());
        }
    }
}
