/* SPDX-License-Identifier: Apache-2.0 */
/* cond.c -- REST conditions and key conditions to their typed forms. */
#include "orm/cond.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value/codec_logical.h"
#include "value/json_exact.h"

#define MAX_DEPTH 32      /* nesting of and/or/not */
#define MAX_IN_VALUES 100 /* DynamoDB's IN limit */

static int oom(struct tt_error *err) {
  return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory while reading a condition");
}

static const char *str_of(const json_t *j) {
  size_t len;
  const char *s = j ? tt_json_string_text(j, &len) : NULL;
  return (s && strlen(s) == len) ? s : NULL;
}

/* Types `value`, compared with attribute path `attr`, as the model
 * declares that attribute: a set's member for a non-array value
 * (contains), a key only ever its declared type, anything else inferred
 * when the declared type does not take it (DynamoDB then compares false). */
static int encode(const struct tt_model *m, const char *attr, const json_t *value,
                  struct tt_av *out, struct tt_error *err) {
  const char *name;
  size_t n;
  bool whole = attr[tt_expr_rest_path_head(attr, &name, &n)] == '\0';
  const struct tt_model_attr *a = tt_model_attr_find(m, name, n);
  if (a && whole) {
    enum tt_av_type t = a->type;
    if (!json_is_array(value))
      t = t == TT_AV_SS ? TT_AV_S : t == TT_AV_NS ? TT_AV_N : t == TT_AV_BS ? TT_AV_B : t;
    unsigned flags = (a->json ? TT_LOGICAL_JSON : 0) |
                     (a->format == TT_FORMAT_DECIMAL_STRING ? TT_LOGICAL_N_STRING : 0);
    if (tt_logical_to_av(value, t, flags, attr, out, err) == 0)
      return 0;
    bool key = a == m->pk || a == m->sk; /* of the table or of an index */
    for (size_t i = 0; i < m->n_indexes && !key; i++)
      key = a == m->indexes[i].partition || a == m->indexes[i].sort;
    if (key)
      return -1;
  }
  return tt_logical_to_av(value, TT_LOGICAL_INFER, 0, attr, out, err);
}

/* Types value into *out; an error names `vfield`, the value's JSON path. */
static int value_at(const struct tt_model *m, const char *attr, const json_t *value,
                    const char *vfield, struct tt_av *out, struct tt_error *err) {
  if (encode(m, attr, value, out, err) == 0)
    return 0;
  tt_av_free(out);
  tt_utf8_copy(err->field, sizeof(err->field), vfield);
  return -1;
}

/* A size() operand: a JSON number, kept exact. */
static int number_at(const json_t *j, const char *vfield, struct tt_av *out,
                     struct tt_error *err) {
  struct tt_json_numbuf nb;
  size_t len;
  const char *text = j ? tt_json_number_text(j, &nb, &len) : NULL;
  if (text == NULL)
    return tt_error_set(err, TT_ERR_VALIDATION, vfield, "%s: size compares with a number",
                        vfield);
  return tt_av_number_text(out, text, len, vfield, err);
}

/* Room for n values in c (zeroed). */
static int values_new(struct tt_cond *c, size_t n, struct tt_error *err) {
  if ((c->values = calloc(n, sizeof(*c->values))) == NULL)
    return oom(err);
  c->n_values = n;
  return 0;
}

/* The n values of array `value` (or `value` itself when !many), typed, or
 * numbers for size(). */
static int values_of(const struct tt_model *m, struct tt_cond *c, const json_t *value, bool many,
                     const char *vf, struct tt_error *err) {
  size_t n = many ? json_array_size(value) : 1;
  if (values_new(c, n, err) != 0)
    return -1;
  for (size_t i = 0; i < n; i++) {
    char vfi[128];
    const json_t *v = many ? json_array_get(value, i) : value;
    if (many)
      tt_expr_field_index(vfi, sizeof(vfi), vf, i);
    const char *at = many ? vfi : vf;
    if (c->size ? number_at(v, at, &c->values[i], err) != 0
                : value_at(m, c->path, v, at, &c->values[i], err) != 0)
      return -1;
  }
  return 0;
}

