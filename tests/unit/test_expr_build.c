/* SPDX-License-Identifier: Apache-2.0 */
/* test_expr_build.c -- REST conditions, keys, selects and update operators to exact expression strings. */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "expr/build.h"
#include "expr/expr.h"
#include "model/registry.h"
#include "orm/cond.h"
#include "value/codec_ddb.h"
#include "value/json_exact.h"

static json_t *js(const char *text) {
  json_t *j = NULL;
  struct tt_error err;
  ck_assert_msg(tt_json_parse(text, strlen(text), NULL, &j, &err) == 0, "bad test JSON: %s",
                text);
  return j;
}

/* JSON values as the model layer would infer them (update actions). */
static int infer(const json_t *v, struct tt_av *out) {
  size_t len;
  struct tt_json_numbuf nb;
  const char *s;
  if ((s = tt_json_string_text(v, &len)) != NULL)
    return tt_av_string(out, s, len);
  if ((s = tt_json_number_text(v, &nb, &len)) != NULL)
    return tt_av_number_text(out, s, len, "", NULL);
  if (json_is_array(v)) {
    if (tt_av_list(out, TT_AV_L, json_array_size(v)) != 0)
      return -1;
    for (size_t i = 0; i < json_array_size(v); i++)
      if (infer(json_array_get(v, i), &out->u.elems[i]) != 0)
        return -1;
    return 0;
  }
  return -1;
}

/* The model that types condition values (orm/cond.h): "tags" is a string
 * set, "bad" a numeric sort key (a string for it fails), the rest inferred. */
static const char dms[] =
    "{\"dms_version\":\"0.2\",\"models\":[{\"name\":\"T\",\"table\":{\"name\":\"things\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"PK\",\"type\":\"S\"},"
    "\"sort\":{\"attribute\":\"bad\",\"type\":\"N\"}},\"attributes\":["
    "{\"attribute\":\"PK\",\"type\":\"S\",\"required\":true,\"roles\":[\"pk\"]},"
    "{\"attribute\":\"bad\",\"type\":\"N\",\"required\":true,\"roles\":[\"sk\"]},"
    "{\"attribute\":\"tags\",\"type\":\"SS\",\"optional\":true}],"
    "\"tags\":{\"additional_attributes\":true}}]}";

static struct tt_model_registry *reg;

static const struct tt_model *model(void) {
  if (reg == NULL) {
    struct tt_error err;
    reg = tt_model_registry_new();
    ck_assert_msg(tt_model_registry_load_text(reg, dms, sizeof(dms) - 1, "t.json", &err) == 0,
                  "%s", err.message);
  }
  return tt_model_registry_get(reg, "T");
}

static struct tt_expr_builder *new_builder(void) {
  struct tt_expr_builder *b = tt_expr_builder_new();
  ck_assert_ptr_nonnull(b);
  return b;
}

/* Builds the projection of a JSON list of strings (field "select"). */
static int proj(struct tt_expr_builder *b, const json_t *j, char **text, struct tt_error *err) {
  const char *paths[16];
  size_t n = json_array_size(j);
  ck_assert_uint_le(n, 16);
  for (size_t i = 0; i < n; i++)
    paths[i] = json_string_value(json_array_get(j, i));
  return tt_expr_build_projection(b, &(struct tt_select){paths, n}, "select", text, err);
}

/* Parses a condition (field `field`); NULL with *err set when it fails. */
static struct tt_cond *parse(json_t *j, const char *field, struct tt_error *err) {
  struct tt_cond *c = (struct tt_cond *)1;
  tt_error_clear(err);
  if (tt_orm_cond_from_json(model(), j, field, &c, err) != 0) {
    ck_assert_ptr_null(c);
    return NULL;
  }
  ck_assert_ptr_nonnull(c);
  return c;
}

/* Builds a condition from JSON text and compares the expression. */
static void expect_cond(struct tt_expr_builder *b, const char *json, const char *want) {
  json_t *j = js(json);
  char *text = NULL;
  struct tt_error err;
  struct tt_cond *c = parse(j, "condition", &err);
  ck_assert_msg(c != NULL, "parse of %s failed: %s (%s)", json, err.message, err.field);
  int rc = tt_expr_build_condition(b, c, "condition", &text, &err);
  ck_assert_msg(rc == 0, "build of %s failed: %s (%s)", json, err.message, err.field);
  ck_assert_str_eq(text, want);
  free(text);
  tt_cond_free(c);
  json_decref(j);
}

