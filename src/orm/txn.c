/* SPDX-License-Identifier: Apache-2.0 */
/* txn.c -- POST /v1/transactions/write and /get: the request
 * parameters, the client-token memo, and the steps of txn_parse.c,
 * txn_build.c and txn_run.c in order. */
#include "orm/txn_internal.h"

static void txn_go(struct tt_orm_txn_state *st);

static int txn_start_run(struct tt_orm_ctx *ctx) {
  struct tt_orm_txn_op *op = (struct tt_orm_txn_op *)ctx;
  struct tt_error err;
  tt_error_clear(&err);
  const json_t *body = op->body;
  const json_t *items = json_object_get(body, "items");
  size_t n = json_array_size(items);
  struct tt_orm_txn_state *st = txn_state_new(&op->ctx, n);
  if (st == NULL) {
    tt_error_set(&err, TT_ERR_INTERNAL, NULL, "out of memory");
    tt_orm_fail(op->ctx.result, &err);
    tt_orm_ctx_finish(&op->ctx);
    return 0;
  }
  op->st = st;
  st->op = op;
  st->get = op->get;
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)body, k, v) {
    bool ok = strcmp(k, "items") == 0 ||
              (!op->get && (strcmp(k, "client_token") == 0 || strcmp(k, "retry_conflicts") == 0));
    if (!ok) {
      tt_error_set(&err, TT_ERR_VALIDATION, k, "%s is not a transaction parameter", k);
      goto bad;
    }
  }
  if (!json_is_array(items) || n == 0 || n > TT_ORM_TXN_MAX_ITEMS) {
    tt_error_set(&err, TT_ERR_VALIDATION, "items",
                 "items must list 1 to %d transaction items (DynamoDB's limit)",
                 TT_ORM_TXN_MAX_ITEMS);
    goto bad;
  }
  const json_t *tok = json_object_get(body, "client_token");
  if (tok) {
    st->token = json_string_value(tok);
    size_t tl = st->token ? strlen(st->token) : 0;
    if (tl < 1 || tl > 36) {
      tt_error_set(&err, TT_ERR_VALIDATION, "client_token",
                   "client_token must be a string of 1 to 36 characters");
      goto bad;
    }
    if (tt_orm_tokens_hash(body, &st->token_hash) != 0) {
      tt_error_set(&err, TT_ERR_INTERNAL, NULL, "out of memory");
      goto bad;
    }
    /* A retry of the same body writes the same times (orm/tokens.h). */
    st->now = tt_orm_tokens_time(st->ctx->orm, st->token, st->token_hash, st->now);
  }
  const json_t *rcf = json_object_get(body, "retry_conflicts");
  if (rcf && !json_is_boolean(rcf)) {
    tt_error_set(&err, TT_ERR_VALIDATION, "retry_conflicts",
                 "retry_conflicts must be true or false");
    goto bad;
  }
  st->retry_conflicts = json_is_true(rcf);
  for (size_t i = 0; i < n; i++) {
    st->n = i + 1;
    if (txn_parse_entry(st, &st->acts[i], i, json_array_get(items, i), &err) != 0)
      goto bad;
  }
  if (txn_check_duplicates(st, &err) != 0 || txn_check_encrypted(st, &err) != 0)
    goto bad;
  if (!st->get && st->sealing) {
    /* Values of encrypted attributes get their envelopes first. */
    if (txn_seal_actions(st, txn_go, &err) != 0)
      goto bad;
    return 0;
  }
  txn_go(st);
  return 0;
bad:
  txn_fail(st, &err);
  return 0;
}

int tt_orm_txn_start(struct tt_orm_txn_op *op) {
  return tt_orm_ctx_start(&op->ctx, txn_start_run);
}

static void txn_go(struct tt_orm_txn_state *st) {
  struct tt_error err;
  /* Compile everything once before any I/O, so that a bad condition or
   * update in item 57 is refused before item 0 is touched. */
  if (txn_build_request(st, false, &err) != 0)
    goto bad;
  if (st->get) {
    txn_call(st, TT_DDB_TRANSACT_GET_ITEMS, &st->plan.req, txn_get_cb);
    return;
  }
  /* Remembered only once the request is valid and about to be sent: a
   * refused body never binds its token. */
  if (st->token) {
    uint32_t retry_after = 0;
    if (tt_orm_tokens_remember(st->ctx->orm, st->token, st->token_hash, st->now,
                               tt_orm_now_ns(st->ctx->orm), &retry_after, &err) != 0) {
      st->ctx->result->retry_after_s = retry_after;
      goto bad;
    }
  }
  txn_start_attempt(st);
  return;
bad:
  txn_fail(st, &err);
}
