/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_expr.c -- libFuzzer target: expression parser and evaluator, and the REST
 * condition, key-condition, select and update forms (orm/cond.h, orm/item.h) typed by an
 * example model and built (paths with backtick-quoted names too). */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "expr/build.h"
#include "expr/expr.h"
#include "harness.h"
#include "orm/cond.h"
#include "orm/item.h"
#include "value/codec_ddb.h"
#include "value/json_exact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Placeholder maps and a sample item with every type, built once: a
 * fuzzer process runs millions of inputs and these never change. */
static struct tt_av names, values, item;
static int ready;

static void load(const char *wire, struct tt_av *out) {
  struct tt_error err;
  json_t *j = json_loads(wire, 0, NULL);
  if (j == NULL || tt_ddb_item_from_json(j, "", out, &err) != 0)
    abort();
  json_decref(j);
}

static void setup(void) {
  load("{\"#a\": {\"S\": \"a\"}, \"#b\": {\"S\": \"b\"}, \"#l\": {\"S\": \"l\"},"
       " \"#sp\": {\"S\": \"with space\"}, \"#s\": {\"S\": \"status\"}}",
       &names);
  load("{\":s\": {\"S\": \"ab\"}, \":n\": {\"N\": \"1.5\"}, \":b\": {\"B\": \"AAE=\"},"
       " \":t\": {\"S\": \"S\"}, \":l\": {\"L\": [{\"N\": \"1\"}, {\"S\": \"x\"}]},"
       " \":m\": {\"M\": {\"k\": {\"S\": \"v\"}}}, \":ss\": {\"SS\": [\"a\", \"b\"]},"
       " \":ns\": {\"NS\": [\"1\", \"2\"]}, \":bs\": {\"BS\": [\"AA==\"]},"
       " \":bool\": {\"BOOL\": true}, \":null\": {\"NULL\": true},"
       " \":big\": {\"N\": \"99999999999999999999999999999999999999E+87\"}}",
       &values);
  load("{\"a\": {\"S\": \"abc\"}, \"b\": {\"N\": \"2\"}, \"c\": {\"B\": \"AAEC\"},"
       " \"l\": {\"L\": [{\"N\": \"1\"}, {\"M\": {\"a\": {\"SS\": [\"x\"]}}}, {\"L\": []}]},"
       " \"m\": {\"M\": {\"a\": {\"NS\": [\"3\"]}, \"b\": {\"BOOL\": false}}},"
       " \"ss\": {\"SS\": [\"a\"]}, \"ns\": {\"NS\": [\"1\", \"7\"]}, \"bs\": {\"BS\": [\"AA==\"]},"
       " \"with space\": {\"NULL\": true}, \"status\": {\"S\": \"S\"},"
       " \"big\": {\"N\": \"99999999999999999999999999999999999999E+87\"}}",
       &item);
  ready = 1;
}

/* Whatever the builder writes must parse: a failure here is a bug. */
static void check_built(enum tt_expr_kind kind, char *text, struct tt_expr_builder *b) {
  struct tt_av n, v;
  struct tt_expr *e;
  struct tt_error err;
  if (tt_expr_builder_take(b, &n, &v, &err) != 0) {
    free(text);
    return;
  }
  if (tt_expr_parse(kind, text, n.len ? &n : NULL, v.len ? &v : NULL, &e, &err) != 0) {
    /* Only the documented DynamoDB limits may refuse built text. */
    if (strstr(err.message, "too many") == NULL &&
        strstr(err.message, "BETWEEN operator requires") == NULL &&
        strstr(err.message, "overlap") == NULL && strstr(err.message, "conflict") == NULL &&
        strstr(err.message, "Incorrect operand type") == NULL &&
        strstr(err.message, "maximum allowed size") == NULL &&
        strstr(err.message, "one condition per key") == NULL)
      abort();
  } else {
    const struct tt_expr *all[] = {e};
    if (tt_expr_check_unused(all, 1, n.len ? &n : NULL, v.len ? &v : NULL, &err) != 0)
      abort();
    if (kind == TT_EXPR_CONDITION || kind == TT_EXPR_KEY_CONDITION)
      (void)tt_expr_eval_condition(e, &item);
    tt_expr_free(e);
  }
  tt_av_free(&n);
  tt_av_free(&v);
  free(text);
}

