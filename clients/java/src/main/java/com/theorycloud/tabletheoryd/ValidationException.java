// SPDX-License-Identifier: Apache-2.0

// The error of code ValidationError.

package com.theorycloud.tabletheoryd;

/** 400: bad JSON, unknown attribute, wrong type, missing key, bad condition; {@link #field()} names the offending member. */
public class ValidationException extends TableTheoryException {
    private static final long serialVersionUID = 1L;

    public ValidationException(TableTheoryException.Failure f) {
        super(f);
    }
}
