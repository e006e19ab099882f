// SPDX-License-Identifier: Apache-2.0

// The client's exception classes against the daemon's list of codes (the ErrorCode enum of
// openapi.yaml), so a code added to the daemon fails here until the client has a class.

package com.theorycloud.tabletheoryd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

class ErrorCodesTest {
    // Surefire runs in the client directory; the repository is two levels up.
    private static final Path OPENAPI = Path.of("..", "..", "openapi.yaml");

    /** The enum list under components/schemas/ErrorCode, read line by line (the client has
     * no YAML dependency, and the block is a plain list of names). */
    static List<String> openapiErrorCodes() throws IOException {
        List<String> codes = new ArrayList<>();
        boolean inSchema = false;
        boolean inEnum = false;
        int indent = 0;
        for (String line : Files.readAllLines(OPENAPI, StandardCharsets.UTF_8)) {
            String stripped = line.strip();
            int depth = line.length() - line.stripLeading().length();
            if (!inSchema) {
                inSchema = stripped.equals("ErrorCode:");
                indent = depth;
            } else if (!stripped.isEmpty() && depth <= indent) {
                break; // the next schema
            } else if (stripped.equals("enum:")) {
                inEnum = true;
            } else if (inEnum && stripped.startsWith("- ")) {
                codes.add(stripped.substring(2).strip().replaceAll("^['\"]|['\"]$", ""));
            } else if (inEnum && !stripped.isEmpty()) {
                break; // the enum ended
            }
        }
        return codes;
    }

    private static TableTheoryException answer(String code) {
        return ErrorFactory.of(new TableTheoryException.Failure(400, code, "m", false, "r",
                Map.of(), Duration.ZERO, null));
    }

    @Test
    void theEnumWasRead() throws IOException {
        List<String> codes = openapiErrorCodes();
        assertTrue(codes.contains("ValidationError") && codes.contains("Internal"), codes.toString());
        assertEquals(codes.size(), new HashSet<>(codes).size());
    }

    @TestFactory
    Stream<DynamicTest> everyDaemonCodeHasItsOwnException() throws IOException {
        List<String> codes = openapiErrorCodes();
        return codes.stream().map(code -> DynamicTest.dynamicTest(code, () -> {
            TableTheoryException e = answer(code);
            assertNotEquals(TableTheoryException.class, e.getClass(),
                    "no exception class for the daemon's code " + code);
            assertEquals(code, e.code());
            for (String other : codes) {
                if (!other.equals(code)) {
                    assertNotEquals(answer(other).getClass(), e.getClass(),
                            code + " and " + other + " share an exception class");
                }
            }
        }));
    }
}
