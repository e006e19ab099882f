// SPDX-License-Identifier: Apache-2.0

// The error of code UnsupportedMediaType.

package com.theorycloud.tabletheoryd;

/** 415: the body is not JSON. */
public class UnsupportedMediaTypeException extends TableTheoryException {
    private static final long serialVersionUID = 1L;

    public UnsupportedMediaTypeException(TableTheoryException.Failure f) {
        super(f);
    }
}
