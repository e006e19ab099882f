// SPDX-License-Identifier: Apache-2.0

// The error of code InvalidTransition.

package com.theorycloud.tabletheoryd;

/** 409: the job cannot move (terminal status, or not in the given from status). */
public class InvalidTransitionException extends ConflictException {
    private static final long serialVersionUID = 1L;

    public InvalidTransitionException(TableTheoryException.Failure f) {
        super(f);
    }
}
