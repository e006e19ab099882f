/* SPDX-License-Identifier: Apache-2.0 */
/* build.c -- typed conditions and key conditions, REST selects and update actions to
 * placeholder-only expressions. */
#include "expr/build.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr.h"

#define MAX_DEPTH 32      /* nesting of and/or/not, and of document paths */

enum clause { C_SET, C_REMOVE, C_ADD, C_DELETE, C__COUNT };

struct tt_expr_builder {
  char **names; /* attribute names; names[i] is "#n<i>" */
  size_t nnames, names_cap;
  struct tt_av *values; /* values[i] is ":v<i>" */
  size_t nvalues, values_cap;
  struct tt_buf clause[C__COUNT]; /* the update being built */
  char **targets;                 /* normalized target paths of that update */
  size_t ntargets, targets_cap;
};

/* ---- small helpers ----------------------------------------------------- */

static int oom(struct tt_error *err) {
  return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory while building an expression");
}

/* After a tt_buf call failed: the text cap, or memory (buf.h's errno). */
static int too_long(const char *field, struct tt_error *err) {
  if (errno == ENOMEM)
    return oom(err);
  return tt_error_set(err, TT_ERR_VALIDATION, field,
                      "%s: the expression would exceed %d bytes", field, TT_EXPR_MAX_TEXT);
}

void tt_expr_field_key(char *out, size_t cap, const char *parent, const char *key) {
  parent = parent ? parent : "";
  if (snprintf(out, cap, "%s%s%s", parent, *parent ? "." : "", key) < 0)
    out[0] = '\0';
}

void tt_expr_field_index(char *out, size_t cap, const char *parent, size_t i) {
  if (snprintf(out, cap, "%s[%zu]", parent ? parent : "", i) < 0)
    out[0] = '\0';
}

static bool grow(void **arr, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap)
    return true;
  size_t ncap = *cap ? *cap * 2 : 8;
  while (ncap < need)
    ncap *= 2;
  void *p = realloc(*arr, ncap * elem);
  if (p == NULL)
    return false;
  *arr = p;
  *cap = ncap;
  return true;
}

struct tt_expr_builder *tt_expr_builder_new(void) {
  struct tt_expr_builder *b = calloc(1, sizeof(*b));
  if (b == NULL)
    return NULL;
  for (int i = 0; i < C__COUNT; i++)
    tt_buf_init(&b->clause[i], TT_EXPR_MAX_TEXT);
  return b;
}

static void reset_update(struct tt_expr_builder *b) {
  for (int i = 0; i < C__COUNT; i++)
    tt_buf_free(&b->clause[i]);
  for (size_t i = 0; i < b->ntargets; i++)
    free(b->targets[i]);
  b->ntargets = 0;
}

static void reset_maps(struct tt_expr_builder *b) {
  for (size_t i = 0; i < b->nnames; i++)
    free(b->names[i]);
  for (size_t i = 0; i < b->nvalues; i++)
    tt_av_free(&b->values[i]);
  b->nnames = 0;
  b->nvalues = 0;
}

void tt_expr_builder_free(struct tt_expr_builder *b) {
  if (b == NULL)
    return;
  reset_update(b);
  reset_maps(b);
  free(b->targets);
  free(b->names);
  free(b->values);
  free(b);
}

/* A failed call must leave the builder as it found it, so that the maps it
 * hands out never hold entries that no expression uses (DynamoDB rejects
 * unused names and values). */
struct mark {
  size_t nnames, nvalues, ntargets;
  size_t clause_len[C__COUNT];
};

static struct mark mark_take(const struct tt_expr_builder *b) {
  struct mark m = {.nnames = b->nnames, .nvalues = b->nvalues, .ntargets = b->ntargets};
  for (int i = 0; i < C__COUNT; i++)
    m.clause_len[i] = b->clause[i].len;
  return m;
}

/* Returns rc, after putting b back as it was at m when rc is an error. */
static int rollback(struct tt_expr_builder *b, const struct mark *m, int rc) {
  if (rc == 0)
    return 0;
  while (b->nnames > m->nnames)
    free(b->names[--b->nnames]);
  while (b->nvalues > m->nvalues)
    tt_av_free(&b->values[--b->nvalues]);
  while (b->ntargets > m->ntargets)
    free(b->targets[--b->ntargets]);
  for (int i = 0; i < C__COUNT; i++) {
    b->clause[i].len = m->clause_len[i];
    if (b->clause[i].data)
      b->clause[i].data[m->clause_len[i]] = '\0';
  }
  return rc;
}

