/* SPDX-License-Identifier: Apache-2.0 */
/* evolve.h -- table evolution: what an existing table lacks of what its
 * models want, and the UpdateTable call that adds one missing GSI. Pure
 * functions over the port's typed table values; table.c runs the calls. */
#ifndef TT_ORM_EVOLVE_H
#define TT_ORM_EVOLVE_H

#include <jansson.h>

#include "backend/backend.h"
#include "util/error.h"

/* Compares `want` (a CreateTable request, tt_orm_create_table_request) with
 * `table` (a DescribeTable answer); borrows both. Returns 0 with *missing
 * the first wanted GSI the table lacks (an element of want's indexes; NULL
 * when none), or -1 with a 409 AlreadyExists in err naming the first
 * difference that UpdateTable cannot apply (key schema, an LSI, an existing
 * index's keys or projection, an attribute's type) and *details a new
 * object {"difference", "index"?, "table", "model"} (NULL on out of
 * memory). Indexes on the table that `want` does not name are not
 * differences: other services may use them. */
int tt_orm_table_diff(const struct tt_ddb_table_request *want,
                      const struct tt_ddb_table_desc *table, const struct tt_ddb_index **missing,
                      json_t **details, struct tt_error *err);

/* Fills *out with the UpdateTable request that adds `gsi` (an element of
 * want's indexes) to `table`: the table's attribute definitions plus the
 * index's keys (some peers replace the table's definitions with the given
 * ones), and, on a provisioned table, the table's throughput for the index
 * (CreateTable makes on-demand tables, which need none). Its arrays and
 * the table's definitions are copied into `a` (a description goes with its
 * call), the other strings borrowed from want and gsi. Returns 0, or -1
 * (out of memory). */
int tt_orm_add_gsi_request(struct tt_arena *a, const struct tt_ddb_table_request *want,
                           const struct tt_ddb_table_desc *table, const struct tt_ddb_index *gsi,
                           struct tt_ddb_table_request *out);

#endif