static void expect_cond_error(const char *json, const char *field, const char *msg) {
  json_t *j = js(json);
  struct tt_error err;
  ck_assert_ptr_null(parse(j, "condition", &err));
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
  ck_assert_str_eq(err.field, field);
  if (msg)
    ck_assert_str_eq(err.message, msg);
  json_decref(j);
}

/* A typed key condition from JSON text, or -1 with *err set. */
static int key_of(const char *json, struct tt_key_cond *k, struct tt_error *err) {
  json_t *j = js(json);
  int rc = tt_orm_key_cond_shape(j, k, err) != 0 || tt_orm_key_cond_type(model(), j, k, err) != 0
               ? -1
               : 0;
  json_decref(j);
  return rc;
}

/* One update action on a REST path with a value inferred from JSON text
 * (NULL: none); `set` makes the value a string set. */
static int act(struct tt_expr_builder *b, enum tt_expr_update_op op, const char *path,
               const char *json, bool set, struct tt_error *err) {
  struct tt_av v, *vp = NULL;
  if (json) {
    json_t *j = js(json);
    ck_assert_int_eq(infer(j, &v), 0);
    json_decref(j);
    if (set) {
      v.type = TT_AV_SS;
      ck_assert_int_eq(tt_av_set_finish(&v, path, err), 0);
    }
    vp = &v;
  }
  return tt_expr_build_update_action(b, op, path, false, vp, path, err);
}

static char *wire(const struct tt_av *v) {
  struct tt_buf b;
  tt_buf_init(&b, 0);
  ck_assert_int_eq(tt_ddb_item_write(&b, v, 0), 0);
  return tt_buf_steal(&b, NULL);
}

START_TEST(test_leaf_conditions) {
  struct tt_expr_builder *b = new_builder();
  expect_cond(b, "{\"attr\": \"a.b[0]\", \"op\": \"=\", \"value\": 5}", "#n0.#n1[0] = :v0");
  expect_cond(b, "{\"attr\": \"a\", \"op\": \"<>\", \"value\": \"x\"}", "#n0 <> :v1");
  expect_cond(b, "{\"attr\": \"n\", \"op\": \"between\", \"value\": [1, 9]}",
              "#n2 BETWEEN :v2 AND :v3");
  expect_cond(b, "{\"attr\": \"s\", \"op\": \"in\", \"value\": [\"x\", \"y\", \"z\"]}",
              "#n3 IN (:v4, :v5, :v6)");
  expect_cond(b, "{\"attr\": \"s\", \"op\": \"begins_with\", \"value\": \"pre\"}",
              "begins_with(#n3, :v7)");
  expect_cond(b, "{\"attr\": \"tags\", \"op\": \"contains\", \"value\": \"red\"}",
              "contains(#n4, :v8)");
  expect_cond(b, "{\"attr\": \"tags\", \"op\": \"not_contains\", \"value\": \"red\"}",
              "NOT contains(#n4, :v9)");
  expect_cond(b, "{\"attr\": \"x\", \"op\": \"exists\"}", "attribute_exists(#n5)");
  expect_cond(b, "{\"attr\": \"x\", \"op\": \"not_exists\"}", "attribute_not_exists(#n5)");
  expect_cond(b, "{\"attr\": \"x\", \"op\": \"type\", \"value\": \"SS\"}",
              "attribute_type(#n5, :v10)");
  expect_cond(b, "{\"attr\": \"l\", \"size\": \">=\", \"value\": 3}", "size(#n6) >= :v11");
  expect_cond(b, "{\"attr\": \"l\", \"size\": \"between\", \"value\": [1, 2]}",
              "size(#n6) BETWEEN :v12 AND :v13");

  struct tt_av names, values;
  struct tt_error err;
  ck_assert_int_eq(tt_expr_builder_take(b, &names, &values, &err), 0);
  char *n = wire(&names);
  ck_assert_str_eq(n, "{\"#n0\":{\"S\":\"a\"},\"#n1\":{\"S\":\"b\"},\"#n2\":{\"S\":\"n\"},"
                      "\"#n3\":{\"S\":\"s\"},\"#n4\":{\"S\":\"tags\"},\"#n5\":{\"S\":\"x\"},"
                      "\"#n6\":{\"S\":\"l\"}}");
  free(n);
  ck_assert_uint_eq(values.len, 14);
  ck_assert_str_eq(tt_av_map_get(&values, ":v0")->u.bytes, "5");
  ck_assert_int_eq(tt_av_map_get(&values, ":v10")->type, TT_AV_S);
  ck_assert_str_eq(tt_av_map_get(&values, ":v10")->u.bytes, "SS");
  ck_assert_int_eq(tt_av_map_get(&values, ":v11")->type, TT_AV_N);
  tt_av_free(&names);
  tt_av_free(&values);

  /* After take, numbering starts again. */
  expect_cond(b, "{\"attr\": \"z\", \"op\": \"=\", \"value\": true}", "#n0 = :v0");
  tt_expr_builder_free(b);
}
END_TEST

