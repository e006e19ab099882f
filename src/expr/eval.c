/* SPDX-License-Identifier: Apache-2.0 */
/* eval.c -- evaluates parsed expressions on items: conditions, updates, projections, key ranges. */
#include "expr/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value/number.h"

/* ---- paths ------------------------------------------------------------- */

static bool seg_is_index(const struct xseg *s) { return s->name == NULL; }

/* The node reached by the first `upto` segments of p in `root` (an M or
 * NULL), or NULL when a step is missing or goes through the wrong type.
 * Not const: the update's steps write through it. */
static struct tt_av *walk_mut(const struct tt_av *root, const struct xpath *p, size_t upto) {
  struct tt_av *cur = (struct tt_av *)root;
  for (size_t i = 0; i < upto && cur; i++) {
    const struct xseg *s = &p->segs[i];
    if (seg_is_index(s))
      cur = (cur->type == TT_AV_L && s->index < cur->len) ? &cur->u.elems[s->index] : NULL;
    else
      cur = cur->type == TT_AV_M ? (struct tt_av *)tt_av_map_getn(cur, s->name, s->name_len)
                                 : NULL;
  }
  return cur;
}

/* The map or list holding the last step of p in `root`, or NULL when it is
 * missing or not of the step's kind. */
static struct tt_av *parent_of(struct tt_av *root, const struct xpath *p) {
  struct tt_av *parent = walk_mut(root, p, p->n - 1);
  enum tt_av_type want = seg_is_index(&p->segs[p->n - 1]) ? TT_AV_L : TT_AV_M;
  return parent && parent->type == want ? parent : NULL;
}

/* The value a path designates in `root`, or NULL. */
static const struct tt_av *tt_expr__resolve(const struct tt_av *root, const struct xpath *p) {
  return walk_mut(root, p, p->n);
}

/* ---- conditions -------------------------------------------------------- */

static bool is_set(enum tt_av_type t) { return t == TT_AV_SS || t == TT_AV_NS || t == TT_AV_BS; }

/* Room for a size() result, which lives on the evaluator's stack. */
struct opval {
  struct tt_av tmp;
  char num[24];
};

/* The value of a condition operand, or NULL when it designates nothing
 * (a missing path, or size() of a type without a size). */
static const struct tt_av *cond_operand(const struct xoperand *o, const struct tt_av *item,
                                        struct opval *ov) {
  if (o->kind == XOP_VALUE)
    return o->value;
  const struct tt_av *v = tt_expr__resolve(item, &o->path);
  if (o->kind != XOP_SIZE || v == NULL)
    return v;
  if (v->type == TT_AV_N || v->type == TT_AV_BOOL || v->type == TT_AV_NULL)
    return NULL; /* no size */
  size_t len = v->len;
  if (v->type == TT_AV_S) {
    /* A string's size is its length in UTF-16 code units, as DynamoDB
     * counts it ("abÿ" is 3), not in bytes: a character of 2 or 3 bytes
     * is one unit, one of 4 bytes two. */
    const unsigned char *c = (const unsigned char *)v->u.bytes;
    len = 0;
    for (size_t i = 0; i < v->len; i++)
      len += (c[i] & 0xC0) != 0x80 ? (c[i] >= 0xF0 ? 2 : 1) : 0;
  }
  int n = snprintf(ov->num, sizeof(ov->num), "%zu", len);
  ov->tmp.type = TT_AV_N;
  ov->tmp.len = (size_t)n;
  ov->tmp.u.bytes = ov->num; /* not owned: never passed to tt_av_free */
  return &ov->tmp;
}

static bool ordered(const struct tt_av *a, const struct tt_av *b) {
  return a && b && a->type == b->type && tt_expr__is_scalar(a->type);
}

static bool has_prefix(const struct tt_av *a, const struct tt_av *b) {
  if (a == NULL || b == NULL || a->type != b->type || (a->type != TT_AV_S && a->type != TT_AV_B))
    return false;
  return b->len <= a->len && memcmp(a->u.bytes, b->u.bytes, b->len) == 0;
}

