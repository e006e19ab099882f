// SPDX-License-Identifier: Apache-2.0

// The error of code EncryptionNotConfigured.

package com.theorycloud.tabletheoryd;

/** 501: the daemon has no KMS key for the model's encrypted attributes. */
public class EncryptionNotConfiguredException extends TableTheoryException {
    private static final long serialVersionUID = 1L;

    public EncryptionNotConfiguredException(TableTheoryException.Failure f) {
        super(f);
    }
}
