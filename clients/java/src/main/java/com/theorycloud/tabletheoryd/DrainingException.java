// SPDX-License-Identifier: Apache-2.0

// The error of code Draining.

package com.theorycloud.tabletheoryd;

/** 503: the daemon is shutting down. */
public class DrainingException extends TransientException {
    private static final long serialVersionUID = 1L;

    public DrainingException(TableTheoryException.Failure f) {
        super(f);
    }
}