/* ---- names, values, paths ---------------------------------------------- */

/* Appends the placeholder of attribute name (s, n), reusing an earlier one
 * for the same name so a path used twice reads the same. */
static int name_ref(struct tt_expr_builder *b, const char *s, size_t n, struct tt_buf *out,
                    const char *field, struct tt_error *err) {
  size_t i;
  for (i = 0; i < b->nnames; i++)
    if (strlen(b->names[i]) == n && memcmp(b->names[i], s, n) == 0)
      break;
  if (i == b->nnames) {
    if (!grow((void **)&b->names, &b->names_cap, b->nnames + 1, sizeof(*b->names)))
      return oom(err);
    char *copy = malloc(n + 1);
    if (copy == NULL)
      return oom(err);
    memcpy(copy, s, n);
    copy[n] = '\0';
    b->names[b->nnames++] = copy;
  }
  return tt_buf_printf(out, "#n%zu", i) != 0 ? too_long(field, err) : 0;
}

int tt_expr_builder_value(struct tt_expr_builder *b, struct tt_av *value, struct tt_buf *out,
                          struct tt_error *err) {
  if (!grow((void **)&b->values, &b->values_cap, b->nvalues + 1, sizeof(*b->values))) {
    tt_av_free(value);
    return oom(err);
  }
  if (tt_buf_printf(out, ":v%zu", b->nvalues) != 0) {
    tt_av_free(value);
    if (errno == ENOMEM)
      return oom(err);
    return tt_error_set(err, TT_ERR_VALIDATION, NULL, "the expression would exceed %d bytes",
                        TT_EXPR_MAX_TEXT);
  }
  b->values[b->nvalues++] = *value;
  memset(value, 0, sizeof(*value));
  return 0;
}

int tt_expr_bad_path(const char *field, struct tt_error *err) {
  return tt_error_set(err, TT_ERR_VALIDATION, field,
                      "%s: invalid attribute path; write names separated by '.' with list "
                      "indexes like a.b[0] (at most %d levels), a name holding '.', '[' or ']' "
                      "in backticks: `a.b`",
                      field, MAX_DEPTH);
}

size_t tt_expr_rest_path_head(const char *p, const char **name, size_t *len) {
  if (p[0] == '`') {
    const char *close = strchr(p + 1, '`');
    if (close != NULL) {
      *name = p + 1;
      *len = (size_t)(close - p - 1);
      return *len + 2;
    }
  }
  *name = p;
  *len = strcspn(p, ".[");
  return *len;
}

/* One name of a REST path at s: a quoted `name` (no backtick inside) or
 * text up to '.', '[' or ']' that does not start with a backtick. Returns
 * the length as written, 0 when there is no valid name. */
static size_t name_span(const char *s) {
  if (*s == '`') {
    const char *close = strchr(s + 1, '`');
    return close != NULL && close > s + 1 ? (size_t)(close - s) + 1 : 0;
  }
  return strcspn(s, ".[]");
}

bool tt_expr_rest_path_valid(const char *p) {
  size_t depth = 0;
  const char *s = p;
  if (*s == '\0')
    return false;
  for (;;) {
    size_t n = name_span(s);
    if (n == 0)
      return false;
    s += n;
    depth++;
    while (*s == '[') {
      size_t d = 0;
      s++;
      while (s[d] >= '0' && s[d] <= '9')
        d++;
      if (d == 0 || d > 9 || s[d] != ']')
        return false;
      s += d + 1;
      depth++;
    }
    if (depth > MAX_DEPTH)
      return false;
    if (*s == '\0')
      return true;
    if (*s != '.')
      return false;
    s++;
  }
}

