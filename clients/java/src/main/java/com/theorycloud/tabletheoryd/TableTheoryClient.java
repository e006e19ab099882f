// SPDX-License-Identifier: Apache-2.0

// The Java client of tabletheoryd: configuration, the HTTP core with retries, models and transactions.

package com.theorycloud.tabletheoryd;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A client of one tabletheoryd daemon. Thread-safe; it keeps its connections
 * alive between calls, so make one and share it.
 *
 * <pre>{@code
 * TableTheoryClient client = TableTheoryClient.fromEnv();   // TABLETHEORYD_URL, TABLETHEORYD_TOKEN_FILE
 * ModelClient users = client.model("User");
 * Item u = users.create(Item.of("PK", "USER#1", "SK", "PROFILE", "nickname", "al"));
 * }</pre>
 */
public final class TableTheoryClient implements AutoCloseable {
    /** The daemon's default address. */
    public static final String DEFAULT_URL = "http://127.0.0.1:8737";

    private static final SecureRandom RANDOM = new SecureRandom();

    final String base;
    private final String token;
    private final HttpClient http;
    private final Duration attemptTimeout;
    private final Duration callTimeout;
    private final int maxAttempts;
    private final Duration baseDelay;
    private final Duration maxDelay;
    private final String requestId;
    private final Map<String, ModelInfo> models;

    private TableTheoryClient(Builder b, HttpClient http, Map<String, ModelInfo> models, String requestId) {
        String url = b.url == null || b.url.isEmpty() ? DEFAULT_URL : b.url;
        if (url.startsWith("unix:")) {
            throw new IllegalArgumentException("java.net.http cannot use a unix socket: give the daemon a TCP --listen");
        }
        if (!url.contains("://")) {
            url = "http://" + url;
        }
        while (url.endsWith("/")) {
            url = url.substring(0, url.length() - 1);
        }
        this.base = url;
        this.token = b.token;
        this.http = http;
        this.attemptTimeout = b.attemptTimeout;
        this.callTimeout = b.callTimeout;
        this.maxAttempts = b.maxAttempts;
        this.baseDelay = b.baseDelay;
        this.maxDelay = b.maxDelay;
        this.models = models;
        this.requestId = requestId;
        this.builder = b;
    }

    private final Builder builder;

    /** A builder with the defaults (DEFAULT_URL, no token). */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder from TABLETHEORYD_URL and TABLETHEORYD_TOKEN_FILE. */
    public static Builder builderFromEnv() {
        Builder b = new Builder().url(System.getenv("TABLETHEORYD_URL"));
        String tf = System.getenv("TABLETHEORYD_TOKEN_FILE");
        if (tf != null && !tf.isEmpty()) {
            b.tokenFile(Path.of(tf));
        }
        return b;
    }

    /** builderFromEnv().build(). */
    public static TableTheoryClient fromEnv() {
        return builderFromEnv().build();
    }

    /** Configures a client. */
    public static final class Builder {
        private String url;
        private String token;
        private Duration connectTimeout = Duration.ofSeconds(5);
        private Duration attemptTimeout = Duration.ofSeconds(30);
        private Duration callTimeout = Duration.ofSeconds(60);
        private int maxAttempts = 4;
        private Duration baseDelay = Duration.ofMillis(50);
        private Duration maxDelay = Duration.ofSeconds(2);

        /** "http://host:port" (default DEFAULT_URL). */
        public Builder url(String url) { this.url = url; return this; }

        /** Sent as "Authorization: Bearer token". */
        public Builder token(String token) { this.token = token; return this; }

        /** Reads the token from a file (trimmed). */
        public Builder tokenFile(Path file) {
            try {
                this.token = Files.readString(file, StandardCharsets.UTF_8).strip();
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot read the token file " + file + ": " + e.getMessage(), e);
            }
            return this;
        }

        public Builder connectTimeout(Duration d) { this.connectTimeout = Objects.requireNonNull(d); return this; }

        /** Bounds one HTTP attempt (default 30 s). */
        public Builder attemptTimeout(Duration d) { this.attemptTimeout = Objects.requireNonNull(d); return this; }

