// SPDX-License-Identifier: Apache-2.0

// The error of code UnexpectedResponse.

package com.theorycloud.tabletheoryd;

/** An answer without the daemon's error envelope (e.g. from a proxy). */
public class UnexpectedResponseException extends TableTheoryException {
    private static final long serialVersionUID = 1L;

    public UnexpectedResponseException(TableTheoryException.Failure f) {
        super(f);
    }
}