static bool eval_contains(const struct tt_av *a, const struct tt_av *b) {
  if (a == NULL || b == NULL)
    return false;
  switch (a->type) {
  case TT_AV_S:
  case TT_AV_B:
    if (b->type != a->type)
      return false;
    if (b->len == 0)
      return true;
    return b->len <= a->len && memmem(a->u.bytes, a->len, b->u.bytes, b->len) != NULL;
  case TT_AV_SS:
  case TT_AV_NS:
  case TT_AV_BS:
  case TT_AV_L:
    for (size_t i = 0; i < a->len; i++)
      if (tt_av_equal(&a->u.elems[i], b))
        return true;
    return false;
  default:
    return false;
  }
}

static bool eval_cond(const struct xcond *c, const struct tt_av *item) {
  struct opval ov[3];
  const struct tt_av *a, *b, *x;
  switch (c->kind) {
  case XC_AND:
    return eval_cond(c->l, item) && eval_cond(c->r, item);
  case XC_OR:
    return eval_cond(c->l, item) || eval_cond(c->r, item);
  case XC_NOT:
    return !eval_cond(c->l, item);
  case XC_CMP:
    a = cond_operand(c->ops[0], item, &ov[0]);
    b = cond_operand(c->ops[1], item, &ov[1]);
    switch (c->cmp) {
    case XCMP_EQ:
      return a && b && tt_av_equal(a, b);
    case XCMP_NE:
      /* A missing attribute is "not equal" to anything. */
      return !(a && b && tt_av_equal(a, b));
    case XCMP_LT:
      return ordered(a, b) && tt_av_compare(a, b) < 0;
    case XCMP_LE:
      return ordered(a, b) && tt_av_compare(a, b) <= 0;
    case XCMP_GT:
      return ordered(a, b) && tt_av_compare(a, b) > 0;
    case XCMP_GE:
      return ordered(a, b) && tt_av_compare(a, b) >= 0;
    }
    return false;
  case XC_BETWEEN:
    x = cond_operand(c->ops[0], item, &ov[0]);
    a = cond_operand(c->ops[1], item, &ov[1]);
    b = cond_operand(c->ops[2], item, &ov[2]);
    return ordered(x, a) && ordered(x, b) && tt_av_compare(a, x) <= 0 &&
           tt_av_compare(x, b) <= 0;
  case XC_IN:
    x = cond_operand(c->ops[0], item, &ov[0]);
    if (x == NULL)
      return false;
    for (size_t i = 1; i < c->nops; i++) {
      a = cond_operand(c->ops[i], item, &ov[1]);
      if (a && tt_av_equal(x, a))
        return true;
    }
    return false;
  case XC_EXISTS:
    return tt_expr__resolve(item, &c->ops[0]->path) != NULL;
  case XC_NOT_EXISTS:
    return tt_expr__resolve(item, &c->ops[0]->path) == NULL;
  case XC_TYPE:
    x = tt_expr__resolve(item, &c->ops[0]->path);
    return x && x->type == c->type;
  case XC_BEGINS_WITH:
    return has_prefix(cond_operand(c->ops[0], item, &ov[0]), cond_operand(c->ops[1], item, &ov[1]));
  case XC_CONTAINS:
    return eval_contains(cond_operand(c->ops[0], item, &ov[0]),
                         cond_operand(c->ops[1], item, &ov[1]));
  }
  return false;
}

bool tt_expr_eval_condition(const struct tt_expr *e, const struct tt_av *item) {
  if (e == NULL || e->cond == NULL)
    return false;
  return eval_cond(e->cond, item);
}

/* ---- item mutation ----------------------------------------------------- */

static int err_oom(struct tt_error *err) {
  return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory while applying an update");
}

static int err_missing(struct tt_error *err) {
  return tt_error_set(err, TT_ERR_VALIDATION, NULL,
                      "The provided expression refers to an attribute that does not exist in "
                      "the item");
}

static int err_type(struct tt_error *err) {
  return tt_error_set(err, TT_ERR_VALIDATION, NULL,
                      "An operand in the update expression has an incorrect data type");
}

static int err_path(struct tt_error *err) {
  return tt_error_set(err, TT_ERR_VALIDATION, NULL,
                      "The document path provided in the update expression is invalid for update");
}

/* Byte order of names, as av.h sorts map members. */
static int name_cmp(const char *a, size_t an, const char *b, size_t bn) {
  int c = memcmp(a, b, an < bn ? an : bn);
  if (c != 0)
    return c;
  return an < bn ? -1 : an > bn;
}