/* 'J' + JSON: the REST condition/update/select/key builders. */
static void fuzz_builder(const uint8_t *data, size_t size) {
  json_t *j = NULL;
  struct tt_error err;
  char *text;
  if (tt_json_parse((const char *)data, size, NULL, &j, &err) != 0)
    return;
  const char *path = json_string_value(j);
  if (path != NULL && tt_expr_rest_path_valid(path)) {
    /* A valid path starts with a non-empty name that ends where the next
     * step ('.', '[') or the end begins; a quoted one without backticks. */
    const char *name;
    size_t len, written = tt_expr_rest_path_head(path, &name, &len);
    if (len == 0 || name < path || name + len > path + written ||
        (path[written] != '\0' && path[written] != '.' && path[written] != '[') ||
        (path[0] == '`' && (written != len + 2 || memchr(name, '`', len) != NULL)))
      abort();
  }
  /* The model is picked by the input's size: every one in turn. */
  fz_init();
  const struct tt_model *m = fz_model(size);
  struct tt_expr_builder *b = tt_expr_builder_new();
  if (b == NULL)
    abort();
  struct tt_cond *c = NULL;
  int parsed = tt_orm_cond_from_json(m, j, "condition", &c, &err);
  struct tt_error perr = err;
  if (parsed == 0 && c != NULL && tt_expr_build_condition(b, c, "condition", &text, &err) == 0)
    check_built(TT_EXPR_CONDITION, text, b);
  else if (c == NULL && err.code != TT_ERR_VALIDATION && !json_is_null(j))
    abort(); /* refusals are ValidationErrors */
  tt_cond_free(c);
  if (parsed != 0) {
    /* What api/ hands on instead: a node the builder answers with the
     * parser's own error. */
    if (tt_orm_cond_read(m, j, "condition", &c, &err) != 0 || c == NULL ||
        c->kind != TT_COND_ERROR || tt_expr_build_condition(b, c, "condition", &text, &err) == 0 ||
        strcmp(err.field, perr.field) != 0 || strcmp(err.message, perr.message) != 0)
      abort();
    tt_cond_free(c);
  }
  struct tt_key_cond k;
  if (tt_orm_key_cond_shape(j, &k, &err) == 0) {
    if (k.n < 1 || k.n > 2)
      abort();
    /* A key that does not type keeps its error, which the builder answers. */
    int typed = tt_orm_key_cond_type(m, j, &k, &err);
    if (typed != 0 && k.n && k.error == NULL)
      abort();
    if (tt_expr_build_key_condition(b, &k, "key", &text, &err) == 0) {
      if (typed != 0)
        abort();
      check_built(TT_EXPR_KEY_CONDITION, text, b);
    }
    tt_key_cond_clear(&k);
  } else if (k.n != 0) {
    abort(); /* a refused shape is cleared */
  }
  struct tt_arena arena;
  struct tt_select sel;
  tt_arena_init(&arena);
  if (tt_orm_select_from_json(m, j, "select", &arena, &sel, &err) == 0 && sel.n > 0 &&
      tt_expr_build_projection(b, &sel, "select", &text, &err) == 0)
    check_built(TT_EXPR_PROJECTION, text, b);
  tt_arena_free(&arena);
  struct tt_orm_update u;
  tt_orm_update_init(&u);
  if (tt_orm_update_from_json(m, j, 0, "", &u, &err) == 0 &&
      tt_orm_update_expression(m, b, &u, false, 0, NULL, &text, &err) == 0)
    check_built(TT_EXPR_UPDATE, text, b);
  tt_orm_update_free(&u);
  tt_expr_builder_free(b);
  json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const enum tt_expr_kind kinds[] = {TT_EXPR_CONDITION, TT_EXPR_FILTER,
                                            TT_EXPR_KEY_CONDITION, TT_EXPR_UPDATE,
                                            TT_EXPR_PROJECTION};
  struct tt_expr *e = NULL;
  struct tt_error err;
  if (!ready)
    setup();
  if (size == 0 || size > 8192)
    return 0;
  if (data[0] == 'J') {
    fuzz_builder(data + 1, size - 1);
    return 0;
  }
  /* The first byte picks the kind: '2' condition, '3' filter, '4' key
   * condition, '0' update, '1' projection (the seed files start so). */
  enum tt_expr_kind kind = kinds[data[0] % 5];
  char *text = malloc(size);
  if (text == NULL)
    return 0;
  memcpy(text, data + 1, size - 1);
  text[size - 1] = '\0';
  tt_error_clear(&err);
  if (tt_expr_parse(kind, text, &names, &values, &e, &err) == 0) {
    const struct tt_expr *all[] = {e};
    struct tt_av out;
    struct tt_expr_key_range r;
    (void)tt_expr_check_unused(all, 1, &names, &values, &err);
    switch (kind) {
    case TT_EXPR_CONDITION:
    case TT_EXPR_FILTER:
      (void)tt_expr_eval_condition(e, &item);
      (void)tt_expr_eval_condition(e, NULL);
      break;
    case TT_EXPR_KEY_CONDITION:
      (void)tt_expr_eval_condition(e, &item);
      (void)tt_expr_key_range(e, "a", "b", &r, &err);
      (void)tt_expr_key_range(e, "status", NULL, &r, &err);
      break;
    case TT_EXPR_UPDATE:
      if (tt_expr_apply_update(e, &item, &out, &err) == 0)
        tt_av_free(&out);
      if (tt_expr_apply_update(e, NULL, &out, &err) == 0)
        tt_av_free(&out);
      for (size_t i = 0; tt_expr_update_target(e, i); i++)
        ;
      break;
    case TT_EXPR_PROJECTION:
      if (tt_expr_apply_projection(e, &item, &out, &err) == 0)
        tt_av_free(&out);
      break;
    }
    tt_expr_free(e);
  } else if (err.message[0] == '\0') {
    abort(); /* every failure must explain itself */
  }
  free(text);
  return 0;
}
