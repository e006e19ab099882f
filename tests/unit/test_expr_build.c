/* SPDX-License-Identifier: Apache-2.0 */
/* test_expr_build.c -- REST conditions, keys, selects and update operators to exact expression strings. */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "expr/build.h"
#include "expr/expr.h"
#include "value/codec_ddb.h"
#include "value/json_exact.h"

static json_t *js(const char *text) {
  json_t *j = NULL;
  struct tt_error err;
  ck_assert_msg(tt_json_parse(text, strlen(text), NULL, &j, &err) == 0, "bad test JSON: %s",
                text);
  return j;
}

/* A stand-in for the model layer: infers types, except that "tags" is a
 * string set and "bad" always fails. */
static int infer(const json_t *v, struct tt_av *out) {
  size_t len;
  struct tt_json_numbuf nb;
  const char *s;
  if ((s = tt_json_string_text(v, &len)) != NULL)
    return tt_av_string(out, s, len);
  if ((s = tt_json_number_text(v, &nb, &len)) != NULL)
    return tt_av_number_text(out, s, len, "", NULL);
  if (json_is_boolean(v)) {
    tt_av_bool(out, json_is_true(v));
    return 0;
  }
  if (json_is_null(v)) {
    tt_av_null(out);
    return 0;
  }
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

static int encode(void *ctx, const char *attr, json_t *v, struct tt_av *out,
                  struct tt_error *err) {
  int *calls = ctx;
  (*calls)++;
  if (strcmp(attr, "bad") == 0)
    return tt_error_set(err, TT_ERR_VALIDATION, "bad", "bad: expected a string");
  if (strcmp(attr, "tags") == 0 && json_is_array(v)) {
    if (infer(v, out) != 0)
      return -1;
    out->type = TT_AV_SS;
    return tt_av_set_finish(out, attr, err);
  }
  if (infer(v, out) != 0)
    return tt_error_set(err, TT_ERR_VALIDATION, attr, "%s: unsupported value", attr);
  return 0;
}

static int calls;

static struct tt_expr_builder *new_builder(void) {
  calls = 0;
  struct tt_expr_builder *b = tt_expr_builder_new(encode, &calls);
  ck_assert_ptr_nonnull(b);
  return b;
}

/* Builds a condition from JSON text and compares the expression. */
static void expect_cond(struct tt_expr_builder *b, const char *json, const char *want) {
  json_t *j = js(json);
  char *text = NULL;
  struct tt_error err;
  int rc = tt_expr_build_condition(b, j, "condition", &text, &err);
  ck_assert_msg(rc == 0, "build of %s failed: %s (%s)", json, err.message, err.field);
  ck_assert_str_eq(text, want);
  free(text);
  json_decref(j);
}

static void expect_cond_error(const char *json, const char *field, const char *msg) {
  struct tt_expr_builder *b = new_builder();
  json_t *j = js(json);
  char *text = (char *)1;
  struct tt_error err;
  tt_error_clear(&err);
  ck_assert_int_eq(tt_expr_build_condition(b, j, "condition", &text, &err), -1);
  ck_assert_ptr_null(text);
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
  ck_assert_str_eq(err.field, field);
  if (msg)
    ck_assert_str_eq(err.message, msg);
  json_decref(j);
  tt_expr_builder_free(b);
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
  ck_assert_int_eq(calls, 10); /* type and size values are not model-typed */

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
  /* The encoder's error keeps its message and gets the JSON path. */
  expect_cond_error("{\"or\": [{\"attr\": \"bad\", \"op\": \"in\", \"value\": [\"ok\", 1]}]}",
                    "condition.or[0].value[0]", "bad: expected a string");
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
  struct tt_expr_builder *b = new_builder();
  json_t *j = json_loads(t.data, 0, NULL); /* deeper than tt_json_parse allows */
  char *text;
  struct tt_error err;
  ck_assert_int_eq(tt_expr_build_condition(b, j, "filter", &text, &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
  ck_assert(strstr(err.message, "nest at most 32 levels") != NULL);
  json_decref(j);
  tt_expr_builder_free(b);
  tt_buf_free(&t);
}
END_TEST

START_TEST(test_failed_build_leaves_no_trace) {
  /* DynamoDB rejects unused names and values, so a failed build must not
   * leave its half-registered ones in the maps. */
  struct tt_expr_builder *b = new_builder();
  json_t *j = js("[{\"attr\": \"a\", \"op\": \"=\", \"value\": 1},"
                 " {\"attr\": \"b\", \"op\": \"=\", \"value\": [1]},"
                 " {\"attr\": \"bad\", \"op\": \"=\", \"value\": 1}]");
  char *text = NULL;
  struct tt_error err;
  struct tt_av names, values;
  ck_assert_int_eq(tt_expr_build_condition(b, j, "filter", &text, &err), -1);
  ck_assert_str_eq(err.field, "filter[2].value");
  json_decref(j);
  expect_cond(b, "{\"attr\": \"z\", \"op\": \"exists\"}", "attribute_exists(#n0)");
  ck_assert_int_eq(tt_expr_builder_take(b, &names, &values, &err), 0);
  ck_assert_uint_eq(names.len, 1);
  ck_assert_uint_eq(values.len, 0);
  tt_av_free(&names);
  tt_av_free(&values);
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
  ck_assert_int_eq(tt_expr_build_condition(b, j, "filter", &text, &err), 0);
  ck_assert_str_eq(text, "#n0 IN (:v0, :v1) AND (#n1.#n2 >= :v2 OR contains(#n3, :v3)) AND "
                         "attribute_not_exists(#n4)");
  ck_assert_int_eq(tt_expr_builder_take(b, &names, &values, &err), 0);
  ck_assert_int_eq(tt_expr_check_maps(&names, &values, &err), 0);
  ck_assert_int_eq(tt_expr_parse_filter(text, &names, &values, &e, &err), 0);
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
  json_t *j = js("[{\"attr\": \"PK\", \"op\": \"=\", \"value\": \"USER#1\"},"
                 " {\"attr\": \"SK\", \"op\": \"begins_with\", \"value\": \"ORDER#\"}]");
  ck_assert_int_eq(tt_expr_build_key_condition(b, j, "key", &text, &err), 0);
  ck_assert_str_eq(text, "#n0 = :v0 AND begins_with(#n1, :v1)");
  free(text);
  json_decref(j);
  j = js("[{\"attr\": \"a.b\", \"op\": \"=\", \"value\": 1},"
         " {\"attr\": \"n\", \"op\": \"between\", \"value\": [1, 5]}]");
  ck_assert_int_eq(tt_expr_build_key_condition(b, j, "key", &text, &err), 0);
  ck_assert_str_eq(text, "#n2 = :v2 AND #n3 BETWEEN :v3 AND :v4");
  free(text);
  json_decref(j);
  struct tt_av names, values;
  ck_assert_int_eq(tt_expr_builder_take(b, &names, &values, &err), 0);
  ck_assert_str_eq(tt_av_map_get(&names, "#n2")->u.bytes, "a.b"); /* literal name */
  tt_av_free(&names);
  tt_av_free(&values);

  const char *bad[][2] = {
      {"[{\"attr\": \"SK\", \"op\": \">\", \"value\": 1}]", "key"},
      {"[{\"attr\": \"PK\", \"op\": \"<>\", \"value\": 1}]", "key[0].op"},
      {"[{\"attr\": \"PK\", \"op\": \"=\", \"value\": 1}, {\"attr\": \"PK\", \"op\": \"=\", \"value\": 1}]",
       "key[1].attr"},
      {"[{\"attr\": \"PK\", \"op\": \"=\"}]", "key[0].value"},
      {"[]", "key"},
      {"{\"attr\": \"PK\", \"op\": \"=\", \"value\": 1}", "key"},
      {"[{\"op\": \"=\", \"value\": 1}]", "key[0].attr"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    j = js(bad[i][0]);
    tt_error_clear(&err);
    ck_assert_int_eq(tt_expr_build_key_condition(b, j, "key", &text, &err), -1);
    ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
    ck_assert_str_eq(err.field, bad[i][1]);
    json_decref(j);
  }
  tt_expr_builder_free(b);
}
END_TEST

START_TEST(test_projection) {
  struct tt_expr_builder *b = new_builder();
  char *text;
  struct tt_error err;
  json_t *j = js("[\"a\", \"b.c\", \"l[1]\", \"b.d[0][2]\"]");
  ck_assert_int_eq(tt_expr_build_projection(b, j, "select", &text, &err), 0);
  ck_assert_str_eq(text, "#n0, #n1.#n2, #n3[1], #n1.#n4[0][2]");
  free(text);
  json_decref(j);
  j = js("[\"a\", \"b\", \"a.x\"]");
  ck_assert_int_eq(tt_expr_build_projection(b, j, "select", &text, &err), -1);
  ck_assert_str_eq(err.field, "select[2]");
  ck_assert_str_eq(err.message, "select[2]: overlaps select[0]; select each path once");
  json_decref(j);
  j = js("[]");
  ck_assert_int_eq(tt_expr_build_projection(b, j, "select", &text, &err), -1);
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
  ck_assert_int_eq(tt_expr_build_projection(b, j, "select", &text, &err), 0);
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
  ck_assert_int_eq(tt_expr_build_projection(b, j, "select", &text, &err), -1);
  ck_assert_str_eq(err.field, "select[1]");
  json_decref(j);
  j = js("[\"`a.b`\", \"a\"]");
  ck_assert_int_eq(tt_expr_build_projection(b, j, "select", &text, &err), 0);
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
  j = js("{\"set\": {\"`n`\": 1}, \"add\": {\"n\": 2}}");
  ck_assert_int_eq(tt_expr_build_update_json(b, j, "", &err), -1);
  json_decref(j);
  tt_expr_builder_free(b);
}
END_TEST

START_TEST(test_update_operators) {
  struct tt_expr_builder *b = new_builder();
  char *text, *cond;
  struct tt_error err;
  json_t *j = js("{\"set\": {\"name\": \"x\"}, \"remove\": [\"old\"], \"add\": {\"count\": 1},"
                 " \"delete\": {\"tags\": [\"t\"]}, \"append\": {\"log\": [\"e\"]},"
                 " \"set_if_not_exists\": {\"created\": \"now\"}, \"prepend\": {\"q\": [\"z\"]},"
                 " \"condition\": {\"attr\": \"count\", \"op\": \"<\", \"value\": 10},"
                 " \"expected_version\": 3}");
  ck_assert_int_eq(tt_expr_build_update_json(b, j, "", &err), 0);
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
  ck_assert_int_eq(tt_expr_build_condition(b, json_object_get(j, "condition"), "condition", &cond,
                                           &err),
                   0);
  ck_assert_str_eq(cond, "#n3 < :v9"); /* shares the names of the update */

  /* Round trip through our parser and evaluator. */
  struct tt_av names, values, old, out;
  struct tt_expr *u, *c;
  ck_assert_int_eq(tt_expr_builder_take(b, &names, &values, &err), 0);
  ck_assert_int_eq(tt_expr_parse_update(text, &names, &values, &u, &err), 0);
  ck_assert_int_eq(tt_expr_parse_condition(cond, &names, &values, &c, &err), 0);
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
  json_decref(j);

  /* Overlapping actions and empty updates are refused. */
  j = js("{\"set\": {\"a\": 1}, \"remove\": [\"a.b\"]}");
  ck_assert_int_eq(tt_expr_build_update_json(b, j, "update", &err), -1);
  ck_assert_str_eq(err.field, "update.remove[0]");
  json_decref(j);
  /* A failed call leaves nothing behind, not even its valid "set". */
  ck_assert_int_eq(tt_expr_build_update_finish(b, &text, &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
  ck_assert_str_eq(err.message, "the update changes nothing");
  j = js("{\"set\": {\"bad\": 1}}");
  ck_assert_int_eq(tt_expr_build_update_json(b, j, "", &err), -1);
  ck_assert_str_eq(err.field, "set.bad");
  ck_assert_str_eq(err.message, "bad: expected a string");
  json_decref(j);
  j = js("{\"remove\": \"a\"}");
  ck_assert_int_eq(tt_expr_build_update_json(b, j, "", &err), -1);
  ck_assert_str_eq(err.field, "remove");
  json_decref(j);
  j = js("{\"set\": {\"a[\": 1}}");
  ck_assert_int_eq(tt_expr_build_update_json(b, j, "", &err), -1);
  ck_assert_str_eq(err.field, "set.a[");
  json_decref(j);
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
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
