/* SPDX-License-Identifier: Apache-2.0 */
/* test_orm_item.c -- check suite for the ORM item codec: items, lifecycle fields, omit_empty, reads, updates. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/model.h"
#include "model/registry.h"
#include "orm/item.h"
#include "orm/key.h"
#include "value/codec_ddb.h"
#include "value/json_exact.h"

/* The DMS v0.2 contract fixtures, loaded once in main() (tests run with the
 * data directory as the current directory). */
static struct tt_model_registry *g_reg;

/* 2023-11-14T22:13:20.123456Z: a fixed "now" so lifecycle values are known. */
static const int64_t NOW = 1700000000123456000LL;
#define NOW_TEXT "2023-11-14T22:13:20.123456Z"

static const struct tt_model *model(const char *name) {
  const struct tt_model *m = tt_model_registry_get(g_reg, name);
  ck_assert_msg(m != NULL, "fixture model %s", name);
  return m;
}

/* A model from inline JSON (one DMS model object); caller unrefs. */
static struct tt_model *inline_model(const char *text) {
  json_error_t jerr;
  json_t *obj = json_loads(text, 0, &jerr);
  ck_assert_msg(obj != NULL, "test JSON: %s", jerr.text);
  struct tt_model *m = NULL;
  struct tt_error err = {0};
  ck_assert_msg(tt_model_from_json(obj, NULL, &m, &err) == 0, "%s", err.message);
  json_decref(obj);
  return m;
}

static json_t *parse(const char *text) {
  json_t *j = NULL;
  struct tt_error err = {0};
  ck_assert_msg(tt_json_parse(text, strlen(text), NULL, &j, &err) == 0, "%s", err.message);
  return j;
}

/* Converts `text` as an item; returns the rc and fills *out / *err. */
static int item_of(const struct tt_model *m, const char *text, enum tt_orm_write_mode mode,
                   struct tt_av *out, struct tt_orm_expected *ev, struct tt_error *err) {
  json_t *j = parse(text);
  int rc = tt_orm_item_from_json(m, j, mode, NOW, NULL, out, ev, err);
  json_decref(j);
  return rc;
}

/* The stored form of an item as DynamoDB JSON (malloc'd). */
static char *ddb_text(const struct tt_av *item) {
  struct tt_buf b;
  tt_buf_init(&b, 0);
  ck_assert_int_eq(tt_ddb_item_write(&b, item, 0), 0);
  return tt_buf_steal(&b, NULL);
}

static char *ddb_value_text(const struct tt_av *v) {
  struct tt_buf b;
  tt_buf_init(&b, 0);
  ck_assert_int_eq(tt_ddb_value_write(&b, v, 0), 0);
  return tt_buf_steal(&b, NULL);
}

static char *read_text(const struct tt_model *m, const struct tt_av *item,
                       const struct tt_select *select) {
  struct tt_buf b;
  struct tt_error err = {0};
  tt_buf_init(&b, 0);
  ck_assert_msg(tt_orm_item_write(&b, m, item, select, &err) == 0, "%s", err.message);
  return tt_buf_steal(&b, NULL);
}

/* Asserts that converting `text` stores exactly `want` (DynamoDB JSON). */
static void expect_stored(const struct tt_model *m, const char *text, enum tt_orm_write_mode mode,
                          const char *want) {
  struct tt_av item;
  struct tt_error err = {0};
  struct tt_orm_expected ev;
  ck_assert_msg(item_of(m, text, mode, &item, &ev, &err) == 0, "%s: %s", text, err.message);
  char *got = ddb_text(&item);
  ck_assert_str_eq(got, want);
  free(got);
  tt_av_free(&item);
}

/* Asserts that converting `text` fails with `code`, `field`, a message
 * containing `msg_part`, and no trace of `secret` (a value of the body). */
static void expect_item_error(const struct tt_model *m, const char *text,
                              enum tt_orm_write_mode mode, enum tt_err_code code,
                              const char *field, const char *msg_part, const char *secret) {
  struct tt_av item;
  struct tt_error err = {0};
  struct tt_orm_expected ev;
  ck_assert_int_eq(item_of(m, text, mode, &item, &ev, &err), -1);
  ck_assert_int_eq(item.type, TT_AV_NULL);
  ck_assert_msg(err.code == code, "%s: code %d, want %d (%s)", text, err.code, code, err.message);
  ck_assert_str_eq(err.field, field);
  ck_assert_msg(strstr(err.message, msg_part) != NULL, "message \"%s\" lacks \"%s\"", err.message,
                msg_part);
  if (secret != NULL)
    ck_assert_msg(strstr(err.message, secret) == NULL, "message leaks a value: %s", err.message);
}

/* ---- time -------------------------------------------------------------------- */

START_TEST(rfc3339nano_format) {
  static const struct {
    int64_t ns;
    const char *want;
  } cases[] = {
      {1700000000123456000LL, "2023-11-14T22:13:20.123456Z"},
      {1700000000000000000LL, "2023-11-14T22:13:20Z"},
      {1700000000100000000LL, "2023-11-14T22:13:20.1Z"},
      {1700000000000000001LL, "2023-11-14T22:13:20.000000001Z"},
      {0, "1970-01-01T00:00:00Z"},
      {-1, "1969-12-31T23:59:59.999999999Z"},
      {951782400000000000LL, "2000-02-29T00:00:00Z"},
  };
  char out[TT_ORM_TIME_MAX];
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    int n = tt_orm_format_rfc3339nano(cases[i].ns, out, sizeof(out));
    ck_assert_int_eq(n, (int)strlen(cases[i].want));
    ck_assert_str_eq(out, cases[i].want);
  }
  ck_assert_int_eq(tt_orm_format_rfc3339nano(0, out, 20), -1); /* needs 21 bytes */
  ck_assert_int_eq(tt_orm_format_rfc3339nano(0, out, 21), 20);
}
END_TEST