/* Appends *v (stolen) to an L or set value. */
static int elems_push(struct tt_av *l, struct tt_av *v) {
  struct tt_av *ne = realloc(l->u.elems, (l->len + 1) * sizeof(*ne));
  if (ne == NULL)
    return -1;
  l->u.elems = ne;
  ne[l->len++] = *v;
  memset(v, 0, sizeof(*v));
  return 0;
}

static void elems_remove(struct tt_av *l, size_t i) {
  tt_av_free(&l->u.elems[i]);
  memmove(&l->u.elems[i], &l->u.elems[i + 1], (l->len - i - 1) * sizeof(*l->u.elems));
  l->len--;
}

/* Elements written past the end of a list, held until every action ran:
 * DynamoDB appends them in the order of their indexes, whatever the order
 * of the actions. */
struct xappend {
  const struct xpath *path;
  struct tt_av v;
};

struct xappends {
  struct xappend *a;
  size_t n;
};

/* Orders paths step by step (names in byte order before list indexes,
 * which go by number), a path before the longer ones it starts. */
static int path_cmp(const struct xpath *a, const struct xpath *b) {
  size_t n = a->n < b->n ? a->n : b->n;
  for (size_t i = 0; i < n; i++) {
    const struct xseg *x = &a->segs[i], *y = &b->segs[i];
    int c = seg_is_index(x) != seg_is_index(y) ? (seg_is_index(x) ? 1 : -1)
            : seg_is_index(x) ? (x->index < y->index ? -1 : x->index > y->index)
                              : name_cmp(x->name, x->name_len, y->name, y->name_len);
    if (c != 0)
      return c;
  }
  return a->n < b->n ? -1 : a->n > b->n;
}

/* Orders appends by list (their paths but the last step), then index. */
static int append_order(const void *pa, const void *pb) {
  return path_cmp(((const struct xappend *)pa)->path, ((const struct xappend *)pb)->path);
}

static void appends_free(struct xappends *q) {
  for (size_t i = 0; i < q->n; i++)
    tt_av_free(&q->a[i].v);
  free(q->a);
  q->a = NULL;
  q->n = 0;
}

/* Appends the held elements to their lists, in index order. */
static int appends_flush(struct tt_av *root, struct xappends *q, struct tt_error *err) {
  if (q->n > 1)
    qsort(q->a, q->n, sizeof(*q->a), append_order);
  for (size_t i = 0; i < q->n; i++) {
    struct tt_av *parent = walk_mut(root, q->a[i].path, q->a[i].path->n - 1);
    if (parent == NULL || parent->type != TT_AV_L)
      return err_path(err);
    if (elems_push(parent, &q->a[i].v) != 0)
      return err_oom(err);
  }
  return 0;
}

/* Writes *v (stolen, freed on failure) at path p. An index past the end of
 * a list appends (held in q until appends_flush), as DynamoDB does. */
static int set_path(struct tt_av *root, const struct xpath *p, struct tt_av *v,
                    struct xappends *q, struct tt_error *err) {
  struct tt_av *parent = parent_of(root, p);
  const struct xseg *last = &p->segs[p->n - 1];
  int rc = 0;
  if (parent == NULL) {
    rc = err_path(err);
  } else if (!seg_is_index(last)) {
    if (tt_av_map_put(parent, last->name, last->name_len, v) != 0)
      rc = err_oom(err);
  } else if (last->index < parent->len) {
    tt_av_free(&parent->u.elems[last->index]);
    parent->u.elems[last->index] = *v;
    memset(v, 0, sizeof(*v));
  } else {
    struct xappend *na = realloc(q->a, (q->n + 1) * sizeof(*na));
    if (na == NULL) {
      rc = err_oom(err);
    } else {
      q->a = na;
      q->a[q->n].path = p;
      q->a[q->n++].v = *v;
      memset(v, 0, sizeof(*v));
    }
  }
  tt_av_free(v);
  return rc;
}

static int remove_path(struct tt_av *root, const struct xpath *p, struct tt_error *err) {
  struct tt_av *parent = parent_of(root, p);
  const struct xseg *last = &p->segs[p->n - 1];
  if (parent == NULL)
    return err_path(err);
  if (!seg_is_index(last))
    tt_av_map_remove(parent, last->name);
  else if (last->index < parent->len)
    elems_remove(parent, last->index);
  return 0;
}

/* ---- update operands --------------------------------------------------- */

static int clone_into(struct tt_av *out, const struct tt_av *v, struct tt_error *err) {
  if (tt_av_clone(out, v) != 0)
    return err_oom(err);
  return 0;
}

