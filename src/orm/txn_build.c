/* SPDX-License-Identifier: Apache-2.0 */
/* txn_build.c -- actions to the typed transaction request: each action's
 * Put/Update/Delete/ConditionCheck/Get with its condition, the guard
 * actions of unique attributes, and the limits of one transaction. */
#include "orm/txn_internal.h"

/* The unique values of an update's item after it, from the values before
 * (`old`, may be NULL) and the update's actions on unique attributes. */
static int compute_newvals(struct action *a, const struct tt_av *old, struct tt_error *err) {
  tt_av_free(&a->newvals);
  if (tt_av_map(&a->newvals, 0) != 0)
    return tt_orm_oom(err);
  for (size_t i = 0; i < a->m->n_attrs; i++) {
    const struct tt_model_attr *u = &a->m->attrs[i];
    const struct tt_av *ov = old ? tt_av_map_get(old, u->name) : NULL;
    if (!u->unique || ov == NULL)
      continue;
    if (tt_orm_map_put_copy(&a->newvals, u->name, u->name_len, ov) != 0)
      return tt_orm_oom(err);
  }
  for (size_t i = 0; i < a->in->upd.n_actions; i++) {
    const struct tt_orm_action *x = &a->in->upd.actions[i];
    const struct tt_model_attr *u = action_attr(a->m, x);
    if (u == NULL || !u->unique)
      continue;
    if (x->kind == TT_EXPR_UPD_REMOVE) {
      tt_av_map_remove(&a->newvals, u->name);
      continue;
    }
    if (x->kind == TT_EXPR_UPD_SET_IF_NOT_EXISTS && tt_av_map_get(&a->newvals, u->name))
      continue;
    if (tt_orm_map_put_copy(&a->newvals, u->name, u->name_len, &x->value) != 0)
      return tt_orm_oom(err);
  }
  return 0;
}

/* The conditions of an item's own action. `snapshot` adds what the read
 * before the write saw (existence and unique values), so that guards moved
 * on the strength of that read cannot go stale. */
static int build_condition(struct action *a, struct tt_expr_builder *b, struct tt_buf *c,
                           bool snapshot, struct tt_error *err) {
  bool exists = false, absent = false;
  if (a->in->kind == K_CREATE || a->create_only)
    absent = true;
  if ((a->in->kind == K_UPDATE && !a->in->upsert) || (a->in->kind == K_DELETE && a->must_exist))
    exists = true;
  if (snapshot && a->needs_old) {
    if (!a->old_found && !exists)
      absent = true;
    else if (a->old_found && !absent)
      exists = true;
  }
  const struct tt_orm_write_cond w = {.absent = absent,
                                      .exists = exists,
                                      .expected = a->in->expected,
                                      .condition = a->in->condition,
                                      .field = a->in->field};
  if (tt_orm_write_condition(a->m, b, &w, c, err) != 0)
    return -1;
  if (snapshot && a->needs_old && a->old_found) {
    for (size_t i = 0; i < a->m->n_attrs; i++) {
      const struct tt_model_attr *u = &a->m->attrs[i];
      if (!u->unique)
        continue;
      const struct tt_av *ov = tt_av_map_get(&a->old, u->name);
      if ((ov && tt_orm_cond_equals(b, c, u->name, ov, u->name, err) != 0) ||
          (!ov && tt_orm_cond_exists(b, c, u->name, false, err) != 0))
        return -1;
    }
  }
  return 0;
}

struct tt_ddb_txn_step *txn_plan_add(struct txn_plan *plan, enum tt_ddb_txn_kind kind,
                                     const char *table, struct txn_own **own) {
  size_t n = plan->req.n_steps;
  if (n == plan->cap) {
    size_t cap = plan->cap ? 2 * plan->cap : 8;
    struct tt_ddb_txn_step *s = realloc(plan->steps, cap * sizeof(*s));
    if (s == NULL)
      return NULL;
    plan->steps = s;
    struct txn_own *o = realloc(plan->own, cap * sizeof(*o));
    if (o == NULL)
      return NULL;
    plan->own = o;
    plan->cap = cap;
  }
  struct tt_ddb_txn_step *s = &plan->steps[n];
  memset(s, 0, sizeof(*s));
  memset(&plan->own[n], 0, sizeof(plan->own[n]));
  s->kind = kind;
  s->r.table = table;
  *own = &plan->own[n];
  plan->req.steps = plan->steps;
  plan->req.n_steps = n + 1;
  return s;
}

