// SPDX-License-Identifier: Apache-2.0

// The error of code ConditionFailed.

package com.theorycloud.tabletheoryd;

/** 409: a create found the key taken, or a condition was false. */
public class ConditionFailedException extends ConflictException {
    private static final long serialVersionUID = 1L;

    public ConditionFailedException(TableTheoryException.Failure f) {
        super(f);
    }
}
