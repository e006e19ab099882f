// SPDX-License-Identifier: Apache-2.0

// The error of code Forbidden.

package com.theorycloud.tabletheoryd;

/** 403: the configuration does not allow the operation. */
public class ForbiddenException extends TableTheoryException {
    private static final long serialVersionUID = 1L;

    public ForbiddenException(TableTheoryException.Failure f) {
        super(f);
    }
}
