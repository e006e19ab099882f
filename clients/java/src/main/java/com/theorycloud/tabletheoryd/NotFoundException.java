// SPDX-License-Identifier: Apache-2.0

// The NotFound group of tabletheoryd errors.

package com.theorycloud.tabletheoryd;

/** A 404 answer: the model, item, job, table or route does not exist. */
public abstract class NotFoundException extends TableTheoryException {
    private static final long serialVersionUID = 1L;

    protected NotFoundException(TableTheoryException.Failure f) {
        super(f);
    }
}
