// SPDX-License-Identifier: Apache-2.0

// The error of code Internal.

package com.theorycloud.tabletheoryd;

/** 500: a bug in the daemon; report it with the request id. */
public class InternalException extends TableTheoryException {
    private static final long serialVersionUID = 1L;

    public InternalException(TableTheoryException.Failure f) {
        super(f);
    }
}
