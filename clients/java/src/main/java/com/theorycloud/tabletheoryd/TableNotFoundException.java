// SPDX-License-Identifier: Apache-2.0

// The error of code TableNotFound.

package com.theorycloud.tabletheoryd;

/** 404: the model's table does not exist. */
public class TableNotFoundException extends NotFoundException {
    private static final long serialVersionUID = 1L;

    public TableNotFoundException(TableTheoryException.Failure f) {
        super(f);
    }
}
