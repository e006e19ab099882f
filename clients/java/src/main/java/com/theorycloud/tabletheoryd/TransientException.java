// SPDX-License-Identifier: Apache-2.0

// The Transient group of tabletheoryd errors.

package com.theorycloud.tabletheoryd;

/** A 429/503/504 answer: retryable; the client already retried it where that was safe. */
public abstract class TransientException extends TableTheoryException {
    private static final long serialVersionUID = 1L;

    protected TransientException(TableTheoryException.Failure f) {
        super(f);
    }
}