static enum tt_cond_op op_parse(const char *op) {
  for (int k = TT_COND_EQ; k <= TT_COND_TYPE; k++)
    if (strcmp(op, tt_cond_op_name((enum tt_cond_op)k)) == 0)
      return (enum tt_cond_op)k;
  return 0;
}

static int parse_leaf(const struct tt_model *m, const json_t *j, const char *field,
                      struct tt_cond *c, struct tt_error *err) {
  char f[128], vf[128];
  const json_t *jop = json_object_get(j, "op"), *jsize = json_object_get(j, "size");
  const json_t *value = json_object_get(j, "value");
  const char *attr = str_of(json_object_get(j, "attr"));
  c->kind = TT_COND_CMP;
  tt_expr_field_key(vf, sizeof(vf), field, "value");
  tt_expr_field_key(f, sizeof(f), field, "attr");
  if (attr == NULL)
    return tt_error_set(err, TT_ERR_VALIDATION, f, "%s: must be an attribute path string", f);
  if (!tt_expr_rest_path_valid(attr))
    return tt_expr_bad_path(f, err);
  if ((jop != NULL) == (jsize != NULL)) {
    tt_expr_field_key(f, sizeof(f), field, "op");
    return tt_error_set(err, TT_ERR_VALIDATION, f, "%s: give exactly one of \"op\" or \"size\"",
                        f);
  }
  tt_expr_field_key(f, sizeof(f), field, jop ? "op" : "size");
  const char *name = str_of(jop ? jop : jsize);
  if (name == NULL)
    return tt_error_set(err, TT_ERR_VALIDATION, f, "%s: must be a string", f);
  if ((c->path = strdup(attr)) == NULL)
    return oom(err);
  c->op = op_parse(name);
  c->size = jsize != NULL;
  if (c->size) {
    if (c->op < TT_COND_EQ || c->op > TT_COND_BETWEEN)
      return tt_error_set(err, TT_ERR_VALIDATION, f,
                          "%s: size takes one of =, <>, <, <=, >, >=, between", f);
  } else if (c->op == TT_COND_EXISTS || c->op == TT_COND_NOT_EXISTS) {
    return 0;
  } else if (c->op == 0) {
    return tt_error_set(err, TT_ERR_VALIDATION, f,
                        "%s: unknown operator; use one of =, <>, <, <=, >, >=, between, in, "
                        "begins_with, contains, not_contains, exists, not_exists, type",
                        f);
  } else if (value == NULL) {
    return tt_error_set(err, TT_ERR_VALIDATION, vf, "%s: is required for operator %s", vf, name);
  }
  if (c->op == TT_COND_BETWEEN && (!json_is_array(value) || json_array_size(value) != 2))
    return tt_error_set(err, TT_ERR_VALIDATION, vf, "%s: between takes [low, high]", vf);
  if (c->op == TT_COND_IN &&
      (!json_is_array(value) || json_array_size(value) == 0 ||
       json_array_size(value) > MAX_IN_VALUES))
    return tt_error_set(err, TT_ERR_VALIDATION, vf, "%s: in takes an array of 1 to %d values",
                        vf, MAX_IN_VALUES);
  if (c->op == TT_COND_TYPE) {
    const char *t = str_of(value);
    if (t == NULL || tt_av_type_parse(t, strlen(t)) == 0)
      return tt_error_set(err, TT_ERR_VALIDATION, vf,
                          "%s: type takes one of S, N, B, BOOL, NULL, SS, NS, BS, M, L", vf);
    return values_new(c, 1, err) || tt_av_string(&c->values[0], t, strlen(t)) ? oom(err) : 0;
  }
  return values_of(m, c, value, c->op == TT_COND_BETWEEN || c->op == TT_COND_IN, vf, err);
}

static int parse_cond(const struct tt_model *m, const json_t *j, const char *field, int depth,
                      struct tt_cond *c, struct tt_error *err);

/* The members of an and/or list (or a bare array: `list`). */
static int parse_list(const struct tt_model *m, const json_t *arr, const char *field, int depth,
                      struct tt_cond *c, struct tt_error *err) {
  size_t n = json_array_size(arr);
  if (n == 0)
    return tt_error_set(err, TT_ERR_VALIDATION, field, "%s: must not be empty", field);
  if ((c->kids = calloc(n, sizeof(*c->kids))) == NULL)
    return oom(err);
  c->n_kids = n;
  for (size_t i = 0; i < n; i++) {
    char f[128];
    tt_expr_field_index(f, sizeof(f), field, i);
    if (parse_cond(m, json_array_get(arr, i), f, depth + 1, &c->kids[i], err) != 0)
      return -1;
  }
  return 0;
}

