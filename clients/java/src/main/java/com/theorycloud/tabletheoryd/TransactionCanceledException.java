// SPDX-License-Identifier: Apache-2.0

// The error of code TransactionCanceled.

package com.theorycloud.tabletheoryd;

/** 409: a transaction was canceled; {@link #reasons()} says why for each item. */
public class TransactionCanceledException extends ConflictException {
    private static final long serialVersionUID = 1L;

    public TransactionCanceledException(TableTheoryException.Failure f) {
        super(f);
    }

    /** One entry of details.reasons: the item's index, its code ("None", "ConditionalCheckFailed", ...) and the raw entry. */
    public record Reason(int index, String code, String message, java.util.Map<String, Object> raw) {}

    /** details.reasons, one per item of the transaction, in order. */
    @SuppressWarnings("unchecked")
    public java.util.List<Reason> reasons() {
        java.util.List<Reason> out = new java.util.ArrayList<>();
        Object list = details().get("reasons");
        if (list instanceof java.util.List<?> l) {
            for (int i = 0; i < l.size(); i++) {
                java.util.Map<String, Object> m = l.get(i) instanceof java.util.Map<?, ?> mm
                        ? (java.util.Map<String, Object>) mm : java.util.Map.of();
                out.add(new Reason(i, String.valueOf(m.get("code")),
                        m.get("message") == null ? null : String.valueOf(m.get("message")), m));
            }
        }
        return out;
    }
}
