// SPDX-License-Identifier: Apache-2.0

// The Conflict group of tabletheoryd errors.

package com.theorycloud.tabletheoryd;

/** A 409 answer: the write's condition, version, lease, transition or write policy failed. */
public abstract class ConflictException extends TableTheoryException {
    private static final long serialVersionUID = 1L;

    protected ConflictException(TableTheoryException.Failure f) {
        super(f);
    }
}