static int parse_cond(const struct tt_model *m, const json_t *j, const char *field, int depth,
                      struct tt_cond *c, struct tt_error *err) {
  char f[128];
  if (depth > MAX_DEPTH)
    return tt_error_set(err, TT_ERR_VALIDATION, field, "%s: conditions nest at most %d levels",
                        field, MAX_DEPTH);
  if (json_is_array(j)) {
    c->kind = TT_COND_AND;
    c->list = true;
    return parse_list(m, j, field, depth, c, err);
  }
  if (!json_is_object(j))
    return tt_error_set(err, TT_ERR_VALIDATION, field, "%s: must be a condition object or array",
                        field);
  const json_t *jand = json_object_get(j, "and"), *jor = json_object_get(j, "or"),
               *jnot = json_object_get(j, "not"), *jattr = json_object_get(j, "attr");
  if ((jand != NULL) + (jor != NULL) + (jnot != NULL) + (jattr != NULL) != 1)
    return tt_error_set(err, TT_ERR_VALIDATION, field,
                        "%s: give exactly one of \"attr\", \"and\", \"or\", \"not\"", field);
  if (jattr)
    return parse_leaf(m, j, field, c, err);
  if (jnot) {
    tt_expr_field_key(f, sizeof(f), field, "not");
    c->kind = TT_COND_NOT;
    if ((c->kids = calloc(1, sizeof(*c->kids))) == NULL)
      return oom(err);
    c->n_kids = 1;
    return parse_cond(m, jnot, f, depth + 1, c->kids, err);
  }
  tt_expr_field_key(f, sizeof(f), field, jand ? "and" : "or");
  c->kind = jand ? TT_COND_AND : TT_COND_OR;
  if (!json_is_array(jand ? jand : jor))
    return tt_error_set(err, TT_ERR_VALIDATION, f, "%s: must be an array of conditions", f);
  return parse_list(m, jand ? jand : jor, f, depth, c, err);
}

int tt_orm_cond_from_json(const struct tt_model *m, const json_t *j, const char *field,
                          struct tt_cond **out, struct tt_error *err) {
  *out = NULL;
  if (j == NULL || json_is_null(j))
    return 0;
  struct tt_cond *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return oom(err);
  if (parse_cond(m, j, field ? field : "", 0, c, err) != 0) {
    tt_cond_free(c);
    return -1;
  }
  *out = c;
  return 0;
}

/* Every "attr" string of the tree j, as a comparison without operator
 * under c. */
static int gather_attrs(const json_t *j, struct tt_cond *c) {
  static const char *const subs[] = {"and", "or", "not"};
  size_t i;
  json_t *x;
  json_array_foreach(j, i, x) {
    if (gather_attrs(x, c) != 0)
      return -1;
  }
  if (!json_is_object(j))
    return 0;
  const char *attr = json_string_value(json_object_get(j, "attr"));
  if (attr) {
    struct tt_cond *kids = realloc(c->kids, (c->n_kids + 1) * sizeof(*kids));
    if (kids == NULL)
      return -1;
    c->kids = kids;
    kids[c->n_kids] = (struct tt_cond){.kind = TT_COND_CMP, .path = strdup(attr)};
    if (kids[c->n_kids++].path == NULL)
      return -1;
  }
  for (size_t k = 0; k < 3; k++)
    if (gather_attrs(json_object_get(j, subs[k]), c) != 0)
      return -1;
  return 0;
}

struct tt_cond *tt_orm_cond_names(const json_t *j) {
  struct tt_cond *c = calloc(1, sizeof(*c));
  if (c == NULL || gather_attrs(j, c) != 0) {
    tt_cond_free(c);
    return NULL;
  }
  c->kind = TT_COND_ERROR;
  return c;
}

int tt_orm_cond_read(const struct tt_model *m, const json_t *j, const char *field,
                     struct tt_cond **out, struct tt_error *err) {
  if (tt_orm_cond_from_json(m, j, field, out, err) == 0)
    return 0;
  struct tt_cond *c = *out = tt_orm_cond_names(j);
  if (c == NULL || (c->error = malloc(sizeof(*c->error))) == NULL) {
    tt_cond_free(c);
    *out = NULL;
    return oom(err);
  }
  *c->error = *err;
  return 0;
}

