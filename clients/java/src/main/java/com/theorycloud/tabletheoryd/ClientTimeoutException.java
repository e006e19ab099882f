// SPDX-License-Identifier: Apache-2.0

// The client's own deadline (attemptTimeout / callTimeout) passed before the answer came.

package com.theorycloud.tabletheoryd;

/**
 * No answer within the attempt's or the call's timeout. The daemon may still
 * be working on the request (it stops at its own --request-timeout-ms).
 */
public class ClientTimeoutException extends ConnectionException {
    private static final long serialVersionUID = 1L;

    public ClientTimeoutException(TableTheoryException.Failure f) {
        super(f);
    }
}
