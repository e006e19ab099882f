/* SPDX-License-Identifier: Apache-2.0 */
/* ops_item.c -- GetItem, PutItem, UpdateItem, DeleteItem, and the prepared
 * write that batches and transactions reuse. */
#include <stdlib.h>
#include <string.h>

#include "backend/memory/internal.h"
#include "backend/memory/wal.h"
#include "value/codec_ddb.h"

void memdb_wr_free(struct memdb_wr *w) {
  memdb_exprs_free(&w->x);
  tt_av_free(&w->old);
  tt_av_free(&w->next);
  w->item = NULL;
}

/* A write without its Item (PutItem) or Key (the others). */
static int member_null(enum memdb_wr_kind kind, struct tt_backend_error *e) {
  return memdb_validation(e, "1 validation error detected: Value null at '%s' failed to "
                             "satisfy constraint: Member must not be null",
                          kind == MEMDB_WR_PUT ? "item" : "key");
}

/* Calls fn on each index key attribute of t in DynamoDB's order (global
 * indexes, then the sort keys of local ones) until it returns nonzero. */
static int each_index_key(const struct memdb_table *t,
                          int (*fn)(const struct memdb_index *, const struct memdb_keydef *,
                                    const struct tt_expr *, const struct tt_av *,
                                    struct tt_backend_error *),
                          const struct tt_expr *u, const struct tt_av *item,
                          struct tt_backend_error *e) {
  for (int global = 1; global >= 0; global--)
    for (size_t x = 0; x < t->nidx; x++) {
      const struct memdb_index *ix = &t->idx[x];
      if (ix->global != (global == 1))
        continue;
      if (ix->global && fn(ix, &ix->pk, u, item, e) != 0)
        return -1;
      if (ix->sk.name && fn(ix, &ix->sk, u, item, e) != 0)
        return -1;
    }
  return 0;
}

/* An update whose text gives an index key attribute a value of another
 * type is refused before the item is read, as DynamoDB does. */
static int static_type_check(const struct memdb_index *ix, const struct memdb_keydef *k,
                             const struct tt_expr *u, const struct tt_av *item,
                             struct tt_backend_error *e) {
  (void)item;
  int type = tt_expr_update_static_type(u, k->name);
  if (type == 0 || type == (int)k->type)
    return 0;
  return memdb_validation(e, "One or more parameter values were invalid: Type mismatch for "
                             "Index Key %s Expected: %s Actual: %s IndexName: %s",
                          k->name, tt_av_type_name(k->type),
                          tt_av_type_name((enum tt_av_type)type), ix->name);
}

/* A SET of an index key attribute whose value, read from the item, has
 * another type than the index's. */
static int set_type_check(const struct memdb_index *ix, const struct memdb_keydef *k,
                          const struct tt_expr *u, const struct tt_av *item,
                          struct tt_backend_error *e) {
  (void)ix;
  if (!tt_expr_update_sets(u, k->name))
    return 0;
  const struct tt_av *v = tt_av_map_get(item, k->name);
  if (v == NULL || v->type == k->type)
    return 0;
  return memdb_validation(e, "The update expression attempted to update the secondary index "
                             "key to unsupported type");
}

/* The checks and parsing of a write whose placeholder maps are in w->x. */
static int wr_setup(struct memdb *m, enum memdb_wr_kind kind, const struct tt_ddb_item_request *r,
                    struct memdb_wr *w, struct tt_backend_error *e) {
  w->kind = kind;
  w->item = kind == MEMDB_WR_PUT ? r->item : r->key;
  if (w->item == NULL)
    return member_null(kind, e);
  w->all_old_on_fail = r->old_on_condition_failure;
  if (kind == MEMDB_WR_UPDATE &&
      memdb_exprs_parse_text(&w->x, r->update, TT_EXPR_UPDATE, &w->update, e) != 0)
    return -1;
  if (memdb_exprs_parse_text(&w->x, r->condition, TT_EXPR_CONDITION, &w->cond, e) != 0)
    return -1;
  if (kind == MEMDB_WR_CHECK && w->cond == NULL)
    return memdb_validation(e, "1 validation error detected: Value null at "
                               "'conditionExpression' failed to satisfy constraint: Member "
                               "must not be null");
  if (memdb_exprs_finish(&w->x, e) != 0 || memdb_req_table_named(m, r->table, &w->t, e) != 0)
    return -1;
  if (kind == MEMDB_WR_PUT ? memdb_item_check(w->t, w->item,
                                               "Item size has exceeded the maximum allowed size",
                                               &w->pk, &w->sk, e) != 0
                            : memdb_key_check(w->t, w->item, &w->pk, &w->sk, e) != 0)
    return -1;
  for (size_t i = 0; w->update && tt_expr_update_target(w->update, i); i++) {
    const char *a = tt_expr_update_target(w->update, i);
    if (strcmp(a, w->t->pk.name) == 0 || (w->t->sk.name && strcmp(a, w->t->sk.name) == 0))
      return memdb_validation(e, "One or more parameter values were invalid: Cannot update "
                                 "attribute %s. This attribute is part of the key",
                              a);
  }
  if (w->update && (each_index_key(w->t, static_type_check, w->update, NULL, e) != 0 ||
                    memdb_key_paths_check(w->t, w->update, e) != 0))
    return -1;
  return 0;
}