void txn_plan_free(struct txn_plan *plan) {
  for (size_t i = 0; i < plan->req.n_steps; i++) {
    struct txn_own *o = &plan->own[i];
    free(o->condition);
    free(o->update);
    free(o->projection);
    tt_av_free(&o->names);
    tt_av_free(&o->values);
  }
  free(plan->steps);
  free(plan->own);
  memset(plan, 0, sizeof(*plan));
}

static int build_main(struct tt_orm_txn_state *st, struct action *a, bool snapshot,
                      struct tt_error *err) {
  static const enum tt_ddb_txn_kind kinds[] = {
      [K_CREATE] = TT_DDB_TXN_PUT,    [K_PUT] = TT_DDB_TXN_PUT,
      [K_UPDATE] = TT_DDB_TXN_UPDATE, [K_DELETE] = TT_DDB_TXN_DELETE,
      [K_CHECK] = TT_DDB_TXN_CONDITION_CHECK, [K_GET] = TT_DDB_TXN_GET};
  struct txn_own *own;
  struct tt_ddb_txn_step *s = txn_plan_add(&st->plan, kinds[a->in->kind], a->m->table, &own);
  struct tt_expr_builder *b = tt_expr_builder_new();
  struct tt_buf c;
  tt_buf_init(&c, 0);
  int rc = -1;
  if (b == NULL || s == NULL) {
    tt_orm_oom(err);
    goto done;
  }
  if (s->kind == TT_DDB_TXN_PUT)
    s->r.item = &a->in->item;
  else
    s->r.key = &a->in->key;
  if (a->in->kind == K_UPDATE &&
      tt_orm_update_expression(a->m, b, &a->in->upd, a->in->upsert, st->now, a->in->field,
                               &own->update, err) != 0)
    goto done;
  s->r.update = own->update;
  if (a->in->kind == K_GET && a->in->select.n) {
    char f[160];
    subfield(a, "select", f, sizeof(f));
    if (tt_expr_build_projection(b, &a->in->select, f, &own->projection, err) != 0)
      goto done;
    s->r.projection = own->projection;
  }
  if (a->in->kind != K_GET) {
    if (build_condition(a, b, &c, snapshot, err) != 0)
      goto done;
    if (c.len) {
      s->r.condition = own->condition = tt_buf_steal(&c, NULL);
      s->r.old_on_condition_failure = true;
    }
  }
  if (tt_orm_take_placeholders(b, &own->names, &own->values, &s->r.names, &s->r.values, err) !=
      0)
    goto done;
  rc = 0;
done:
  tt_buf_free(&c);
  tt_expr_builder_free(b);
  return rc;
}

/* Appends the steps of an action's guards. */
static int build_guards(struct tt_orm_txn_state *st, struct action *a, struct tt_error *err) {
  for (size_t g = 0; g < a->n_guards; g++) {
    struct tt_unique_guard *u = &a->guards[g];
    struct txn_own *own;
    struct tt_ddb_txn_step *s = txn_plan_add(
        &st->plan, u->claim ? TT_DDB_TXN_PUT : TT_DDB_TXN_DELETE, a->m->table, &own);
    if (s == NULL)
      return tt_orm_oom(err);
    if (!u->claim) {
      s->r.key = &u->item;
      continue;
    }
    s->r.item = &u->item;
    s->r.condition = TT_UNIQUE_CLAIM_CONDITION;
    s->r.names = &u->names;
    s->r.values = &u->values;
  }
  return 0;
}

/* Whether two steps act on one item: the table and the key attributes of
 * `m` (of the key, or of a Put's item). */
static bool same_target(const struct tt_ddb_txn_step *x, const struct tt_ddb_txn_step *y,
                        const struct tt_model *m) {
  if (strcmp(x->r.table, y->r.table) != 0)
    return false;
  const struct tt_av *kx = x->r.item ? x->r.item : x->r.key;
  const struct tt_av *ky = y->r.item ? y->r.item : y->r.key;
  for (int k = 0; k < 2; k++) {
    const struct tt_model_attr *attr = k == 0 ? m->pk : m->sk;
    if (attr == NULL)
      continue;
    const struct tt_av *vx = tt_av_map_get(kx, attr->name), *vy = tt_av_map_get(ky, attr->name);
    if ((vx == NULL) != (vy == NULL) || (vx && !tt_av_equal(vx, vy)))
      return false;
  }
  return true;
}

/* Which action (and which guard of it) step `at` is. */
static struct action *owner_of(struct tt_orm_txn_state *st, size_t at,
                               const struct tt_unique_guard **guard) {
  *guard = NULL;
  for (size_t i = 0; i < st->n; i++) {
    struct action *a = &st->acts[i];
    if (a->main_at == at)
      return a;
    if (at >= a->guard_at && at < a->guard_at + a->n_guards) {
      *guard = &a->guards[at - a->guard_at];
      return a;
    }
  }
  return NULL;
}

