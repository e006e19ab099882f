// SPDX-License-Identifier: Apache-2.0

// The error of code UnknownPartner.

package com.theorycloud.tabletheoryd;

/** 400: the X-TableTheory-Partner header names no configured partner account. */
public class UnknownPartnerException extends TableTheoryException {
    private static final long serialVersionUID = 1L;

    public UnknownPartnerException(TableTheoryException.Failure f) {
        super(f);
    }
}