/* *out: the N value of a sum, which tt_number_add wrote canonical. */
static int number_of(struct tt_av *out, const char *sum, struct tt_error *err) {
  if (tt_av_string(out, sum, strlen(sum)) != 0)
    return err_oom(err);
  out->type = TT_AV_N;
  return 0;
}

/* Evaluates a SET operand against the old item into *out (new value). */
static int update_operand(const struct xoperand *o, const struct tt_av *old, struct tt_av *out,
                          struct tt_error *err) {
  struct tt_av a = {0}, b = {0};
  const struct tt_av *v;
  int rc = -1;
  memset(out, 0, sizeof(*out));
  switch (o->kind) {
  case XOP_VALUE:
    return clone_into(out, o->value, err);
  case XOP_PATH:
    v = tt_expr__resolve(old, &o->path);
    return v ? clone_into(out, v, err) : err_missing(err);
  case XOP_IF_NOT_EXISTS:
    v = tt_expr__resolve(old, &o->path);
    return v ? clone_into(out, v, err) : update_operand(o->b, old, out, err);
  case XOP_LIST_APPEND:
  case XOP_PLUS:
  case XOP_MINUS: {
    enum tt_av_type want = o->kind == XOP_LIST_APPEND ? TT_AV_L : TT_AV_N;
    char sum[TT_NUMBER_TEXT_MAX];
    if (update_operand(o->a, old, &a, err) != 0 || update_operand(o->b, old, &b, err) != 0)
      goto done;
    if (a.type != want || b.type != want) {
      err_type(err);
      goto done;
    }
    if (want == TT_AV_N) {
      if (tt_number_add(a.u.bytes, b.u.bytes, o->kind == XOP_MINUS, sum, sizeof(sum), err) == 0 &&
          number_of(out, sum, err) == 0)
        rc = 0;
      goto done;
    }
    if (b.len) {
      struct tt_av *ne = realloc(a.u.elems, (a.len + b.len) * sizeof(*ne));
      if (ne == NULL) {
        err_oom(err);
        goto done;
      }
      memcpy(ne + a.len, b.u.elems, b.len * sizeof(*ne));
      a.u.elems = ne;
      a.len += b.len;
      free(b.u.elems); /* its elements now belong to a */
      b.u.elems = NULL;
      b.len = 0;
    }
    *out = a;
    memset(&a, 0, sizeof(a));
    rc = 0;
    goto done;
  }
  case XOP_SIZE:
    break;
  }
  tt_error_set(err, TT_ERR_INTERNAL, NULL, "operand not allowed in an update");
done:
  tt_av_free(&a);
  tt_av_free(&b);
  return rc;
}

/* ADD: numbers are summed, sets are joined; a missing attribute is set. */
static int apply_add(struct tt_av *root, const struct xaction *act, struct xappends *q,
                     struct tt_error *err) {
  const struct tt_av *val = act->value->value;
  struct tt_av *target = walk_mut(root, &act->path, act->path.n);
  struct tt_av tmp;
  if (target == NULL) {
    if (tt_av_clone(&tmp, val) != 0)
      return err_oom(err);
    return set_path(root, &act->path, &tmp, q, err);
  }
  if (target->type == TT_AV_N && val->type == TT_AV_N) {
    char sum[TT_NUMBER_TEXT_MAX];
    if (tt_number_add(target->u.bytes, val->u.bytes, 0, sum, sizeof(sum), err) != 0 ||
        number_of(&tmp, sum, err) != 0)
      return -1;
    tt_av_free(target);
    *target = tmp;
    return 0;
  }
  if (!is_set(val->type) || target->type != val->type)
    return err_type(err);
  for (size_t i = 0; i < val->len; i++) {
    bool present = false;
    for (size_t j = 0; j < target->len && !present; j++)
      present = tt_av_equal(&target->u.elems[j], &val->u.elems[i]);
    if (present)
      continue;
    if (tt_av_clone(&tmp, &val->u.elems[i]) != 0)
      return err_oom(err);
    if (elems_push(target, &tmp) != 0) {
      tt_av_free(&tmp);
      return err_oom(err);
    }
  }
  /* Sets stay sorted (av.h); the union has no duplicates to report. */
  return tt_av_set_finish(target, NULL, err);
}

