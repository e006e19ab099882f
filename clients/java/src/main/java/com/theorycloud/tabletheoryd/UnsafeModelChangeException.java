// SPDX-License-Identifier: Apache-2.0

// The error of code UnsafeModelChange.

package com.theorycloud.tabletheoryd;

/** 409: a model replace that the stored items would not survive; details.field names it. */
public class UnsafeModelChangeException extends ConflictException {
    private static final long serialVersionUID = 1L;

    public UnsafeModelChangeException(TableTheoryException.Failure f) {
        super(f);
    }
}
