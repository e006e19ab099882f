// SPDX-License-Identifier: Apache-2.0

// The error of code Throttled.

package com.theorycloud.tabletheoryd;

/** 429: DynamoDB still throttled; {@link #retryAfter()} says when to try again. */
public class ThrottledException extends TransientException {
    private static final long serialVersionUID = 1L;

    public ThrottledException(TableTheoryException.Failure f) {
        super(f);
    }
}
