// SPDX-License-Identifier: Apache-2.0

// The error of code BatchIncomplete.

package com.theorycloud.tabletheoryd;

/** 503: part of a batch was not done; details.unprocessed names it. */
public class BatchIncompleteException extends TransientException {
    private static final long serialVersionUID = 1L;

    public BatchIncompleteException(TableTheoryException.Failure f) {
        super(f);
    }
}
