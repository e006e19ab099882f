// SPDX-License-Identifier: Apache-2.0

// The error of code ProtectedFieldMutation.

package com.theorycloud.tabletheoryd;

/** 409: the write sets, removes or replaces a protected attribute. */
public class ProtectedFieldMutationException extends ConflictException {
    private static final long serialVersionUID = 1L;

    public ProtectedFieldMutationException(TableTheoryException.Failure f) {
        super(f);
    }
}