/* DELETE: removes elements from a set; an emptied set is removed. */
static int apply_delete(struct tt_av *root, const struct xaction *act, struct tt_error *err) {
  const struct tt_av *val = act->value->value;
  if (parent_of(root, &act->path) == NULL)
    return err_path(err);
  struct tt_av *target = walk_mut(root, &act->path, act->path.n);
  if (target == NULL)
    return 0;
  if (target->type != val->type)
    return err_type(err);
  for (size_t i = 0; i < val->len; i++)
    for (size_t j = 0; j < target->len; j++)
      if (tt_av_equal(&target->u.elems[j], &val->u.elems[i])) {
        elems_remove(target, j);
        break;
      }
  if (target->len == 0)
    return remove_path(root, &act->path, err);
  return 0;
}

/* Orders REMOVE paths so that higher list indexes go first: removing an
 * element shifts the later ones, and DynamoDB's indexes refer to the old
 * item. */
static int remove_order(const void *pa, const void *pb) {
  return -path_cmp(&(*(const struct xaction *const *)pa)->path,
                   &(*(const struct xaction *const *)pb)->path);
}

int tt_expr_apply_update(const struct tt_expr *e, const struct tt_av *old_item,
                         struct tt_av *new_item, struct tt_error *err) {
  const struct xaction **removes = NULL;
  size_t nremoves = 0;
  struct xappends q = {0};
  memset(new_item, 0, sizeof(*new_item));
  if (e == NULL || e->kind != TT_EXPR_UPDATE)
    return tt_error_set(err, TT_ERR_INTERNAL, NULL, "not an update expression");
  if (old_item) {
    if (tt_av_clone(new_item, old_item) != 0) {
      memset(new_item, 0, sizeof(*new_item));
      return err_oom(err);
    }
  } else {
    new_item->type = TT_AV_M;
  }
  /* SET first (values read the old item, so application order does not
   * change them), then ADD and DELETE, then REMOVE from the back. */
  for (size_t i = 0; i < e->nactions; i++) {
    const struct xaction *a = &e->actions[i];
    if (a->kind != XA_SET)
      continue;
    struct tt_av v;
    if (update_operand(a->value, old_item, &v, err) != 0 ||
        set_path(new_item, &a->path, &v, &q, err) != 0)
      goto fail;
  }
  for (size_t i = 0; i < e->nactions; i++) {
    const struct xaction *a = &e->actions[i];
    if (a->kind == XA_ADD && apply_add(new_item, a, &q, err) != 0)
      goto fail;
    if (a->kind == XA_DELETE && apply_delete(new_item, a, err) != 0)
      goto fail;
    if (a->kind == XA_REMOVE)
      nremoves++;
  }
  if (appends_flush(new_item, &q, err) != 0)
    goto fail;
  appends_free(&q);
  if (nremoves) {
    removes = malloc(nremoves * sizeof(*removes));
    if (removes == NULL) {
      err_oom(err);
      goto fail;
    }
    nremoves = 0;
    for (size_t i = 0; i < e->nactions; i++)
      if (e->actions[i].kind == XA_REMOVE)
        removes[nremoves++] = &e->actions[i];
    qsort(removes, nremoves, sizeof(*removes), remove_order);
    for (size_t i = 0; i < nremoves; i++)
      if (remove_path(new_item, &removes[i]->path, err) != 0)
        goto fail;
  }
  free(removes);
  return 0;
fail:
  free(removes);
  appends_free(&q);
  tt_av_free(new_item);
  memset(new_item, 0, sizeof(*new_item));
  return -1;
}

/* ---- projections ------------------------------------------------------- */

static int by_child_index(const void *pa, const void *pb) {
  const struct xpchild *a = *(const struct xpchild *const *)pa;
  const struct xpchild *b = *(const struct xpchild *const *)pb;
  return a->seg.index < b->seg.index ? -1 : a->seg.index > b->seg.index;
}

/* Copies the parts of src that node selects into *out; *have says whether
 * anything was selected (empty containers are left out). */