static int builder_path_impl(struct tt_expr_builder *b, const char *path, bool literal,
                         struct tt_buf *out, const char *field, struct tt_error *err) {
  if (path == NULL || *path == '\0' || (!literal && !tt_expr_rest_path_valid(path)))
    return tt_expr_bad_path(field, err);
  if (literal)
    return name_ref(b, path, strlen(path), out, field, err);
  const char *s = path;
  for (;;) {
    const char *name;
    size_t n;
    s += tt_expr_rest_path_head(s, &name, &n);
    if (name_ref(b, name, n, out, field, err) != 0)
      return -1;
    while (*s == '[') {
      size_t d = strcspn(s, "]") + 1; /* "[12]" */
      if (tt_buf_append(out, s, d) != 0)
        return too_long(field, err);
      s += d;
    }
    if (*s == '\0')
      return 0;
    if (tt_buf_puts(out, ".") != 0)
      return too_long(field, err);
    s++;
  }
}

int tt_expr_builder_path(struct tt_expr_builder *b, const char *path, bool literal,
                         struct tt_buf *out, const char *field, struct tt_error *err) {
  struct mark m = mark_take(b);
  return rollback(b, &m, builder_path_impl(b, path, literal, out, field, err));
}

static int put(struct tt_buf *out, const char *s, const char *field, struct tt_error *err) {
  return tt_buf_puts(out, s) != 0 ? too_long(field, err) : 0;
}

/* Clones v, registers the clone and appends its placeholder. */
static int value_ref(struct tt_expr_builder *b, const struct tt_av *v, struct tt_buf *out,
                     struct tt_error *err) {
  struct tt_av copy;
  if (tt_av_clone(&copy, v) != 0)
    return oom(err);
  return tt_expr_builder_value(b, &copy, out, err);
}

/* Ends the text built in out: when rc is 0 it moves into *text, else (or
 * out of memory) it is freed. Returns 0 or -1. */
static int take_text(struct tt_buf *out, int rc, char **text, struct tt_error *err) {
  if (rc == 0 && (*text = tt_buf_steal(out, NULL)) == NULL)
    rc = oom(err);
  tt_buf_free(out);
  return rc;
}

/* ---- conditions -------------------------------------------------------- */

static const char *const op_names[] = {
    [TT_COND_EQ] = "=", [TT_COND_NE] = "<>", [TT_COND_LT] = "<", [TT_COND_LE] = "<=",
    [TT_COND_GT] = ">", [TT_COND_GE] = ">=", [TT_COND_BETWEEN] = "between", [TT_COND_IN] = "in",
    [TT_COND_BEGINS_WITH] = "begins_with", [TT_COND_CONTAINS] = "contains",
    [TT_COND_NOT_CONTAINS] = "not_contains", [TT_COND_EXISTS] = "exists",
    [TT_COND_NOT_EXISTS] = "not_exists", [TT_COND_TYPE] = "type"};

const char *tt_cond_op_name(enum tt_cond_op op) {
  return op >= TT_COND_EQ && op <= TT_COND_TYPE ? op_names[op] : "";
}

void tt_cond_clear(struct tt_cond *c) {
  if (c == NULL)
    return;
  for (size_t i = 0; i < c->n_kids; i++)
    tt_cond_clear(&c->kids[i]);
  for (size_t i = 0; i < c->n_values; i++)
    tt_av_free(&c->values[i]);
  free(c->kids);
  free(c->path);
  free(c->values);
  free(c->error);
  memset(c, 0, sizeof(*c));
}

void tt_cond_free(struct tt_cond *c) {
  tt_cond_clear(c);
  free(c);
}

void tt_key_cond_clear(struct tt_key_cond *k) {
  for (size_t i = 0; i < 2; i++) {
    free(k->e[i].attr);
    tt_av_free(&k->e[i].v[0]);
    tt_av_free(&k->e[i].v[1]);
  }
  free(k->error);
  memset(k, 0, sizeof(*k));
}

static int build_cond(struct tt_expr_builder *b, const struct tt_cond *c, const char *field,
                      struct tt_buf *out, bool *compound, struct tt_error *err);

/* Builds the condition kid (field path f) into out after `lead`, in
 * parentheses when `paren` is 2, or 1 and kid is an and/or list. */
