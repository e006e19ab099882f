// SPDX-License-Identifier: Apache-2.0

// The error of code RouteNotFound.

package com.theorycloud.tabletheoryd;

/** 404: no endpoint has this path. */
public class RouteNotFoundException extends NotFoundException {
    private static final long serialVersionUID = 1L;

    public RouteNotFoundException(TableTheoryException.Failure f) {
        super(f);
    }
}
