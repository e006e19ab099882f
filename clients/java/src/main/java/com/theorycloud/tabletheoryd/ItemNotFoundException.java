// SPDX-License-Identifier: Apache-2.0

// The error of code ItemNotFound.

package com.theorycloud.tabletheoryd;

/** 404: no item has this key. */
public class ItemNotFoundException extends NotFoundException {
    private static final long serialVersionUID = 1L;

    public ItemNotFoundException(TableTheoryException.Failure f) {
        super(f);
    }
}
