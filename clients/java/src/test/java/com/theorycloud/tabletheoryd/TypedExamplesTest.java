// SPDX-License-Identifier: Apache-2.0

// The typed layer with the models tools/typegen generates: examples/java
// compiles with -Xlint:all -Werror and runs against a real daemon, the
// generated file is up to date, and a misspelt attribute or a value of the
// wrong type does not compile, the error naming it.

package com.theorycloud.tabletheoryd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class TypedExamplesTest {
    private static final Path ROOT = Path.of("../..").toAbsolutePath().normalize();
    private static final Path EXAMPLES = ROOT.resolve("examples/java");
    private static TestDaemon daemon;

    @BeforeAll
    static void start() throws Exception {
        daemon = TestDaemon.shared();
    }

    /** This client's classes and Jackson's jars, wherever the build put them. */
    private static String classpath() throws Exception {
        List<String> cp = new ArrayList<>();
        for (Class<?> k : List.of(Typed.class, com.fasterxml.jackson.databind.ObjectMapper.class,
                com.fasterxml.jackson.core.JsonFactory.class,
                com.fasterxml.jackson.annotation.JsonProperty.class)) {
            cp.add(Path.of(k.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
        }
        return String.join(File.pathSeparator, cp);
    }

    /** javac -Xlint:all -Werror; returns its exit status and messages. */
    private static Map.Entry<Integer, String> javac(Path out, Path... sources) throws Exception {
        List<String> args = new ArrayList<>(List.of("-Xlint:all", "-Werror", "--release", "17",
                "-d", out.toString(), "-cp", classpath()));
        for (Path s : sources) {
            args.add(s.toString());
        }
        ByteArrayOutputStream msgs = new ByteArrayOutputStream();
        int rc = ToolProvider.getSystemJavaCompiler().run(null, msgs, msgs, args.toArray(new String[0]));
        return Map.entry(rc, msgs.toString(StandardCharsets.UTF_8));
    }

    @Test
    void quickstartCompilesStrictlyAndRuns() throws Exception {
        Path out = Files.createTempDirectory("tt-examples");
        var r = javac(out, EXAMPLES.resolve("Quickstart.java"), EXAMPLES.resolve("models/Models.java"));
        assertEquals(0, r.getKey(), r.getValue());
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", out + File.pathSeparator + classpath(), "Quickstart");
        pb.environment().put("TABLETHEORYD_URL", daemon.url);
        pb.environment().remove("TABLETHEORYD_TOKEN_FILE");
        pb.redirectErrorStream(true);
        Process p = pb.start();
        String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), text);
        assertTrue(text.contains("updated anna to version 1"), text);
        assertTrue(text.contains("total 11.25"), text);
        assertTrue(text.contains("job RUNNING"), text);
    }

    @Test
    void generatedModelsAreUpToDate() throws Exception {
        Path out = Files.createTempDirectory("tt-gen").resolve("Models.java");
        for (int i = 0; i < 2; i++) {
            Process p = new ProcessBuilder("python3", ROOT.resolve("tools/typegen/typegen.py").toString(),
                    "--daemon", TestDaemon.binary(), "--models", ROOT.resolve("examples/models").toString(),
                    "--lang", "java", "--java-package", "models", "--java-class", "Models",
                    "--out", out.toString()).redirectErrorStream(true).start();
            String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, p.waitFor(), text);
            assertEquals(Files.readString(EXAMPLES.resolve("models/Models.java")), Files.readString(out));
        }
    }

    @Test
    void everyModelOfTheTestsGeneratesJavaThatCompilesStrictly() throws Exception {
        Path dir = Files.createTempDirectory("tt-allgen");
        Path out = dir.resolve("AllModels.java");
        List<String> cmd = new ArrayList<>(List.of("python3", ROOT.resolve("tools/typegen/typegen.py").toString(),
                "--daemon", TestDaemon.binary()));
        for (String m : List.of("examples/models", "tests/integration/models/itest.yml", "tests/clients/models")) {
            cmd.add("--models");
            cmd.add(ROOT.resolve(m).toString());
        }
        cmd.addAll(List.of("--lang", "java", "--java-package", "allgen", "--java-class", "AllModels",
                "--out", out.toString()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), text);
        var r = javac(dir.resolve("classes"), out);
        assertEquals(0, r.getKey(), r.getValue());
    }

    @Test
    void misspeltAttributesAndWrongTypesDoNotCompile() throws Exception {
        String[][] bad = {
            {"nickame", "User.builder().PK(\"a\").SK(\"b\").nickame(\"x\").build();"},
            {"nicknam", "users.update(new UserKey(\"a\", \"b\"), new UserPatch().nicknam(\"x\"));"},
            {"int cannot be converted to String", "users.update(new UserKey(\"a\", \"b\"), new UserPatch().nickname(5));"},
            {"double cannot be converted to BigDecimal", "Order.builder().amount(1.5).build();"},
            {"SortCond<Integer>", "users.query(Models.USER_TABLE, \"a\", Typed.eq(5), Typed.QueryOptions.DEFAULT);"},
            {"int cannot be converted to String", "users.get(new UserKey(\"a\", 7));"},
        };
        Path dir = Files.createTempDirectory("tt-bad");
        for (int i = 0; i < bad.length; i++) {
            Path src = dir.resolve("Bad" + i + ".java");
            try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(src))) {
                w.println("import com.theorycloud.tabletheoryd.TableTheoryClient;");
                w.println("import com.theorycloud.tabletheoryd.Typed;");
                w.println("import models.Models;");
                w.println("import models.Models.*;");
                w.println("final class Bad" + i + " {");
                w.println("    static void f(TableTheoryClient c) {");
                w.println("        Typed.Model<User, UserKey, UserPatch> users = Typed.model(c, Models.USER);");
                w.println("        users.ensureTable();");
                w.println("        " + bad[i][1]);
                w.println("    }");
                w.println("}");
            }
            var r = javac(dir.resolve("out"), src, EXAMPLES.resolve("models/Models.java"));
            assertNotEquals(0, r.getKey(), "compiled: " + bad[i][1]);
            assertTrue(r.getValue().contains(bad[i][0]), "expected " + bad[i][0] + " in:\n" + r.getValue());
        }
    }
}
