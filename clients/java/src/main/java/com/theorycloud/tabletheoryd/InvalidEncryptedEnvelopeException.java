// SPDX-License-Identifier: Apache-2.0

// The error of code InvalidEncryptedEnvelope.

package com.theorycloud.tabletheoryd;

/** 500: a stored encrypted value is not a valid envelope. */
public class InvalidEncryptedEnvelopeException extends TableTheoryException {
    private static final long serialVersionUID = 1L;

    public InvalidEncryptedEnvelopeException(TableTheoryException.Failure f) {
        super(f);
    }
}
