/* SPDX-License-Identifier: Apache-2.0 */
/* test_orm_key.c -- check suite for primary keys from URL segments, JSON objects and items. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/model.h"
#include "model/registry.h"
#include "orm/item.h"
#include "api/item_io.h"
#include "orm/key.h"
#include "value/codec_ddb.h"
#include "value/json_exact.h"

static struct tt_model_registry *g_reg;

static const struct tt_model *model(const char *name) {
  const struct tt_model *m = tt_model_registry_get(g_reg, name);
  ck_assert_msg(m != NULL, "fixture model %s", name);
  return m;
}

/* Partition key N only; and a B partition key with an N sort key. */
static const char *const NUM_MODEL =
    "{\"name\":\"NumKey\",\"table\":{\"name\":\"numkeys\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"N\"}},"
    "\"attributes\":[{\"attribute\":\"id\",\"type\":\"N\",\"required\":true}]}";
static const char *const BIN_MODEL =
    "{\"name\":\"BinKey\",\"table\":{\"name\":\"binkeys\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"blob\",\"type\":\"B\"},"
    "\"sort\":{\"attribute\":\"seq\",\"type\":\"N\"}},"
    "\"attributes\":[{\"attribute\":\"blob\",\"type\":\"B\",\"required\":true},"
    "{\"attribute\":\"seq\",\"type\":\"N\",\"required\":true}]}";

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

static char *ddb_text(const struct tt_av *item) {
  struct tt_buf b;
  tt_buf_init(&b, 0);
  ck_assert_int_eq(tt_ddb_item_write(&b, item, 0), 0);
  return tt_buf_steal(&b, NULL);
}

static void expect_path(const struct tt_model *m, const char *raw, const char *want) {
  struct tt_av key;
  struct tt_error err = {0};
  ck_assert_msg(tt_api_item_key(m, raw, strlen(raw), &key, &err) == 0, "%s: %s", raw,
                err.message);
  char *got = ddb_text(&key);
  ck_assert_str_eq(got, want);
  free(got);
  tt_av_free(&key);
}

/* The key value never appears in the message; `secret` is part of it. */
static void expect_path_error(const struct tt_model *m, const char *raw, const char *msg_part,
                              const char *secret) {
  struct tt_av key;
  struct tt_error err = {0};
  ck_assert_msg(tt_api_item_key(m, raw, strlen(raw), &key, &err) == -1, "%s accepted", raw);
  ck_assert_int_eq(key.type, TT_AV_NULL);
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
  ck_assert_str_eq(err.field, "key");
  ck_assert_msg(strstr(err.message, msg_part) != NULL, "message \"%s\" lacks \"%s\"", err.message,
                msg_part);
  if (secret != NULL)
    ck_assert_msg(strstr(err.message, secret) == NULL, "message leaks a value: %s", err.message);
}

START_TEST(path_string_keys) {
  const struct tt_model *u = model("User");
  /* docs/api.md's example: USER%231/PROFILE. */
  expect_path(u, "USER%231/PROFILE", "{\"PK\":{\"S\":\"USER#1\"},\"SK\":{\"S\":\"PROFILE\"}}");
  /* %2F inside a value is data, not a separator; '+' stays '+'. */
  expect_path(u, "A%2FB%2f/C+D", "{\"PK\":{\"S\":\"A/B/\"},\"SK\":{\"S\":\"C+D\"}}");
  expect_path(u, "%E2%82%AC/%25", "{\"PK\":{\"S\":\"\xe2\x82\xac\"},\"SK\":{\"S\":\"%\"}}");
  expect_path(model("SnakeCaseRecord"), "r%201/s",
              "{\"pk\":{\"S\":\"r 1\"},\"sk\":{\"S\":\"s\"}}");
}
END_TEST

