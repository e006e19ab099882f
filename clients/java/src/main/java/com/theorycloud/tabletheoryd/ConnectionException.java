// SPDX-License-Identifier: Apache-2.0

// The error of code ConnectionError.

package com.theorycloud.tabletheoryd;

/** The daemon could not be reached, or the connection broke mid-call. */
public class ConnectionException extends TableTheoryException {
    private static final long serialVersionUID = 1L;

    public ConnectionException(TableTheoryException.Failure f) {
        super(f);
    }
}
