// SPDX-License-Identifier: Apache-2.0

// The error of code VersionConflict.

package com.theorycloud.tabletheoryd;

/** 409: the item's version is not the expected one. */
public class VersionConflictException extends ConflictException {
    private static final long serialVersionUID = 1L;

    public VersionConflictException(TableTheoryException.Failure f) {
        super(f);
    }
}
