/* SPDX-License-Identifier: Apache-2.0 */
/* txn.c -- tt_orm_txn_start: the typed actions of a transaction checked
 * before any I/O (write policies, keys, expected versions, unique and
 * encryption refusals, one action per item), the client-token memo, then
 * the steps of txn_build.c and txn_run.c in order. */
#include "orm/txn_internal.h"

static void txn_go(struct tt_orm_txn_state *st);

/* What an update does to unique attributes: only SET, SET_IF_NOT_EXISTS
 * and REMOVE of the whole attribute can be followed by a guard. */
static int check_update_unique(struct action *a, struct tt_error *err) {
  for (size_t i = 0; i < a->in->upd.n_actions; i++) {
    const struct tt_orm_action *x = &a->in->upd.actions[i];
    const struct tt_model_attr *u = action_attr(a->m, x);
    if (u == NULL || !u->unique)
      continue;
    bool whole = x->literal || strcmp(x->path, u->name) == 0;
    if (!whole || (x->kind != TT_EXPR_UPD_SET && x->kind != TT_EXPR_UPD_SET_IF_NOT_EXISTS &&
                   x->kind != TT_EXPR_UPD_REMOVE))
      return tt_error_set(err, TT_ERR_VALIDATION, x->field,
                          "unique attribute %s can only be changed with set, set_if_not_exists "
                          "or remove of the whole attribute",
                          u->name);
    a->touches_unique = true;
  }
  return 0;
}

int txn_prepare_unique(struct tt_orm_txn_state *st, struct action *a, struct tt_error *err) {
  a->unique = tt_unique_model_has(a->m);
  if (!a->unique)
    return 0;
  char f[160];
  if (tt_unique_model_check(a->m, err) != 0)
    return -1;
  if (tt_unique_key_reserved(a->m, &a->in->key)) {
    subfield(a, pk_name(a), f, sizeof(f));
    return tt_error_set(err, TT_ERR_VALIDATION, f,
                        "%s may not start with \"" TT_UNIQUE_PREFIX
                        "\" in model %s: such keys hold the guards of unique attributes",
                        pk_name(a), a->m->name);
  }
  if (a->in->kind == K_UPDATE && check_update_unique(a, err) != 0)
    return -1;
  enum tt_orm_txn_kind k = a->in->kind;
  a->needs_old = k == K_PUT || k == K_DELETE || (k == K_UPDATE && a->touches_unique);
  a->guards = tt_arena_alloc(st->ctx->arena, 2 * tt_unique_count(a->m) * sizeof(*a->guards));
  return a->guards ? 0 : tt_orm_oom(err);
}

int txn_check_update_key(struct action *a, struct tt_error *err) {
  for (size_t i = 0; a->in->upd.key.type == TT_AV_M && i < a->in->upd.key.len; i++) {
    const struct tt_av_member *k = &a->in->upd.key.u.members[i];
    const struct tt_av *want = tt_av_map_get(&a->in->key, k->name);
    if (want && !tt_av_equal(want, &k->value)) {
      char f[160];
      subfield(a, k->name, f, sizeof(f));
      return tt_error_set(err, TT_ERR_VALIDATION, f, "%s differs from the key", f);
    }
  }
  return 0;
}

/* The checks of one action, in the order the API has always answered
 * them: its write policy, then (`typed`: the action was typed whole, not
 * only up to its kind) its key, expected version and unique attributes. */
static int check_action(struct tt_orm_txn_state *st, struct action *a, bool typed,
                        struct tt_error *err) {
  char f[160];
  enum tt_orm_txn_kind k = a->in->kind;
  if (a->m == NULL || k < K_CREATE || k > K_GET || (k == K_GET) != st->get)
    return tt_error_set(err, TT_ERR_VALIDATION, a->in->field,
                        "%s is no action of a %s transaction", a->in->field,
                        st->get ? "read" : "write");
  static const enum tt_orm_policy_write policy[] = {
      [K_CREATE] = TT_ORM_POLICY_CREATE, [K_PUT] = TT_ORM_POLICY_PUT,
      [K_UPDATE] = TT_ORM_POLICY_UPDATE, [K_DELETE] = TT_ORM_POLICY_DELETE,
      [K_CHECK] = TT_ORM_POLICY_CHECK,   [K_GET] = TT_ORM_POLICY_CHECK};
  if (tt_orm_policy_check_write(a->m, policy[k], a->in->field, err) != 0)
    return -1;
  if (!typed)
    return 0;
  bool whole = k == K_CREATE || k == K_PUT;
  subfield(a, whole ? "item" : "key", f, sizeof(f));
  if (whole ? tt_orm_key_of_item(a->m, &a->in->item, f, &a->in->key, err) != 0
            : tt_orm_key_check(a->m, &a->in->key, f, err) != 0)
    return -1;
  /* As PUT with If-Match: the new version is the expected one + 1. */
  if (k == K_PUT && a->in->expected.present &&
      tt_orm_item_set_version(a->m, &a->in->item, a->in->expected.version + 1) != 0)
    return tt_orm_oom(err);
  if (k == K_UPDATE && txn_check_update_key(a, err) != 0)
    return -1;
  if (k == K_CHECK && a->in->condition == NULL && !a->in->expected.present)
    return tt_error_set(err, TT_ERR_VALIDATION, a->in->field,
                        "%s: a check needs a condition or an expected_version", a->in->field);
  if (a->in->expected.present && tt_model_lifecycle(a->m, TT_LC_VERSION) == NULL) {
    subfield(a, "expected_version", f, sizeof(f));
    return tt_error_set(err, TT_ERR_VALIDATION, f, "model %s has no version attribute",
                        a->m->name);
  }
  return k != K_GET ? txn_prepare_unique(st, a, err) : 0;
}

