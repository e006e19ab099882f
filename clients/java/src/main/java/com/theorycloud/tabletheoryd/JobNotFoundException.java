// SPDX-License-Identifier: Apache-2.0

// The error of code JobNotFound.

package com.theorycloud.tabletheoryd;

/** 404: no job has this id. */
public class JobNotFoundException extends NotFoundException {
    private static final long serialVersionUID = 1L;

    public JobNotFoundException(TableTheoryException.Failure f) {
        super(f);
    }
}