        /** Bounds a whole call, retries included (default 60 s). */
        public Builder callTimeout(Duration d) { this.callTimeout = Objects.requireNonNull(d); return this; }

        /** Attempts per call, the first included (default 4; 1 disables retries). */
        public Builder maxAttempts(int n) { this.maxAttempts = Math.max(1, n); return this; }

        /** Jittered exponential backoff between attempts (defaults 50 ms and 2 s). */
        public Builder backoff(Duration base, Duration max) { this.baseDelay = base; this.maxDelay = max; return this; }

        public TableTheoryClient build() {
            HttpClient http = HttpClient.newBuilder()
                    .version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(connectTimeout)
                    .followRedirects(HttpClient.Redirect.NEVER)
                    .build();
            return new TableTheoryClient(this, http, new ConcurrentHashMap<>(), null);
        }
    }

    /**
     * A view of this client that sends X-Request-Id: id on every call (1-128
     * characters of A-Z a-z 0-9 . _ : -); it shares the connections. Without
     * one, each call sends a fresh random id, the same for all its retries.
     */
    public TableTheoryClient withRequestId(String id) {
        return new TableTheoryClient(builder, http, models, id);
    }

    @Override
    public void close() {
        // java.net.http.HttpClient gains close() only in Java 21; its idle
        // connections end with the client object.
    }

    // ---- the HTTP core ------------------------------------------------------

    /** One call of the API. */
    record Call(String method, String path, Map<String, String> query, Object body,
                Map<String, String> headers, boolean idempotent) {
        Call(String method, String path, Object body, boolean idempotent) {
            this(method, path, null, body, null, idempotent);
        }
    }

    /** A 2xx answer. */
    record Answer(int status, Object body) {}

