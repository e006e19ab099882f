/* SPDX-License-Identifier: Apache-2.0 */
/* ddb_get_oracle.h -- the DynamoDB listener's generic typed GetItem
 * (api/ddb_items.h) in the one-pass reader's terms (api/ddb_wire.h), for the
 * tests that compare the two (tests/unit/test_ddb_wire.c,
 * tests/fuzz/fuzz_ddb_get.c). */
#ifndef TT_TEST_DDB_GET_ORACLE_H
#define TT_TEST_DDB_GET_ORACLE_H

#include <string.h>

#include "api/ddb_items.h"

/* The typed request the generic path makes of a checked GetItem body, when
 * it holds only what the one-pass reader may read (TableName, Key,
 * ConsistentRead; ReturnConsumedCapacity NONE): 0 with *g filled (free its
 * key), else -1 with *g zeroed. */
static inline int tt_test_generic_get(const json_t *body, struct tt_ddbw_get *g) {
  struct tt_ddbi_request t;
  struct tt_ddbi_owned own;
  struct tt_backend_error e;
  memset(&e, 0, sizeof(e));
  memset(g, 0, sizeof(*g));
  if (tt_ddbi_request_from_json(TT_DDB_GET_ITEM, body, &t, &own, &e) != 0) {
    tt_backend_error_clear(&e);
    return -1;
  }
  const struct tt_ddb_item_request *q = &t.item;
  int rc = -1;
  if (q->table && strlen(q->table) < sizeof(g->table) && q->key && !q->projection &&
      !q->names && !q->values && !q->condition && !q->update && !q->old_on_condition_failure &&
      q->consumed == NULL && tt_av_clone(&g->key, q->key) == 0) {
    memcpy(g->table, q->table, strlen(q->table) + 1);
    g->consistent_read = q->consistent_read;
    rc = 0;
  }
  tt_ddbi_owned_free(&own);
  return rc;
}

#endif
