// SPDX-License-Identifier: Apache-2.0

// The error of code MethodNotAllowed.

package com.theorycloud.tabletheoryd;

/** 405: the path does not take this method. */
public class MethodNotAllowedException extends TableTheoryException {
    private static final long serialVersionUID = 1L;

    public MethodNotAllowedException(TableTheoryException.Failure f) {
        super(f);
    }
}