    static String seg(String s) {
        StringBuilder b = new StringBuilder();
        for (byte x : s.getBytes(StandardCharsets.UTF_8)) {
            int c = x & 0xff;
            if (c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
                    || c == '-' || c == '.' || c == '_' || c == '~') {
                b.append((char) c);
            } else {
                b.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 15, 16)));
            }
        }
        return b.toString();
    }

    private static String newId() {
        byte[] b = new byte[16];
        RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    private URI uri(Call c) {
        StringBuilder url = new StringBuilder(base).append(c.path());
        if (c.query() != null && !c.query().isEmpty()) {
            char sep = '?';
            for (Map.Entry<String, String> e : c.query().entrySet()) {
                url.append(sep).append(seg(e.getKey())).append('=').append(seg(e.getValue()));
                sep = '&';
            }
        }
        return URI.create(url.toString());
    }

    Answer send(Call c) {
        URI uri = uri(c);
        byte[] payload = c.body() == null ? null : Json.write(c.body());
        String rid = requestId != null ? requestId : newId();
        long deadline = System.nanoTime() + callTimeout.toNanos();
        for (int attempt = 1; ; attempt++) {
            TableTheoryException err;
            try {
                return once(c, uri, payload, rid, deadline);
            } catch (TableTheoryException e) {
                err = e;
            }
            if (attempt >= maxAttempts || !shouldRetry(c, err)) {
                throw err;
            }
            long delay = backoff(attempt);
            if (err.retryAfter().toMillis() > delay) {
                delay = err.retryAfter().toMillis();
            }
            if (System.nanoTime() + delay * 1_000_000L >= deadline) {
                throw err;
            }
            try {
                Thread.sleep(delay);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                err.addSuppressed(ie);
                throw err;
            }
        }
    }

    /**
     * send on HttpClient.sendAsync: the same retries, waiting on
     * CompletableFuture.delayedExecutor (no thread blocks), and the same
     * exceptions, as the cause of the future's ExecutionException or
     * CompletionException.
     */
    CompletableFuture<Answer> sendAsync(Call c) {
        URI uri;
        byte[] payload;
        try {
            uri = uri(c);
            payload = c.body() == null ? null : Json.write(c.body());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        String rid = requestId != null ? requestId : newId();
        long deadline = System.nanoTime() + callTimeout.toNanos();
        return attemptAsync(c, uri, payload, rid, deadline, 1);
    }

    private CompletableFuture<Answer> attemptAsync(Call c, URI uri, byte[] payload, String rid, long deadline,
                                                   int attempt) {
        Duration timeout = attemptTimeout(deadline);
        CompletableFuture<Answer> one;
        try {
            one = http.sendAsync(request(c, uri, payload, rid, timeout), HttpResponse.BodyHandlers.ofByteArray())
                    .handle((resp, thrown) -> {
                        if (thrown != null) {
                            Throwable t = thrown instanceof CompletionException && thrown.getCause() != null
                                    ? thrown.getCause() : thrown;
                            throw transportFailure(t, rid, timeout);
                        }
                        return answer(resp, rid);
                    });
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return one.handle((a, thrown) -> {
            if (thrown == null) {
                return CompletableFuture.completedFuture(a);
            }
            Throwable t = thrown instanceof CompletionException && thrown.getCause() != null
                    ? thrown.getCause() : thrown;
            if (!(t instanceof TableTheoryException err) || attempt >= maxAttempts || !shouldRetry(c, err)) {
                return CompletableFuture.<Answer>failedFuture(t);
            }
            long delay = Math.max(backoff(attempt), err.retryAfter().toMillis());
            if (System.nanoTime() + delay * 1_000_000L >= deadline) {
                return CompletableFuture.<Answer>failedFuture(t);
            }
            Executor later = CompletableFuture.delayedExecutor(delay, TimeUnit.MILLISECONDS);
            return CompletableFuture.supplyAsync(() -> null, later)
                    .thenCompose(x -> attemptAsync(c, uri, payload, rid, deadline, attempt + 1));
        }).thenCompose(f -> f);
    }

    private Duration attemptTimeout(long deadline) {
        long left = Math.max(1, (deadline - System.nanoTime()) / 1_000_000L);
        return Duration.ofMillis(Math.min(left, attemptTimeout.toMillis()));
    }

    private TableTheoryException transportFailure(Throwable e, String rid, Duration timeout) {
        if (e instanceof TableTheoryException te) {
            return te;
        }
        if (e instanceof java.net.http.HttpTimeoutException) {
            return new ClientTimeoutException(new TableTheoryException.Failure(0, "ClientTimeout",
                    "no answer within " + timeout.toMillis() + " ms", true, rid, Map.of(), Duration.ZERO, e));
        }
        return new ConnectionException(new TableTheoryException.Failure(0, "ConnectionError",
                "cannot reach the daemon at " + base + ": " + e, e instanceof IOException, rid, Map.of(),
                Duration.ZERO, e));
    }

    private HttpRequest request(Call c, URI uri, byte[] payload, String rid, Duration timeout) {
        HttpRequest.Builder rb = HttpRequest.newBuilder(uri).timeout(timeout)
                .header("Accept", "application/json")
                .header("X-Request-Id", rid)
                .method(c.method(), payload == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofByteArray(payload));
        if (payload != null) {
            rb.header("Content-Type", "application/json");
        }
        if (token != null && !token.isEmpty()) {
            rb.header("Authorization", "Bearer " + token);
        }
        if (c.headers() != null) {
            c.headers().forEach(rb::header);
        }
        return rb.build();
    }

    private Answer once(Call c, URI uri, byte[] payload, String rid, long deadline) {
        Duration timeout = attemptTimeout(deadline);
        HttpRequest req = request(c, uri, payload, rid, timeout);
        HttpResponse<byte[]> resp;
        try {
            resp = http.send(req, HttpResponse.BodyHandlers.ofByteArray());
        } catch (java.net.http.HttpTimeoutException e) {
            throw new ClientTimeoutException(new TableTheoryException.Failure(0, "ClientTimeout",
                    "no answer within " + timeout.toMillis() + " ms", true, rid, Map.of(), Duration.ZERO, e));
        } catch (IOException e) {
            throw new ConnectionException(new TableTheoryException.Failure(0, "ConnectionError",
                    "cannot reach the daemon at " + base + ": " + e, true, rid, Map.of(), Duration.ZERO, e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ConnectionException(new TableTheoryException.Failure(0, "ConnectionError",
                    "interrupted", false, rid, Map.of(), Duration.ZERO, e));
        }
        return answer(resp, rid);
    }

    private Answer answer(HttpResponse<byte[]> resp, String rid) {
        int st = resp.statusCode();
        Object body;
        try {
            body = Json.read(resp.body());
        } catch (IOException e) {
            if (st >= 200 && st < 300) {
                throw new UnexpectedResponseException(new TableTheoryException.Failure(st, "UnexpectedResponse",
                        "the answer is not JSON", false, rid, Map.of(), Duration.ZERO, e));
            }
            body = null;
        }
        if (st >= 200 && st < 300) {
            return new Answer(st, body);
        }
        throw failure(resp, body, rid);
    }

    private static TableTheoryException failure(HttpResponse<byte[]> resp, Object body, String rid) {
        int st = resp.statusCode();
        String respId = resp.headers().firstValue("X-Request-Id").orElse(rid);
        Duration retryAfter = Duration.ZERO;
        String ra = resp.headers().firstValue("Retry-After").orElse(null);
        if (ra != null) {
            try {
                retryAfter = Duration.ofSeconds(Long.parseLong(ra.trim()));
            } catch (NumberFormatException ignored) {
                // an HTTP date: the backoff decides
            }
        }
        Map<String, Object> env = Json.asMap(Json.asMap(body).get("error"));
        Object code = env.get("code");
        if (code == null) {
            boolean retryable = st == 429 || st == 502 || st == 503 || st == 504;
            return new UnexpectedResponseException(new TableTheoryException.Failure(st, "UnexpectedResponse",
                    "HTTP " + st + " without the daemon's error envelope", retryable, respId, Map.of(), retryAfter, null));
        }
        Object bodyRid = Json.asMap(body).get("request_id");
        Map<String, Object> details = env.get("details") == null ? new LinkedHashMap<>() : Json.asMap(env.get("details"));
        return ErrorFactory.of(new TableTheoryException.Failure(st, code.toString(), Json.str(env.get("message")),
                Boolean.TRUE.equals(env.get("retryable")), bodyRid != null ? bodyRid.toString() : respId,
                details, retryAfter, null));
    }

    /**
     * Retries: Draining (refused before routing) and Throttled (DynamoDB
     * refused the write) always; other retryable errors and connection
     * failures only for idempotent calls (reads, plain puts, batch writes,
     * transactions with a client token, lease and record calls).
     */
    private static boolean shouldRetry(Call c, TableTheoryException e) {
        if (Thread.currentThread().isInterrupted()) {
            return false;
        }
        if (e instanceof DrainingException || e instanceof ThrottledException) {
            return true;
        }
        if (e instanceof BatchIncompleteException && c.path().endsWith("/batch-write")) {
            return false; // ModelClient.batchWrite resends only details.unprocessed itself
        }
        return c.idempotent() && e.retryable();
    }

    long backoff(int attempt) {
        long ceil = baseDelay.toMillis() << Math.min(attempt - 1, 20);
        ceil = Math.min(ceil, maxDelay.toMillis());
        return ThreadLocalRandom.current().nextLong(ceil + 1);
    }

    int maxAttempts() {
        return maxAttempts;
    }

    // ---- system, models, transactions ---------------------------------------

    /** GET /healthz; throws when the daemon does not answer 200. */
    public void healthz() {
        send(new Call("GET", "/healthz", null, true));
    }

    /** GET /readyz: true when ready, false on 503. */
    public boolean ready() {
        try {
            send(new Call("GET", "/readyz", null, false));
            return true;
        } catch (TransientException e) {
            return false;
        }
    }

    /** All registered models (GET /v1/models). */
    public List<ModelInfo> models() {
        List<ModelInfo> out = new ArrayList<>();
        for (Object m : Json.asList(Json.asMap(send(new Call("GET", "/v1/models", null, true)).body()).get("models"))) {
            out.add(new ModelInfo(Json.asMap(m)));
        }
        return out;
    }

    /** One model (GET /v1/models/{m}); ModelNotFoundException if unknown. */
    public ModelInfo describeModel(String name) {
        ModelInfo m = new ModelInfo(Json.asMap(send(new Call("GET", "/v1/models/" + seg(name), null, true)).body()));
        models.put(name, m);
        return m;
    }

    /**
     * Registers a DMS model (PUT /v1/models/{m}); true when created (201).
     * AlreadyExistsException for a different model of that name unless replace.
     */
    public boolean putModel(String name, Map<String, Object> model, boolean replace) {
        Answer a = send(new Call("PUT", "/v1/models/" + seg(name), replace ? Map.of("replace", "true") : null,
                model, null, true));
        models.remove(name);
        return a.status() == 201;
    }

    ModelInfo cachedModel(String name) {
        return models.get(name);
    }

    ModelInfo cacheModel(String name, ModelInfo m) {
        models.put(name, m);
        return m;
    }

    ModelInfo schema(String name) {
        ModelInfo m = models.get(name);
        return m != null ? m : describeModel(name);
    }

    /** The handle of one model's endpoints. */
    public ModelClient model(String name) {
        return new ModelClient(this, name);
    }

    /** The asynchronous view of this client: the same calls, as CompletableFutures. */
    public AsyncClient async() {
        return new AsyncClient(this);
    }

    /** The job ledger's endpoints. */
    public Ledger ledger() {
        return new Ledger(this);
    }

    /**
     * Writes every item of tx, all or nothing. TransactionCanceledException
     * carries the per-item reasons. tx always has a client token (generated
     * when not set), so the call is retried as an idempotent one.
     */
    public void transactWrite(Tx tx) {
        send(new Call("POST", "/v1/transactions/write", transactWriteBody(tx, this::schema), true));
    }

    /** The body of a write transaction; schemas gives the models of the ops with a key. */
    static Map<String, Object> transactWriteBody(Tx tx, Function<String, ModelInfo> schemas) {
        List<Object> items = new ArrayList<>();
        for (Tx.Op op : tx.ops()) {
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("op", op.op());
            o.put("model", op.model());
            if (op.update() != null) {
                o.putAll(op.update().body());
            }
            if (op.item() != null) {
                o.put("item", op.item());
            }
            if (op.key() != null) {
                o.put("key", schemas.apply(op.model()).keyObject(op.key()));
            }
            if (op.condition() != null) {
                o.put("condition", op.condition());
            }
            if (op.expectedVersion() != null) {
                o.put("expected_version", op.expectedVersion());
            }
            items.add(o);
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("client_token", tx.clientToken() != null ? tx.clientToken() : newId());
        if (tx.retryConflicts()) {
            body.put("retry_conflicts", true);
        }
        body.put("items", items);
        return body;
    }

    /** One item of a transactGet. */
    public record TxGet(String model, Key key, List<String> select) {
        public TxGet(String model, Key key) {
            this(model, key, null);
        }
    }

    /** Reads up to 100 items at one point in time; a missing item is null. */
    public List<Item> transactGet(List<TxGet> gets) {
        List<ModelInfo> infos = new ArrayList<>();
        for (TxGet g : gets) {
            infos.add(schema(g.model()));
        }
        Answer a = send(new Call("POST", "/v1/transactions/get", transactGetBody(gets, infos), true));
        return transactGetResult(a.body(), infos);
    }

    /** The body of a read transaction; infos holds the model of each get, in order. */
    static Map<String, Object> transactGetBody(List<TxGet> gets, List<ModelInfo> infos) {
        List<Object> items = new ArrayList<>();
        for (int i = 0; i < gets.size(); i++) {
            TxGet g = gets.get(i);
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("model", g.model());
            o.put("key", infos.get(i).keyObject(g.key()));
            if (g.select() != null && !g.select().isEmpty()) {
                o.put("select", g.select());
            }
            items.add(o);
        }
        return Map.of("items", items);
    }

    static List<Item> transactGetResult(Object body, List<ModelInfo> infos) {
        List<Object> got = Json.asList(Json.asMap(body).get("items"));
        List<Item> out = new ArrayList<>();
        for (int i = 0; i < got.size(); i++) {
            out.add(i < infos.size() ? infos.get(i).typed(got.get(i)) : null);
        }
        return out;
    }
}