static int proj_copy(const struct xpnode *node, const struct tt_av *src, struct tt_av *out,
                     bool *have) {
  memset(out, 0, sizeof(*out));
  *have = false;
  if (node->leaf) {
    if (tt_av_clone(out, src) != 0)
      return -1;
    *have = true;
    return 0;
  }
  if (node->nkids == 0 || src->type != (node->by_index ? TT_AV_L : TT_AV_M))
    return 0;
  const struct xpchild **kids = malloc(node->nkids * sizeof(*kids));
  size_t nk = 0;
  if (kids == NULL)
    return -1;
  for (const struct xpchild *c = node->kids; c; c = c->next)
    kids[nk++] = c;
  out->type = node->by_index ? TT_AV_L : TT_AV_M;
  if (node->by_index)
    qsort(kids, nk, sizeof(*kids), by_child_index);
  int rc = 0;
  for (size_t i = 0; i < nk && rc == 0; i++) {
    const struct xpchild *c = kids[i];
    const struct tt_av *sv;
    if (node->by_index)
      sv = c->seg.index < src->len ? &src->u.elems[c->seg.index] : NULL;
    else
      sv = tt_av_map_get(src, c->seg.name);
    if (sv == NULL)
      continue;
    struct tt_av part;
    bool got;
    if (proj_copy(&c->node, sv, &part, &got) != 0) {
      rc = -1;
      break;
    }
    if (!got)
      continue;
    if (node->by_index) {
      if (elems_push(out, &part) != 0)
        rc = -1;
    } else if (tt_av_map_put(out, c->seg.name, c->seg.name_len, &part) != 0) {
      rc = -1;
    }
    tt_av_free(&part);
  }
  free(kids);
  *have = rc == 0 && out->len > 0;
  if (!*have)
    tt_av_free(out);
  return rc;
}

int tt_expr_apply_projection(const struct tt_expr *e, const struct tt_av *item,
                             struct tt_av *out, struct tt_error *err) {
  bool have;
  memset(out, 0, sizeof(*out));
  if (e == NULL || (e->kind != TT_EXPR_PROJECTION && e->kind != TT_EXPR_UPDATE))
    return tt_error_set(err, TT_ERR_INTERNAL, NULL, "not a projection expression");
  if (item && proj_copy(&e->proj, item, out, &have) != 0)
    return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory while projecting");
  if (out->type != TT_AV_M) {
    tt_av_free(out);
    out->type = TT_AV_M;
  }
  return 0;
}

/* ---- key conditions ---------------------------------------------------- */

/* Whether a path starts with the attribute (name, n) and has at least
 * `depth` segments (1: the attribute or inside it; 2: inside it). */
static bool path_under(const struct xpath *p, const char *name, size_t n, size_t depth) {
  return p->n >= depth && p->n > 0 && p->segs[0].name && p->segs[0].name_len == n &&
         memcmp(p->segs[0].name, name, n) == 0;
}

/* Whether a path is just the top-level attribute (name, n). */
static bool path_is(const struct xpath *p, const char *name, size_t n) {
  return p->n == 1 && path_under(p, name, n, 1);
}

static bool leaf_names(const struct xcond *c, const char *name) {
  return path_is(&c->ops[0]->path, name, strlen(name));
}

/* A legacy KeyConditions operator that no key can be queried by (the
 * listener's rewrite: an equality with a :l_ni placeholder). */
static bool not_indexable(const struct xcond *c) {
  return c->kind == XC_CMP && c->ops[1]->kind == XOP_VALUE && c->ops[1]->value_name &&
         strncmp(c->ops[1]->value_name, ":l_ni", 5) == 0;
}

/* DynamoDB's order: per key attribute, hash first, whether a condition
 * names it, whether its operator can be queried by, then the operator. */