START_TEST(test_logical_conditions) {
  struct tt_expr_builder *b = new_builder();
  expect_cond(b,
              "{\"or\": [{\"attr\": \"a\", \"op\": \"=\", \"value\": 1},"
              " {\"and\": [{\"attr\": \"b\", \"op\": \">\", \"value\": 2},"
              "            {\"attr\": \"a\", \"op\": \"<\", \"value\": 3}]}]}",
              "#n0 = :v0 OR (#n1 > :v1 AND #n0 < :v2)");
  expect_cond(b,
              "[{\"attr\": \"x\", \"op\": \"exists\"},"
              " {\"not\": {\"attr\": \"y\", \"op\": \"begins_with\", \"value\": \"p\"}}]",
              "attribute_exists(#n2) AND NOT (begins_with(#n3, :v3))");
  expect_cond(b, "{\"and\": [{\"attr\": \"x\", \"op\": \"exists\"}]}", "attribute_exists(#n2)");
  expect_cond(b,
              "{\"not\": {\"or\": [{\"attr\": \"x\", \"op\": \"exists\"},"
              " {\"attr\": \"y\", \"op\": \"exists\"}]}}",
              "NOT (attribute_exists(#n2) OR attribute_exists(#n3))");
  tt_expr_builder_free(b);
}
END_TEST

START_TEST(test_condition_errors) {
  expect_cond_error("{\"and\": [{\"attr\": \"a\", \"op\": \"=\", \"value\": 1},"
                    " {\"attr\": \"a\", \"op\": \"~\", \"value\": 1}]}",
                    "condition.and[1].op",
                    "condition.and[1].op: unknown operator; use one of =, <>, <, <=, >, >=, "
                    "between, in, begins_with, contains, not_contains, exists, not_exists, type");
  expect_cond_error("{\"attr\": \"a\", \"op\": \"=\"}", "condition.value",
                    "condition.value: is required for operator =");
  expect_cond_error("{\"attr\": \"a..b\", \"op\": \"exists\"}", "condition.attr", NULL);
  expect_cond_error("{\"attr\": \"a[x]\", \"op\": \"exists\"}", "condition.attr", NULL);
  expect_cond_error("{\"attr\": 3, \"op\": \"exists\"}", "condition.attr", NULL);
  expect_cond_error("{\"attr\": \"a\", \"op\": \"=\", \"size\": \"=\", \"value\": 1}",
                    "condition.op", NULL);
  expect_cond_error("{\"attr\": \"a\", \"op\": \"between\", \"value\": [1]}", "condition.value",
                    "condition.value: between takes [low, high]");
  expect_cond_error("{\"attr\": \"a\", \"op\": \"in\", \"value\": []}", "condition.value",
                    "condition.value: in takes an array of 1 to 100 values");
  expect_cond_error("{\"attr\": \"a\", \"op\": \"type\", \"value\": \"STRING\"}",
                    "condition.value", NULL);
  expect_cond_error("{\"attr\": \"a\", \"size\": \"begins_with\", \"value\": 1}", "condition.size",
                    NULL);
  expect_cond_error("{\"attr\": \"a\", \"size\": \"=\", \"value\": \"1\"}", "condition.value",
                    "condition.value: size compares with a number");
  expect_cond_error("{\"and\": []}", "condition.and", "condition.and: must not be empty");
  expect_cond_error("{\"or\": {}}", "condition.or", NULL);
  expect_cond_error("{\"and\": [], \"attr\": \"a\"}", "condition", NULL);
  expect_cond_error("[{\"attr\": \"a\", \"op\": \"exists\"}, 7]", "condition[1]", NULL);
  /* A typing error names the JSON path of the value. */
  expect_cond_error("{\"or\": [{\"attr\": \"bad\", \"op\": \"in\", \"value\": [\"ok\", 1]}]}",
                    "condition.or[0].value[0]", NULL);
  /* 101 values for in. */
  struct tt_buf t;
  tt_buf_init(&t, 0);
  tt_buf_puts(&t, "{\"attr\": \"a\", \"op\": \"in\", \"value\": [0");
  for (int i = 1; i <= 100; i++)
    tt_buf_printf(&t, ", %d", i);
  tt_buf_puts(&t, "]}");
  expect_cond_error(t.data, "condition.value", NULL);
  tt_buf_free(&t);
  /* Nesting deeper than 32 levels. */
  tt_buf_init(&t, 0);
  for (int i = 0; i < 33; i++)
    tt_buf_puts(&t, "{\"not\": ");
  tt_buf_puts(&t, "{\"attr\": \"a\", \"op\": \"exists\"}");
  for (int i = 0; i < 33; i++)
    tt_buf_puts(&t, "}");
  json_t *j = json_loads(t.data, 0, NULL); /* deeper than tt_json_parse allows */
  struct tt_error err;
  ck_assert_ptr_null(parse(j, "filter", &err));
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
  ck_assert(strstr(err.message, "nest at most 32 levels") != NULL);
  json_decref(j);
  tt_buf_free(&t);
}
END_TEST