START_TEST(rfc3339_parse) {
  int64_t s;
  int32_t ns;
  ck_assert_int_eq(tt_orm_parse_rfc3339("2023-11-14T22:13:20Z", 20, &s, &ns), 0);
  ck_assert_int_eq(s, 1700000000);
  ck_assert_int_eq(ns, 0);
  const char *t = "2023-11-14T23:13:20.5+01:00";
  ck_assert_int_eq(tt_orm_parse_rfc3339(t, strlen(t), &s, &ns), 0);
  ck_assert_int_eq(s, 1700000000);
  ck_assert_int_eq(ns, 500000000);
  t = "2023-11-14t22:13:20.123456789z";
  ck_assert_int_eq(tt_orm_parse_rfc3339(t, strlen(t), &s, &ns), 0);
  ck_assert_int_eq(ns, 123456789);
  static const char *const bad[] = {"2023-11-14T22:13:20",   "2023-02-29T00:00:00Z",
                                    "2023-11-14 22:13:20Z",  "2023-11-14T24:00:00Z",
                                    "2023-11-14T22:13:20.Z", "2023-11-14T22:13:20.1234567890Z",
                                    "2023-11-14T22:13:20+0100", "2023-11-14T22:13:20Zx"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    ck_assert_msg(tt_orm_parse_rfc3339(bad[i], strlen(bad[i]), &s, &ns) == -1, "%s", bad[i]);
  ck_assert_int_eq(tt_orm_parse_rfc3339("2024-02-29T00:00:00Z", 20, &s, NULL), 0);
}
END_TEST

/* ---- items ------------------------------------------------------------------- */

START_TEST(create_fills_lifecycle) {
  /* p0.lifecycle.created_updated: the library fills createdAt, updatedAt, version. */
  expect_stored(model("User"), "{\"PK\":\"USER#3\",\"SK\":\"PROFILE\",\"nickname\":\"v0\"}",
                TT_ORM_CREATE,
                "{\"PK\":{\"S\":\"USER#3\"},\"SK\":{\"S\":\"PROFILE\"},"
                "\"createdAt\":{\"S\":\"" NOW_TEXT "\"},\"nickname\":{\"S\":\"v0\"},"
                "\"updatedAt\":{\"S\":\"" NOW_TEXT "\"},\"version\":{\"N\":\"0\"}}");
}
END_TEST

START_TEST(omit_empty_on_create) {
  /* p0.encoding.omitempty: "", [] and 0 of omit_empty attributes are not stored. */
  expect_stored(model("User"),
                "{\"PK\":\"USER#2\",\"SK\":\"PROFILE\",\"nickname\":\"\",\"tags\":[],\"ttl\":0,"
                "\"emailHash\":null,\"profile\":{}}",
                TT_ORM_CREATE,
                "{\"PK\":{\"S\":\"USER#2\"},\"SK\":{\"S\":\"PROFILE\"},"
                "\"createdAt\":{\"S\":\"" NOW_TEXT "\"},\"updatedAt\":{\"S\":\"" NOW_TEXT "\"},"
                "\"version\":{\"N\":\"0\"}}");
  /* A map with an empty member is not empty (DMS v0.2). */
  expect_stored(model("User"),
                "{\"PK\":\"U\",\"SK\":\"P\",\"profile\":{\"source\":\"\"},\"ttl\":0.0}",
                TT_ORM_CREATE,
                "{\"PK\":{\"S\":\"U\"},\"SK\":{\"S\":\"P\"},"
                "\"createdAt\":{\"S\":\"" NOW_TEXT "\"},\"profile\":{\"M\":{\"source\":{\"S\":\"\"}}},"
                "\"updatedAt\":{\"S\":\"" NOW_TEXT "\"},\"version\":{\"N\":\"0\"}}");
  /* Without omit_empty, empty values are stored (TypeMatrix optionalString "",
   * empty sets as NULL). */
  expect_stored(model("TypeMatrix"),
                "{\"PK\":\"T\",\"SK\":\"M\",\"optionalString\":\"\",\"emptyNumberSet\":[],"
                "\"flag\":false}",
                TT_ORM_CREATE,
                "{\"PK\":{\"S\":\"T\"},\"SK\":{\"S\":\"M\"},\"emptyNumberSet\":{\"NULL\":true},"
                "\"flag\":{\"BOOL\":false},\"optionalString\":{\"S\":\"\"}}");
}
END_TEST

START_TEST(empty_values_rule) {
  static const struct {
    const char *json;
    enum tt_av_type t;
    bool flat, deep;
  } cases[] = {
      {"null", TT_AV_S, true, true},
      {"\"\"", TT_AV_S, true, true},
      {"\"x\"", TT_AV_S, false, false},
      {"0", TT_AV_N, true, true},
      {"-0.000", TT_AV_N, true, true},
      {"0E+5", TT_AV_N, true, true},
      {"1", TT_AV_N, false, false},
      {"\"0.0\"", TT_AV_N, true, true},
      {"\"0.0\"", TT_AV_S, false, false},
      {"false", TT_AV_BOOL, true, true},
      {"true", TT_AV_BOOL, false, false},
      {"[]", TT_AV_L, true, true},
      {"[\"\"]", TT_AV_L, false, false},
      {"{}", TT_AV_M, true, true},
      {"{\"a\":\"\",\"b\":{\"c\":0}}", TT_AV_M, false, true},
      {"{\"a\":\"\",\"b\":{\"c\":1}}", TT_AV_M, false, false},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    json_t *j = parse(cases[i].json);
    ck_assert_msg(tt_orm_value_is_empty(j, cases[i].t, false) == cases[i].flat, "%s flat",
                  cases[i].json);
    ck_assert_msg(tt_orm_value_is_empty(j, cases[i].t, true) == cases[i].deep, "%s deep",
                  cases[i].json);
    json_decref(j);
  }
}
END_TEST

START_TEST(lifecycle_fields_refused) {
  const struct tt_model *u = model("User");
  expect_item_error(u, "{\"PK\":\"a\",\"SK\":\"b\",\"createdAt\":\"SENTINEL-TS\"}", TT_ORM_CREATE,
                    TT_ERR_VALIDATION, "createdAt", "createdAt is written by tabletheoryd",
                    "SENTINEL");
  expect_item_error(u, "{\"PK\":\"a\",\"SK\":\"b\",\"updatedAt\":\"x\"}", TT_ORM_PUT,
                    TT_ERR_VALIDATION, "updatedAt", "updatedAt", NULL);
  expect_item_error(u, "{\"PK\":\"a\",\"SK\":\"b\",\"version\":7}", TT_ORM_CREATE,
                    TT_ERR_VALIDATION, "version", "version is written by tabletheoryd", NULL);
  expect_item_error(u, "{\"PK\":\"a\",\"SK\":\"b\",\"version\":-1}", TT_ORM_PUT,
                    TT_ERR_VALIDATION, "version", "non-negative integer", NULL);
  expect_item_error(u, "{\"PK\":\"a\",\"SK\":\"b\",\"version\":1.5}", TT_ORM_PUT,
                    TT_ERR_VALIDATION, "version", "non-negative integer", NULL);
  expect_item_error(u, "{\"PK\":\"a\",\"SK\":\"b\",\"version\":\"3\"}", TT_ORM_PUT,
                    TT_ERR_VALIDATION, "version", "non-negative integer", NULL);
}
END_TEST

START_TEST(put_expected_version) {
  const struct tt_model *u = model("User");
  struct tt_av item;
  struct tt_orm_expected ev = {true, 99};
  struct tt_error err = {0};
  /* PUT without a version: version 0, nothing expected. */
  ck_assert_int_eq(item_of(u, "{\"PK\":\"a\",\"SK\":\"b\"}", TT_ORM_PUT, &item, &ev, &err), 0);
  ck_assert(!ev.present);
  ck_assert_str_eq(tt_av_map_get(&item, "version")->u.bytes, "0");
  /* If-Match: the caller sets expected + 1. */
  ck_assert_int_eq(tt_orm_item_set_version(u, &item, 8), 0);
  ck_assert_str_eq(tt_av_map_get(&item, "version")->u.bytes, "8");
  tt_av_free(&item);
  /* The body's version is the expected one; the stored one is its successor. */
  ck_assert_int_eq(
      item_of(u, "{\"PK\":\"a\",\"SK\":\"b\",\"version\":4}", TT_ORM_PUT, &item, &ev, &err), 0);
  ck_assert(ev.present);
  ck_assert_int_eq(ev.version, 4);
  ck_assert_str_eq(tt_av_map_get(&item, "version")->u.bytes, "5");
  tt_av_free(&item);
  /* A model without a version attribute: set_version changes nothing. */
  const struct tt_model *np = model("NumberPrecision");
  ck_assert_int_eq(item_of(np, "{\"PK\":\"a\",\"SK\":\"b\"}", TT_ORM_PUT, &item, NULL, &err), 0);
  ck_assert_int_eq(tt_orm_item_set_version(np, &item, 3), 0);
  ck_assert_uint_eq(item.len, 2);
  tt_av_free(&item);
}
END_TEST

START_TEST(keys_and_unknown_attributes) {
  const struct tt_model *u = model("User");
  expect_item_error(u, "{\"PK\":\"a\",\"SK\":\"b\",\"bogus\":\"SENTINEL-V\"}", TT_ORM_CREATE,
                    TT_ERR_VALIDATION, "bogus", "bogus is not an attribute of model User",
                    "SENTINEL");
  expect_item_error(u, "{\"PK\":\"SENTINEL-PK\"}", TT_ORM_CREATE, TT_ERR_VALIDATION, "SK",
                    "missing key attribute SK", "SENTINEL");
  expect_item_error(u, "{\"PK\":null,\"SK\":\"b\"}", TT_ORM_CREATE, TT_ERR_VALIDATION, "PK",
                    "missing key attribute PK", NULL);
  expect_item_error(u, "{\"PK\":\"\",\"SK\":\"b\"}", TT_ORM_CREATE, TT_ERR_VALIDATION, "PK",
                    "must not be empty", NULL);
  expect_item_error(u, "{\"PK\":5,\"SK\":\"b\"}", TT_ORM_CREATE, TT_ERR_VALIDATION, "PK",
                    "expected a string (S)", NULL);
  expect_item_error(u, "{\"PK\":\"a\",\"SK\":\"b\",\"\":1}", TT_ORM_CREATE, TT_ERR_VALIDATION,
                    "", "must not be empty", NULL);
  expect_item_error(u, "[1]", TT_ORM_CREATE, TT_ERR_VALIDATION, "", "must be a JSON object",
                    NULL);
  /* The field prefix locates the item inside a larger body. */
  json_t *j = parse("{\"PK\":\"a\",\"SK\":\"b\",\"nickname\":7}");
  struct tt_av item;
  struct tt_error err = {0};
  ck_assert_int_eq(tt_orm_item_from_json(u, j, TT_ORM_CREATE, NOW, "put[3]", &item, NULL, &err),
                   -1);
  ck_assert_str_eq(err.field, "put[3].nickname");
  ck_assert_str_eq(err.message, "put[3].nickname: expected a string (S)");
  json_decref(j);
}
END_TEST

START_TEST(required_attributes) {
  struct tt_model *m = inline_model(
      "{\"name\":\"Acct\",\"table\":{\"name\":\"accts\"},"
      "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"S\"}},"
      "\"attributes\":[{\"attribute\":\"id\",\"type\":\"S\",\"required\":true},"
      "{\"attribute\":\"email\",\"type\":\"S\",\"required\":true},"
      "{\"attribute\":\"note\",\"type\":\"S\",\"required\":true,\"omit_empty\":true}]}");
  expect_item_error(m, "{\"id\":\"a\",\"note\":\"n\"}", TT_ORM_CREATE, TT_ERR_VALIDATION, "email",
                    "missing required attribute email", NULL);
  expect_item_error(m, "{\"id\":\"a\",\"email\":null,\"note\":\"n\"}", TT_ORM_PUT,
                    TT_ERR_VALIDATION, "email", "required and must not be null", NULL);
  expect_item_error(m, "{\"id\":\"a\",\"email\":\"e\",\"note\":\"\"}", TT_ORM_PUT,
                    TT_ERR_VALIDATION, "note", "required and must not be empty", NULL);
  expect_stored(m, "{\"id\":\"a\",\"email\":\"\",\"note\":\"n\"}", TT_ORM_PUT,
                "{\"email\":{\"S\":\"\"},\"id\":{\"S\":\"a\"},\"note\":{\"S\":\"n\"}}");
  tt_model_unref(m);
}
END_TEST

START_TEST(exact_numbers) {
  /* p0.number.precision: decimal strings keep every digit and read back as strings. */
  const struct tt_model *np = model("NumberPrecision");
  struct tt_av item;
  struct tt_error err = {0};
  ck_assert_int_eq(item_of(np,
                           "{\"PK\":\"NUM#2\",\"SK\":\"C\",\"largeInteger\":\"9007199254740993\","
                           "\"preciseDecimal\":\"0.12345678901234567\"}",
                           TT_ORM_CREATE, &item, NULL, &err),
                   0);
  char *s = ddb_text(&item);
  ck_assert_str_eq(s, "{\"PK\":{\"S\":\"NUM#2\"},\"SK\":{\"S\":\"C\"},"
                      "\"largeInteger\":{\"N\":\"9007199254740993\"},"
                      "\"preciseDecimal\":{\"N\":\"0.12345678901234567\"}}");
  free(s);
  s = read_text(np, &item, NULL);
  ck_assert_str_eq(s, "{\"PK\":\"NUM#2\",\"SK\":\"C\",\"largeInteger\":\"9007199254740993\","
                      "\"preciseDecimal\":\"0.12345678901234567\"}");
  free(s);
  tt_av_free(&item);
  /* 38 digits as a JSON number: exact in, exact out (decimal_string: a string). */
  ck_assert_int_eq(item_of(np,
                           "{\"PK\":\"a\",\"SK\":\"b\",\"largeInteger\":"
                           "12345678901234567890123456789012345678,\"preciseDecimal\":1.50}",
                           TT_ORM_CREATE, &item, NULL, &err),
                   0);
  s = read_text(np, &item, NULL);
  ck_assert_str_eq(s, "{\"PK\":\"a\",\"SK\":\"b\",\"largeInteger\":"
                      "\"12345678901234567890123456789012345678\",\"preciseDecimal\":\"1.5\"}");
  free(s);
  tt_av_free(&item);
  /* 39 significant digits cannot be stored exactly: refused. */
  expect_item_error(np,
                    "{\"PK\":\"a\",\"SK\":\"b\",\"largeInteger\":"
                    "123456789012345678901234567890123456789}",
                    TT_ORM_CREATE, TT_ERR_VALIDATION, "largeInteger", "38", "123456789");
  /* An undeclared-format N reads as a JSON number when doubles carry it. */
  const struct tt_model *o = model("Order");
  ck_assert_int_eq(item_of(o, "{\"PK\":\"a\",\"SK\":\"b\",\"amount\":12.50}", TT_ORM_CREATE,
                           &item, NULL, &err),
                   0);
  const char *const amount[] = {"amount", "version"};
  s = read_text(o, &item, &(struct tt_select){amount, 2});
  ck_assert_str_eq(s, "{\"amount\":12.5,\"version\":0}");
  free(s);
  tt_av_free(&item);
}
END_TEST

START_TEST(type_matrix_round_trip) {
  /* p0.type_matrix.round_trip: every DynamoDB type, stored and read back. */
  const struct tt_model *tm = model("TypeMatrix");
  struct tt_av item;
  struct tt_error err = {0};
  ck_assert_int_eq(
      item_of(tm,
              "{\"PK\":\"TYPE#1\",\"SK\":\"MATRIX#1\",\"numberSet\":[\"9007199254740993\",\"42\"],"
              "\"binaryBlob\":\"AQID\",\"binarySet\":[\"BAU=\",\"Bgc=\"],\"flag\":true,"
              "\"nothing\":null,\"items\":[\"alpha\",true,null,{\"nested\":\"value\"}],"
              "\"metadata\":{\"label\":\"meta\",\"active\":true,\"child\":{\"nested\":\"value\"}},"
              "\"emptyNumberSet\":[],\"emptyBinarySet\":[],\"optionalString\":\"\"}",
              TT_ORM_CREATE, &item, NULL, &err),
      0);
  char *s = ddb_text(&item);
  ck_assert_str_eq(
      s, "{\"PK\":{\"S\":\"TYPE#1\"},\"SK\":{\"S\":\"MATRIX#1\"},\"binaryBlob\":{\"B\":\"AQID\"},"
         "\"binarySet\":{\"BS\":[\"BAU=\",\"Bgc=\"]},\"emptyBinarySet\":{\"NULL\":true},"
         "\"emptyNumberSet\":{\"NULL\":true},\"flag\":{\"BOOL\":true},"
         "\"items\":{\"L\":[{\"S\":\"alpha\"},{\"BOOL\":true},{\"NULL\":true},"
         "{\"M\":{\"nested\":{\"S\":\"value\"}}}]},"
         "\"metadata\":{\"M\":{\"active\":{\"BOOL\":true},\"child\":{\"M\":{\"nested\":{\"S\":"
         "\"value\"}}},\"label\":{\"S\":\"meta\"}}},\"nothing\":{\"NULL\":true},"
         "\"numberSet\":{\"NS\":[\"42\",\"9007199254740993\"]},\"optionalString\":{\"S\":\"\"}}");
  free(s);
  const struct tt_av *blob = tt_av_map_get(&item, "binaryBlob");
  ck_assert_uint_eq(blob->len, 3);
  ck_assert_int_eq(memcmp(blob->u.bytes, "\x01\x02\x03", 3), 0);
  s = read_text(tm, &item, NULL);
  ck_assert_str_eq(s, "{\"PK\":\"TYPE#1\",\"SK\":\"MATRIX#1\",\"binaryBlob\":\"AQID\","
                      "\"binarySet\":[\"BAU=\",\"Bgc=\"],\"emptyBinarySet\":[],"
                      "\"emptyNumberSet\":[],\"flag\":true,"
                      "\"items\":[\"alpha\",true,null,{\"nested\":\"value\"}],"
                      "\"metadata\":{\"active\":true,\"child\":{\"nested\":\"value\"},"
                      "\"label\":\"meta\"},\"nothing\":null,"
                      "\"numberSet\":[42,\"9007199254740993\"],\"optionalString\":\"\"}");
  free(s);
  /* The tree form says the same. */
  json_t *tree = tt_orm_item_to_json(tm, &item, NULL, &err);
  ck_assert_ptr_nonnull(tree);
  json_t *ns = json_object_get(tree, "numberSet");
  ck_assert(tt_json_is_number(json_array_get(ns, 0)));
  ck_assert(json_is_array(json_object_get(tree, "emptyNumberSet")));
  ck_assert(json_is_null(json_object_get(tree, "nothing")));
  json_decref(tree);
  tt_av_free(&item);
  /* Wrong types and duplicates are refused, naming the attribute only. */
  expect_item_error(tm, "{\"PK\":\"a\",\"SK\":\"b\",\"binaryBlob\":\"SENTINEL!\"}", TT_ORM_CREATE,
                    TT_ERR_VALIDATION, "binaryBlob", "base64", "SENTINEL");
  expect_item_error(tm, "{\"PK\":\"a\",\"SK\":\"b\",\"numberSet\":[1,\"1.0\"]}", TT_ORM_CREATE,
                    TT_ERR_VALIDATION, "numberSet", "numberSet", NULL);
  expect_item_error(tm, "{\"PK\":\"a\",\"SK\":\"b\",\"flag\":\"true\"}", TT_ORM_CREATE,
                    TT_ERR_VALIDATION, "flag", "BOOL", NULL);
  expect_item_error(tm, "{\"PK\":\"a\",\"SK\":\"b\",\"nothing\":1}", TT_ORM_CREATE,
                    TT_ERR_VALIDATION, "nothing", "NULL", NULL);
  expect_item_error(tm, "{\"PK\":\"a\",\"SK\":\"b\",\"items\":{\"a\":1}}", TT_ORM_CREATE,
                    TT_ERR_VALIDATION, "items", "(L)", NULL);
}
END_TEST

START_TEST(json_attributes) {
  /* json: true with M is stored natively (User.profile). */
  expect_stored(model("User"), "{\"PK\":\"a\",\"SK\":\"b\",\"profile\":{\"z\":1,\"a\":[true]}}",
                TT_ORM_CREATE,
                "{\"PK\":{\"S\":\"a\"},\"SK\":{\"S\":\"b\"},\"createdAt\":{\"S\":\"" NOW_TEXT
                "\"},\"profile\":{\"M\":{\"a\":{\"L\":[{\"BOOL\":true}]},\"z\":{\"N\":\"1\"}}},"
                "\"updatedAt\":{\"S\":\"" NOW_TEXT "\"},\"version\":{\"N\":\"0\"}}");
  /* json: true with S: a deterministic JSON string; null as NULL; read back as JSON. */
  struct tt_model *m = inline_model(
      "{\"name\":\"Doc\",\"table\":{\"name\":\"docs\"},"
      "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"S\"}},"
      "\"attributes\":[{\"attribute\":\"id\",\"type\":\"S\",\"required\":true},"
      "{\"attribute\":\"doc\",\"type\":\"S\",\"json\":true},"
      "{\"attribute\":\"raw\",\"type\":\"S\",\"json\":true,\"omit_empty\":true}]}");
  struct tt_av item;
  struct tt_error err = {0};
  ck_assert_int_eq(item_of(m, "{\"id\":\"1\",\"doc\":{ \"b\": [1.50, \"<x>\"], \"a\": null },"
                              "\"raw\":{}}",
                           TT_ORM_CREATE, &item, NULL, &err),
                   0);
  char *s = ddb_text(&item);
  ck_assert_str_eq(s, "{\"doc\":{\"S\":\"{\\\"a\\\":null,\\\"b\\\":[1.5,\\\"\\\\u003cx\\\\u003e\\\"]}"
                      "\"},\"id\":{\"S\":\"1\"}}");
  free(s);
  s = read_text(m, &item, NULL);
  ck_assert_str_eq(s, "{\"doc\":{\"a\":null,\"b\":[1.5,\"<x>\"]},\"id\":\"1\"}");
  free(s);
  tt_av_free(&item);
  expect_stored(m, "{\"id\":\"1\",\"doc\":null}", TT_ORM_CREATE,
                "{\"doc\":{\"NULL\":true},\"id\":{\"S\":\"1\"}}");
  /* A legacy plain string that is not JSON reads back as the string. */
  ck_assert_int_eq(item_of(m, "{\"id\":\"1\"}", TT_ORM_CREATE, &item, NULL, &err), 0);
  struct tt_av legacy;
  ck_assert_int_eq(tt_av_string(&legacy, "not json", 8), 0);
  ck_assert_int_eq(tt_av_map_put(&item, "doc", 3, &legacy), 0);
  s = read_text(m, &item, NULL);
  ck_assert_str_eq(s, "{\"doc\":\"not json\",\"id\":\"1\"}");
  free(s);
  tt_av_free(&item);
  tt_model_unref(m);
}
END_TEST

START_TEST(ttl_epoch_seconds) {
  const struct tt_model *u = model("User");
  const char *pre = "{\"PK\":{\"S\":\"a\"},\"SK\":{\"S\":\"b\"},\"createdAt\":{\"S\":\"" NOW_TEXT
                    "\"},\"ttl\":{\"N\":\"1700000000\"},\"updatedAt\":{\"S\":\"" NOW_TEXT
                    "\"},\"version\":{\"N\":\"0\"}}";
  /* p0.lifecycle.ttl_epoch_seconds: a number is stored as N. */
  expect_stored(u, "{\"PK\":\"a\",\"SK\":\"b\",\"ttl\":1700000000}", TT_ORM_CREATE, pre);
  expect_stored(u, "{\"PK\":\"a\",\"SK\":\"b\",\"ttl\":\"1700000000\"}", TT_ORM_CREATE, pre);
  /* RFC 3339 times are converted to epoch seconds (fraction dropped). */
  expect_stored(u, "{\"PK\":\"a\",\"SK\":\"b\",\"ttl\":\"2023-11-14T22:13:20Z\"}", TT_ORM_CREATE,
                pre);
  expect_stored(u, "{\"PK\":\"a\",\"SK\":\"b\",\"ttl\":\"2023-11-14T23:13:20.9+01:00\"}",
                TT_ORM_CREATE, pre);
  expect_item_error(u, "{\"PK\":\"a\",\"SK\":\"b\",\"ttl\":1.5}", TT_ORM_CREATE,
                    TT_ERR_VALIDATION, "ttl", "integer epoch seconds", NULL);
  expect_item_error(u, "{\"PK\":\"a\",\"SK\":\"b\",\"ttl\":-5}", TT_ORM_CREATE, TT_ERR_VALIDATION,
                    "ttl", "non-negative", NULL);
  expect_item_error(u, "{\"PK\":\"a\",\"SK\":\"b\",\"ttl\":\"tomorrow SENTINEL\"}", TT_ORM_CREATE,
                    TT_ERR_VALIDATION, "ttl", "RFC 3339", "SENTINEL");
  expect_item_error(u, "{\"PK\":\"a\",\"SK\":\"b\",\"ttl\":true}", TT_ORM_CREATE,
                    TT_ERR_VALIDATION, "ttl", "(N)", NULL);
}
END_TEST

START_TEST(additional_attributes) {
  struct tt_model *m = inline_model(
      "{\"name\":\"Loose\",\"table\":{\"name\":\"loose\"},"
      "\"tags\":{\"additional_attributes\":true},"
      "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"N\"}},"
      "\"attributes\":[{\"attribute\":\"id\",\"type\":\"N\",\"required\":true}]}");
  struct tt_av item;
  struct tt_error err = {0};
  ck_assert_int_eq(item_of(m,
                           "{\"id\":7,\"extra\":\"x\",\"n\":9007199254740993,\"l\":[1,\"a\"],"
                           "\"o\":{\"k\":false}}",
                           TT_ORM_PUT, &item, NULL, &err),
                   0);
  char *s = ddb_text(&item);
  ck_assert_str_eq(s, "{\"extra\":{\"S\":\"x\"},\"id\":{\"N\":\"7\"},"
                      "\"l\":{\"L\":[{\"N\":\"1\"},{\"S\":\"a\"}]},"
                      "\"n\":{\"N\":\"9007199254740993\"},\"o\":{\"M\":{\"k\":{\"BOOL\":false}}}}");
  free(s);
  s = read_text(m, &item, NULL);
  ck_assert_str_eq(s, "{\"extra\":\"x\",\"id\":7,\"l\":[1,\"a\"],\"n\":\"9007199254740993\","
                      "\"o\":{\"k\":false}}");
  free(s);
  tt_av_free(&item);
  tt_model_unref(m);
}
END_TEST

START_TEST(item_size_limit) {
  const struct tt_model *u = model("User");
  size_t n = 410 * 1024;
  char *text = malloc(n + 64);
  ck_assert_ptr_nonnull(text);
  int k = snprintf(text, 64, "{\"PK\":\"a\",\"SK\":\"b\",\"nickname\":\"");
  memset(text + k, 'x', n);
  memcpy(text + k + n, "\"}", 3);
  expect_item_error(u, text, TT_ORM_CREATE, TT_ERR_PAYLOAD_TOO_LARGE, "", "400 KB", "xxxx");
  /* Just under the limit passes: 400 KB minus the other attributes. */
  size_t fits = TT_ORM_MAX_ITEM_BYTES - 200;
  memcpy(text + k + fits, "\"}", 3);
  struct tt_av item;
  struct tt_error err = {0};
  ck_assert_int_eq(item_of(u, text, TT_ORM_CREATE, &item, NULL, &err), 0);
  ck_assert_uint_le(tt_av_item_size(&item), TT_ORM_MAX_ITEM_BYTES);
  tt_av_free(&item);
  free(text);
}
END_TEST

START_TEST(encryption_fails_closed) {
  /* The codec types an encrypted attribute like any other (orm/crypt.h
   * seals it before the write, or refuses the model without a key)... */
  const struct tt_model *e = model("EncryptedRecord");
  struct tt_av item, env;
  struct tt_error err = {0};
  struct tt_buf b;
  ck_assert_int_eq(item_of(e, "{\"PK\":\"a\",\"SK\":\"b\",\"secret\":\"s\"}", TT_ORM_CREATE,
                           &item, NULL, &err),
                   0);
  ck_assert_int_eq(tt_av_map_get(&item, "secret")->type, TT_AV_S);
  tt_av_free(&item);
  /* ...but an envelope still in place is never written out as a value. */
  ck_assert_int_eq(item_of(e, "{\"PK\":\"a\",\"SK\":\"b\"}", TT_ORM_CREATE, &item, NULL, &err), 0);
  struct tt_av edk, ct;
  ck_assert_int_eq(tt_av_map(&env, 0), 0);
  ck_assert_int_eq(tt_av_binary(&edk, "k", 1), 0);
  ck_assert_int_eq(tt_av_binary(&ct, "c", 1), 0);
  ck_assert_int_eq(tt_av_map_put(&env, "edk", 3, &edk), 0);
  ck_assert_int_eq(tt_av_map_put(&env, "ct", 2, &ct), 0);
  ck_assert_int_eq(tt_av_map_put(&item, "secret", 6, &env), 0);
  tt_buf_init(&b, 0);
  ck_assert_int_eq(tt_orm_item_write(&b, e, &item, NULL, &err), -1);
  ck_assert_str_eq(err.field, "secret");
  ck_assert_ptr_null(tt_orm_item_to_json(e, &item, NULL, &err));
  tt_buf_free(&b);
  tt_av_free(&item);
}
END_TEST

START_TEST(read_projection) {
  const struct tt_model *u = model("User");
  struct tt_av item;
  struct tt_error err = {0};
  ck_assert_int_eq(item_of(u,
                           "{\"PK\":\"a\",\"SK\":\"b\",\"nickname\":\"n\",\"profile\":{\"source\":"
                           "\"s\"},\"tags\":[\"y\",\"x\"],\"emailHash\":\"h\"}",
                           TT_ORM_CREATE, &item, NULL, &err),
                   0);
  const char *const paths[] = {"nickname", "profile.source", "tags[0]", "nick"};
  const struct tt_select sel = {paths, 4};
  char *s = read_text(u, &item, &sel);
  ck_assert_str_eq(s, "{\"nickname\":\"n\",\"profile\":{\"source\":\"s\"},\"tags\":[\"x\",\"y\"]}");
  free(s);
  json_t *tree = tt_orm_item_to_json(u, &item, &sel, &err);
  ck_assert_uint_eq(json_object_size(tree), 3);
  json_decref(tree);
  /* An empty SS stored as NULL reads back as []. */
  struct tt_av null_set;
  tt_av_null(&null_set);
  ck_assert_int_eq(tt_av_map_put(&item, "tags", 4, &null_set), 0);
  const char *const tags[] = {"tags"};
  s = read_text(u, &item, &(struct tt_select){tags, 1});
  ck_assert_str_eq(s, "{\"tags\":[]}");
  free(s);
  tt_av_free(&item);
}
END_TEST

/* ---- updates ----------------------------------------------------------------- */

static int update_of(const struct tt_model *m, const char *text, struct tt_orm_update *u,
                     struct tt_error *err) {
  json_t *j = parse(text);
  int rc = tt_orm_update_from_json(m, j, NOW, NULL, u, err);
  json_decref(j);
  return rc;
}

/* Describes the actions as "SET nickname=<ddb json>;REMOVE tags;..." with
 * '~' after the name of non-literal (REST path) targets. */
static char *describe(const struct tt_orm_update *u) {
  static const char *const kind[] = {
      [TT_EXPR_UPD_SET] = "SET",       [TT_EXPR_UPD_SET_IF_NOT_EXISTS] = "SETNX",
      [TT_EXPR_UPD_REMOVE] = "REMOVE", [TT_EXPR_UPD_ADD] = "ADD",
      [TT_EXPR_UPD_DELETE] = "DELETE", [TT_EXPR_UPD_APPEND] = "APPEND",
      [TT_EXPR_UPD_PREPEND] = "PREPEND"};
  struct tt_buf b;
  tt_buf_init(&b, 0);
  for (size_t i = 0; i < u->n_actions; i++) {
    const struct tt_orm_action *a = &u->actions[i];
    tt_buf_printf(&b, "%s%s %s%s", i ? ";" : "", kind[a->kind], a->path, a->literal ? "" : "~");
    if (a->kind != TT_EXPR_UPD_REMOVE) {
      char *v = ddb_value_text(&a->value);
      tt_buf_printf(&b, "=%s", v);
      free(v);
    } else {
      ck_assert_int_eq(a->value.type, TT_AV_NULL);
    }
  }
  return tt_buf_steal(&b, NULL);
}

#define LC_USER ";SET updatedAt={\"S\":\"" NOW_TEXT "\"};ADD version={\"N\":\"1\"}"

static void expect_update(const struct tt_model *m, const char *text, const char *want,
                          int64_t expected /* -1: none */) {
  struct tt_orm_update u;
  struct tt_error err = {0};
  ck_assert_msg(update_of(m, text, &u, &err) == 0, "%s: %s", text, err.message);
  char *got = describe(&u);
  ck_assert_str_eq(got, want);
  free(got);
  ck_assert_int_eq(u.expected.present, expected >= 0);
  if (expected >= 0)
    ck_assert_int_eq(u.expected.version, expected);
  tt_orm_update_free(&u);
  ck_assert_uint_eq(u.n_actions, 0);
}

static void expect_update_error(const struct tt_model *m, const char *text, const char *field,
                                const char *msg_part) {
  struct tt_orm_update u;
  struct tt_error err = {0};
  ck_assert_msg(update_of(m, text, &u, &err) == -1, "%s accepted", text);
  ck_assert_uint_eq(u.n_actions, 0);
  ck_assert_ptr_null(u.actions);
  ck_assert_msg(err.code == TT_ERR_VALIDATION, "%s: code %d", text, err.code);
  ck_assert_str_eq(err.field, field);
  ck_assert_msg(strstr(err.message, msg_part) != NULL, "message \"%s\" lacks \"%s\"", err.message,
                msg_part);
  ck_assert_msg(strstr(err.message, "SENTINEL") == NULL, "message leaks a value: %s",
                err.message);
}

START_TEST(update_fields_form) {
  const struct tt_model *user = model("User");
  /* p0.lifecycle.created_updated: one selected field, version expected 0. */
  struct tt_orm_update u;
  struct tt_error err = {0};
  ck_assert_int_eq(update_of(user,
                             "{\"fields\":[\"nickname\"],\"item\":{\"PK\":\"USER#3\",\"SK\":"
                             "\"PROFILE\",\"nickname\":\"v1\",\"version\":0}}",
                             &u, &err),
                   0);
  char *got = describe(&u);
  ck_assert_str_eq(got, "SET nickname={\"S\":\"v1\"}" LC_USER);
  free(got);
  ck_assert(u.expected.present);
  ck_assert_int_eq(u.expected.version, 0);
  ck_assert_int_eq(u.key.type, TT_AV_M);
  got = ddb_text(&u.key);
  ck_assert_str_eq(got, "{\"PK\":{\"S\":\"USER#3\"},\"SK\":{\"S\":\"PROFILE\"}}");
  free(got);
  ck_assert_str_eq(u.actions[0].field, "item.nickname");
  tt_orm_update_free(&u);
  /* p0.encoding.omitempty_explicit_update: selected empty omit_empty
   * attributes are removed; a map with an empty member is stored. */
  expect_update(user,
                "{\"fields\":[\"nickname\",\"tags\",\"profile\"],\"item\":{\"PK\":\"USER#15\","
                "\"SK\":\"PROFILE\",\"nickname\":\"\",\"tags\":[],\"profile\":{\"source\":\"\"},"
                "\"version\":0}}",
                "REMOVE nickname;REMOVE tags;SET profile={\"M\":{\"source\":{\"S\":\"\"}}}" LC_USER,
                0);
  /* p0.encoding.omitempty_structured_m_update: same on StructuredProfileUser. */
  expect_update(model("StructuredProfileUser"),
                "{\"fields\":[\"profile\"],\"item\":{\"PK\":\"USER#16\",\"SK\":\"PROFILE\","
                "\"profile\":{\"source\":\"\"},\"version\":0}}",
                "SET profile={\"M\":{\"source\":{\"S\":\"\"}}};ADD version={\"N\":\"1\"}", 0);
  /* A selected attribute without omit_empty is stored even when empty. */
  expect_update(model("TypeMatrix"),
                "{\"fields\":[\"optionalString\",\"emptyNumberSet\",\"flag\"],\"item\":{"
                "\"optionalString\":\"\",\"emptyNumberSet\":[],\"flag\":false}}",
                "SET optionalString={\"S\":\"\"};SET emptyNumberSet={\"NULL\":true};"
                "SET flag={\"BOOL\":false}",
                -1);
  /* Unselected members are left alone (but still checked). */
  expect_update(user,
                "{\"fields\":[\"ttl\"],\"item\":{\"nickname\":\"x\",\"ttl\":"
                "\"2023-11-14T22:13:20Z\"}}",
                "SET ttl={\"N\":\"1700000000\"}" LC_USER, -1);
}
END_TEST

START_TEST(update_sparse_form) {
  /* p0.encoding.omitempty_implicit_structured_m_update: without fields a
   * record whose members are all empty is not selected; the version still
   * goes up. */
  expect_update(model("StructuredProfileUser"),
                "{\"item\":{\"PK\":\"USER#17\",\"SK\":\"PROFILE\",\"profile\":{\"source\":\"\"},"
                "\"version\":0}}",
                "ADD version={\"N\":\"1\"}", 0);
  expect_update(model("User"),
                "{\"item\":{\"PK\":\"a\",\"SK\":\"b\",\"nickname\":\"x\",\"tags\":[],"
                "\"emailHash\":\"\",\"ttl\":0,\"profile\":{\"k\":{\"j\":null}}},"
                "\"expected_version\":3}",
                "SET nickname={\"S\":\"x\"}" LC_USER, 3);
  expect_update(model("TypeMatrix"),
                "{\"item\":{\"numberSet\":[\"9007199254740993\",1],\"flag\":false,"
                "\"optionalString\":\"\"}}",
                "SET numberSet={\"NS\":[\"1\",\"9007199254740993\"]}", -1);
  /* Nothing to change on a model without lifecycle attributes. */
  expect_update_error(model("TypeMatrix"), "{\"item\":{\"PK\":\"a\",\"flag\":false}}", "",
                      "the update changes nothing");
}
END_TEST

START_TEST(update_operator_form) {
  const struct tt_model *user = model("User");
  expect_update(user,
                "{\"set\":{\"nickname\":\"n\",\"profile.source\":\"s\",\"ttl\":17},"
                "\"set_if_not_exists\":{\"emailHash\":\"h\"},\"remove\":[\"profile.old\"],"
                "\"add\":{\"tags\":[\"b\",\"a\"]},\"expected_version\":4,"
                "\"condition\":{\"attr\":\"nickname\",\"op\":\"exists\"}}",
                "SET nickname~={\"S\":\"n\"};SET profile.source~={\"S\":\"s\"};"
                "SET ttl~={\"N\":\"17\"};SETNX emailHash~={\"S\":\"h\"};REMOVE profile.old~;"
                "ADD tags~={\"SS\":[\"a\",\"b\"]}" LC_USER,
                4);
  expect_update(user, "{\"delete\":{\"tags\":[\"c\"]},\"remove\":[\"ttl\"]}",
                "REMOVE ttl~;DELETE tags~={\"SS\":[\"c\"]}" LC_USER, -1);
  /* set of an empty omit_empty value removes it; set_if_not_exists drops it. */
  expect_update(user, "{\"set\":{\"nickname\":\"\",\"tags\":[]},\"set_if_not_exists\":{\"ttl\":0}}",
                "REMOVE nickname~;REMOVE tags~" LC_USER, -1);
  const struct tt_model *tm = model("TypeMatrix");
  expect_update(tm,
                "{\"add\":{\"numberSet\":[\"12345678901234567890123456789012345678\"],"
                "\"metadata.count\":1},\"append\":{\"items\":[\"z\",{\"k\":1}]},"
                "\"prepend\":{\"metadata.list\":[0]},\"set\":{\"items[2]\":null}}",
                "SET items[2]~={\"NULL\":true};"
                "ADD numberSet~={\"NS\":[\"12345678901234567890123456789012345678\"]};"
                "ADD metadata.count~={\"N\":\"1\"};"
                "APPEND items~={\"L\":[{\"S\":\"z\"},{\"M\":{\"k\":{\"N\":\"1\"}}}]};"
                "PREPEND metadata.list~={\"L\":[{\"N\":\"0\"}]}",
                -1);
  /* Exact numbers through set. */
  expect_update(model("NumberPrecision"), "{\"set\":{\"preciseDecimal\":0.12345678901234567}}",
                "SET preciseDecimal~={\"N\":\"0.12345678901234567\"}", -1);
  /* Only the version bump. */
  expect_update(user, "{\"expected_version\":2}", LC_USER + 1, 2);
}
END_TEST

START_TEST(update_refusals) {
  const struct tt_model *user = model("User");
  const struct tt_model *tm = model("TypeMatrix");
  /* Keys and library-owned attributes. */
  expect_update_error(user, "{\"set\":{\"PK\":\"SENTINEL\"}}", "set.PK",
                      "PK is a key attribute");
  expect_update_error(user, "{\"set\":{\"createdAt\":\"SENTINEL\"}}", "set.createdAt",
                      "createdAt is written by tabletheoryd");
  expect_update_error(user, "{\"set\":{\"updatedAt\":\"SENTINEL\"}}", "set.updatedAt",
                      "updatedAt is written by tabletheoryd");
  expect_update_error(user, "{\"add\":{\"version\":1}}", "add.version",
                      "version is written by tabletheoryd");
  expect_update_error(user, "{\"remove\":[\"createdAt\"]}", "remove[0]", "createdAt");
  expect_update_error(user, "{\"remove\":[\"SK\"]}", "remove[0]", "SK is a key attribute");
  expect_update_error(user, "{\"fields\":[\"createdAt\"],\"item\":{\"createdAt\":\"x\"}}",
                      "item.createdAt", "createdAt is written by tabletheoryd");
  expect_update_error(user, "{\"fields\":[\"version\"],\"item\":{}}", "fields[0]",
                      "version is written by tabletheoryd");
  expect_update_error(user, "{\"fields\":[\"PK\"],\"item\":{\"PK\":\"a\"}}", "fields[0]",
                      "PK is a key attribute");
  expect_update_error(user, "{\"item\":{\"updatedAt\":\"SENTINEL\"}}", "item.updatedAt",
                      "updatedAt is written by tabletheoryd");
  /* Unknown attributes and bad paths. */
  expect_update_error(user, "{\"set\":{\"bogus\":\"SENTINEL\"}}", "set.bogus",
                      "bogus is not an attribute of model User");
  expect_update_error(user, "{\"item\":{\"bogus\":1}}", "item.bogus", "bogus is not an attribute");
  expect_update_error(user, "{\"fields\":[\"bogus\"],\"item\":{}}", "fields[0]",
                      "bogus is not an attribute");
  expect_update_error(user, "{\"set\":{\"a..b\":1}}", "set.a..b", "invalid attribute path");
  expect_update_error(user, "{\"set\":{\"nickname.x\":1}}", "set.nickname.x",
                      "nickname is of type S; only M and L attributes have nested paths");
  /* fields shape. */
  expect_update_error(user, "{\"fields\":[\"nickname\"],\"item\":{}}", "item.nickname",
                      "fields lists nickname but the item has no nickname");
  expect_update_error(user, "{\"fields\":[\"nickname\",\"nickname\"],\"item\":{\"nickname\":\"a\"}}",
                      "fields[1]", "nickname is listed twice");
  expect_update_error(user, "{\"fields\":\"nickname\",\"item\":{}}", "fields",
                      "must be an array");
  expect_update_error(user, "{\"fields\":[1],\"item\":{}}", "fields[0]", "attribute name");
  expect_update_error(user, "{\"fields\":[]}", "item", "needs an `item` object");
  /* Operator types. */
  expect_update_error(user, "{\"add\":{\"nickname\":\"x\"}}", "add.nickname",
                      "add works on N and set attributes; nickname is of type S");
  expect_update_error(tm, "{\"add\":{\"numberSet\":[]}}", "add.numberSet",
                      "add takes a number, or a non-empty array");
  expect_update_error(tm, "{\"add\":{\"metadata.x\":\"SENTINEL\"}}", "add.metadata.x",
                      "add takes a number");
  expect_update_error(tm, "{\"delete\":{\"flag\":true}}", "delete.flag",
                      "delete works on declared set attributes");
  expect_update_error(tm, "{\"delete\":{\"binarySet\":[]}}", "delete.binarySet",
                      "non-empty array");
  expect_update_error(tm, "{\"append\":{\"metadata\":[1]}}", "append.metadata",
                      "append and prepend work on L attributes; metadata is of type M");
  expect_update_error(tm, "{\"append\":{\"items\":\"SENTINEL\"}}", "append.items",
                      "expected a JSON array");
  expect_update_error(tm, "{\"set\":{\"flag\":\"SENTINEL\"}}", "set.flag", "BOOL");
  expect_update_error(user, "{\"set\":[1]}", "set", "must be an object of path: value");
  expect_update_error(user, "{\"remove\":{\"a\":1}}", "remove", "must be an array of paths");
  /* Forms and versions. */
  expect_update_error(user, "{\"set\":{\"nickname\":\"a\"},\"item\":{}}", "item",
                      "either item/fields or the operators");
  expect_update_error(user, "{\"item\":{\"version\":1},\"expected_version\":1}",
                      "expected_version", "give the expected version once");
  expect_update_error(user, "{\"expected_version\":-1}", "expected_version",
                      "non-negative integer");
  expect_update_error(user, "{\"expected_version\":\"1\"}", "expected_version",
                      "non-negative integer");
  expect_update_error(tm, "{\"set\":{\"flag\":true},\"expected_version\":1}", "expected_version",
                      "model TypeMatrix has no version attribute");
  expect_update_error(user, "[]", "", "an update must be a JSON object");
  /* Required attributes cannot be removed. */
  struct tt_model *m = inline_model(
      "{\"name\":\"Acct\",\"table\":{\"name\":\"accts\"},"
      "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"S\"}},"
      "\"attributes\":[{\"attribute\":\"id\",\"type\":\"S\",\"required\":true},"
      "{\"attribute\":\"email\",\"type\":\"S\",\"required\":true,\"omit_empty\":true}]}");
  expect_update_error(m, "{\"remove\":[\"email\"]}", "remove[0]", "email is required");
  expect_update_error(m, "{\"set\":{\"email\":\"\"}}", "set.email", "email is required");
  expect_update_error(m, "{\"fields\":[\"email\"],\"item\":{\"email\":null}}", "item.email",
                      "email is required");
  tt_model_unref(m);
  /* Encrypted attributes are only written whole. */
  static const char *const whole_only[][2] = {
      {"{\"add\":{\"secret\":1}}", "add.secret"},
      {"{\"append\":{\"secret\":[1]}}", "append.secret"},
      {"{\"set\":{\"secret.x\":\"SENTINEL\"}}", "set.secret.x"},
      {"{\"remove\":[\"secret[0]\"]}", "remove[0]"}};
  for (size_t i = 0; i < 4; i++) {
    struct tt_orm_update u;
    struct tt_error err = {0};
    ck_assert_msg(update_of(model("EncryptedRecord"), whole_only[i][0], &u, &err) == -1, "%s",
                  whole_only[i][0]);
    ck_assert_int_eq(err.code, TT_ERR_ENCRYPTED_FIELD_NOT_QUERYABLE);
    ck_assert_str_eq(err.field, whole_only[i][1]);
    ck_assert_ptr_null(strstr(err.message, "SENTINEL"));
  }
  expect_update(model("EncryptedRecord"), "{\"set\":{\"secret\":\"s\"}}",
                "SET secret~={\"S\":\"s\"}", -1);
}
END_TEST

START_TEST(update_field_prefix) {
  json_t *j = parse("{\"op\":\"update\",\"model\":\"User\",\"set\":{\"bogus\":1}}");
  struct tt_orm_update u;
  struct tt_error err = {0};
  ck_assert_int_eq(tt_orm_update_from_json(model("User"), j, NOW, "items[2]", &u, &err), -1);
  ck_assert_str_eq(err.field, "items[2].set.bogus");
  json_decref(j);
  j = parse("{\"op\":\"update\",\"item\":{\"PK\":\"a\",\"SK\":\"b\",\"nickname\":\"n\"},"
            "\"fields\":[\"nickname\"]}");
  ck_assert_int_eq(tt_orm_update_from_json(model("User"), j, NOW, "items[2]", &u, &err), 0);
  ck_assert_str_eq(u.actions[0].field, "items[2].item.nickname");
  ck_assert_uint_eq(u.key.len, 2);
  tt_orm_update_free(&u);
  json_decref(j);
}
END_TEST

static Suite *orm_item_suite(void) {
  Suite *s = suite_create("orm_item");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, rfc3339nano_format);
  tcase_add_test(tc, rfc3339_parse);
  tcase_add_test(tc, create_fills_lifecycle);
  tcase_add_test(tc, omit_empty_on_create);
  tcase_add_test(tc, empty_values_rule);
  tcase_add_test(tc, lifecycle_fields_refused);
  tcase_add_test(tc, put_expected_version);
  tcase_add_test(tc, keys_and_unknown_attributes);
  tcase_add_test(tc, required_attributes);
  tcase_add_test(tc, exact_numbers);
  tcase_add_test(tc, type_matrix_round_trip);
  tcase_add_test(tc, json_attributes);
  tcase_add_test(tc, ttl_epoch_seconds);
  tcase_add_test(tc, additional_attributes);
  tcase_add_test(tc, item_size_limit);
  tcase_add_test(tc, encryption_fails_closed);
  tcase_add_test(tc, read_projection);
  tcase_add_test(tc, update_fields_form);
  tcase_add_test(tc, update_sparse_form);
  tcase_add_test(tc, update_operator_form);
  tcase_add_test(tc, update_refusals);
  tcase_add_test(tc, update_field_prefix);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  const char *data = getenv("TT_TEST_DATA");
  struct tt_error err = {0};
  if (data == NULL || data[0] == '\0')
    data = "tests/data";
  if (chdir(data) != 0) {
    fprintf(stderr, "test_orm_item: cannot enter the test data directory %s\n", data);
    return 1;
  }
  g_reg = tt_model_registry_new();
  if (g_reg == NULL || tt_model_registry_load_path(g_reg, "dms/v0.2/models", &err) != 0) {
    fprintf(stderr, "test_orm_item: cannot load the fixture models: %s\n", err.message);
    tt_model_registry_free(g_reg);
    return 1;
  }
  SRunner *sr = srunner_create(orm_item_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  tt_model_registry_free(g_reg);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
