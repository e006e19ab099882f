// SPDX-License-Identifier: Apache-2.0

// The builder of a write transaction.

package com.theorycloud.tabletheoryd;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The items of one write transaction (at most 100): {@code new Tx().create("Order", o).update("User", k, u)}. */
public final class Tx {
    record Op(String op, String model, Map<String, Object> item, Key key, Update update, Cond condition,
              Long expectedVersion) {}

    private final List<Op> ops = new ArrayList<>();
    private String clientToken;
    private boolean retryConflicts;

    /** Creates an item (the key must not exist). */
    public Tx create(String model, Map<String, Object> item) {
        ops.add(new Op("create", model, item, null, null, null, null));
        return this;
    }

    /** Creates or replaces an item. */
    public Tx put(String model, Map<String, Object> item) {
        ops.add(new Op("put", model, item, null, null, null, null));
        return this;
    }

    /** Replaces an item at an expected version. */
    public Tx put(String model, Map<String, Object> item, long expectedVersion) {
        ops.add(new Op("put", model, item, null, null, null, expectedVersion));
        return this;
    }

    /** Updates an item (it must exist unless the update upserts). */
    public Tx update(String model, Key key, Update u) {
        ops.add(new Op("update", model, null, key, u, null, null));
        return this;
    }

    public Tx delete(String model, Key key) {
        ops.add(new Op("delete", model, null, key, null, null, null));
        return this;
    }

    public Tx delete(String model, Key key, long expectedVersion) {
        ops.add(new Op("delete", model, null, key, null, null, expectedVersion));
        return this;
    }

    /** A condition on an item that is not written. */
    public Tx check(String model, Key key, Cond c) {
        ops.add(new Op("check", model, null, key, null, c, null));
        return this;
    }

    /** Adds a condition to the last item. */
    public Tx condition(Cond c) {
        Op last = ops.remove(ops.size() - 1);
        ops.add(new Op(last.op(), last.model(), last.item(), last.key(), last.update(), c, last.expectedVersion()));
        return this;
    }

    /** The client_token (1-36 characters); generated per call when not set. */
    public Tx clientToken(String token) {
        this.clientToken = token;
        return this;
    }

    /** Lets the daemon retry TransactionConflict with backoff. */
    public Tx retryConflicts(boolean on) {
        this.retryConflicts = on;
        return this;
    }

    List<Op> ops() { return ops; }

    String clientToken() { return clientToken; }

    boolean retryConflicts() { return retryConflicts; }
}