int memdb_wr_prepare_typed(struct memdb *m, enum memdb_wr_kind kind,
                           const struct tt_ddb_item_request *r, struct memdb_wr *w,
                           struct tt_backend_error *e) {
  memset(w, 0, sizeof(*w));
  w->m = m;
  if (memdb_exprs_use(&w->x, r->names, r->values, e) != 0 || wr_setup(m, kind, r, w, e) != 0) {
    memdb_wr_free(w);
    return -1;
  }
  return 0;
}

int memdb_wr_eval(struct memdb *m, struct memdb_wr *w, struct tt_backend_error *e) {
  struct tt_error err;
  tt_av_free(&w->old);
  tt_av_free(&w->next);
  w->has_next = false;
  if (memdb_lookup(m, w->t, &w->pk, &w->sk, &w->phys, &w->old, &w->found, e) != 0)
    return -1;
  if (w->cond && !tt_expr_eval_condition(w->cond, w->found ? &w->old : NULL))
    return 1;
  switch (w->kind) {
  case MEMDB_WR_PUT:
    if (tt_av_clone(&w->next, w->item) != 0)
      return memdb_oom(e);
    w->has_next = true;
    break;
  case MEMDB_WR_UPDATE: {
    /* A missing item is updated as if it held just its key (upsert). */
    const struct tt_av *base = w->found ? &w->old : w->item;
    if (w->update) {
      if (tt_expr_apply_update(w->update, base, &w->next, &err) != 0)
        return memdb_fail_tt(e, &err);
    } else if (tt_av_clone(&w->next, base) != 0) {
      return memdb_oom(e);
    }
    w->has_next = true;
    if (each_index_key(w->t, set_type_check, w->update, &w->next, e) != 0)
      return -1;
    if (memdb_item_check(w->t, &w->next,
                         "Item size to update has exceeded the maximum allowed size", NULL, NULL,
                         e) != 0)
      return -1;
    break;
  }
  case MEMDB_WR_DELETE:
  case MEMDB_WR_CHECK:
    break;
  }
  return 0;
}

int memdb_wr_apply(struct memdb_wr *w, struct tt_backend_error *e) {
  if (w->kind == MEMDB_WR_CHECK)
    return 0;
  if (w->kind == MEMDB_WR_DELETE && w->phys == NULL)
    return 0;
  if (memdb_table_write(w->t, w->phys, w->has_next ? &w->next : NULL) != 0)
    return memdb_oom(e);
  w->phys = NULL; /* freed or replaced by the write */
  if (w->m && w->m->wal) /* the image for the data dir's log (wal.c) */
    memdb_wal_note_item(w->m, w->has_next, w->t->name, w->has_next ? &w->next : w->item);
  return 0;
}

/* The parts of `item` that an update expression's paths name. */
static int updated_attrs(const struct tt_expr *u, const struct tt_av *item, struct tt_av *out) {
  struct tt_error err;
  if (u == NULL)
    return tt_av_map(out, 0);
  return tt_expr_apply_projection(u, item, out, &err);
}

/* A prepared PutItem, UpdateItem or DeleteItem: evaluates and applies it,
 * and gives the Attributes its ReturnValues asks for in *attrs (type 0
 * when none). */
