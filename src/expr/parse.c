/* SPDX-License-Identifier: Apache-2.0 */
/* parse.c -- tokenizer and recursive-descent parser for DynamoDB's expression languages. */
#include "expr/internal.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* DynamoDB's documented limits: 300 operators or functions per expression,
 * 100 operands of IN, 32 levels of document path. Parentheses are bounded
 * too so hostile input cannot exhaust the C stack. */
#define MAX_OPERATORS 300
#define MAX_IN_OPERANDS 100
#define MAX_PATH_DEPTH 32
#define MAX_NESTING 100

enum tok {
  T_EOF = 0,
  T_IDENT,
  T_NAME,   /* #name */
  T_VALUE,  /* :value */
  T_NUMBER, /* digits, only valid as a list index */
  T_LP,
  T_RP,
  T_LB,
  T_RB,
  T_COMMA,
  T_DOT,
  T_EQ, /* T_EQ to T_GE: the comparators, in enum xcmp's order */
  T_NE,
  T_LT,
  T_LE,
  T_GT,
  T_GE,
  T_PLUS,
  T_MINUS,
  T_BAD /* a character no token starts with */
};

struct token {
  enum tok t;
  size_t off, len;
};

/* The categories of error DynamoDB reports after parsing the whole text
 * (a syntax error anywhere wins over all of them). Each keeps the first
 * error found in it; which category is reported depends on the kind of
 * expression (see report_order). */
enum cat {
  K_PARENS = 0, /* redundant parentheses */
  K_FUNC_NAME,  /* unknown function, or one not allowed in this kind */
  K_MISUSED,    /* a function used where it cannot be */
  K_RESERVED,   /* reserved word as an attribute name */
  K_SECTION,    /* an update section used twice */
  K_NAME,       /* undefined #name (in a condition: or :value) */
  K_VALUE,      /* undefined :value in an update expression */
  K_OVERLAP,    /* two paths overlap */
  K_CONFLICT,   /* two paths conflict */
  K_OPERAND,    /* ADD / DELETE operand type */
  K_COUNT,      /* number of operands of a condition function */
  K_DISTINCT,   /* non-distinct operands */
  K_FUNCTION,   /* operand types and kinds of operators and functions */
  K_SIZE_PATH,  /* size() of something else than a path */
  K_CONDITION,  /* condition: the first of NAME, COUNT, DISTINCT, FUNCTION
                 * present when the first comparison or function is read */
  K_NCAT
};

struct parser {
  const char *text;
  struct token *toks;
  size_t *match; /* per token: the index of the matching ')' of a '(' */
  size_t ntok, pos;
  struct tt_expr *e;
  const char *prefix; /* "Invalid ConditionExpression: " */
  const struct tt_av *names, *values;
  struct tt_error *err;
  int operators;
  int nesting;
  unsigned cats; /* bit per enum cat found so far */
  char msgs[K_NCAT][200];
};

#define NO_MATCH SIZE_MAX

static bool is_update(struct parser *p) { return p->e->kind == TT_EXPR_UPDATE; }

static bool is_cond_kind(enum tt_expr_kind k) {
  return k == TT_EXPR_CONDITION || k == TT_EXPR_FILTER || k == TT_EXPR_KEY_CONDITION;
}

/* The order in which categories are reported, per kind of expression, up
 * to K_NCAT; the categories a kind does not list come after, in enum order. */
static const enum cat *report_order(enum tt_expr_kind k) {
  static const enum cat cond[] = {K_PARENS,   K_FUNC_NAME, K_MISUSED,  K_RESERVED,
                                  K_CONDITION, K_NAME,     K_COUNT,    K_DISTINCT,
                                  K_FUNCTION,  K_SIZE_PATH, K_NCAT};
  static const enum cat upd[] = {K_RESERVED, K_FUNC_NAME, K_SECTION,  K_NAME,
                                 K_VALUE,    K_OVERLAP,   K_CONFLICT, K_OPERAND,
                                 K_FUNCTION, K_SIZE_PATH, K_NCAT};
  static const enum cat proj[] = {K_RESERVED, K_NAME, K_OVERLAP, K_CONFLICT, K_NCAT};
  return k == TT_EXPR_UPDATE ? upd : k == TT_EXPR_PROJECTION ? proj : cond;
}

/* The message of the category to report, or NULL when none was found. */
static const char *pending(const struct parser *p) {
  if (p->cats == 0)
    return NULL;
  for (const enum cat *c = report_order(p->e ? p->e->kind : TT_EXPR_CONDITION); *c != K_NCAT; c++)
    if (p->cats & (1u << *c))
      return p->msgs[*c];
  for (int c = 0; c < K_NCAT; c++)
    if (p->cats & (1u << c))
      return p->msgs[c];
  return NULL;
}

/* ---- errors ------------------------------------------------------------ */

/* Copies text into a message, replacing bytes that are not printable ASCII:
 * the message becomes a JSON string later and must stay valid UTF-8 even
 * when truncated. */