static int build_kid(struct tt_expr_builder *b, const struct tt_cond *kid, const char *f,
                     const char *field, const char *lead, int paren, struct tt_buf *out,
                     struct tt_error *err) {
  struct tt_buf child;
  bool compound = false;
  tt_buf_init(&child, TT_EXPR_MAX_TEXT);
  int rc = build_cond(b, kid, f, &child, &compound, err);
  bool p = paren == 2 || (paren == 1 && compound);
  if (rc == 0 && (tt_buf_puts(out, lead) != 0 || (p && tt_buf_puts(out, "(") != 0) ||
                  tt_buf_append(out, child.data, child.len) != 0 ||
                  (p && tt_buf_puts(out, ")") != 0)))
    rc = too_long(field, err);
  tt_buf_free(&child);
  return rc;
}

/* The children of an and/or node, joined by " AND " / " OR ", nested lists
 * in parentheses so the text never relies on precedence. */
static int build_list(struct tt_expr_builder *b, const struct tt_cond *c, const char *field,
                      struct tt_buf *out, bool *compound, struct tt_error *err) {
  size_t n = c->n_kids;
  *compound = n > 1;
  for (size_t i = 0; i < n; i++) {
    char f[128];
    tt_expr_field_index(f, sizeof(f), field, i);
    if (build_kid(b, &c->kids[i], f, field, !i ? "" : c->kind == TT_COND_AND ? " AND " : " OR ",
                  n > 1, out, err) != 0)
      return -1;
  }
  return 0;
}

/* The values of a comparison, separated by `sep`. */
static int put_values(struct tt_expr_builder *b, const struct tt_cond *c, const char *sep,
                      struct tt_buf *out, const char *field, struct tt_error *err) {
  for (size_t i = 0; i < c->n_values; i++)
    if ((i && put(out, sep, field, err)) || value_ref(b, &c->values[i], out, err))
      return -1;
  return 0;
}

static int build_leaf(struct tt_expr_builder *b, const struct tt_cond *c, const char *field,
                      struct tt_buf *out, struct tt_error *err) {
  static const char *const fns[] = {
      [TT_COND_BEGINS_WITH] = "begins_with(", [TT_COND_CONTAINS] = "contains(",
      [TT_COND_NOT_CONTAINS] = "NOT contains(", [TT_COND_EXISTS] = "attribute_exists(",
      [TT_COND_NOT_EXISTS] = "attribute_not_exists(", [TT_COND_TYPE] = "attribute_type("};
  char f[128];
  enum tt_cond_op op = c->op;
  size_t nv = c->n_values;
  bool counted = op == TT_COND_EXISTS || op == TT_COND_NOT_EXISTS ? nv == 0
                 : op == TT_COND_BETWEEN                          ? nv == 2
                 : op == TT_COND_IN                               ? nv >= 1
                                                                  : nv == 1;
  if (op < TT_COND_EQ || op > TT_COND_TYPE || c->path == NULL || !counted ||
      (c->size && op > TT_COND_BETWEEN))
    return tt_error_set(err, TT_ERR_INTERNAL, field, "%s: malformed condition", field);
  tt_expr_field_key(f, sizeof(f), field, c->size ? "size" : "op");
  if (put(out, c->size ? "size(" : op > TT_COND_IN ? fns[op] : "", field, err) ||
      tt_expr_builder_path(b, c->path, false, out, f, err))
    return -1;
  if (c->size || op <= TT_COND_IN) {
    const char *name = op == TT_COND_BETWEEN ? "BETWEEN" : op == TT_COND_IN ? "IN" : op_names[op];
    return put(out, c->size ? ") " : " ", field, err) || put(out, name, field, err) ||
                   put(out, op == TT_COND_IN ? " (" : " ", field, err) ||
                   put_values(b, c, op == TT_COND_IN ? ", " : " AND ", out, field, err) ||
                   put(out, op == TT_COND_IN ? ")" : "", field, err)
               ? -1
               : 0;
  }
  return (nv && (put(out, ", ", field, err) || put_values(b, c, "", out, field, err))) ||
                 put(out, ")", field, err)
             ? -1
             : 0;
}

