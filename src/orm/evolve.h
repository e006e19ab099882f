/* SPDX-License-Identifier: Apache-2.0 */
/* evolve.h -- table evolution: what an existing table lacks of what its
 * models want, and the UpdateTable call that adds one missing GSI. Pure
 * functions over DynamoDB JSON; table.c runs the calls. */
#ifndef TT_ORM_EVOLVE_H
#define TT_ORM_EVOLVE_H

#include <jansson.h>

#include "util/error.h"

/* Compares `want` (a CreateTable request, tt_orm_create_table_request) with
 * `table` (the "Table" of a DescribeTable answer); borrows both. Returns 0
 * with *missing a new array of the wanted GSIs the table lacks (new
 * references to elements of want, in its order; empty when none), or -1 with a 409
 * AlreadyExists in err naming the first difference that UpdateTable cannot
 * apply (key schema, an LSI, an existing index's keys or projection, an
 * attribute's type) and *details a new object {"difference", "index"?,
 * "table", "model"} (NULL on out of memory). Indexes on the table that
 * `want` does not name are not differences: other services may use them. */
int tt_orm_table_diff(const json_t *want, const json_t *table, json_t **missing,
                      json_t **details, struct tt_error *err);

/* The UpdateTable request that adds `gsi` (an element of want's
 * GlobalSecondaryIndexes) to `table`: the table's attribute definitions
 * plus the index's keys (some peers replace the table's definitions with the
 * given ones), and, on a provisioned table, the table's throughput for the
 * index (CreateTable makes on-demand tables, which need none). Borrows all;
 * returns a new request or NULL (out of memory). */
json_t *tt_orm_add_gsi_request(const json_t *want, const json_t *table, const json_t *gsi);

#endif
