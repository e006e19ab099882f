// SPDX-License-Identifier: Apache-2.0

// The error of code EncryptedFieldNotQueryable.

package com.theorycloud.tabletheoryd;

/** 400: an encrypted attribute cannot be a key, condition, filter or partial update. */
public class EncryptedFieldNotQueryableException extends TableTheoryException {
    private static final long serialVersionUID = 1L;

    public EncryptedFieldNotQueryableException(TableTheoryException.Failure f) {
        super(f);
    }
}
