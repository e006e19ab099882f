/* SPDX-License-Identifier: Apache-2.0 */
/* txn_item.c -- the single-item writes of models with unique
 * attributes (the unique-guard path): one item's create, put, update or
 * delete run as a transaction that moves its guard items with it. */
#include "orm/txn_internal.h"

static int parse_single(struct tt_orm_txn_state *st, struct tt_orm_item_op *op,
                        struct tt_error *err) {
  struct action *a = &st->acts[0];
  a->m = tt_model_ref(op->ctx.model);
  /* The state owns the op's inputs from here on (a->in's field is ""). */
  a->in->item = op->item;
  memset(&op->item, 0, sizeof(op->item));
  if (op->kind == TT_ORM_OP_UPDATE) {
    a->in->upd = op->upd;
    tt_orm_update_init(&op->upd);
  }
  /* The same refusals as the plain path, before any I/O; the condition is
   * the state's too, once they looked at it. */
  a->in->condition = op->condition;
  int rc = tt_orm_item_check_request(op, &a->in->key, err);
  op->condition = NULL;
  if (rc != 0)
    return -1;
  switch (op->kind) {
  case TT_ORM_OP_CREATE:
    a->in->kind = K_CREATE;
    if (tt_orm_key_of_item(a->m, &a->in->item, NULL, &a->in->key, err) != 0)
      return -1;
    break;
  case TT_ORM_OP_PUT:
    a->in->kind = K_PUT;
    a->create_only = op->if_none_match;
    a->in->expected = op->expected;
    if (tt_orm_item_put_prepare(a->m, &a->in->key, &a->in->item, &op->item_expected,
                                &a->in->expected, err) != 0)
      return -1;
    break;
  case TT_ORM_OP_UPDATE: {
    a->in->kind = K_UPDATE;
    a->in->upsert = op->upsert;
    if (txn_check_update_key(a, err) != 0)
      return -1;
    a->in->expected = op->expected;
    if (tt_orm_expected_merge(&a->in->expected, &a->in->upd.expected, "expected_version",
                              "the body's expected version differs from If-Match", err) != 0)
      return -1;
    break;
  }
  case TT_ORM_OP_DELETE:
    a->in->kind = K_DELETE;
    a->must_exist = true;
    a->in->expected = op->expected;
    break;
  case TT_ORM_OP_GET:
    break;
  }
  return txn_prepare_unique(st, a, err);
}

static int txn_item_start_run(struct tt_orm_ctx *ctx) {
  struct tt_orm_item_op *op = (struct tt_orm_item_op *)ctx;
  if (op->kind == TT_ORM_OP_GET)
    return tt_orm_item_start(op);
  struct tt_error err;
  tt_error_clear(&err);
  op->builder = NULL;
  struct tt_orm_txn_state *st = txn_state_new(&op->ctx, 1, NULL);
  if (st == NULL) {
    tt_av_free(&op->item);
    tt_orm_update_free(&op->upd);
    tt_cond_free(op->condition);
    op->condition = NULL;
    tt_orm_oom(&err);
    tt_orm_fail(op->ctx.result, &err);
    tt_orm_ctx_finish(&op->ctx);
    return 0;
  }
  st->single = op;
  st->n = 1;
  st->now = op->now; /* the inputs' time */
  if (parse_single(st, op, &err) != 0) {
    txn_fail(st, &err);
    return 0;
  }
  if (st->acts[0].in->kind == K_UPDATE && !st->acts[0].touches_unique) {
    /* No guard moves: the plain UpdateItem (ALL_NEW, one call) is enough.
     * The key was checked above (never a guard's); the update goes back
     * to the op. */
    op->upd = st->acts[0].in->upd;
    tt_orm_update_init(&st->acts[0].in->upd);
    op->condition = st->acts[0].in->condition;
    st->acts[0].in->condition = NULL;
    txn_state_free(st);
    return tt_orm_item_start(op);
  }
  if (txn_build_request(st, false, &err) != 0) {
    txn_fail(st, &err);
    return 0;
  }
  if (st->acts[0].in->kind != K_DELETE && tt_orm_crypt_model(st->acts[0].m)) {
    /* Sealed once: a retry after a race sends the same envelopes. */
    if (txn_seal_actions(st, txn_start_attempt, &err) != 0)
      txn_fail(st, &err);
    return 0;
  }
  txn_start_attempt(st);
  return 0;
}

int tt_orm_txn_item_start(struct tt_orm_item_op *op) {
  return tt_orm_ctx_start(&op->ctx, txn_item_start_run);
}
