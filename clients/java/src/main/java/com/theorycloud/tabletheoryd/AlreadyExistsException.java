// SPDX-License-Identifier: Apache-2.0

// The error of code AlreadyExists.

package com.theorycloud.tabletheoryd;

/** 409: the job or model already exists. */
public class AlreadyExistsException extends ConflictException {
    private static final long serialVersionUID = 1L;

    public AlreadyExistsException(TableTheoryException.Failure f) {
        super(f);
    }
}
