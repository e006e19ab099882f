// SPDX-License-Identifier: Apache-2.0

// The error of code PayloadTooLarge.

package com.theorycloud.tabletheoryd;

/** 413: the body or the item is too large. */
public class PayloadTooLargeException extends TableTheoryException {
    private static final long serialVersionUID = 1L;

    public PayloadTooLargeException(TableTheoryException.Failure f) {
        super(f);
    }
}
