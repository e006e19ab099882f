// SPDX-License-Identifier: Apache-2.0

// The error of code LeaseNotOwned.

package com.theorycloud.tabletheoryd;

/** 409: the lease is not ours (expired, taken or released): stop working on the job. */
public class LeaseNotOwnedException extends ConflictException {
    private static final long serialVersionUID = 1L;

    public LeaseNotOwnedException(TableTheoryException.Failure f) {
        super(f);
    }
}