START_TEST(path_errors) {
  const struct tt_model *u = model("User");
  expect_path_error(u, "SENTINELONLY", "the URL key is PK/SK", "SENTINEL");
  expect_path_error(u, "a/b/SENTINEL", "the URL key is PK/SK", "SENTINEL");
  expect_path_error(u, "/SENTINEL", "key attribute PK must not be empty", "SENTINEL");
  expect_path_error(u, "SENTINEL/", "key attribute SK must not be empty", "SENTINEL");
  expect_path_error(u, "SENTINEL%G1/x", "key attribute PK: '%' must start an escape", "SENTINEL");
  expect_path_error(u, "x/SENTINEL%2", "key attribute SK: '%' must start an escape", "SENTINEL");
  expect_path_error(u, "x/SENTINEL%", "key attribute SK", "SENTINEL");
  expect_path_error(u, "%FFSENTINEL/x", "not valid UTF-8", "SENTINEL");
  expect_path_error(u, "%C0%AF/x", "not valid UTF-8", NULL);       /* overlong '/' */
  expect_path_error(u, "%ED%A0%80/x", "not valid UTF-8", NULL);    /* surrogate */
  expect_path_error(u, "%F4%90%80%80/x", "not valid UTF-8", NULL); /* > U+10FFFF */
}
END_TEST

START_TEST(path_number_and_binary_keys) {
  struct tt_model *n = inline_model(NUM_MODEL);
  expect_path(n, "00012.50", "{\"id\":{\"N\":\"12.5\"}}");
  expect_path(n, "1e3", "{\"id\":{\"N\":\"1000\"}}");
  expect_path(n, "-0", "{\"id\":{\"N\":\"0\"}}");
  expect_path(n, "12345678901234567890123456789012345678",
              "{\"id\":{\"N\":\"12345678901234567890123456789012345678\"}}");
  expect_path_error(n, "123456789012345678901234567890123456789", "key attribute id: expected a "
                                                                   "decimal number",
                    "123456789");
  expect_path_error(n, "12abc", "expected a decimal number (N)", "12abc");
  expect_path_error(n, "1/2", "only a partition key (id)", NULL);
  tt_model_unref(n);

  struct tt_model *b = inline_model(BIN_MODEL);
  /* base64url, unpadded or padded. */
  expect_path(b, "AQID/7", "{\"blob\":{\"B\":\"AQID\"},\"seq\":{\"N\":\"7\"}}");
  expect_path(b, "-_8/1", "{\"blob\":{\"B\":\"+/8=\"},\"seq\":{\"N\":\"1\"}}");
  expect_path(b, "-_8%3D/1", "{\"blob\":{\"B\":\"+/8=\"},\"seq\":{\"N\":\"1\"}}");
  expect_path_error(b, "+/8=/1", "the URL key is blob/seq", NULL);
  expect_path_error(b, "+8/1", "expected base64url (B)", NULL);
  expect_path_error(b, "/1", "key attribute blob must not be empty", NULL);
  tt_model_unref(b);
}
END_TEST

static int key_json(const struct tt_model *m, const char *text, const char *field,
                    struct tt_av *key, struct tt_error *err) {
  json_t *j = NULL;
  ck_assert_int_eq(tt_json_parse(text, strlen(text), NULL, &j, err), 0);
  int rc = tt_orm_key_from_json(m, j, field, key, err);
  json_decref(j);
  return rc;
}

