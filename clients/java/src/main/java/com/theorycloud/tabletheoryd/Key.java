// SPDX-License-Identifier: Apache-2.0

// An item's key: partition value and optional sort value.

package com.theorycloud.tabletheoryd;

/**
 * An item's key: the partition key value and, for a composite key, the sort
 * key value (String, a Number, or byte[]).
 */
public record Key(Object partition, Object sort) {
    public static Key of(Object partition) {
        return new Key(partition, null);
    }

    public static Key of(Object partition, Object sort) {
        return new Key(partition, sort);
    }
}
