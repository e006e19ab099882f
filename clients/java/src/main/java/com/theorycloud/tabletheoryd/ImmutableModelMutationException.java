// SPDX-License-Identifier: Apache-2.0

// The error of code ImmutableModelMutation.

package com.theorycloud.tabletheoryd;

/** 409: the model is write_once; its items can only be created. */
public class ImmutableModelMutationException extends ConflictException {
    private static final long serialVersionUID = 1L;

    public ImmutableModelMutationException(TableTheoryException.Failure f) {
        super(f);
    }
}