START_TEST(test_failed_build_leaves_no_trace) {
  /* DynamoDB rejects unused names and values, so a failed build must not
   * leave its half-registered ones in the maps: here the last comparison
   * of an AND (built by hand, as the ledger does) has a malformed path. */
  struct tt_expr_builder *b = new_builder();
  struct tt_av one;
  ck_assert_int_eq(tt_av_number_int(&one, 1), 0);
  struct tt_cond kids[2] = {
      {.kind = TT_COND_CMP, .path = "a", .op = TT_COND_EQ, .values = &one, .n_values = 1},
      {.kind = TT_COND_CMP, .path = "b..c", .op = TT_COND_EXISTS}};
  struct tt_cond all = {.kind = TT_COND_AND, .kids = kids, .n_kids = 2, .list = true};
  char *text = NULL;
  struct tt_error err;
  struct tt_av names, values;
  ck_assert_int_eq(tt_expr_build_condition(b, &all, "filter", &text, &err), -1);
  ck_assert_ptr_null(text);
  ck_assert_str_eq(err.field, "filter[1].op");
  tt_av_free(&one);
  expect_cond(b, "{\"attr\": \"z\", \"op\": \"exists\"}", "attribute_exists(#n0)");
  ck_assert_int_eq(tt_expr_builder_take(b, &names, &values, &err), 0);
  ck_assert_uint_eq(names.len, 1);
  ck_assert_uint_eq(values.len, 0);
  tt_av_free(&names);
  tt_av_free(&values);
  /* A condition the parser refuses names the offending value. */
  json_t *j = js("[{\"attr\": \"a\", \"op\": \"=\", \"value\": 1},"
                 " {\"attr\": \"b\", \"op\": \"=\", \"value\": [1]},"
                 " {\"attr\": \"bad\", \"op\": \"=\", \"value\": \"x\"}]");
  ck_assert_ptr_null(parse(j, "filter", &err));
  ck_assert_str_eq(err.field, "filter[2].value");
  json_decref(j);
  tt_expr_builder_free(b);
}
END_TEST