static int build_cond(struct tt_expr_builder *b, const struct tt_cond *c, const char *field,
                      struct tt_buf *out, bool *compound, struct tt_error *err) {
  char f[128];
  *compound = false;
  if (c->kind == TT_COND_CMP)
    return build_leaf(b, c, field, out, err);
  if (c->kind == TT_COND_ERROR && c->error) {
    *err = *c->error;
    return -1;
  }
  bool ok = c->kind == TT_COND_NOT ? c->n_kids == 1
                                   : (c->kind == TT_COND_AND || c->kind == TT_COND_OR) &&
                                         c->n_kids >= 1;
  if (!ok)
    return tt_error_set(err, TT_ERR_INTERNAL, field, "%s: malformed condition", field);
  if (c->kind != TT_COND_NOT) {
    tt_expr_field_key(f, sizeof(f), field, c->kind == TT_COND_AND ? "and" : "or");
    return build_list(b, c, c->list ? field : f, out, compound, err);
  }
  tt_expr_field_key(f, sizeof(f), field, "not");
  return build_kid(b, c->kids, f, field, "NOT ", 2, out, err);
}

int tt_expr_build_condition(struct tt_expr_builder *b, const struct tt_cond *c, const char *field,
                            char **text, struct tt_error *err) {
  struct mark m = mark_take(b);
  struct tt_buf out;
  bool compound;
  *text = NULL;
  tt_buf_init(&out, TT_EXPR_MAX_TEXT);
  int rc = build_cond(b, c, field ? field : "", &out, &compound, err);
  return rollback(b, &m, take_text(&out, rc, text, err));
}

/* ---- key conditions ---------------------------------------------------- */

static int build_key_condition_impl(struct tt_expr_builder *b, const struct tt_key_cond *k,
                                    const char *field, char **text, struct tt_error *err) {
  struct tt_buf out;
  char f[128], af[128];
  field = field ? field : "";
  *text = NULL;
  if (k->error) {
    *err = *k->error;
    return -1;
  }
  if (k->n < 1 || k->n > 2)
    return tt_error_set(err, TT_ERR_INTERNAL, field, "%s: malformed key condition", field);
  tt_buf_init(&out, TT_EXPR_MAX_TEXT);
  for (size_t i = 0; i < k->n; i++) {
    const struct tt_key_cond_entry *e = &k->e[i];
    tt_expr_field_index(f, sizeof(f), field, i);
    tt_expr_field_key(af, sizeof(af), f, "attr");
    if (i && put(&out, " AND ", field, err))
      goto fail;
    if (e->op == TT_COND_BEGINS_WITH) {
      if (put(&out, "begins_with(", field, err) ||
          tt_expr_builder_path(b, e->attr, true, &out, af, err) || put(&out, ", ", field, err) ||
          value_ref(b, &e->v[0], &out, err) || put(&out, ")", field, err))
        goto fail;
    } else if (e->op == TT_COND_BETWEEN) {
      if (tt_expr_builder_path(b, e->attr, true, &out, af, err) ||
          put(&out, " BETWEEN ", field, err) || value_ref(b, &e->v[0], &out, err) ||
          put(&out, " AND ", field, err) || value_ref(b, &e->v[1], &out, err))
        goto fail;
    } else if (tt_expr_builder_path(b, e->attr, true, &out, af, err) ||
               put(&out, " ", field, err) || put(&out, tt_cond_op_name(e->op), field, err) ||
               put(&out, " ", field, err) || value_ref(b, &e->v[0], &out, err)) {
      goto fail;
    }
  }
  return take_text(&out, 0, text, err);
fail:
  return take_text(&out, -1, text, err);
}

int tt_expr_build_key_condition(struct tt_expr_builder *b, const struct tt_key_cond *k,
                                const char *field, char **text, struct tt_error *err) {
  struct mark m = mark_take(b);
  return rollback(b, &m, build_key_condition_impl(b, k, field, text, err));
}

/* ---- projections ------------------------------------------------------- */

/* Whether REST path a equals b or one contains the other ("a" and "a.b",
 * "l" and "l[0]", "`a`" and "a"), walked name by name. */
static bool paths_overlap(const char *a, const char *b) {
  for (;;) {
    const char *na, *nb;
    size_t la, lb;
    a += tt_expr_rest_path_head(a, &na, &la);
    b += tt_expr_rest_path_head(b, &nb, &lb);
    if (la != lb || memcmp(na, nb, la) != 0)
      return false;
    while (*a == '[' && *b == '[') {
      size_t da = strcspn(a, "]"), db = strcspn(b, "]");
      if (da != db || a[da] != ']' || memcmp(a, b, da) != 0)
        return false;
      a += da + 1;
      b += db + 1;
    }
    if (*a == '\0' || *b == '\0')
      return true;
    if (*a != '.' || *b != '.')
      return false;
    a++;
    b++;
  }
}