static void safe_copy(char *dst, size_t cap, const char *s, size_t n) {
  size_t j = 0;
  for (size_t i = 0; i < n && j + 1 < cap; i++) {
    unsigned char c = (unsigned char)s[i];
    dst[j++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
  }
  dst[j] = '\0';
}

static int fail(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An error that stops the parse (limits): it loses to a category already
 * found. A syntax error (syntax_error) is reported as is. */
static int fail(struct parser *p, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  const char *pend = pending(p);
  return tt_error_set(p->err, TT_ERR_VALIDATION, NULL, "%s%s", p->prefix, pend ? pend : msg);
}

/* Keeps the first error of a category for the end of the parse. */
static void defer(struct parser *p, enum cat c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void defer(struct parser *p, enum cat c, const char *fmt, ...) {
  if (p->cats & (1u << c))
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->msgs[c], sizeof(p->msgs[c]), fmt, ap);
  va_end(ap);
  p->cats |= 1u << c;
}

/* At the end of a comparison or function condition: the first one read
 * with an error of these categories fixes the one a condition reports. */
static void snap_condition(struct parser *p) {
  static const enum cat order[] = {K_NAME, K_COUNT, K_DISTINCT, K_FUNCTION};
  if (p->cats & (1u << K_CONDITION))
    return;
  for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
    if (p->cats & (1u << order[i])) {
      memcpy(p->msgs[K_CONDITION], p->msgs[order[i]], sizeof(p->msgs[0]));
      p->cats |= 1u << K_CONDITION;
      return;
    }
}

/* Enters one more level of nesting: -1 after failing past MAX_NESTING. */
static int nest(struct parser *p) {
  return ++p->nesting > MAX_NESTING ? fail(p, "The expression is nested too deeply") : 0;
}

static int fail_oom(struct parser *p) {
  return tt_error_set(p->err, TT_ERR_INTERNAL, NULL, "out of memory while parsing an expression");
}

/* DynamoDB's syntax error: the offending token and the text from the token
 * before it to the token after it. */
static int syntax_error(struct parser *p, size_t i) {
  char tok[64] = "<EOF>", near[128];
  const struct token *t = &p->toks[i];
  size_t start = 0, end = 0;
  if (t->t == T_EOF) {
    if (i > 0) {
      start = p->toks[i - 1].off;
      end = p->toks[i - 1].off + p->toks[i - 1].len;
    }
  } else {
    safe_copy(tok, sizeof(tok), p->text + t->off, t->len);
    start = i > 0 ? p->toks[i - 1].off : t->off;
    end = t->off + t->len;
    if (i + 1 < p->ntok && p->toks[i + 1].t != T_EOF)
      end = p->toks[i + 1].off + p->toks[i + 1].len;
  }
  safe_copy(near, sizeof(near), p->text + start, end - start);
  return tt_error_set(p->err, TT_ERR_VALIDATION, NULL,
                      "%sSyntax error; token: \"%s\", near: \"%s\"", p->prefix, tok, near);
}

/* ---- tokenizer --------------------------------------------------------- */

static bool is_ident_start(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_ident_char(unsigned char c) {
  return is_ident_start(c) || (c >= '0' && c <= '9');
}

/* The token each punctuation character starts (T_EOF: none); '<' and '>'
 * may take the next character. */
static const enum tok single[0x80] = {
    ['('] = T_LP,    [')'] = T_RP,  ['['] = T_LB, [']'] = T_RB, [','] = T_COMMA, ['.'] = T_DOT,
    ['='] = T_EQ,    ['<'] = T_LT,  ['>'] = T_GT, ['+'] = T_PLUS, ['-'] = T_MINUS};

static int tokenize(struct parser *p) {
  const char *s = p->text;
  size_t n = strlen(s), i = 0, cap = 16;
  p->toks = malloc(cap * sizeof(*p->toks));
  if (p->toks == NULL)
    return fail_oom(p);
  p->ntok = 0;
  for (;;) {
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
      i++;
    if (p->ntok + 1 >= cap) {
      struct token *nt = realloc(p->toks, cap * 2 * sizeof(*nt));
      if (nt == NULL)
        return fail_oom(p);
      p->toks = nt;
      cap *= 2;
    }
    struct token *t = &p->toks[p->ntok++];
    t->off = i;
    t->len = 1;
    if (i >= n) {
      t->t = T_EOF;
      t->len = 0;
      return 0;
    }
    unsigned char c = (unsigned char)s[i];
    if (is_ident_start(c)) {
      size_t j = i + 1;
      while (j < n && is_ident_char((unsigned char)s[j]))
        j++;
      t->t = T_IDENT;
      t->len = j - i;
    } else if (c >= '0' && c <= '9') {
      size_t j = i + 1;
      while (j < n && s[j] >= '0' && s[j] <= '9')
        j++;
      t->t = T_NUMBER;
      t->len = j - i;
    } else if (c == '#' || c == ':') {
      size_t j = i + 1;
      while (j < n && is_ident_char((unsigned char)s[j]))
        j++;
      t->t = j == i + 1 ? T_BAD : (c == '#' ? T_NAME : T_VALUE);
      t->len = j - i;
    } else if (c < 0x80 && single[c] != T_EOF) {
      t->t = single[c];
      char d = i + 1 < n ? s[i + 1] : '\0';
      if ((c == '<' || c == '>') && d == '=')
        t->t = c == '<' ? T_LE : T_GE;
      else if (c == '<' && d == '>')
        t->t = T_NE;
      t->len = t->t == single[c] ? 1 : 2;
    } else {
      t->t = T_BAD;
      /* Keep a multibyte character whole in the token. */
      if (c >= 0xc0)
        while (i + t->len < n && ((unsigned char)s[i + t->len] & 0xc0) == 0x80)
          t->len++;
    }
    if (t->t == T_BAD)
      return syntax_error(p, p->ntok - 1);
    i += t->len;
  }
}

/* Pairs each '(' with its ')' (NO_MATCH when it has none). */
static int match_parens(struct parser *p) {
  size_t *stack = malloc(p->ntok * sizeof(*stack));
  p->match = malloc(p->ntok * sizeof(*p->match));
  if (stack == NULL || p->match == NULL) {
    free(stack);
    return fail_oom(p);
  }
  size_t depth = 0;
  for (size_t i = 0; i < p->ntok; i++) {
    p->match[i] = NO_MATCH;
    if (p->toks[i].t == T_LP)
      stack[depth++] = i;
    else if (p->toks[i].t == T_RP && depth > 0)
      p->match[stack[--depth]] = i;
  }
  free(stack);
  return 0;
}

/* ---- helpers ----------------------------------------------------------- */

static const struct token *peek(struct parser *p) { return &p->toks[p->pos]; }

static const struct token *peek2(struct parser *p) {
  return p->pos + 1 < p->ntok ? &p->toks[p->pos + 1] : &p->toks[p->ntok - 1];
}

static bool tok_is_word(struct parser *p, const struct token *t, const char *word) {
  return t->t == T_IDENT && t->len == strlen(word) &&
         strncasecmp(p->text + t->off, word, t->len) == 0;
}

static int expect(struct parser *p, enum tok t) {
  if (peek(p)->t != t)
    return syntax_error(p, p->pos);
  p->pos++;
  return 0;
}

static void *alloc(struct parser *p, size_t n) {
  void *m = tt_arena_alloc(&p->e->arena, n);
  if (m == NULL)
    fail_oom(p);
  return m;
}

static int count_operator(struct parser *p) {
  if (++p->operators > MAX_OPERATORS)
    return fail(p, "The expression contains too many operators; operator count: %d",
                p->operators);
  return 0;
}

/* Index of the member called (s, n) in an M value, or -1. Linear on purpose:
 * placeholder maps are small and this does not assume their order. */
static long map_find(const struct tt_av *map, const char *s, size_t n) {
  if (map == NULL || map->type != TT_AV_M)
    return -1;
  for (size_t i = 0; i < map->len; i++) {
    const struct tt_av_member *m = &map->u.members[i];
    if (m->name_len == n && memcmp(m->name, s, n) == 0)
      return (long)i;
  }
  return -1;
}

/* The long type names DynamoDB uses in ADD/DELETE operand errors. */
static const char *av_type_long(enum tt_av_type t) {
  switch (t) {
  case TT_AV_S: return "STRING";
  case TT_AV_N: return "NUMBER";
  case TT_AV_B: return "BINARY";
  case TT_AV_BOOL: return "BOOLEAN";
  case TT_AV_NULL: return "NULL";
  case TT_AV_SS: return "STRING_SET";
  case TT_AV_NS: return "NUMBER_SET";
  case TT_AV_BS: return "BINARY_SET";
  case TT_AV_M: return "MAP";
  case TT_AV_L: return "LIST";
  }
  return "?";
}

/* ---- paths and operands ------------------------------------------------ */

/* Whether the identifier t is a word of the grammar, never an attribute
 * name, in this kind of expression. */
static bool is_grammar_word(struct parser *p, const struct token *t) {
  static const char *const cond[] = {"AND", "OR", "NOT", "BETWEEN", "IN"};
  static const char *const upd[] = {"SET", "REMOVE", "ADD", "DELETE"};
  bool u = is_update(p);
  size_t n = u ? sizeof(upd) / sizeof(upd[0]) : sizeof(cond) / sizeof(cond[0]);
  for (size_t i = 0; i < n; i++)
    if (tok_is_word(p, t, u ? upd[i] : cond[i]))
      return true;
  return false;
}

/* Appends one name segment from an identifier or a #placeholder token. */
static int path_name(struct parser *p, const struct token *t, struct xseg *seg) {
  const char *s = p->text + t->off;
  if (t->t == T_IDENT) {
    if (is_grammar_word(p, t))
      return syntax_error(p, (size_t)(t - p->toks));
    if (tt_expr_is_reserved(s, t->len)) {
      char w[32];
      safe_copy(w, sizeof(w), s, t->len);
      defer(p, K_RESERVED, "Attribute name is a reserved keyword; reserved keyword: %s", w);
    }
    seg->name = tt_arena_strndup(&p->e->arena, s, t->len);
    seg->name_len = t->len;
  } else {
    long i = map_find(p->names, s, t->len);
    if (i < 0) {
      char w[64];
      safe_copy(w, sizeof(w), s, t->len);
      defer(p, K_NAME,
            "An expression attribute name used in the document path is not defined; "
            "attribute name: %s",
            w);
      seg->name = tt_arena_strndup(&p->e->arena, s, t->len);
      seg->name_len = t->len;
      return seg->name == NULL ? fail_oom(p) : 0;
    }
    const struct tt_av *v = &p->names->u.members[i].value;
    if (v->type != TT_AV_S)
      return fail(p, "ExpressionAttributeNames values must be strings");
    p->e->names_used[i] = true;
    seg->name = tt_arena_strndup(&p->e->arena, v->u.bytes, v->len);
    seg->name_len = v->len;
  }
  if (seg->name == NULL)
    return fail_oom(p);
  return 0;
}

/* Whether the '(' at token i and the one after it close at neighbouring
 * tokens: "((x))". */
static bool double_parens(const struct parser *p, size_t i) {
  return p->toks[i].t == T_LP && p->toks[i + 1].t == T_LP && p->match[i] != NO_MATCH &&
         p->match[i + 1] != NO_MATCH && p->match[i + 1] + 1 == p->match[i];
}

/* Enters the '(' at p->pos, and the one after it when they are redundant
 * ("((x))", deferred as such). Returns how many, or -1 past MAX_NESTING. */
static int enter_parens(struct parser *p) {
  int opens = double_parens(p, p->pos) ? 2 : 1;
  if (opens == 2)
    defer(p, K_PARENS, "The expression has redundant parentheses;");
  if (nest(p) != 0)
    return -1;
  p->pos += (size_t)opens;
  return opens;
}

/* Leaves what enter_parens entered: 0, or -1 at a missing ')'. */
static int leave_parens(struct parser *p, int opens) {
  for (int i = 0; i < opens; i++)
    if (expect(p, T_RP) != 0)
      return -1;
  p->nesting--;
  return 0;
}

static int parse_path_segs(struct parser *p, struct xseg *segs, size_t *np);

/* The head of a path: a name, or in a condition a parenthesized path
 * ("(a.b).c"). */
static int parse_path_head(struct parser *p, struct xseg *segs, size_t *np) {
  const struct token *t = peek(p);
  if (t->t == T_LP && is_cond_kind(p->e->kind)) {
    int opens = enter_parens(p);
    return opens < 0 || parse_path_segs(p, segs, np) != 0 ? -1 : leave_parens(p, opens);
  }
  if (t->t != T_IDENT && t->t != T_NAME)
    return syntax_error(p, p->pos);
  if (path_name(p, t, &segs[0]) != 0)
    return -1;
  p->pos++;
  *np = 1;
  return 0;
}

/* segs holds MAX_PATH_DEPTH + 1 entries. */
static int parse_path_segs(struct parser *p, struct xseg *segs, size_t *np) {
  size_t n = 0;
  if (parse_path_head(p, segs, &n) != 0)
    return -1;
  for (;;) {
    const struct token *t = peek(p);
    if (t->t != T_DOT && t->t != T_LB)
      break;
    if (n == MAX_PATH_DEPTH)
      return fail(p, "The document path has too many nesting levels; nesting levels: %zu",
                  n + 1);
    p->pos++;
    const struct token *u = peek(p);
    if (t->t == T_DOT) {
      if (u->t != T_IDENT && u->t != T_NAME)
        return syntax_error(p, p->pos);
      if (path_name(p, u, &segs[n]) != 0)
        return -1;
      p->pos++;
    } else {
      if (u->t != T_NUMBER)
        return syntax_error(p, p->pos);
      size_t idx = 0;
      for (size_t k = 0; k < u->len; k++) {
        size_t d = (size_t)(p->text[u->off + k] - '0');
        /* Saturate: any index this large is past the end of every list. */
        idx = idx > (SIZE_MAX - d) / 10 ? SIZE_MAX : idx * 10 + d;
      }
      segs[n].name = NULL;
      segs[n].name_len = 0;
      segs[n].index = idx;
      p->pos++;
      if (expect(p, T_RB) != 0)
        return -1;
    }
    n++;
  }
  *np = n;
  return 0;
}

static int parse_path(struct parser *p, struct xpath *out) {
  struct xseg segs[MAX_PATH_DEPTH + 1];
  size_t n = 0;
  if (parse_path_segs(p, segs, &n) != 0)
    return -1;
  out->segs = alloc(p, n * sizeof(*segs));
  if (out->segs == NULL)
    return -1;
  memcpy(out->segs, segs, n * sizeof(*segs));
  out->n = n;
  return 0;
}

static struct xoperand *new_operand(struct parser *p, enum xop_kind k) {
  struct xoperand *o = alloc(p, sizeof(*o));
  if (o)
    o->kind = k;
  return o;
}

/* What an undefined :value, or an operand found wrong, stands for while
 * the parse goes on (never evaluated: the parse fails). Type checks skip
 * it. */
static const struct tt_av missing = {.type = TT_AV_NULL};

static struct xoperand *dummy_operand(struct parser *p) {
  struct xoperand *o = new_operand(p, XOP_VALUE);
  if (o) {
    o->value = &missing;
    o->value_name = "";
  }
  return o;
}

static struct xoperand *parse_value_ref(struct parser *p) {
  const struct token *t = peek(p);
  const char *s = p->text + t->off;
  long i = map_find(p->values, s, t->len);
  if (i < 0) {
    /* Parsing goes on with a stand-in in its place. */
    char w[64];
    safe_copy(w, sizeof(w), s, t->len);
    defer(p, is_update(p) ? K_VALUE : K_NAME,
          "An expression attribute value used in expression is not defined; attribute value: %s",
          w);
  } else {
    p->e->values_used[i] = true;
  }
  struct xoperand *o = new_operand(p, XOP_VALUE);
  if (o == NULL)
    return NULL;
  o->value = i < 0 ? &missing : &p->values->u.members[i].value;
  if ((o->value_name = tt_arena_strndup(&p->e->arena, s, t->len)) == NULL) {
    fail_oom(p);
    return NULL;
  }
  p->pos++;
  return o;
}

/* Function names are case-sensitive in DynamoDB. The condition functions
 * come first, in enum xcond_kind's order, and the update functions last. */
enum func {
  F_UNKNOWN = 0,
  F_ATTRIBUTE_EXISTS,
  F_ATTRIBUTE_NOT_EXISTS,
  F_ATTRIBUTE_TYPE,
  F_BEGINS_WITH,
  F_CONTAINS,
  F_SIZE,
  F_LIST_APPEND,
  F_IF_NOT_EXISTS
};

/* The parser maps condition functions to enum xcond_kind, and tells the
 * kinds of functions apart, by their places in this order. */
_Static_assert(F_ATTRIBUTE_NOT_EXISTS - F_ATTRIBUTE_EXISTS == XC_NOT_EXISTS - XC_EXISTS &&
                   F_ATTRIBUTE_TYPE - F_ATTRIBUTE_EXISTS == XC_TYPE - XC_EXISTS &&
                   F_BEGINS_WITH - F_ATTRIBUTE_EXISTS == XC_BEGINS_WITH - XC_EXISTS &&
                   F_CONTAINS - F_ATTRIBUTE_EXISTS == XC_CONTAINS - XC_EXISTS &&
                   F_SIZE == F_CONTAINS + 1 && F_LIST_APPEND == F_SIZE + 1 &&
                   F_IF_NOT_EXISTS == F_LIST_APPEND + 1,
               "enum func: the condition functions in enum xcond_kind's order, then size, "
               "then the update functions");

static const char *const func_names[] = {
    [F_UNKNOWN] = "",
    [F_ATTRIBUTE_EXISTS] = "attribute_exists",
    [F_ATTRIBUTE_NOT_EXISTS] = "attribute_not_exists",
    [F_ATTRIBUTE_TYPE] = "attribute_type",
    [F_BEGINS_WITH] = "begins_with",
    [F_CONTAINS] = "contains",
    [F_SIZE] = "size",
    [F_LIST_APPEND] = "list_append",
    [F_IF_NOT_EXISTS] = "if_not_exists",
};

static enum func func_lookup(struct parser *p, const struct token *t) {
  for (size_t i = 1; i < sizeof(func_names) / sizeof(func_names[0]); i++)
    if (t->t == T_IDENT && t->len == strlen(func_names[i]) &&
        memcmp(p->text + t->off, func_names[i], t->len) == 0)
      return (enum func)i;
  return F_UNKNOWN;
}

enum tt_av_type tt_expr__operand_type(const struct xoperand *o) {
  switch (o->kind) {
  case XOP_VALUE: return o->value == &missing ? 0 : o->value->type;
  case XOP_SIZE:
  case XOP_PLUS:
  case XOP_MINUS: return TT_AV_N;
  case XOP_LIST_APPEND: return TT_AV_L;
  case XOP_IF_NOT_EXISTS: return tt_expr__operand_type(o->b);
  case XOP_PATH: return 0;
  }
  return 0;
}

static void operand_type_error(struct parser *p, const char *what, enum tt_av_type t) {
  defer(p, K_FUNCTION,
        "Incorrect operand type for operator or function; operator or function: %s, "
        "operand type: %s",
        what, tt_av_type_name(t));
}

/* A function call as read: the operands of a known function, checked as
 * DynamoDB checks them (names, number of operands, distinct operands,
 * types). */
struct call {
  enum func f;
  struct xoperand **args;
  size_t nargs;
  bool ok; /* known here, right operand count and kinds */
};

static struct xoperand *parse_operand(struct parser *p);
static struct xoperand *parse_operand_parens(struct parser *p);
static bool same_path(const struct xpath *a, const struct xpath *b);
static void format_path(char *buf, size_t cap, const struct xpath *path);

/* DynamoDB refuses an operator or function whose first operand is the
 * path of another (`op` names it). */
static void check_distinct(struct parser *p, const struct xoperand *a, const struct xoperand *b,
                           const char *op) {
  if (a->kind != XOP_PATH || b->kind != XOP_PATH || !same_path(&a->path, &b->path))
    return;
  char buf[128];
  format_path(buf, sizeof(buf), &a->path);
  defer(p, K_DISTINCT,
        "The first operand must be distinct from the remaining operands for this operator "
        "or function; operator: %s, first operand: %s",
        op, buf);
}

/* Whether the value operands among o[0..n) are scalars; after an operand
 * type error for `op` when not. */
static bool scalar_values(struct parser *p, struct xoperand *const *o, size_t n, const char *op) {
  for (size_t i = 0; i < n; i++)
    if (o[i]->kind == XOP_VALUE && o[i]->value != &missing &&
        !tt_expr__is_scalar(o[i]->value->type)) {
      operand_type_error(p, op, o[i]->value->type);
      return false;
    }
  return true;
}

static void check_call(struct parser *p, struct call *c, const char *name) {
  enum func f = c->f;
  bool upd = is_update(p);
  c->ok = false;
  if (f == F_UNKNOWN) {
    defer(p, K_FUNC_NAME, "Invalid function name; function: %s", name);
    return;
  }
  if (upd != (f >= F_LIST_APPEND)) {
    defer(p, K_FUNC_NAME, "The function is not allowed in %s expression; function: %s",
          upd ? "an update" : "a condition", name);
    return;
  }
  size_t want = f <= F_ATTRIBUTE_NOT_EXISTS || f == F_SIZE ? 1 : 2;
  if (c->nargs != want) {
    defer(p, upd ? K_FUNCTION : K_COUNT,
          "Incorrect number of operands for operator or function; operator or function: "
          "%s, number of operands: %zu",
          func_names[f], c->nargs);
    return;
  }
  struct xoperand **a = c->args;
  if (want == 2 && !upd)
    check_distinct(p, a[0], a[1], func_names[f]);
  enum tt_av_type t;
  switch (f) {
  case F_ATTRIBUTE_EXISTS:
  case F_ATTRIBUTE_NOT_EXISTS:
  case F_IF_NOT_EXISTS:
  case F_ATTRIBUTE_TYPE:
    if (a[0]->kind != XOP_PATH) {
      defer(p, K_FUNCTION,
            "Operator or function requires a document path; operator or function: %s",
            func_names[f]);
      return;
    }
    if (f == F_ATTRIBUTE_TYPE && (t = tt_expr__operand_type(a[1])) != TT_AV_S) {
      if (t != 0)
        operand_type_error(p, "attribute_type", t);
      else if (a[1]->kind == XOP_PATH)
        defer(p, K_FUNCTION, "Incorrect operand type for operator or function; operator or "
                             "function: attribute_type, operand type: document path");
      return;
    }
    break;
  case F_BEGINS_WITH:
    for (size_t i = 0; i < 2; i++)
      if ((t = tt_expr__operand_type(a[i])) != 0 && t != TT_AV_S && t != TT_AV_B) {
        operand_type_error(p, "begins_with", t);
        return;
      }
    break;
  case F_SIZE:
    if ((t = tt_expr__operand_type(a[0])) == TT_AV_N || t == TT_AV_BOOL || t == TT_AV_NULL) {
      operand_type_error(p, "size", t);
      return;
    }
    if (a[0]->kind != XOP_PATH) {
      defer(p, K_SIZE_PATH,
            "Operator or function requires a document path; operator or function: size");
      return;
    }
    break;
  case F_LIST_APPEND:
    for (size_t i = 0; i < 2; i++)
      if (a[i]->kind == XOP_VALUE && (t = tt_expr__operand_type(a[i])) != 0 &&
          t != TT_AV_L) {
        operand_type_error(p, "list_append", t);
        return;
      }
    break;
  default:
    break;
  }
  c->ok = true;
}

/* Operands up to a ")" (consumed), separated by commas: parse_operand's
 * when `any`, else parse_operand_parens'. The first `cap` land in
 * tmp[*n...]; the rest are only counted in *n. */
static int operand_list(struct parser *p, bool any, struct xoperand **tmp, size_t cap,
                        size_t *n) {
  for (;;) {
    struct xoperand *o = any ? parse_operand(p) : parse_operand_parens(p);
    if (o == NULL)
      return -1;
    if (*n < cap)
      tmp[*n] = o;
    (*n)++;
    if (peek(p)->t != T_COMMA)
      break;
    p->pos++;
  }
  return expect(p, T_RP);
}

/* A function (its name at token t) used where it gives no operand. */
static void misused(struct parser *p, const struct token *t) {
  char name[64];
  safe_copy(name, sizeof(name), p->text + t->off, t->len);
  defer(p, K_MISUSED,
        "The function is not allowed to be used this way in an expression; function: %s", name);
}

/* Parses "name ( operand, ... )"; p->pos is at the name. */
static int parse_call(struct parser *p, struct call *c) {
  struct xoperand *tmp[8];
  size_t n = 0;
  const struct token *t = peek(p);
  char name[64];
  safe_copy(name, sizeof(name), p->text + t->off, t->len);
  c->f = func_lookup(p, t);
  if (count_operator(p) != 0)
    return -1;
  if (nest(p) != 0)
    return -1;
  p->pos++; /* name */
  if (expect(p, T_LP) != 0)
    return -1;
  if (operand_list(p, is_update(p), tmp, sizeof(tmp) / sizeof(tmp[0]), &n) != 0)
    return -1;
  p->nesting--;
  /* Operands past tmp's size are only counted (a wrong number anyway). */
  size_t keep = n < sizeof(tmp) / sizeof(tmp[0]) ? n : sizeof(tmp) / sizeof(tmp[0]);
  c->args = alloc(p, keep * sizeof(*c->args));
  if (c->args == NULL)
    return -1;
  memcpy(c->args, tmp, keep * sizeof(*c->args));
  c->nargs = n;
  check_call(p, c, name);
  return 0;
}

/* The operand a function call gives (a dummy when it is wrong or not one
 * that gives a value). */
static struct xoperand *call_operand(struct parser *p, const struct call *c) {
  enum func f = c->f;
  if (!c->ok || (f != F_SIZE && f != F_IF_NOT_EXISTS && f != F_LIST_APPEND))
    return dummy_operand(p);
  struct xoperand *o = new_operand(p, f == F_SIZE           ? XOP_SIZE
                                      : f == F_IF_NOT_EXISTS ? XOP_IF_NOT_EXISTS
                                                             : XOP_LIST_APPEND);
  if (o == NULL)
    return NULL;
  if (f == F_LIST_APPEND)
    o->a = c->args[0];
  else
    o->path = c->args[0]->path; /* size(path), if_not_exists(path, b) */
  if (f != F_SIZE)
    o->b = c->args[1];
  return o;
}

/* path | :value | function(...). In a condition, a function other than
 * size() is misused here. */
static struct xoperand *parse_operand(struct parser *p) {
  const struct token *t = peek(p);
  if (t->t == T_VALUE)
    return parse_value_ref(p);
  if (t->t == T_IDENT && peek2(p)->t == T_LP) {
    struct call c;
    if (parse_call(p, &c) != 0)
      return NULL;
    if (!is_update(p) && c.f != F_SIZE)
      misused(p, t);
    return call_operand(p, &c);
  }
  if (t->t == T_IDENT || t->t == T_NAME || (t->t == T_LP && is_cond_kind(p->e->kind))) {
    struct xoperand *o = new_operand(p, XOP_PATH);
    if (o == NULL || parse_path(p, &o->path) != 0)
      return NULL;
    return o;
  }
  syntax_error(p, p->pos);
  return NULL;
}

/* A condition's operand, in parentheses or not: "(a)", "((a))" (redundant)
 * or a path whose head is parenthesized, "(a.b).c". */
static struct xoperand *parse_operand_parens(struct parser *p) {
  size_t i = p->pos;
  if (p->toks[i].t != T_LP)
    return parse_operand(p);
  size_t close = p->match[i];
  if (close != NO_MATCH && (p->toks[close + 1].t == T_DOT || p->toks[close + 1].t == T_LB))
    return parse_operand(p); /* a path */
  int opens = enter_parens(p);
  struct xoperand *o = opens < 0 ? NULL : parse_operand(p);
  return o && leave_parens(p, opens) == 0 ? o : NULL;
}

/* ---- conditions -------------------------------------------------------- */

static struct xcond *new_cond(struct parser *p, enum xcond_kind k, size_t nops) {
  struct xcond *c = alloc(p, sizeof(*c));
  if (c == NULL)
    return NULL;
  c->kind = k;
  c->nops = nops;
  if (nops) {
    c->ops = alloc(p, nops * sizeof(*c->ops));
    if (c->ops == NULL)
      return NULL;
  }
  return c;
}

static const char *cmp_text(enum xcmp c) {
  static const char *const t[] = {"", "=", "<>", "<", "<=", ">", ">="};
  return t[c];
}

static struct xcond *parse_chain(struct parser *p, bool ors);

/* The condition a function call stands for at the place of a condition. */
static struct xcond *call_cond(struct parser *p, const struct call *call) {
  if (call->f == F_SIZE)
    defer(p, K_MISUSED,
          "The function is not allowed to be used this way in an expression; function: size");
  if (!call->ok || call->f >= F_SIZE) { /* not a condition function */
    /* Wrong: an error is pending and the tree is never evaluated. */
    struct xcond *c = new_cond(p, XC_EXISTS, 1);
    if (c && (c->ops[0] = dummy_operand(p)) == NULL)
      return NULL;
    return c;
  }
  enum xcond_kind k = (enum xcond_kind)(XC_EXISTS + (call->f - F_ATTRIBUTE_EXISTS));
  struct xcond *c = new_cond(p, k, 0);
  if (c == NULL)
    return NULL;
  c->ops = call->args;
  c->nops = call->nargs;
  if (k == XC_TYPE) {
    const struct xoperand *o = c->ops[1];
    if ((c->type = tt_av_type_parse(o->value->u.bytes, o->value->len)) == 0)
      /* DynamoDB echoes the bad type name; we name the placeholder so no
       * request value reaches a message. */
      defer(p, K_FUNCTION,
            "Invalid attribute type name found; type: %s, valid types: "
            "{ B; NULL; SS; BOOL; L; BS; N; NS; S; M }",
            o->value_name);
  }
  return c;
}

_Static_assert(T_NE - T_EQ == XCMP_NE - XCMP_EQ && T_LT - T_EQ == XCMP_LT - XCMP_EQ &&
                   T_LE - T_EQ == XCMP_LE - XCMP_EQ && T_GT - T_EQ == XCMP_GT - XCMP_EQ &&
                   T_GE - T_EQ == XCMP_GE - XCMP_EQ,
               "the comparator tokens in enum xcmp's order");

static bool is_comparator(enum tok t) { return t >= T_EQ && t <= T_GE; }

/* lhs comparator operand | lhs BETWEEN a AND b | lhs IN (...) */
static struct xcond *parse_comparison_rest(struct parser *p, struct xoperand *lhs) {
  const struct token *t = peek(p);
  enum xcmp cmp = is_comparator(t->t) ? (enum xcmp)(XCMP_EQ + (t->t - T_EQ)) : 0;
  bool between = !cmp && tok_is_word(p, t, "BETWEEN");
  if (!cmp && !between && !tok_is_word(p, t, "IN")) {
    syntax_error(p, p->pos);
    return NULL;
  }
  p->pos++;
  if (count_operator(p) != 0)
    return NULL;
  if (cmp) {
    struct xoperand *rhs = parse_operand_parens(p);
    if (rhs == NULL)
      return NULL;
    check_distinct(p, lhs, rhs, cmp_text(cmp));
    if (cmp != XCMP_EQ && cmp != XCMP_NE)
      scalar_values(p, (struct xoperand *[]){lhs, rhs}, 2, cmp_text(cmp));
    struct xcond *c = new_cond(p, XC_CMP, 2);
    if (c == NULL)
      return NULL;
    c->cmp = cmp;
    c->ops[0] = lhs;
    c->ops[1] = rhs;
    snap_condition(p);
    return c;
  }
  if (between) {
    struct xcond *c = new_cond(p, XC_BETWEEN, 3);
    if (c == NULL)
      return NULL;
    c->ops[0] = lhs;
    if ((c->ops[1] = parse_operand_parens(p)) == NULL)
      return NULL;
    if (!tok_is_word(p, peek(p), "AND")) {
      syntax_error(p, p->pos);
      return NULL;
    }
    p->pos++;
    if ((c->ops[2] = parse_operand_parens(p)) == NULL)
      return NULL;
    bool typed = scalar_values(p, c->ops, 3, "BETWEEN");
    const struct xoperand *lo = c->ops[1], *hi = c->ops[2];
    if (typed && lo->kind == XOP_VALUE && hi->kind == XOP_VALUE && lo->value != &missing &&
        hi->value != &missing) {
      /* DynamoDB prints both bounds; we print their placeholders so no
       * request value reaches a message. */
      if (lo->value->type != hi->value->type)
        defer(p, K_FUNCTION,
              "The BETWEEN operator requires same data type for lower and upper bounds; lower "
              "bound operand: %s, upper bound operand: %s",
              lo->value_name, hi->value_name);
      else if (tt_av_compare(lo->value, hi->value) > 0)
        defer(p, K_FUNCTION,
              "The BETWEEN operator requires upper bound to be greater than or equal to lower "
              "bound; lower bound operand: %s, upper bound operand: %s",
              lo->value_name, hi->value_name);
    }
    snap_condition(p);
    return c;
  }
  struct xoperand *tmp[MAX_IN_OPERANDS + 2] = {lhs}; /* IN */
  size_t n = 1;
  if (expect(p, T_LP) != 0 || operand_list(p, false, tmp, sizeof(tmp) / sizeof(tmp[0]), &n) != 0)
    return NULL;
  if (n - 1 > MAX_IN_OPERANDS) {
    fail(p, "The IN operator is provided with too many operands; number of operands: %zu", n - 1);
    return NULL;
  }
  struct xcond *c = new_cond(p, XC_IN, n);
  if (c == NULL)
    return NULL;
  memcpy(c->ops, tmp, n * sizeof(*tmp));
  snap_condition(p);
  return c;
}

/* Whether the parenthesized text starting at token i is an operand (what
 * follows its ')' makes it one) rather than a condition. */
static bool parens_are_operand(const struct parser *p, size_t i) {
  size_t close = p->match[i];
  if (close == NO_MATCH)
    return false;
  const struct token *t = &p->toks[close + 1];
  return is_comparator(t->t) || t->t == T_DOT || t->t == T_LB ||
         tok_is_word((struct parser *)p, t, "BETWEEN") || tok_is_word((struct parser *)p, t, "IN");
}

static struct xcond *parse_primary(struct parser *p) {
  const struct token *t = peek(p);
  if (t->t == T_LP && !parens_are_operand(p, p->pos)) {
    size_t open = p->pos;
    p->pos++;
    if (nest(p) != 0)
      return NULL;
    struct xcond *c = parse_chain(p, true);
    if (c == NULL || expect(p, T_RP) != 0)
      return NULL;
    p->nesting--;
    if (double_parens(p, open)) /* ((condition)) */
      defer(p, K_PARENS, "The expression has redundant parentheses;");
    return c;
  }
  if (t->t == T_IDENT && peek2(p)->t == T_LP) {
    struct call call;
    if (parse_call(p, &call) != 0)
      return NULL;
    const struct token *n = peek(p);
    if (is_comparator(n->t) || tok_is_word(p, n, "BETWEEN") || tok_is_word(p, n, "IN")) {
      if (call.f != F_SIZE)
        misused(p, t);
      struct xoperand *lhs = call_operand(p, &call);
      return lhs ? parse_comparison_rest(p, lhs) : NULL;
    }
    struct xcond *c = call_cond(p, &call);
    snap_condition(p);
    return c;
  }
  struct xoperand *lhs = parse_operand_parens(p);
  return lhs ? parse_comparison_rest(p, lhs) : NULL;
}

static struct xcond *parse_not(struct parser *p) {
  if (tok_is_word(p, peek(p), "NOT")) {
    p->pos++;
    if (count_operator(p) != 0)
      return NULL;
    if (nest(p) != 0)
      return NULL;
    struct xcond *c = new_cond(p, XC_NOT, 0);
    if (c == NULL || (c->l = parse_not(p)) == NULL)
      return NULL;
    p->nesting--;
    return c;
  }
  return parse_primary(p);
}

/* A chain of ANDs (operands: NOT terms) or of ORs (operands: AND chains),
 * left-associative. */
static struct xcond *parse_chain(struct parser *p, bool ors) {
  struct xcond *l = ors ? parse_chain(p, false) : parse_not(p);
  while (l && tok_is_word(p, peek(p), ors ? "OR" : "AND")) {
    p->pos++;
    if (count_operator(p) != 0)
      return NULL;
    struct xcond *c = new_cond(p, ors ? XC_OR : XC_AND, 0);
    if (c == NULL)
      return NULL;
    c->l = l;
    if ((c->r = ors ? parse_chain(p, false) : parse_not(p)) == NULL)
      return NULL;
    l = c;
  }
  return l;
}

/* ---- key conditions ---------------------------------------------------- */

/* DynamoDB reports what it finds wrong in a parsed key condition without
 * the "Invalid KeyConditionExpression: " prefix. */
static int key_error(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int key_error(struct parser *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = tt_error_vset(p->err, TT_ERR_VALIDATION, NULL, fmt, ap);
  va_end(ap);
  return rc;
}

/* Collects the leaves of a key condition: at most two, joined by AND, each a
 * comparison of one top-level attribute with values; checked leaf by leaf,
 * operand by operand, as DynamoDB does. *extra counts leaves past two. */
static int collect_key_leaves(struct parser *p, struct xcond *c, size_t *extra) {
  static const char *const func_of[] = {
      [XC_OR] = "OR", [XC_NOT] = "NOT", [XC_IN] = "IN", [XC_EXISTS] = "attribute_exists",
      [XC_NOT_EXISTS] = "attribute_not_exists", [XC_TYPE] = "attribute_type",
      [XC_CONTAINS] = "contains"};
  const char *op = c->kind == XC_CMP && c->cmp == XCMP_NE ? "<>" : func_of[c->kind];
  if (c->kind == XC_AND)
    return collect_key_leaves(p, c->l, extra) != 0 ? -1 : collect_key_leaves(p, c->r, extra);
  if (op != NULL)
    return key_error(p, "Invalid operator used in KeyConditionExpression: %s", op);
  if ((c->kind == XC_BETWEEN || c->kind == XC_BEGINS_WITH) && c->ops[0]->kind != XOP_PATH)
    return key_error(p,
                     "Invalid condition in KeyConditionExpression: %s operator must have the "
                     "key attribute as its first operand",
                     c->kind == XC_BETWEEN ? "BETWEEN" : "begins_with");
  const struct xoperand *attr = NULL;
  size_t attr_ix = 0;
  for (size_t i = 0; i < c->nops; i++) {
    if (c->ops[i]->kind == XOP_PATH) {
      if (attr)
        return key_error(p, "Invalid condition in KeyConditionExpression: Multiple attribute "
                            "names used in one condition");
      if (c->ops[i]->path.n > 1)
        return key_error(p, "KeyConditionExpressions cannot have conditions on nested "
                            "attributes");
      attr = c->ops[i];
      attr_ix = i;
    } else if (c->ops[i]->kind != XOP_VALUE) {
      return key_error(p, "KeyConditionExpressions cannot contain nested operations");
    }
  }
  if (attr == NULL)
    return key_error(p, "Invalid condition in KeyConditionExpression: No key attribute "
                        "specified");
  for (size_t i = 0; i < p->e->nkey_leaves; i++)
    if (same_path(&p->e->key_leaves[i]->ops[0]->path, &attr->path))
      return key_error(p, "KeyConditionExpressions must only contain one condition per key");
  if (attr_ix != 0) { /* ":v = pk" means "pk = :v": put the attribute first. */
    static const enum xcmp flip[] = {0, XCMP_EQ, XCMP_NE, XCMP_GT, XCMP_GE, XCMP_LT, XCMP_LE};
    struct xoperand *o = c->ops[0];
    c->ops[0] = c->ops[1];
    c->ops[1] = o;
    c->cmp = flip[c->cmp];
  }
  if (p->e->nkey_leaves == 2)
    (*extra)++;
  else
    p->e->key_leaves[p->e->nkey_leaves++] = c;
  return 0;
}

/* ---- update expressions ------------------------------------------------ */

static int parse_set_value(struct parser *p, struct xoperand **out);

/* An operand of a SET value, or a parenthesized SET value. */
static struct xoperand *parse_update_operand(struct parser *p) {
  if (peek(p)->t != T_LP)
    return parse_operand(p);
  p->pos++;
  if (nest(p) != 0)
    return NULL;
  struct xoperand *o;
  if (parse_set_value(p, &o) != 0 || expect(p, T_RP) != 0)
    return NULL;
  p->nesting--;
  return o;
}

static int parse_set_value(struct parser *p, struct xoperand **out) {
  struct xoperand *a = parse_update_operand(p);
  if (a == NULL)
    return -1;
  enum tok t = peek(p)->t;
  if (t != T_PLUS && t != T_MINUS) {
    *out = a;
    return 0;
  }
  p->pos++;
  if (count_operator(p) != 0)
    return -1;
  struct xoperand *b = parse_update_operand(p);
  if (b == NULL)
    return -1;
  const struct xoperand *o[2] = {a, b};
  for (size_t i = 0; i < 2; i++)
    if (o[i]->kind == XOP_VALUE && o[i]->value != &missing && o[i]->value->type != TT_AV_N) {
      operand_type_error(p, t == T_PLUS ? "+" : "-", o[i]->value->type);
      break;
    }
  struct xoperand *r = new_operand(p, t == T_PLUS ? XOP_PLUS : XOP_MINUS);
  if (r == NULL)
    return -1;
  r->a = a;
  r->b = b;
  *out = r;
  return 0;
}

/* Makes room in the arena array *arr of n elements of `size` bytes for one
 * more, doubling *cap when full. Returns 0 or -1. */
static int room_for_one(struct parser *p, void **arr, size_t n, size_t *cap, size_t size) {
  if (n < *cap)
    return 0;
  void *na = alloc(p, (*cap ? *cap * 2 : 8) * size);
  if (na == NULL)
    return -1;
  if (n)
    memcpy(na, *arr, n * size);
  *arr = na;
  *cap = *cap ? *cap * 2 : 8;
  return 0;
}

static int parse_update(struct parser *p) {
  static const char *const clause_names[] = {"", "SET", "REMOVE", "ADD", "DELETE"};
  bool seen[5] = {false};
  size_t cap = 0;
  if (peek(p)->t == T_EOF)
    return syntax_error(p, p->pos);
  while (peek(p)->t != T_EOF) {
    enum xact_kind k = 0;
    for (int i = XA_SET; i <= XA_DELETE; i++)
      if (tok_is_word(p, peek(p), clause_names[i]))
        k = (enum xact_kind)i;
    if (k == 0)
      return syntax_error(p, p->pos);
    if (seen[k])
      defer(p, K_SECTION, "The \"%s\" section can only be used once in an update expression;",
            clause_names[k]);
    seen[k] = true;
    p->pos++;
    for (;;) {
      struct xaction a = {.kind = k};
      if (parse_path(p, &a.path) != 0)
        return -1;
      if (k == XA_SET) {
        if (expect(p, T_EQ) != 0 || parse_set_value(p, &a.value) != 0)
          return -1;
      } else if (k == XA_ADD || k == XA_DELETE) {
        if (peek(p)->t != T_VALUE)
          return syntax_error(p, p->pos);
        if ((a.value = parse_value_ref(p)) == NULL)
          return -1;
        enum tt_av_type vt = a.value->value->type;
        bool ok = vt == TT_AV_SS || vt == TT_AV_NS || vt == TT_AV_BS ||
                  (k == XA_ADD && vt == TT_AV_N);
        if (!ok && a.value->value != &missing)
          defer(p, K_OPERAND,
                "Incorrect operand type for operator or function; operator: %s, operand "
                "type: %s, typeSet: %s",
                clause_names[k], av_type_long(vt),
                k == XA_ADD ? "ALLOWED_FOR_ADD_OPERAND" : "ALLOWED_FOR_DELETE_OPERAND");
      }
      if (count_operator(p) != 0 ||
          room_for_one(p, (void **)&p->e->actions, p->e->nactions, &cap, sizeof(a)) != 0)
        return -1;
      p->e->actions[p->e->nactions++] = a;
      if (peek(p)->t != T_COMMA)
        break;
      p->pos++;
    }
    if (peek(p)->t != T_EOF && !is_grammar_word(p, peek(p)))
      return syntax_error(p, p->pos);
  }
  return 0;
}

/* ---- overlapping paths (update targets, projections) ------------------- */

static void format_path(char *buf, size_t cap, const struct xpath *path) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < path->n && used + 1 < cap; i++) {
    const struct xseg *s = &path->segs[i];
    char part[80];
    if (s->name)
      safe_copy(part, sizeof(part), s->name, s->name_len);
    else
      snprintf(part, sizeof(part), "[%zu]", s->index);
    int w = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "[", part);
    if (w < 0)
      break;
    used += (size_t)w;
  }
  if (used + 1 < cap)
    snprintf(buf + used, cap - used, "]");
}

/* 0: disjoint, 1: one is a prefix of the other, 2: same prefix then a map key
 * where the other has a list index. */
static int path_relation(const struct xpath *a, const struct xpath *b) {
  size_t n = a->n < b->n ? a->n : b->n;
  for (size_t i = 0; i < n; i++) {
    const struct xseg *x = &a->segs[i], *y = &b->segs[i];
    if ((x->name == NULL) != (y->name == NULL))
      return 2;
    if (x->name ? (x->name_len != y->name_len || memcmp(x->name, y->name, x->name_len) != 0)
                : x->index != y->index)
      return 0;
  }
  return 1;
}

static bool same_path(const struct xpath *a, const struct xpath *b) {
  return a->n == b->n && path_relation(a, b) == 1;
}

/* How many targets an update has, or paths a projection; the i-th one. */
static size_t path_count(const struct tt_expr *e) {
  return e->kind == TT_EXPR_UPDATE ? e->nactions : e->npaths;
}

static const struct xpath *path_at(const struct tt_expr *e, size_t i) {
  return e->kind == TT_EXPR_UPDATE ? &e->actions[i].path : &e->paths[i];
}

/* Each path against the ones before it, as DynamoDB does: the first
 * overlap found is reported, else the first conflict. */
static void check_overlaps(struct parser *p) {
  for (size_t j = 1; j < path_count(p->e); j++)
    for (size_t i = 0; i < j; i++) {
      int r = path_relation(path_at(p->e, i), path_at(p->e, j));
      if (r == 0)
        continue;
      char one[96], two[96];
      format_path(one, sizeof(one), path_at(p->e, i));
      format_path(two, sizeof(two), path_at(p->e, j));
      defer(p, r == 1 ? K_OVERLAP : K_CONFLICT,
            "Two document paths %s with each other; must remove or rewrite one of these "
            "paths; path one: %s, path two: %s",
            r == 1 ? "overlap" : "conflict", one, two);
      if (r == 1)
        return;
    }
}

/* ---- projections ------------------------------------------------------- */

static int proj_insert(struct parser *p, struct xpnode *root, const struct xpath *path) {
  struct xpnode *node = root;
  for (size_t i = 0; i < path->n; i++) {
    const struct xseg *s = &path->segs[i];
    struct xpchild *c;
    for (c = node->kids; c; c = c->next)
      if ((s->name == NULL) == (c->seg.name == NULL) &&
          (s->name ? (s->name_len == c->seg.name_len &&
                      memcmp(s->name, c->seg.name, s->name_len) == 0)
                   : s->index == c->seg.index))
        break;
    if (c == NULL) {
      c = alloc(p, sizeof(*c));
      if (c == NULL)
        return -1;
      c->seg = *s;
      c->next = node->kids;
      node->kids = c;
      node->nkids++;
      node->by_index = s->name == NULL;
    }
    node = &c->node;
  }
  node->leaf = true;
  return 0;
}

static int parse_projection(struct parser *p) {
  size_t cap = 0;
  for (;;) {
    if (room_for_one(p, (void **)&p->e->paths, p->e->npaths, &cap, sizeof(*p->e->paths)) != 0 ||
        parse_path(p, &p->e->paths[p->e->npaths]) != 0)
      return -1;
    p->e->npaths++;
    if (peek(p)->t != T_COMMA)
      break;
    p->pos++;
  }
  if (peek(p)->t != T_EOF)
    return syntax_error(p, p->pos);
  return 0;
}

/* ---- entry points ------------------------------------------------------ */

static const char *prefix_of(enum tt_expr_kind k) {
  switch (k) {
  case TT_EXPR_CONDITION: return "Invalid ConditionExpression: ";
  case TT_EXPR_FILTER: return "Invalid FilterExpression: ";
  case TT_EXPR_KEY_CONDITION: return "Invalid KeyConditionExpression: ";
  case TT_EXPR_UPDATE: return "Invalid UpdateExpression: ";
  case TT_EXPR_PROJECTION: return "Invalid ProjectionExpression: ";
  }
  return "Invalid Expression: ";
}

int tt_expr_parse(enum tt_expr_kind kind, const char *text, const struct tt_av *names,
                  const struct tt_av *values, struct tt_expr **out, struct tt_error *err) {
  struct parser p = {.text = text ? text : "", .prefix = prefix_of(kind), .names = names,
                     .values = values, .err = err};
  struct tt_expr *e = NULL;
  *out = NULL;
  size_t len = strlen(p.text);
  if (strspn(p.text, " \t\r\n") == len)
    return fail(&p, "The expression can not be empty;");
  if (len > TT_EXPR_MAX_TEXT)
    return fail(&p, "Expression size has exceeded the maximum allowed size; expression size: %zu",
                len);
  e = calloc(1, sizeof(*e));
  if (e == NULL)
    return fail_oom(&p);
  e->kind = kind;
  tt_arena_init(&e->arena);
  e->names = names;
  e->values = values;
  p.e = e;
  if (names && names->type == TT_AV_M && names->len &&
      (e->names_used = alloc(&p, names->len * sizeof(bool))) == NULL)
    goto fail;
  if (values && values->type == TT_AV_M && values->len &&
      (e->values_used = alloc(&p, values->len * sizeof(bool))) == NULL)
    goto fail;
  if (tokenize(&p) != 0 || match_parens(&p) != 0)
    goto fail;
  switch (kind) {
  case TT_EXPR_CONDITION:
  case TT_EXPR_FILTER:
  case TT_EXPR_KEY_CONDITION:
    if ((e->cond = parse_chain(&p, true)) == NULL)
      goto fail;
    if (peek(&p)->t != T_EOF) {
      syntax_error(&p, p.pos);
      goto fail;
    }
    if (kind == TT_EXPR_KEY_CONDITION && p.cats == 0) {
      size_t extra = 0;
      if (collect_key_leaves(&p, e->cond, &extra) != 0)
        goto fail;
      if (extra) {
        key_error(&p, "Conditions can be of length 1 or 2 only");
        goto fail;
      }
    }
    break;
  case TT_EXPR_UPDATE:
  case TT_EXPR_PROJECTION:
    if ((kind == TT_EXPR_UPDATE ? parse_update(&p) : parse_projection(&p)) != 0)
      goto fail;
    check_overlaps(&p);
    for (size_t i = 0; p.cats == 0 && i < path_count(e); i++)
      if (proj_insert(&p, &e->proj, path_at(e, i)) != 0)
        goto fail;
    break;
  default:
    tt_error_set(err, TT_ERR_INTERNAL, NULL, "unknown expression kind");
    goto fail;
  }
  if (p.cats != 0)
    tt_error_set(err, TT_ERR_VALIDATION, NULL, "%s%s", p.prefix, pending(&p));
  else
    *out = e;
fail:
  free(p.toks);
  free(p.match);
  if (*out == NULL)
    tt_expr_free(e);
  return *out ? 0 : -1;
}

void tt_expr_free(struct tt_expr *e) {
  if (e == NULL)
    return;
  tt_arena_free(&e->arena);
  free(e);
}

enum tt_expr_kind tt_expr_kind(const struct tt_expr *e) { return e->kind; }

const char *tt_expr_update_target(const struct tt_expr *e, size_t i) {
  if (e->kind != TT_EXPR_UPDATE || i >= e->nactions)
    return NULL;
  return e->actions[i].path.segs[0].name;
}

/* ---- request-level map checks ------------------------------------------ */

/* One of the two maps: not empty, every key a placeholder led by `lead`,
 * and for names every value a non-empty string. */
static int check_map(const struct tt_av *map, const char *what, char lead,
                     struct tt_error *err) {
  char w[64];
  if (map->type != TT_AV_M || map->len == 0)
    return tt_error_set(err, TT_ERR_VALIDATION, NULL, "%s must not be empty", what);
  for (size_t i = 0; i < map->len; i++) {
    const struct tt_av_member *m = &map->u.members[i];
    bool ok = m->name_len >= 2 && m->name[0] == lead;
    for (size_t k = 1; ok && k < m->name_len; k++)
      ok = is_ident_char((unsigned char)m->name[k]);
    safe_copy(w, sizeof(w), m->name, m->name_len);
    if (!ok)
      return tt_error_set(err, TT_ERR_VALIDATION, NULL,
                          "%s contains invalid key: Syntax error; key: \"%s\"", what, w);
    if (lead == '#' && (m->value.type != TT_AV_S || m->value.len == 0))
      return tt_error_set(err, TT_ERR_VALIDATION, NULL,
                          "%s contains invalid value: the value of %s must be a non-empty string",
                          what, w);
  }
  return 0;
}

int tt_expr_check_maps(const struct tt_av *names, const struct tt_av *values,
                       struct tt_error *err) {
  if (names && check_map(names, "ExpressionAttributeNames", '#', err) != 0)
    return -1;
  return values ? check_map(values, "ExpressionAttributeValues", ':', err) : 0;
}

/* Lists the unused keys of one map, or returns 0 when all were used. */
static int report_unused(const struct tt_expr *const *exprs, size_t n, const struct tt_av *map,
                         bool names, struct tt_error *err) {
  char keys[200];
  size_t used_len = 0;
  bool any = false;
  if (map == NULL || map->type != TT_AV_M)
    return 0;
  keys[0] = '\0';
  for (size_t i = 0; i < map->len; i++) {
    bool used = false;
    for (size_t k = 0; k < n && !used; k++) {
      const struct tt_expr *e = exprs[k];
      if (e == NULL)
        continue;
      if (names && e->names == map && e->names_used)
        used = e->names_used[i];
      if (!names && e->values == map && e->values_used)
        used = e->values_used[i];
    }
    if (used)
      continue;
    char w[64];
    const struct tt_av_member *m = &map->u.members[i];
    safe_copy(w, sizeof(w), m->name, m->name_len);
    if (used_len + 1 < sizeof(keys)) {
      int wr = snprintf(keys + used_len, sizeof(keys) - used_len, "%s%s", any ? ", " : "", w);
      if (wr > 0)
        used_len += (size_t)wr;
      if (used_len >= sizeof(keys))
        used_len = sizeof(keys) - 1;
    }
    any = true;
  }
  if (!any)
    return 0;
  return tt_error_set(err, TT_ERR_VALIDATION, NULL,
                      "Value provided in ExpressionAttribute%s unused in expressions: keys: {%s}",
                      names ? "Names" : "Values", keys);
}

int tt_expr_check_unused(const struct tt_expr *const *exprs, size_t n,
                         const struct tt_av *names, const struct tt_av *values,
                         struct tt_error *err) {
  if (report_unused(exprs, n, names, true, err) != 0)
    return -1;
  return report_unused(exprs, n, values, false, err);
}
