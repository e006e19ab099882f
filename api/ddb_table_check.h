/* SPDX-License-Identifier: Apache-2.0 */
/* ddb_table_check.h -- DynamoDB's checks of a CreateTable's or an
 * UpdateTable's parameters taken together, made after the member
 * constraints (tt_ddbw_validate) and before any table is looked up:
 * BillingMode against ProvisionedThroughput and its bounds, KeySchema
 * against AttributeDefinitions, the secondary indexes' keys, projections,
 * names and counts, and the GlobalSecondaryIndexUpdates' actions, in
 * DynamoDB's order and with its messages. api/ddb_listener.c hosts it. */
#ifndef TT_API_DDB_TABLE_CHECK_H
#define TT_API_DDB_TABLE_CHECK_H

#include <jansson.h>

#include "api/ddb_wire.h"
#include "backend/backend.h"

/* Returns 0, or -1 with a ValidationException in *err; 0 for other ops. */
int tt_ddbw_check_table(enum tt_ddb_op op, const json_t *body, struct tt_ddbw_error *err);

#endif