static int build_projection_impl(struct tt_expr_builder *b, const struct tt_select *sel,
                                 const char *field, char **text, struct tt_error *err) {
  struct tt_buf out;
  char f[128];
  field = field ? field : "";
  *text = NULL;
  if (sel->n == 0)
    return tt_error_set(err, TT_ERR_VALIDATION, field,
                        "%s: must be a non-empty array of attribute paths", field);
  tt_buf_init(&out, TT_EXPR_MAX_TEXT);
  for (size_t i = 0; i < sel->n; i++) {
    const char *p = sel->paths[i];
    tt_expr_field_index(f, sizeof(f), field, i);
    if (p == NULL || !tt_expr_rest_path_valid(p)) {
      tt_expr_bad_path(f, err);
      goto fail;
    }
    for (size_t k = 0; k < i; k++)
      if (paths_overlap(p, sel->paths[k])) {
        tt_error_set(err, TT_ERR_VALIDATION, f, "%s: overlaps %s[%zu]; select each path once",
                     f, field, k);
        goto fail;
      }
    if ((i && put(&out, ", ", field, err)) || tt_expr_builder_path(b, p, false, &out, f, err))
      goto fail;
  }
  return take_text(&out, 0, text, err);
fail:
  return take_text(&out, -1, text, err);
}

int tt_expr_build_projection(struct tt_expr_builder *b, const struct tt_select *s,
                             const char *field, char **text, struct tt_error *err) {
  struct mark m = mark_take(b);
  return rollback(b, &m, build_projection_impl(b, s, field, text, err));
}

/* ---- updates ----------------------------------------------------------- */

static int build_update_action_impl(struct tt_expr_builder *b, enum tt_expr_update_op op,
                                const char *path, bool literal, struct tt_av *value,
                                const char *field, struct tt_error *err) {
  /* Each operator's clause, and its action from the path (1), the value
   * (2) and the empty list (3). */
  static const struct {
    enum clause cl;
    const char *form;
  } forms[] = {
      [TT_EXPR_UPD_SET] = {C_SET, "%1$s = %2$s"},
      [TT_EXPR_UPD_SET_IF_NOT_EXISTS] = {C_SET, "%1$s = if_not_exists(%1$s, %2$s)"},
      [TT_EXPR_UPD_REMOVE] = {C_REMOVE, "%1$s"},
      [TT_EXPR_UPD_ADD] = {C_ADD, "%1$s %2$s"},
      [TT_EXPR_UPD_DELETE] = {C_DELETE, "%1$s %2$s"},
      [TT_EXPR_UPD_APPEND] = {C_SET, "%1$s = list_append(if_not_exists(%1$s, %3$s), %2$s)"},
      [TT_EXPR_UPD_PREPEND] = {C_SET, "%1$s = list_append(%2$s, if_not_exists(%1$s, %3$s))"}};
  struct tt_buf pbuf, vbuf, ebuf;
  int rc = -1;
  field = field ? field : "";
  tt_buf_init(&pbuf, TT_EXPR_MAX_TEXT);
  tt_buf_init(&vbuf, TT_EXPR_MAX_TEXT);
  tt_buf_init(&ebuf, TT_EXPR_MAX_TEXT);
  if (op < TT_EXPR_UPD_SET || op > TT_EXPR_UPD_PREPEND) {
    tt_error_set(err, TT_ERR_INTERNAL, field, "unknown update operator");
    goto done;
  }
  if ((op == TT_EXPR_UPD_REMOVE) != (value == NULL)) {
    tt_error_set(err, TT_ERR_INTERNAL, field, "%s: REMOVE takes no value, the others one", field);
    goto done;
  }
  if (path == NULL || *path == '\0' || (!literal && !tt_expr_rest_path_valid(path))) {
    tt_expr_bad_path(field, err);
    goto done;
  }
  for (size_t i = 0; i < b->ntargets; i++)
    if (literal ? strcmp(b->targets[i], path) == 0 : paths_overlap(b->targets[i], path)) {
      tt_error_set(err, TT_ERR_VALIDATION, field,
                   "%s: updates the same attribute as another action of this update", field);
      goto done;
    }
  if (tt_expr_builder_path(b, path, literal, &pbuf, field, err) != 0)
    goto done;
  if (value && tt_expr_builder_value(b, value, &vbuf, err) != 0) {
    value = NULL; /* freed by tt_expr_builder_value */
    goto done;
  }
  value = NULL;
  if (op == TT_EXPR_UPD_APPEND || op == TT_EXPR_UPD_PREPEND) {
    struct tt_av empty;
    if (tt_av_list(&empty, TT_AV_L, 0) != 0) {
      oom(err);
      goto done;
    }
    if (tt_expr_builder_value(b, &empty, &ebuf, err) != 0)
      goto done;
  }
  struct tt_buf *out = &b->clause[forms[op].cl];
  int w = tt_buf_puts(out, out->len ? ", " : "") ||
          tt_buf_printf(out, forms[op].form, pbuf.data, vbuf.data, ebuf.data);
  if (w) {
    too_long(field, err);
    goto done;
  }
  if (!grow((void **)&b->targets, &b->targets_cap, b->ntargets + 1, sizeof(*b->targets)) ||
      (b->targets[b->ntargets] = strdup(path)) == NULL) {
    oom(err);
    goto done;
  }
  b->ntargets++;
  rc = 0;
done:
  if (value)
    tt_av_free(value);
  tt_buf_free(&pbuf);
  tt_buf_free(&vbuf);
  tt_buf_free(&ebuf);
  return rc;
}

