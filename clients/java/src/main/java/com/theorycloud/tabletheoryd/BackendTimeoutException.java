// SPDX-License-Identifier: Apache-2.0

// The error of code BackendTimeout.

package com.theorycloud.tabletheoryd;

/** 504: the request's deadline passed; its work was canceled. */
public class BackendTimeoutException extends TransientException {
    private static final long serialVersionUID = 1L;

    public BackendTimeoutException(TableTheoryException.Failure f) {
        super(f);
    }
}
