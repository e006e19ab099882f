// SPDX-License-Identifier: Apache-2.0

// The error of code BackendUnavailable.

package com.theorycloud.tabletheoryd;

/** 503: the backend failed or could not be reached. */
public class BackendUnavailableException extends TransientException {
    private static final long serialVersionUID = 1L;

    public BackendUnavailableException(TableTheoryException.Failure f) {
        super(f);
    }
}
