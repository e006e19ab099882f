/* SPDX-License-Identifier: Apache-2.0 */
/* unique.c -- guard items of unique attributes: their keys, the actions that
 * claim and release them, and the filter that hides them from queries. */
#include "orm/unique.h"

#include <stdio.h>
#include <string.h>

#include "orm/orm.h"
#include "util/buf.h"
#include "value/base64.h"

/* DynamoDB's limit on a partition-key value. */
#define PK_MAX_BYTES 2048

bool tt_unique_model_has(const struct tt_model *m) {
  return tt_unique_count(m) > 0;
}

size_t tt_unique_count(const struct tt_model *m) {
  size_t n = 0;
  for (size_t i = 0; m && i < m->n_attrs; i++)
    n += m->attrs[i].unique;
  return n;
}

int tt_unique_model_check(const struct tt_model *m, struct tt_error *err) {
  if (!tt_unique_model_has(m))
    return 0;
  if (m->pk->type != TT_AV_S)
    return tt_error_set(err, TT_ERR_VALIDATION, m->pk->name,
                        "model %s has unique attributes, which need a string (S) partition "
                        "key for their guard items",
                        m->name);
  for (size_t i = 0; i < m->n_attrs; i++) {
    const struct tt_model_attr *a = &m->attrs[i];
    if (a->unique && a->type != TT_AV_S && a->type != TT_AV_N && a->type != TT_AV_B)
      return tt_error_set(err, TT_ERR_VALIDATION, a->name,
                          "model %s: unique attribute %s must be of type S, N or B", m->name,
                          a->name);
  }
  return 0;
}

bool tt_unique_key_reserved(const struct tt_model *m, const struct tt_av *key_or_item) {
  if (!tt_unique_model_has(m))
    return false;
  const struct tt_av *pk = tt_av_map_get(key_or_item, m->pk->name);
  size_t n = sizeof(TT_UNIQUE_PREFIX) - 1;
  return pk && pk->type == TT_AV_S && pk->len >= n && memcmp(pk->u.bytes, TT_UNIQUE_PREFIX, n) == 0;
}

bool tt_unique_value_guarded(const struct tt_av *v) {
  if (v == NULL)
    return false;
  switch (v->type) {
  case TT_AV_S:
  case TT_AV_B:
    return v->len > 0;
  case TT_AV_N:
    return true;
  default:
    return false;
  }
}

/* Adds member `name` = *v (stolen) to the M being built. */
static int put_member(struct tt_av *map, const char *name, struct tt_av *v) {
  if (tt_av_map_put(map, name, strlen(name), v) != 0) {
    tt_av_free(v);
    return -1;
  }
  return 0;
}

int tt_unique_guard_key(const struct tt_model *m, const struct tt_model_attr *a,
                        const struct tt_av *v, struct tt_av *out, struct tt_error *err) {
  struct tt_buf pk;
  struct tt_av pkv = {.type = TT_AV_NULL}, skv = {.type = TT_AV_NULL};
  tt_buf_init(&pk, 0);
  tt_av_null(out);
  int rc = -1;
  if (tt_buf_printf(&pk, "%s%s#%s#", TT_UNIQUE_PREFIX, m->name, a->name) != 0)
    goto oom;
  if (v->type == TT_AV_B) {
    if (tt_base64_encode(&pk, v->u.bytes, v->len, TT_BASE64_STD) != 0)
      goto oom;
  } else if (tt_buf_append(&pk, v->u.bytes, v->len) != 0) {
    goto oom;
  }
  if (pk.len > PK_MAX_BYTES) {
    tt_error_set(err, TT_ERR_VALIDATION, a->name,
                 "the value of unique attribute %s is too long to be kept unique (its guard "
                 "key would pass DynamoDB's 2048-byte partition-key limit)",
                 a->name);
    goto done;
  }
  if (tt_av_map(out, 0) != 0 || tt_av_string(&pkv, pk.data, pk.len) != 0 ||
      put_member(out, m->pk->name, &pkv) != 0)
    goto oom;
  if (m->sk) {
    int src = m->sk->type == TT_AV_N   ? tt_av_number_int(&skv, 0)
              : m->sk->type == TT_AV_B ? tt_av_binary(&skv, "UNIQUE", 6)
                                       : tt_av_string(&skv, "UNIQUE", 6);
    if (src != 0 || put_member(out, m->sk->name, &skv) != 0)
      goto oom;
  }
  rc = 0;
  goto done;
oom:
  tt_orm_oom(err);
done:
  if (rc != 0)
    tt_av_free(out);
  tt_buf_free(&pk);
  return rc;
}