/* Two actions on one item. Items of the caller were compared before; what
 * is left are guard items: two claims of one value are a duplicate; a claim
 * and a release of one value (a swap) cannot run in one transaction. */
static int check_targets(struct tt_orm_txn_state *st, struct tt_error *err) {
  const struct tt_ddb_txn_request *r = &st->plan.req;
  for (size_t i = 0; i < r->n_steps; i++) {
    const struct tt_unique_guard *g;
    struct action *a = owner_of(st, i, &g);
    if (a == NULL)
      return tt_orm_oom(err);
    for (size_t j = 0; j < i; j++) {
      if (!same_target(&r->steps[i], &r->steps[j], a->m))
        continue;
      const struct tt_unique_guard *h;
      struct action *b = owner_of(st, j, &h);
      char f[160];
      if (g && h && g->claim && h->claim) {
        subfield(a, g->attr->name, f, sizeof(f));
        return tt_error_set(err, TT_ERR_CONDITION_FAILED, f,
                            "%s%sclaims the same value of unique attribute %s as %s", a->in->field,
                            a->in->field[0] ? " " : "", g->attr->name,
                            b->in->field[0] ? b->in->field : "another item");
      }
      if (g || h) {
        const struct tt_unique_guard *x = g ? g : h;
        subfield(a, x->attr->name, f, sizeof(f));
        return tt_error_set(err, TT_ERR_VALIDATION, f,
                            "%s and %s move the same value of unique attribute %s; split them "
                            "into two transactions",
                            a->in->field[0] ? a->in->field : "the item",
                            b->in->field[0] ? b->in->field : "the item", x->attr->name);
      }
      return tt_error_set(err, TT_ERR_VALIDATION, a->in->field[0] ? a->in->field : "key",
                          "%s and %s name the same item; a transaction may act on each item "
                          "once",
                          a->in->field, b->in->field);
    }
  }
  return 0;
}

int txn_build_request(struct tt_orm_txn_state *st, bool snapshot, struct tt_error *err) {
  size_t bytes = 0;
  txn_plan_free(&st->plan);
  for (size_t i = 0; i < st->n; i++) {
    struct action *a = &st->acts[i];
    for (size_t g = 0; g < a->n_guards; g++)
      tt_unique_guard_free(&a->guards[g]);
    a->main_at = st->plan.req.n_steps;
    a->guard_at = a->main_at + 1;
    a->n_guards = 0;
    if (build_main(st, a, snapshot, err) != 0)
      goto fail;
    bool whole = a->in->kind == K_CREATE || a->in->kind == K_PUT;
    bytes += tt_av_item_size(whole ? &a->in->item : &a->in->key);
    bool guarded = a->unique && a->in->kind != K_CHECK && a->in->kind != K_GET &&
                   (a->in->kind != K_UPDATE || a->touches_unique);
    if (!guarded)
      continue;
    const struct tt_av *old = snapshot && a->old_found ? &a->old : NULL;
    const struct tt_av *neu = whole ? &a->in->item : a->in->kind == K_UPDATE ? &a->newvals : NULL;
    if (a->in->kind == K_UPDATE && compute_newvals(a, old, err) != 0)
      goto fail;
    struct tt_error gerr;
    if (tt_unique_guard_actions(a->m, &a->in->key, old, neu, a->guards, &a->n_guards, &gerr) != 0) {
      *err = gerr;
      if (gerr.code == TT_ERR_VALIDATION && a->in->field[0]) {
        subfield(a, gerr.field, err->field, sizeof(err->field));
      }
      goto fail;
    }
    if (build_guards(st, a, err) != 0)
      goto fail;
  }
  size_t n = st->plan.req.n_steps;
  if (n > TT_ORM_TXN_MAX_ITEMS) {
    tt_error_set(err, TT_ERR_VALIDATION, "items",
                 "the transaction needs %zu DynamoDB actions (items plus the guard items of "
                 "unique attributes); DynamoDB allows %d",
                 n, TT_ORM_TXN_MAX_ITEMS);
    goto fail;
  }
  if (bytes > TT_ORM_TXN_MAX_BYTES) {
    tt_error_set(err, TT_ERR_VALIDATION, "items",
                 "the items of a transaction may hold at most 4 MB together");
    goto fail;
  }
  if (!st->get && check_targets(st, err) != 0)
    goto fail;
  st->plan.req.client_token = st->op && !st->get ? st->op->client_token : NULL;
  return 0;
fail:
  txn_plan_free(&st->plan);
  return -1;
}