static int write_run(struct memdb *m, struct memdb_wr *w, enum tt_ddb_return_values rv,
                     struct tt_av *attrs, struct tt_backend_error *e) {
  memset(attrs, 0, sizeof(*attrs));
  int c = memdb_wr_eval(m, w, e);
  if (c < 0)
    return -1;
  if (c == 1)
    return memdb_condition_failed(e, w->all_old_on_fail && w->found ? &w->old : NULL);
  /* Compute the answer before applying: it reads w->old / w->next. */
  bool old = rv == TT_DDB_RETURN_ALL_OLD || rv == TT_DDB_RETURN_UPDATED_OLD;
  const struct tt_av *from = old ? (w->found ? &w->old : NULL) : &w->next;
  int rc = 0;
  if (rv != TT_DDB_RETURN_NONE && from != NULL)
    rc = rv == TT_DDB_RETURN_ALL_OLD || rv == TT_DDB_RETURN_ALL_NEW
             ? tt_av_clone(attrs, from)
             : updated_attrs(w->update, from, attrs);
  if (rc != 0 || memdb_wr_apply(w, e) != 0) {
    tt_av_free(attrs);
    return memdb_oom(e);
  }
  if (attrs->type == TT_AV_M && attrs->len == 0)
    tt_av_free(attrs); /* DynamoDB omits empty Attributes */
  return 0;
}

/* The ConsumedCapacity of one item read or written, when r asks for it. */
static void item_consumed(const struct tt_ddb_item_request *r, double units) {
  if (r->consumed)
    *r->consumed = (struct tt_ddb_consumed){.set = true, .total = units, .table = units};
}

static int write_typed(struct memdb *m, enum memdb_wr_kind kind,
                       const struct tt_ddb_item_request *r, struct tt_av *attrs,
                       struct tt_backend_error *e) {
  struct memdb_wr w;
  memset(attrs, 0, sizeof(*attrs));
  if ((unsigned)r->return_values > TT_DDB_RETURN_UPDATED_NEW)
    return memdb_validation(e, "1 validation error detected: Value at 'returnValues' failed "
                               "to satisfy constraint: Member must satisfy enum value set: "
                               "[ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]");
  if (kind != MEMDB_WR_UPDATE && r->return_values != TT_DDB_RETURN_NONE &&
      r->return_values != TT_DDB_RETURN_ALL_OLD)
    return memdb_validation(e, "ReturnValues can only be ALL_OLD or NONE");
  if (memdb_wr_prepare_typed(m, kind, r, &w, e) != 0)
    return -1;
  int rc = write_run(m, &w, r->return_values, attrs, e);
  if (rc == 0 && r->consumed)
    item_consumed(r, memdb_capacity_units(w.found ? &w.old : NULL,
                                          w.has_next ? &w.next : NULL, false, true));
  memdb_wr_free(&w);
  return rc;
}

/* GetItem: the visible item of r->key, projected, into *out (type 0 when
 * there is none). */
static int get_typed(struct memdb *m, const struct tt_ddb_item_request *r, struct tt_av *out,
                     struct tt_backend_error *e) {
  struct memdb_exprs x;
  struct tt_expr *proj = NULL;
  struct tt_av item = {0};
  struct memdb_table *t;
  struct memdb_kv pk, sk;
  bool found;
  int rc = -1;
  memset(out, 0, sizeof(*out));
  if (memdb_exprs_use(&x, r->names, r->values, e) != 0)
    return -1;
  if (r->key == NULL) {
    member_null(MEMDB_WR_DELETE, e);
    goto done;
  }
  if (memdb_exprs_parse_text(&x, r->projection, TT_EXPR_PROJECTION, &proj, e) != 0 ||
      memdb_exprs_finish(&x, e) != 0 || memdb_req_table_named(m, r->table, &t, e) != 0 ||
      memdb_key_check(t, r->key, &pk, &sk, e) != 0 || memdb_key_paths_check(t, proj, e) != 0 ||
      memdb_lookup(m, t, &pk, &sk, NULL, &item, &found, e) != 0)
    goto done;
  if (r->consumed)
    item_consumed(r, memdb_capacity_units(found ? &item : NULL, NULL, true, r->consistent_read));
  if (found && memdb_project_item(proj, &item, out, e) != 0)
    goto done;
  rc = 0;
done:
  tt_av_free(&item);
  memdb_exprs_free(&x);
  return rc;
}

int memdb_op_item(struct memdb *m, enum tt_ddb_op op, const struct tt_ddb_item_request *r,
                  struct tt_av *out, struct tt_backend_error *e) {
  switch (op) {
  case TT_DDB_GET_ITEM:
    return get_typed(m, r, out, e);
  case TT_DDB_PUT_ITEM:
    return write_typed(m, MEMDB_WR_PUT, r, out, e);
  case TT_DDB_UPDATE_ITEM:
    return write_typed(m, MEMDB_WR_UPDATE, r, out, e);
  case TT_DDB_DELETE_ITEM:
    return write_typed(m, MEMDB_WR_DELETE, r, out, e);
  default:
    memset(out, 0, sizeof(*out));
    return memdb_validation(e, "%s is not a typed operation", tt_ddb_op_name(op));
  }
}