/* Two actions on one item of the caller, before any I/O. */
static int check_duplicates(struct tt_orm_txn_state *st, struct tt_error *err) {
  for (size_t i = 0; i < st->n; i++)
    for (size_t j = 0; j < i; j++)
      if (strcmp(st->acts[i].m->table, st->acts[j].m->table) == 0 &&
          tt_av_equal(&st->acts[i].in->key, &st->acts[j].in->key))
        return tt_error_set(err, TT_ERR_VALIDATION, st->acts[i].in->field,
                            "%s and %s name the same item; a transaction may %s each item once",
                            st->acts[i].in->field, st->acts[j].in->field,
                            st->get ? "read" : "act on");
  return 0;
}

/* Encrypted attributes in a transaction: every model's key is configured,
 * no condition names one, no select reaches inside one; a write that seals
 * values cannot carry a client token (a retry would send new envelopes,
 * which DynamoDB refuses as another request under the same token). Sets
 * st->sealing when a write has values to seal. */
static int check_encrypted(struct tt_orm_txn_state *st, struct tt_error *err) {
  char f[160];
  for (size_t i = 0; i < st->n; i++) {
    struct action *a = &st->acts[i];
    if (!tt_orm_crypt_model(a->m))
      continue;
    if (tt_orm_crypt_check(st->ctx->orm, a->m, err) != 0) {
      tt_utf8_copy(err->field, sizeof(err->field), a->in->field);
      return -1;
    }
    subfield(a, "condition", f, sizeof(f));
    if (a->in->condition && tt_orm_crypt_check_condition(a->m, a->in->condition, f, err) != 0)
      return -1;
    subfield(a, "select", f, sizeof(f));
    if (tt_orm_crypt_check_select(a->m, &a->in->select, f, err) != 0)
      return -1;
    if (!st->get && (a->in->item.type == TT_AV_M || a->in->kind == K_UPDATE))
      st->sealing = true;
  }
  if (st->sealing && st->op->client_token)
    return tt_error_set(err, TT_ERR_VALIDATION, "client_token",
                        "client_token cannot be used with a transaction that writes encrypted "
                        "attributes (each attempt seals them with a new data key)");
  return 0;
}

/* A state holding op's actions (their models referenced, what a kind does
 * not use freed, an update's expected version settled, null trees none),
 * or NULL (out of memory: the inputs freed). */
static struct tt_orm_txn_state *adopt_all(struct tt_orm_txn_op *op) {
  struct tt_orm_txn_state *st = txn_state_new(&op->ctx, op->n_actions, op->actions);
  for (size_t i = 0; op->actions && i < op->n_actions; i++) {
    struct tt_orm_txn_action *in = &op->actions[i];
    bool whole = in->kind == K_CREATE || in->kind == K_PUT;
    if (st == NULL || whole)
      tt_av_free(&in->key);
    if (st == NULL || !whole)
      tt_av_free(&in->item);
    if (st == NULL || in->kind != K_UPDATE)
      tt_orm_update_free(&in->upd);
    if (st == NULL) {
      tt_cond_free(in->condition);
      in->condition = NULL;
      continue;
    }
    if (!in->expected.present)
      in->expected = in->upd.expected;
    st->acts[i].m = in->model ? tt_model_ref((struct tt_model *)in->model) : NULL;
    in->field[sizeof(in->field) - 1] = '\0';
  }
  if (st == NULL)
    return NULL;
  st->n = op->n_actions;
  st->op = op;
  st->get = op->get;
  return st;
}

int tt_orm_txn_fail_input(struct tt_orm_txn_op *op, size_t n_typed,
                          const struct tt_error *input) {
  struct tt_error first;
  const struct tt_error *err = input;
  struct tt_orm_txn_state *st = adopt_all(op);
  for (size_t i = 0; st && i <= n_typed && i < st->n && err == input; i++)
    if ((i < n_typed || st->acts[i].in->kind != 0) &&
        check_action(st, &st->acts[i], i < n_typed, &first) != 0)
      err = &first;
  if (st)
    txn_state_free(st);
  return tt_orm_ctx_refuse(&op->ctx, err);
}

static int txn_start_run(struct tt_orm_ctx *ctx) {
  struct tt_orm_txn_op *op = (struct tt_orm_txn_op *)ctx;
  struct tt_error err;
  tt_error_clear(&err);
  struct tt_orm_txn_state *st = adopt_all(op);
  if (st == NULL) {
    tt_orm_fail(op->ctx.result, (tt_orm_oom(&err), &err));
    tt_orm_ctx_finish(&op->ctx);
    return 0;
  }
  st->now = op->now;
  if (st->n == 0 || st->n > TT_ORM_TXN_MAX_ITEMS) {
    tt_error_set(&err, TT_ERR_VALIDATION, "items",
                 "items must list 1 to %d transaction items (DynamoDB's limit)",
                 TT_ORM_TXN_MAX_ITEMS);
    goto bad;
  }
  for (size_t i = 0; i < st->n; i++)
    if (check_action(st, &st->acts[i], true, &err) != 0)
      goto bad;
  if (check_duplicates(st, &err) != 0 || check_encrypted(st, &err) != 0)
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
  if (st->op->client_token) {
    uint32_t retry_after = 0;
    if (tt_orm_tokens_remember(st->ctx->orm, st->op->client_token, st->op->token_hash, st->now,
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