/* ---- key conditions ------------------------------------------------------ */

int tt_orm_key_cond_shape(const json_t *j, struct tt_key_cond *out, struct tt_error *err) {
  size_t n = json_array_size(j);
  memset(out, 0, sizeof(*out));
  if (!json_is_array(j) || n < 1 || n > 2)
    return tt_error_set(err, TT_ERR_VALIDATION, "key",
                        "key must list the partition-key equality and at most one sort-key "
                        "condition");
  for (size_t i = 0; i < n; i++) {
    const json_t *e = json_array_get(j, i);
    const char *attr = json_string_value(json_object_get(e, "attr"));
    if (!json_is_object(e) || attr == NULL) {
      tt_key_cond_clear(out);
      return tt_error_set(err, TT_ERR_VALIDATION, "key", "each key condition needs attr and op");
    }
    const char *op = json_string_value(json_object_get(e, "op"));
    out->e[i].op = op && strcmp(op, "=") == 0 ? TT_COND_EQ : 0;
    if ((out->e[i].attr = strdup(attr)) == NULL) {
      tt_key_cond_clear(out);
      return oom(err);
    }
    out->n = i + 1;
  }
  return 0;
}

static int key_entry(const struct tt_model *m, const json_t *c, size_t i, struct tt_key_cond *k,
                     bool *has_eq, struct tt_error *err) {
  char f[128], af[128], of[128], vf[128], vfi[128];
  struct tt_key_cond_entry *e = &k->e[i];
  tt_expr_field_index(f, sizeof(f), "key", i);
  tt_expr_field_key(af, sizeof(af), f, "attr");
  tt_expr_field_key(of, sizeof(of), f, "op");
  tt_expr_field_key(vf, sizeof(vf), f, "value");
  const char *attr = str_of(json_object_get(c, "attr"));
  const char *op = str_of(json_object_get(c, "op"));
  const json_t *value = json_object_get(c, "value");
  if (attr == NULL || *attr == '\0')
    return tt_error_set(err, TT_ERR_VALIDATION, af, "%s: must be a key attribute name", af);
  if (i == 1 && strcmp(k->e[0].attr, attr) == 0)
    return tt_error_set(err, TT_ERR_VALIDATION, af, "%s: one condition per key attribute", af);
  e->op = op ? op_parse(op) : 0;
  if (e->op == 0 || e->op == TT_COND_NE || e->op > TT_COND_BEGINS_WITH || e->op == TT_COND_IN)
    return tt_error_set(err, TT_ERR_VALIDATION, of,
                        "%s: key conditions take =, <, <=, >, >=, between or begins_with", of);
  *has_eq = *has_eq || e->op == TT_COND_EQ;
  if (value == NULL)
    return tt_error_set(err, TT_ERR_VALIDATION, vf, "%s: is required", vf);
  if (e->op != TT_COND_BETWEEN)
    return value_at(m, attr, value, vf, &e->v[0], err);
  if (!json_is_array(value) || json_array_size(value) != 2)
    return tt_error_set(err, TT_ERR_VALIDATION, vf, "%s: between takes [low, high]", vf);
  for (size_t x = 0; x < 2; x++) {
    tt_expr_field_index(vfi, sizeof(vfi), vf, x);
    if (value_at(m, attr, json_array_get(value, x), vfi, &e->v[x], err) != 0)
      return -1;
  }
  return 0;
}

int tt_orm_key_cond_type(const struct tt_model *m, const json_t *j, struct tt_key_cond *out,
                         struct tt_error *err) {
  bool has_eq = false;
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < out->n; i++)
    rc = key_entry(m, json_array_get(j, i), i, out, &has_eq, err);
  if (rc == 0 && !has_eq)
    rc = tt_error_set(err, TT_ERR_VALIDATION, "key",
                      "key: needs an \"=\" condition on the partition key");
  if (rc != 0 && (out->error = malloc(sizeof(*out->error))) != NULL)
    *out->error = *err;
  else if (rc != 0)
    tt_key_cond_clear(out);
  return rc;
}