void tt_unique_guard_free(struct tt_unique_guard *g) {
  tt_av_free(&g->item);
  tt_av_free(&g->names);
  tt_av_free(&g->values);
}

/* A string member `name` = text of the M being built. */
static int put_text(struct tt_av *map, const char *name, const char *text) {
  struct tt_av v;
  return tt_av_string(&v, text, strlen(text)) != 0 ? -1 : put_member(map, name, &v);
}

/* The claim of the guard keyed `g->item`: the marker and the owner key
 * added to it, and the maps of TT_UNIQUE_CLAIM_CONDITION. */
static int claim_action(const struct tt_model *m, const struct tt_model_attr *a,
                        struct tt_unique_guard *g, const struct tt_av *owner_key) {
  char marker[512];
  snprintf(marker, sizeof(marker), "%s#%s", m->name, a->name);
  if (put_text(&g->item, TT_UNIQUE_MARKER_ATTR, marker) != 0 ||
      tt_orm_map_put_copy(&g->item, TT_UNIQUE_OWNER_ATTR, strlen(TT_UNIQUE_OWNER_ATTR),
                          owner_key) != 0 ||
      tt_av_map(&g->names, 0) != 0 || put_text(&g->names, "#p", m->pk->name) != 0 ||
      put_text(&g->names, "#o", TT_UNIQUE_OWNER_ATTR) != 0 || tt_av_map(&g->values, 0) != 0)
    return -1;
  return tt_orm_map_put_copy(&g->values, ":o", 2, owner_key);
}

int tt_unique_guard_actions(const struct tt_model *m, const struct tt_av *owner_key,
                            const struct tt_av *old_item, const struct tt_av *new_item,
                            struct tt_unique_guard *guards, size_t *n_guards,
                            struct tt_error *err) {
  for (size_t i = 0; i < m->n_attrs; i++) {
    const struct tt_model_attr *a = &m->attrs[i];
    if (!a->unique)
      continue;
    const struct tt_av *ov = old_item ? tt_av_map_get(old_item, a->name) : NULL;
    const struct tt_av *nv = new_item ? tt_av_map_get(new_item, a->name) : NULL;
    bool og = tt_unique_value_guarded(ov), ng = tt_unique_value_guarded(nv);
    if (og && ng && tt_av_equal(ov, nv))
      continue;
    for (int step = 0; step < 2; step++) {
      const struct tt_av *v = step == 0 ? ov : nv;
      if (!(step == 0 ? og : ng))
        continue;
      struct tt_unique_guard *g = &guards[*n_guards];
      memset(g, 0, sizeof(*g));
      g->attr = a;
      g->claim = step == 1;
      if (tt_unique_guard_key(m, a, v, &g->item, err) != 0)
        return -1;
      (*n_guards)++;
      if (g->claim && claim_action(m, a, g, owner_key) != 0)
        return tt_orm_oom(err);
    }
  }
  return 0;
}

bool tt_unique_query_filter(const struct tt_model *m, struct tt_cond *out) {
  if (!tt_unique_model_has(m))
    return false;
  *out = (struct tt_cond){.kind = TT_COND_CMP, .path = (char *)TT_UNIQUE_MARKER_ATTR,
                          .op = TT_COND_NOT_EXISTS};
  return true;
}
