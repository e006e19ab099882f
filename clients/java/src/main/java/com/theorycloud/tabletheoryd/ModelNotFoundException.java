// SPDX-License-Identifier: Apache-2.0

// The error of code ModelNotFound.

package com.theorycloud.tabletheoryd;

/** 404: the model is not registered. */
public class ModelNotFoundException extends NotFoundException {
    private static final long serialVersionUID = 1L;

    public ModelNotFoundException(TableTheoryException.Failure f) {
        super(f);
    }
}
