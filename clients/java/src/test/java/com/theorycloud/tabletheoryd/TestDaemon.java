// SPDX-License-Identifier: Apache-2.0

// Starts a real tabletheoryd (memory backend) for the tests: -Dtt.daemon, TT_DAEMON or ../../_build/tabletheoryd.

package com.theorycloud.tabletheoryd;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

final class TestDaemon implements AutoCloseable {
    final Process proc;
    final String url;
    private final Path log;

    static String binary() {
        String p = System.getProperty("tt.daemon");
        if (p == null || p.isEmpty() || p.startsWith("${")) {
            p = System.getenv("TT_DAEMON");
        }
        if (p == null || p.isEmpty()) {
            p = "../../_build/tabletheoryd";
        }
        return new File(p).getAbsolutePath();
    }

    TestDaemon(String... extra) throws IOException, InterruptedException {
        log = Files.createTempFile("ttd-java-log-", ".log");
        List<String> argv = new ArrayList<>(List.of(binary(), "--listen", "127.0.0.1:0",
                "--models", new File("src/test/resources/models").getAbsolutePath()));
        argv.addAll(List.of(extra));
        ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(false)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(log.toFile());
        pb.environment().keySet().removeIf(k -> k.startsWith("TABLETHEORYD_"));
        proc = pb.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        String found = null;
        while (found == null && System.nanoTime() < deadline && proc.isAlive()) {
            for (String line : Files.readAllLines(log)) {
                try {
                    JsonNode n = Json.MAPPER.readTree(line);
                    if ("daemon.ready".equals(n.path("event").asText())) {
                        found = "http://" + n.path("listen").asText();
                    }
                } catch (IOException ignored) {
                    // not a JSON line
                }
            }
            if (found == null) {
                Thread.sleep(20);
            }
        }
        if (found == null) {
            String text = Files.readString(log);
            close();
            throw new IllegalStateException("daemon not ready: " + text);
        }
        url = found;
    }

    @Override
    public void close() {
        proc.destroy(); // SIGTERM: the daemon drains and exits
        try {
            if (!proc.waitFor(10, TimeUnit.SECONDS)) {
                proc.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            Files.deleteIfExists(log);
        } catch (IOException ignored) {
            // a temp file
        }
    }

    private static TestDaemon shared;

    /** One daemon (with fault injection, on the test clock) for the whole test run. */
    static synchronized TestDaemon shared() throws IOException, InterruptedException {
        if (shared == null) {
            shared = new TestDaemon("--enable-fault-injection", "--test-clock");
            TestDaemon d = shared;
            Runtime.getRuntime().addShutdownHook(new Thread(d::close));
        }
        return shared;
    }
}
