// SPDX-License-Identifier: Apache-2.0

// One page of a query or scan.

package com.theorycloud.tabletheoryd;

import java.util.List;

/** One page of a query or scan; cursor is null on the last page. */
public record Page(List<Item> items, long count, long scannedCount, String cursor) {}
