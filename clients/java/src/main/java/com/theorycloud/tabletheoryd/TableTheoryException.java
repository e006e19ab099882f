// SPDX-License-Identifier: Apache-2.0

// The root of the client's exception hierarchy: the daemon's error envelope.

package com.theorycloud.tabletheoryd;

import java.time.Duration;
import java.util.Map;

/**
 * A failed call. Subclasses name the code ({@link ItemNotFoundException},
 * {@link VersionConflictException}, ...) and group them ({@link NotFoundException},
 * {@link ConflictException}, {@link TransientException}); an unknown future code
 * is this class itself. Unchecked, like the JDK's own HTTP-level errors.
 */
public class TableTheoryException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The parts of a failure (the envelope of docs/errors.md plus the HTTP facts). */
    public record Failure(int status, String code, String message, boolean retryable, String requestId,
                          Map<String, Object> details, Duration retryAfter, Throwable cause) {}

    private final transient Failure failure;

    public TableTheoryException(Failure f) {
        super(f.code() + " (HTTP " + f.status() + "): " + f.message()
                + (f.requestId() == null ? "" : " [request_id " + f.requestId() + "]"), f.cause());
        this.failure = f;
    }

    /** The HTTP status (0 for a connection failure). */
    public int status() { return failure.status(); }

    /** The stable error code, e.g. "VersionConflict". */
    public String code() { return failure.code(); }

    /** The daemon's message for people (never holds item values). */
    public String errorMessage() { return failure.message(); }

    /** True when the same request may succeed when sent again. */
    public boolean retryable() { return failure.retryable(); }

    /** The X-Request-Id of the failed attempt. */
    public String requestId() { return failure.requestId(); }

    /** Code-specific facts (numbers are BigDecimal); empty when there are none. */
    public Map<String, Object> details() { return failure.details(); }

    /** details.field: the offending member, or null. */
    public String field() {
        Object f = failure.details().get("field");
        return f == null ? null : f.toString();
    }

    /** The Retry-After header's delay, or Duration.ZERO. */
    public Duration retryAfter() { return failure.retryAfter(); }
}
