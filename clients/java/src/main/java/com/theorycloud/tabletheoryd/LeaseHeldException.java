// SPDX-License-Identifier: Apache-2.0

// The error of code LeaseHeld.

package com.theorycloud.tabletheoryd;

/** 409: another owner holds the job's lease. */
public class LeaseHeldException extends ConflictException {
    private static final long serialVersionUID = 1L;

    public LeaseHeldException(TableTheoryException.Failure f) {
        super(f);
    }
}