int tt_expr_build_update_action(struct tt_expr_builder *b, enum tt_expr_update_op op,
                                const char *path, bool literal, struct tt_av *value,
                                const char *field, struct tt_error *err) {
  struct mark m = mark_take(b);
  return rollback(b, &m, build_update_action_impl(b, op, path, literal, value, field, err));
}

int tt_expr_build_update_finish(struct tt_expr_builder *b, char **text, struct tt_error *err) {
  static const char *const kw[C__COUNT] = {"SET ", "REMOVE ", "ADD ", "DELETE "};
  struct tt_buf out;
  *text = NULL;
  tt_buf_init(&out, TT_EXPR_MAX_TEXT);
  for (int i = 0; i < C__COUNT; i++) {
    if (b->clause[i].len == 0)
      continue;
    if ((out.len && tt_buf_puts(&out, " ") != 0) || tt_buf_puts(&out, kw[i]) != 0 ||
        tt_buf_append(&out, b->clause[i].data, b->clause[i].len) != 0) {
      tt_buf_free(&out);
      reset_update(b);
      return too_long("update", err);
    }
  }
  reset_update(b);
  if (out.len == 0)
    return tt_error_set(err, TT_ERR_VALIDATION, NULL, "the update changes nothing");
  return take_text(&out, 0, text, err);
}

/* ---- maps -------------------------------------------------------------- */

int tt_expr_builder_take(struct tt_expr_builder *b, struct tt_av *names, struct tt_av *values,
                         struct tt_error *err) {
  memset(names, 0, sizeof(*names));
  memset(values, 0, sizeof(*values));
  if (tt_av_map(names, b->nnames) != 0 || tt_av_map(values, b->nvalues) != 0)
    goto fail;
  for (size_t i = 0; i < b->nnames + b->nvalues; i++) {
    bool name = i < b->nnames;
    size_t k = name ? i : i - b->nnames;
    struct tt_av_member *m = name ? &names->u.members[k] : &values->u.members[k];
    char key[32];
    int n = snprintf(key, sizeof(key), name ? "#n%zu" : ":v%zu", k);
    if (tt_av_member_name(m, key, (size_t)n) != 0 ||
        (name && tt_av_string(&m->value, b->names[k], strlen(b->names[k])) != 0))
      goto fail;
  }
  /* Only now move the values, so a failure above leaves the builder whole. */
  for (size_t i = 0; i < b->nvalues; i++) {
    values->u.members[i].value = b->values[i];
    memset(&b->values[i], 0, sizeof(b->values[i]));
  }
  if (tt_av_map_finish(names, NULL, err) != 0 || tt_av_map_finish(values, NULL, err) != 0)
    goto fail;
  reset_maps(b);
  return 0;
fail:
  tt_av_free(names);
  tt_av_free(values);
  memset(names, 0, sizeof(*names));
  memset(values, 0, sizeof(*values));
  return oom(err);
}