START_TEST(test_failed_condition_is_answered_by_the_builder) {
  /* What api/ hands the ORM for a condition that does not parse: a node
   * holding the parser's error and the paths the tree named (for the
   * encrypted-attribute check); building it answers that error. */
  json_t *j = js("{\"and\": [{\"attr\": \"a\", \"op\": \"=\", \"value\": 1},"
                 " [{\"not\": {\"attr\": \"b.c\", \"op\": \"~\"}}], 7]}");
  struct tt_cond *c = NULL;
  struct tt_error err, parsed;
  ck_assert_ptr_null(parse(j, "condition", &parsed));
  ck_assert_int_eq(tt_orm_cond_read(model(), j, "condition", &c, &err), 0);
  ck_assert_int_eq(c->kind, TT_COND_ERROR);
  ck_assert_uint_eq(c->n_kids, 2);
  ck_assert_str_eq(c->kids[0].path, "a");
  ck_assert_str_eq(c->kids[1].path, "b.c");
  struct tt_expr_builder *b = new_builder();
  char *text = (char *)1;
  tt_error_clear(&err);
  ck_assert_int_eq(tt_expr_build_condition(b, c, "condition", &text, &err), -1);
  ck_assert_ptr_null(text);
  ck_assert_str_eq(err.field, "condition.and[1][0].not.op");
  ck_assert_str_eq(err.field, parsed.field);
  ck_assert_str_eq(err.message, parsed.message);
  tt_cond_free(c);
  json_decref(j);
  /* A condition that parses is the parsed tree; none is none. */
  j = js("{\"attr\": \"a\", \"op\": \"exists\"}");
  ck_assert_int_eq(tt_orm_cond_read(model(), j, "condition", &c, &err), 0);
  ck_assert_int_eq(c->kind, TT_COND_CMP);
  tt_cond_free(c);
  json_decref(j);
  ck_assert_int_eq(tt_orm_cond_read(model(), NULL, "condition", &c, &err), 0);
  ck_assert_ptr_null(c);
  /* The paths of a key list, for the same check. */
  j = js("[{\"attr\": \"PK\"}, {\"attr\": true}, {\"or\": [{\"attr\": \"x\"}]}, null]");
  c = tt_orm_cond_names(j);
  ck_assert_ptr_nonnull(c);
  ck_assert_uint_eq(c->n_kids, 2);
  ck_assert_str_eq(c->kids[1].path, "x");
  tt_cond_free(c);
  json_decref(j);
  tt_expr_builder_free(b);
}
END_TEST

START_TEST(test_round_trip) {
  /* What the builder writes, our parser reads, and it means the same. */
  struct tt_expr_builder *b = new_builder();
  json_t *j = js("{\"and\": [{\"attr\": \"status\", \"op\": \"in\", \"value\": [\"A\", \"B\"]},"
                 " {\"or\": [{\"attr\": \"profile.age\", \"op\": \">=\", \"value\": 18},"
                 "           {\"attr\": \"tags\", \"op\": \"contains\", \"value\": \"vip\"}]},"
                 " {\"attr\": \"deleted_at\", \"op\": \"not_exists\"}]}");
  char *text;
  struct tt_error err;
  struct tt_av names, values, match, miss;
  struct tt_expr *e;
  struct tt_cond *c = parse(j, "filter", &err);
  ck_assert_ptr_nonnull(c);
  ck_assert_int_eq(tt_expr_build_condition(b, c, "filter", &text, &err), 0);
  tt_cond_free(c);
  ck_assert_str_eq(text, "#n0 IN (:v0, :v1) AND (#n1.#n2 >= :v2 OR contains(#n3, :v3)) AND "
                         "attribute_not_exists(#n4)");
  ck_assert_int_eq(tt_expr_builder_take(b, &names, &values, &err), 0);
  ck_assert_int_eq(tt_expr_check_maps(&names, &values, &err), 0);
  ck_assert_int_eq(tt_expr_parse(TT_EXPR_FILTER, text, &names, &values, &e, &err), 0);
  const struct tt_expr *all[] = {e};
  ck_assert_int_eq(tt_expr_check_unused(all, 1, &names, &values, &err), 0);
  json_t *w1 = json_loads("{\"status\": {\"S\": \"B\"}, \"profile\": {\"M\": {\"age\": {\"N\": \"17\"}}},"
                          " \"tags\": {\"SS\": [\"new\", \"vip\"]}}", 0, NULL);
  json_t *w2 = json_loads("{\"status\": {\"S\": \"B\"}, \"profile\": {\"M\": {\"age\": {\"N\": \"17\"}}},"
                          " \"tags\": {\"SS\": [\"new\"]}}", 0, NULL);
  ck_assert_int_eq(tt_ddb_item_from_json(w1, "", &match, &err), 0);
  ck_assert_int_eq(tt_ddb_item_from_json(w2, "", &miss, &err), 0);
  ck_assert(tt_expr_eval_condition(e, &match));
  ck_assert(!tt_expr_eval_condition(e, &miss));
  tt_av_free(&match);
  tt_av_free(&miss);
  json_decref(w1);
  json_decref(w2);
  tt_expr_free(e);
  tt_av_free(&names);
  tt_av_free(&values);
  free(text);
  json_decref(j);
  tt_expr_builder_free(b);
}
END_TEST

