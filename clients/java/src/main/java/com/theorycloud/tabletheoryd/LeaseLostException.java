// SPDX-License-Identifier: Apache-2.0

// Thrown by Ledger.withLease when the lease was lost while the work ran.

package com.theorycloud.tabletheoryd;

/**
 * The lease of {@link Ledger#withLease} was lost (a refresh answered
 * LeaseNotOwned) while the work ran; the worker thread was interrupted at that
 * moment. The work's own exception, if any, is suppressed into this one.
 */
public class LeaseLostException extends LeaseNotOwnedException {
    private static final long serialVersionUID = 1L;

    LeaseLostException(LeaseNotOwnedException cause) {
        super(new TableTheoryException.Failure(cause.status(), cause.code(),
                "lease lost while working: " + cause.errorMessage(), false, cause.requestId(), cause.details(),
                cause.retryAfter(), cause));
    }
}