int tt_expr_key_range(const struct tt_expr *e, const char *pk_name, const char *sk_name,
                      struct tt_expr_key_range *out, struct tt_error *err) {
  const struct xcond *pk = NULL, *sk = NULL;
  memset(out, 0, sizeof(*out));
  if (e == NULL || e->kind != TT_EXPR_KEY_CONDITION)
    return tt_error_set(err, TT_ERR_INTERNAL, NULL, "not a key condition expression");
  for (size_t i = 0; i < e->nkey_leaves; i++) {
    const struct xcond *c = e->key_leaves[i];
    if (pk == NULL && leaf_names(c, pk_name))
      pk = c;
    else if (sk == NULL && sk_name && leaf_names(c, sk_name))
      sk = c;
  }
  if (sk_name == NULL && e->nkey_leaves > 1)
    return tt_error_set(err, TT_ERR_VALIDATION, NULL, "Query key condition not supported");
  if (pk == NULL)
    return tt_error_set(err, TT_ERR_VALIDATION, NULL,
                        "Query condition missed key schema element: %s", pk_name);
  if (not_indexable(pk))
    return tt_error_set(err, TT_ERR_VALIDATION, NULL,
                        "Attempted conditional constraint is not an indexable operation");
  out->pk = pk->ops[1]->kind == XOP_VALUE ? pk->ops[1]->value : NULL;
  if (pk->kind != XC_CMP || pk->cmp != XCMP_EQ)
    return tt_error_set(err, TT_ERR_VALIDATION, NULL, "Query key condition not supported");
  if (sk == NULL) {
    if (e->nkey_leaves > 1)
      return tt_error_set(err, TT_ERR_VALIDATION, NULL,
                          "Query condition missed key schema element: %s", sk_name);
    return 0;
  }
  if (not_indexable(sk))
    return tt_error_set(err, TT_ERR_VALIDATION, NULL,
                        "Attempted conditional constraint is not an indexable operation");
  static const enum tt_expr_key_op of_cmp[] = {
      [XCMP_EQ] = TT_EXPR_KEY_EQ, [XCMP_LT] = TT_EXPR_KEY_LT, [XCMP_LE] = TT_EXPR_KEY_LE,
      [XCMP_GT] = TT_EXPR_KEY_GT, [XCMP_GE] = TT_EXPR_KEY_GE};
  out->lo = sk->ops[1]->value;
  out->hi = sk->kind == XC_BETWEEN ? sk->ops[2]->value : NULL;
  out->op = sk->kind == XC_BETWEEN       ? TT_EXPR_KEY_BETWEEN
            : sk->kind == XC_BEGINS_WITH ? TT_EXPR_KEY_BEGINS_WITH
                                         : of_cmp[sk->cmp];
  return 0;
}

/* ---- which attributes a condition reads ---------------------------------- */

static bool operand_reads(const struct xoperand *o, const char *name, size_t n, size_t depth) {
  if (o == NULL)
    return false;
  switch (o->kind) {
  case XOP_PATH:
  case XOP_SIZE:
  case XOP_IF_NOT_EXISTS:
    return path_under(&o->path, name, n, depth) ||
           (o->kind == XOP_IF_NOT_EXISTS && operand_reads(o->b, name, n, depth));
  case XOP_LIST_APPEND:
  case XOP_PLUS:
  case XOP_MINUS:
    return operand_reads(o->a, name, n, depth) || operand_reads(o->b, name, n, depth);
  case XOP_VALUE:
    break;
  }
  return false;
}

static bool cond_reads(const struct xcond *c, const char *name, size_t n, size_t depth) {
  if (c == NULL)
    return false;
  if (cond_reads(c->l, name, n, depth) || cond_reads(c->r, name, n, depth))
    return true;
  for (size_t i = 0; i < c->nops; i++)
    if (operand_reads(c->ops[i], name, n, depth))
      return true;
  return false;
}

bool tt_expr_condition_refers(const struct tt_expr *e, const char *name) {
  return e && cond_reads(e->cond, name, strlen(name), 1);
}

bool tt_expr_nested_under(const struct tt_expr *e, const char *name) {
  if (e == NULL || name == NULL)
    return false;
  size_t n = strlen(name);
  for (size_t i = 0; i < e->npaths; i++)
    if (path_under(&e->paths[i], name, n, 2))
      return true;
  for (size_t i = 0; i < e->nactions; i++)
    if (path_under(&e->actions[i].path, name, n, 2) ||
        operand_reads(e->actions[i].value, name, n, 2))
      return true;
  return cond_reads(e->cond, name, n, 2);
}

int tt_expr_update_static_type(const struct tt_expr *e, const char *name) {
  if (e == NULL || name == NULL || e->kind != TT_EXPR_UPDATE)
    return 0;
  size_t n = strlen(name);
  for (size_t i = 0; i < e->nactions; i++)
    if (path_is(&e->actions[i].path, name, n))
      return e->actions[i].kind == XA_REMOVE ? 0
                                             : (int)tt_expr__operand_type(e->actions[i].value);
  return 0;
}

bool tt_expr_update_sets(const struct tt_expr *e, const char *name) {
  if (e == NULL || name == NULL || e->kind != TT_EXPR_UPDATE)
    return false;
  size_t n = strlen(name);
  for (size_t i = 0; i < e->nactions; i++)
    if (e->actions[i].kind == XA_SET && path_is(&e->actions[i].path, name, n))
      return true;
  return false;
}
