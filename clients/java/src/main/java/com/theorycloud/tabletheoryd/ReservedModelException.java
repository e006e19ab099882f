// SPDX-License-Identifier: Apache-2.0

// The error of code ReservedModel.

package com.theorycloud.tabletheoryd;

/** 403: the model or table belongs to the job ledger; use the jobs API. */
public class ReservedModelException extends TableTheoryException {
    private static final long serialVersionUID = 1L;

    public ReservedModelException(TableTheoryException.Failure f) {
        super(f);
    }
}
