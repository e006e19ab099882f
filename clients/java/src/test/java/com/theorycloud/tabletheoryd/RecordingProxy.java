// SPDX-License-Identifier: Apache-2.0

// A small HTTP proxy for tests: forwards to the daemon, records batch-write bodies, clears faults after a 503.

package com.theorycloud.tabletheoryd;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

final class RecordingProxy implements AutoCloseable {
    private static final Set<String> RESTRICTED = Set.of("connection", "content-length", "host", "upgrade", "expect");
    private final HttpServer server;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final String target;
    private final List<String> bodies = new ArrayList<>();

    RecordingProxy(String target) throws IOException {
        this.target = target;
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", this::handle);
        server.start();
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    synchronized List<String> batchBodies() {
        return new ArrayList<>(bodies);
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            byte[] body = ex.getRequestBody().readAllBytes();
            String path = ex.getRequestURI().getRawPath();
            if (path.endsWith("/batch-write")) {
                synchronized (this) {
                    bodies.add(new String(body, StandardCharsets.UTF_8));
                }
            }
            HttpRequest.Builder rb = HttpRequest.newBuilder(URI.create(target + ex.getRequestURI().toString()))
                    .method(ex.getRequestMethod(), body.length == 0 ? HttpRequest.BodyPublishers.noBody()
                            : HttpRequest.BodyPublishers.ofByteArray(body));
            ex.getRequestHeaders().forEach((k, vs) -> {
                if (!RESTRICTED.contains(k.toLowerCase())) {
                    vs.forEach(v -> rb.header(k, v));
                }
            });
            HttpResponse<byte[]> resp = http.send(rb.build(), HttpResponse.BodyHandlers.ofByteArray());
            if (resp.statusCode() == 503) {
                http.send(HttpRequest.newBuilder(URI.create(target + "/v1/_faults")).DELETE().build(),
                        HttpResponse.BodyHandlers.discarding());
            }
            resp.headers().map().forEach((k, vs) -> {
                if (!RESTRICTED.contains(k.toLowerCase()) && !k.equalsIgnoreCase("date")) {
                    ex.getResponseHeaders().put(k, vs);
                }
            });
            byte[] out = resp.body();
            ex.sendResponseHeaders(resp.statusCode(), out.length == 0 ? -1 : out.length);
            if (out.length > 0) {
                try (OutputStream os = ex.getResponseBody()) {
                    os.write(out);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
