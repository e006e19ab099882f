// SPDX-License-Identifier: Apache-2.0

// The error of code InvalidCursor.

package com.theorycloud.tabletheoryd;

/** 400: a cursor that does not decode or does not fit this query. */
public class InvalidCursorException extends TableTheoryException {
    private static final long serialVersionUID = 1L;

    public InvalidCursorException(TableTheoryException.Failure f) {
        super(f);
    }
}