START_TEST(test_key_conditions) {
  struct tt_expr_builder *b = new_builder();
  char *text;
  struct tt_error err;
  struct tt_key_cond k;
  ck_assert_int_eq(key_of("[{\"attr\": \"PK\", \"op\": \"=\", \"value\": \"USER#1\"},"
                          " {\"attr\": \"SK\", \"op\": \"begins_with\", \"value\": \"ORDER#\"}]",
                          &k, &err),
                   0);
  ck_assert_int_eq(tt_expr_build_key_condition(b, &k, "key", &text, &err), 0);
  ck_assert_str_eq(text, "#n0 = :v0 AND begins_with(#n1, :v1)");
  free(text);
  tt_key_cond_clear(&k);
  ck_assert_int_eq(key_of("[{\"attr\": \"a.b\", \"op\": \"=\", \"value\": 1},"
                          " {\"attr\": \"n\", \"op\": \"between\", \"value\": [1, 5]}]",
                          &k, &err),
                   0);
  ck_assert_int_eq(tt_expr_build_key_condition(b, &k, "key", &text, &err), 0);
  ck_assert_str_eq(text, "#n2 = :v2 AND #n3 BETWEEN :v3 AND :v4");
  free(text);
  tt_key_cond_clear(&k);
  struct tt_av names, values;
  ck_assert_int_eq(tt_expr_builder_take(b, &names, &values, &err), 0);
  ck_assert_str_eq(tt_av_map_get(&names, "#n2")->u.bytes, "a.b"); /* literal name */
  tt_av_free(&names);
  tt_av_free(&values);

  const char *bad[][2] = {
      {"[{\"attr\": \"SK\", \"op\": \">\", \"value\": 1}]", "key"},
      {"[{\"attr\": \"PK\", \"op\": \"<>\", \"value\": 1}]", "key[0].op"},
      {"[{\"attr\": \"PK\", \"op\": \"=\", \"value\": \"x\"}, {\"attr\": \"PK\", \"op\": \"=\", "
       "\"value\": \"x\"}]",
       "key[1].attr"},
      {"[{\"attr\": \"PK\", \"op\": \"=\"}]", "key[0].value"},
      {"[{\"attr\": \"PK\", \"op\": \"=\", \"value\": 7}]", "key[0].value"}, /* a key's type */
      {"[{\"attr\": \"\", \"op\": \"=\", \"value\": 1}]", "key[0].attr"},
      {"[]", "key"},
      {"{\"attr\": \"PK\", \"op\": \"=\", \"value\": 1}", "key"},
      {"[{\"op\": \"=\", \"value\": 1}]", "key"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    tt_error_clear(&err);
    ck_assert_int_eq(key_of(bad[i][0], &k, &err), -1);
    ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
    ck_assert_str_eq(err.field, bad[i][1]);
    /* A list that has the shape keeps its entries and the error, which the
     * builder answers. */
    if (k.n) {
      char *t = (char *)1;
      ck_assert_ptr_nonnull(k.error);
      ck_assert_int_eq(tt_expr_build_key_condition(b, &k, "key", &t, &err), -1);
      ck_assert_ptr_null(t);
      ck_assert_str_eq(err.field, bad[i][1]);
    }
    tt_key_cond_clear(&k);
  }
  tt_expr_builder_free(b);
}
END_TEST

START_TEST(test_projection) {
  struct tt_expr_builder *b = new_builder();
  char *text;
  struct tt_error err;
  json_t *j = js("[\"a\", \"b.c\", \"l[1]\", \"b.d[0][2]\"]");
  ck_assert_int_eq(proj(b, j, &text, &err), 0);
  ck_assert_str_eq(text, "#n0, #n1.#n2, #n3[1], #n1.#n4[0][2]");
  free(text);
  json_decref(j);
  j = js("[\"a\", \"b\", \"a.x\"]");
  ck_assert_int_eq(proj(b, j, &text, &err), -1);
  ck_assert_str_eq(err.field, "select[2]");
  ck_assert_str_eq(err.message, "select[2]: overlaps select[0]; select each path once");
  json_decref(j);
  j = js("[]");
  ck_assert_int_eq(proj(b, j, &text, &err), -1);
  ck_assert_str_eq(err.field, "select");
  json_decref(j);
  tt_expr_builder_free(b);
}
END_TEST

START_TEST(test_quoted_names) {
  /* `a.b` is the one attribute named "a.b": one placeholder, not two. */
  struct tt_expr_builder *b = new_builder();
  char *text;
  struct tt_error err;
  json_t *j = js("[\"`a.b`\", \"a.b\", \"`x[0]`[1].`c]`\"]");
  ck_assert_int_eq(proj(b, j, &text, &err), 0);
  ck_assert_str_eq(text, "#n0, #n1.#n2, #n3[1].#n4");
  free(text);
  json_decref(j);
  struct tt_av names, values;
  ck_assert_int_eq(tt_expr_builder_take(b, &names, &values, &err), 0);
  ck_assert_str_eq(tt_av_map_get(&names, "#n0")->u.bytes, "a.b");
  ck_assert_str_eq(tt_av_map_get(&names, "#n1")->u.bytes, "a");
  ck_assert_str_eq(tt_av_map_get(&names, "#n3")->u.bytes, "x[0]");
  ck_assert_str_eq(tt_av_map_get(&names, "#n4")->u.bytes, "c]");
  tt_av_free(&names);
  tt_av_free(&values);
  /* A quoted name and the same name unquoted overlap. */
  j = js("[\"a\", \"`a`.b\"]");
  ck_assert_int_eq(proj(b, j, &text, &err), -1);
  ck_assert_str_eq(err.field, "select[1]");
  json_decref(j);
  j = js("[\"`a.b`\", \"a\"]");
  ck_assert_int_eq(proj(b, j, &text, &err), 0);
  free(text);
  json_decref(j);
  tt_expr_builder_free(b);
  static const char *const bad[] = {"`", "``", "`a", "`a`b", "a.`b", "`a`[x]", "`a`."};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    ck_assert_msg(!tt_expr_rest_path_valid(bad[i]), "%s is not a path", bad[i]);
  static const char *const good[] = {"`a`", "`.`", "a`b", "`a`.b", "`[`[0]", "a.`b.c`.d", "a`.b`"};
  for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
    ck_assert_msg(tt_expr_rest_path_valid(good[i]), "%s is a path", good[i]);
  const char *name;
  size_t len;
  ck_assert_uint_eq(tt_expr_rest_path_head("`a.b`.c", &name, &len), 5);
  ck_assert_uint_eq(len, 3);
  ck_assert_int_eq(memcmp(name, "a.b", 3), 0);
  ck_assert_uint_eq(tt_expr_rest_path_head("ab[2].c", &name, &len), 2);
  ck_assert_uint_eq(len, 2);
  /* An update may not name the same attribute quoted and not. */
  b = new_builder();
  expect_cond(b, "{\"attr\": \"`a.b`\", \"op\": \"exists\"}", "attribute_exists(#n0)");
  tt_expr_builder_free(b);
  b = new_builder();
  ck_assert_int_eq(act(b, TT_EXPR_UPD_SET, "`n`", "1", false, &err), 0);
  ck_assert_int_eq(act(b, TT_EXPR_UPD_ADD, "n", "2", false, &err), -1);
  tt_expr_builder_free(b);
}
END_TEST

START_TEST(test_update_operators) {
  struct tt_expr_builder *b = new_builder();
  char *text, *cond;
  struct tt_error err;
  ck_assert_int_eq(act(b, TT_EXPR_UPD_SET, "name", "\"x\"", false, &err), 0);
  ck_assert_int_eq(act(b, TT_EXPR_UPD_SET_IF_NOT_EXISTS, "created", "\"now\"", false, &err), 0);
  ck_assert_int_eq(act(b, TT_EXPR_UPD_REMOVE, "old", NULL, false, &err), 0);
  ck_assert_int_eq(act(b, TT_EXPR_UPD_ADD, "count", "1", false, &err), 0);
  ck_assert_int_eq(act(b, TT_EXPR_UPD_DELETE, "tags", "[\"t\"]", true, &err), 0);
  ck_assert_int_eq(act(b, TT_EXPR_UPD_APPEND, "log", "[\"e\"]", false, &err), 0);
  ck_assert_int_eq(act(b, TT_EXPR_UPD_PREPEND, "q", "[\"z\"]", false, &err), 0);
  /* What the ORM adds on its own: ADD version 1 on a literal name. */
  struct tt_av one;
  ck_assert_int_eq(tt_av_number_int(&one, 1), 0);
  ck_assert_int_eq(
      tt_expr_build_update_action(b, TT_EXPR_UPD_ADD, "version", true, &one, "version", &err), 0);
  ck_assert_int_eq(tt_expr_build_update_finish(b, &text, &err), 0);
  ck_assert_str_eq(text,
                   "SET #n0 = :v0, #n1 = if_not_exists(#n1, :v1), "
                   "#n5 = list_append(if_not_exists(#n5, :v5), :v4), "
                   "#n6 = list_append(:v6, if_not_exists(#n6, :v7)) "
                   "REMOVE #n2 ADD #n3 :v2, #n7 :v8 DELETE #n4 :v3");
  json_t *j = js("{\"attr\": \"count\", \"op\": \"<\", \"value\": 10}");
  struct tt_cond *c0 = parse(j, "condition", &err);
  ck_assert_ptr_nonnull(c0);
  ck_assert_int_eq(tt_expr_build_condition(b, c0, "condition", &cond, &err), 0);
  tt_cond_free(c0);
  json_decref(j);
  ck_assert_str_eq(cond, "#n3 < :v9"); /* shares the names of the update */

  /* Round trip through our parser and evaluator. */
  struct tt_av names, values, old, out;
  struct tt_expr *u, *c;
  ck_assert_int_eq(tt_expr_builder_take(b, &names, &values, &err), 0);
  ck_assert_int_eq(tt_expr_parse(TT_EXPR_UPDATE, text, &names, &values, &u, &err), 0);
  ck_assert_int_eq(tt_expr_parse(TT_EXPR_CONDITION, cond, &names, &values, &c, &err), 0);
  const struct tt_expr *all[] = {u, c};
  ck_assert_int_eq(tt_expr_check_unused(all, 2, &names, &values, &err), 0);
  json_t *w = json_loads("{\"old\": {\"S\": \"o\"}, \"count\": {\"N\": \"2\"},"
                         " \"tags\": {\"SS\": [\"s\", \"t\"]}, \"q\": {\"L\": [{\"S\": \"a\"}]},"
                         " \"version\": {\"N\": \"3\"}}", 0, NULL);
  ck_assert_int_eq(tt_ddb_item_from_json(w, "", &old, &err), 0);
  ck_assert(tt_expr_eval_condition(c, &old));
  ck_assert_int_eq(tt_expr_apply_update(u, &old, &out, &err), 0);
  char *got = wire(&out);
  ck_assert_str_eq(got, "{\"count\":{\"N\":\"3\"},\"created\":{\"S\":\"now\"},"
                        "\"log\":{\"L\":[{\"S\":\"e\"}]},\"name\":{\"S\":\"x\"},"
                        "\"q\":{\"L\":[{\"S\":\"z\"},{\"S\":\"a\"}]},\"tags\":{\"SS\":[\"s\"]},"
                        "\"version\":{\"N\":\"4\"}}");
  free(got);
  tt_av_free(&out);
  tt_av_free(&old);
  json_decref(w);
  tt_expr_free(u);
  tt_expr_free(c);
  tt_av_free(&names);
  tt_av_free(&values);
  free(text);
  free(cond);

  /* Overlapping actions and empty updates are refused; a failed action
   * leaves nothing behind. */
  ck_assert_int_eq(act(b, TT_EXPR_UPD_SET, "a", "1", false, &err), 0);
  ck_assert_int_eq(act(b, TT_EXPR_UPD_REMOVE, "a.b", NULL, false, &err), -1);
  ck_assert_str_eq(err.field, "a.b");
  ck_assert_int_eq(act(b, TT_EXPR_UPD_SET, "a[", "1", false, &err), -1);
  ck_assert_int_eq(tt_expr_build_update_finish(b, &text, &err), 0);
  ck_assert_str_eq(text, "SET #n0 = :v0");
  free(text);
  ck_assert_int_eq(tt_expr_build_update_finish(b, &text, &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
  ck_assert_str_eq(err.message, "the update changes nothing");
  tt_expr_builder_free(b);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("expr_build");
  TCase *tc = tcase_create("build");
  tcase_add_test(tc, test_leaf_conditions);
  tcase_add_test(tc, test_logical_conditions);
  tcase_add_test(tc, test_condition_errors);
  tcase_add_test(tc, test_failed_build_leaves_no_trace);
  tcase_add_test(tc, test_failed_condition_is_answered_by_the_builder);
  tcase_add_test(tc, test_round_trip);
  tcase_add_test(tc, test_key_conditions);
  tcase_add_test(tc, test_projection);
  tcase_add_test(tc, test_quoted_names);
  tcase_add_test(tc, test_update_operators);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  tt_model_registry_free(reg);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