START_TEST(json_keys) {
  const struct tt_model *u = model("User");
  struct tt_av key;
  struct tt_error err = {0};
  ck_assert_int_eq(key_json(u, "{\"SK\":\"PROFILE\",\"PK\":\"USER#1\"}", "keys[0]", &key, &err), 0);
  char *s = ddb_text(&key);
  ck_assert_str_eq(s, "{\"PK\":{\"S\":\"USER#1\"},\"SK\":{\"S\":\"PROFILE\"}}");
  free(s);
  tt_av_free(&key);

  static const struct {
    const char *text, *field, *msg;
  } bad[] = {
      {"{\"PK\":\"SENTINEL\"}", "keys[3].SK", "missing key attribute SK"},
      {"{\"PK\":\"SENTINEL\",\"SK\":null}", "keys[3].SK", "missing key attribute SK"},
      {"{\"PK\":\"SENTINEL\",\"SK\":\"\"}", "keys[3].SK", "key attribute SK must not be empty"},
      {"{\"PK\":\"a\",\"SK\":\"b\",\"nickname\":\"SENTINEL\"}", "keys[3].nickname",
       "nickname is not a key attribute of model User"},
      {"{\"PK\":1,\"SK\":\"SENTINEL\"}", "keys[3].PK", "expected a string (S)"},
      {"[\"SENTINEL\"]", "keys[3]", "a key must be a JSON object"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    ck_assert_int_eq(key_json(u, bad[i].text, "keys[3]", &key, &err), -1);
    ck_assert_int_eq(key.type, TT_AV_NULL);
    ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
    ck_assert_str_eq(err.field, bad[i].field);
    ck_assert_msg(strstr(err.message, bad[i].msg) != NULL, "\"%s\" lacks \"%s\"", err.message,
                  bad[i].msg);
    ck_assert_msg(strstr(err.message, "SENTINEL") == NULL, "leak: %s", err.message);
  }
  /* Without a field prefix the attribute name is the field. */
  ck_assert_int_eq(key_json(u, "{\"PK\":\"a\"}", NULL, &key, &err), -1);
  ck_assert_str_eq(err.field, "SK");

  struct tt_model *b = inline_model(BIN_MODEL);
  /* JSON keys use the item encodings: standard base64, N as number or string. */
  ck_assert_int_eq(key_json(b, "{\"blob\":\"+/8=\",\"seq\":\"9007199254740993\"}", NULL, &key,
                            &err),
                   0);
  s = ddb_text(&key);
  ck_assert_str_eq(s, "{\"blob\":{\"B\":\"+/8=\"},\"seq\":{\"N\":\"9007199254740993\"}}");
  free(s);
  tt_av_free(&key);
  ck_assert_int_eq(key_json(b, "{\"blob\":\"AQID\",\"seq\":1.0}", NULL, &key, &err), 0);
  ck_assert_str_eq(tt_av_map_get(&key, "seq")->u.bytes, "1");
  tt_av_free(&key);
  ck_assert_int_eq(key_json(b, "{\"blob\":\"-_8\",\"seq\":1}", NULL, &key, &err), -1);
  ck_assert_str_eq(err.field, "blob");
  tt_model_unref(b);
}
END_TEST

START_TEST(key_of_item) {
  const struct tt_model *u = model("User");
  json_t *j = NULL;
  struct tt_av item, key;
  struct tt_error err = {0};
  const char *text = "{\"PK\":\"USER#1\",\"SK\":\"PROFILE\",\"nickname\":\"n\"}";
  ck_assert_int_eq(tt_json_parse(text, strlen(text), NULL, &j, &err), 0);
  ck_assert_int_eq(tt_orm_item_from_json(u, j, TT_ORM_CREATE, 0, NULL, &item, NULL, &err), 0);
  json_decref(j);
  ck_assert_int_eq(tt_orm_key_of_item(u, &item, NULL, &key, &err), 0);
  char *s = ddb_text(&key);
  ck_assert_str_eq(s, "{\"PK\":{\"S\":\"USER#1\"},\"SK\":{\"S\":\"PROFILE\"}}");
  free(s);
  tt_av_free(&key);
  ck_assert_int_eq(tt_av_map_remove(&item, "SK"), 1);
  ck_assert_int_eq(tt_orm_key_of_item(u, &item, "items[4]", &key, &err), -1);
  ck_assert_int_eq(key.type, TT_AV_NULL);
  ck_assert_str_eq(err.field, "items[4]");
  ck_assert_str_eq(err.message, "missing key attribute SK");
  tt_av_free(&item);
}
END_TEST

static Suite *orm_key_suite(void) {
  Suite *s = suite_create("orm_key");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, path_string_keys);
  tcase_add_test(tc, path_errors);
  tcase_add_test(tc, path_number_and_binary_keys);
  tcase_add_test(tc, json_keys);
  tcase_add_test(tc, key_of_item);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  const char *data = getenv("TT_TEST_DATA");
  struct tt_error err = {0};
  if (data == NULL || data[0] == '\0')
    data = "tests/data";
  if (chdir(data) != 0) {
    fprintf(stderr, "test_orm_key: cannot enter the test data directory %s\n", data);
    return 1;
  }
  g_reg = tt_model_registry_new();
  if (g_reg == NULL || tt_model_registry_load_path(g_reg, "dms/v0.2/models", &err) != 0) {
    fprintf(stderr, "test_orm_key: cannot load the fixture models: %s\n", err.message);
    tt_model_registry_free(g_reg);
    return 1;
  }
  SRunner *sr = srunner_create(orm_key_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  tt_model_registry_free(g_reg);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
