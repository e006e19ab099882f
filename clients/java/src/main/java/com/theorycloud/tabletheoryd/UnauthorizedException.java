// SPDX-License-Identifier: Apache-2.0

// The error of code Unauthorized.

package com.theorycloud.tabletheoryd;

/** 401: the daemon wants a token (TABLETHEORYD_TOKEN_FILE). */
public class UnauthorizedException extends TableTheoryException {
    private static final long serialVersionUID = 1L;

    public UnauthorizedException(TableTheoryException.Failure f) {
        super(f);
    }
}
