/* SPDX-License-Identifier: Apache-2.0 */
/* internal.h -- the syntax tree shared by the expression parser and evaluator. */
#ifndef TT_EXPR_INTERNAL_H
#define TT_EXPR_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "expr/expr.h"
#include "util/arena.h"

/* One step of a document path: a map key or a list index. */
struct xseg {
  const char *name; /* resolved attribute name (arena), NULL for an index */
  size_t name_len;
  size_t index;
};

struct xpath {
  struct xseg *segs;
  size_t n; /* >= 1; segs[0] is always a name */
};

enum xop_kind {
  XOP_PATH = 1,     /* path */
  XOP_VALUE,        /* value: a borrowed ExpressionAttributeValues entry */
  XOP_SIZE,         /* size(path) */
  XOP_LIST_APPEND,  /* list_append(a, b) */
  XOP_IF_NOT_EXISTS,/* if_not_exists(path, b) */
  XOP_PLUS,         /* a + b */
  XOP_MINUS         /* a - b */
};

struct xoperand {
  enum xop_kind kind;
  struct xpath path;         /* PATH, SIZE, IF_NOT_EXISTS */
  const struct tt_av *value; /* VALUE */
  const char *value_name;    /* VALUE: the ":x" placeholder (arena) */
  struct xoperand *a, *b;    /* LIST_APPEND, PLUS, MINUS; b for IF_NOT_EXISTS */
};

enum xcond_kind {
  XC_AND = 1,
  XC_OR,
  XC_NOT,
  XC_CMP,         /* ops[0] cmp ops[1] */
  XC_BETWEEN,     /* ops[0] BETWEEN ops[1] AND ops[2] */
  XC_IN,          /* ops[0] IN (ops[1..]) */
  XC_EXISTS,      /* attribute_exists(ops[0]); to XC_CONTAINS in the parser's order */
  XC_NOT_EXISTS,  /* attribute_not_exists(ops[0]) */
  XC_TYPE,        /* attribute_type(ops[0], type) */
  XC_BEGINS_WITH, /* begins_with(ops[0], ops[1]) */
  XC_CONTAINS     /* contains(ops[0], ops[1]) */
};

enum xcmp { XCMP_EQ = 1, XCMP_NE, XCMP_LT, XCMP_LE, XCMP_GT, XCMP_GE };

struct xcond {
  enum xcond_kind kind;
  enum xcmp cmp;         /* XC_CMP */
  enum tt_av_type type;  /* XC_TYPE */
  struct xcond *l, *r;   /* AND, OR (both), NOT (l) */
  struct xoperand **ops;
  size_t nops;
};

enum xact_kind { XA_SET = 1, XA_REMOVE, XA_ADD, XA_DELETE };

struct xaction {
  enum xact_kind kind;
  struct xpath path;
  struct xoperand *value; /* SET: the value; ADD/DELETE: a XOP_VALUE; REMOVE: NULL */
};

/* A projection path set as a tree, built once at parse time, so that
 * projecting list elements keeps them in index order. */
struct xpnode {
  bool leaf;            /* take the whole value here */
  bool by_index;        /* children are list indexes (else map keys) */
  struct xpchild *kids; /* linked list, any order */
  size_t nkids;
};

struct xpchild {
  struct xseg seg;
  struct xpnode node;
  struct xpchild *next;
};

struct tt_expr {
  enum tt_expr_kind kind;
  struct tt_arena arena;
  struct xcond *cond;                   /* CONDITION, FILTER, KEY_CONDITION */
  struct xaction *actions;              /* UPDATE, in text order */
  size_t nactions;
  struct xpath *paths;                  /* PROJECTION */
  size_t npaths;
  struct xpnode proj;                   /* PROJECTION as a tree */
  struct xcond *key_leaves[2];          /* KEY_CONDITION: the one or two conditions */
  size_t nkey_leaves;
  const struct tt_av *names, *values;   /* identity of the maps, for unused checks */
  bool *names_used, *values_used;       /* per member of names / values */
};

static inline bool tt_expr__is_scalar(enum tt_av_type t) {
  return t == TT_AV_S || t == TT_AV_N || t == TT_AV_B;
}

/* The type an operand is known to have before evaluation (a value's, N for
 * size(), + and -, L for list_append, if_not_exists's default's), else 0. */
enum tt_av_type tt_expr__operand_type(const struct xoperand *o);

#endif
