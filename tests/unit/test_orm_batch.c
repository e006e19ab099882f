/* SPDX-License-Identifier: Apache-2.0 */
/* test_orm_batch.c -- check suite for the pure parts of batches and unique
 * constraints: guard keys, guard actions, reserved keys, the query filter,
 * and the batch concurrency default. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "orm/batch.h"
#include "orm/unique.h"
#include "value/codec_ddb.h"

/* S partition key, unique S and N attributes, a unique B. */
static const char *const MEMBER =
    "{\"name\":\"Member\",\"table\":{\"name\":\"members\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"S\"}},"
    "\"attributes\":[{\"attribute\":\"id\",\"type\":\"S\",\"required\":true},"
    "{\"attribute\":\"email\",\"type\":\"S\",\"optional\":true,\"tags\":{\"unique\":true}},"
    "{\"attribute\":\"num\",\"type\":\"N\",\"optional\":true,\"tags\":{\"unique\":true}},"
    "{\"attribute\":\"raw\",\"type\":\"B\",\"optional\":true,\"tags\":{\"unique\":true}},"
    "{\"attribute\":\"nick\",\"type\":\"S\",\"optional\":true}]}";
/* Composite key with an N sort key. */
static const char *const ACCOUNT =
    "{\"name\":\"Account\",\"table\":{\"name\":\"accounts\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"pk\",\"type\":\"S\"},"
    "\"sort\":{\"attribute\":\"sk\",\"type\":\"N\"}},"
    "\"attributes\":[{\"attribute\":\"pk\",\"type\":\"S\",\"required\":true},"
    "{\"attribute\":\"sk\",\"type\":\"N\",\"required\":true},"
    "{\"attribute\":\"code\",\"type\":\"S\",\"optional\":true,\"tags\":{\"unique\":true}}]}";
/* A number partition key cannot hold guards; a BOOL cannot be unique. */
static const char *const NUMKEY =
    "{\"name\":\"NumKey\",\"table\":{\"name\":\"numkeys\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"N\"}},"
    "\"attributes\":[{\"attribute\":\"id\",\"type\":\"N\",\"required\":true},"
    "{\"attribute\":\"email\",\"type\":\"S\",\"optional\":true,\"tags\":{\"unique\":true}}]}";
static const char *const BOOLUNIQUE =
    "{\"name\":\"Flag\",\"table\":{\"name\":\"flags\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"S\"}},"
    "\"attributes\":[{\"attribute\":\"id\",\"type\":\"S\",\"required\":true},"
    "{\"attribute\":\"on\",\"type\":\"BOOL\",\"optional\":true,\"tags\":{\"unique\":true}}]}";
static const char *const PLAIN =
    "{\"name\":\"Plain\",\"table\":{\"name\":\"plain\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"S\"}},"
    "\"attributes\":[{\"attribute\":\"id\",\"type\":\"S\",\"required\":true}]}";

static struct tt_model *model(const char *text) {
  json_error_t jerr;
  json_t *obj = json_loads(text, 0, &jerr);
  ck_assert_msg(obj != NULL, "test JSON: %s", jerr.text);
  struct tt_model *m = NULL;
  struct tt_error err = {0};
  ck_assert_msg(tt_model_from_json(obj, NULL, &m, &err) == 0, "%s", err.message);
  json_decref(obj);
  return m;
}

/* An M from DynamoDB JSON text. */
static struct tt_av item(const char *text) {
  json_error_t jerr;
  json_t *j = json_loads(text, 0, &jerr);
  ck_assert_msg(j != NULL, "test JSON: %s", jerr.text);
  struct tt_av v;
  struct tt_error err = {0};
  ck_assert_msg(tt_ddb_item_from_json(j, "item", &v, &err) == 0, "%s", err.message);
  json_decref(j);
  return v;
}

static char *dump(const json_t *j) { return json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS); }

static char *guard_key_text(const struct tt_model *m, const char *attr, const char *value_json) {
  const struct tt_model_attr *a = tt_model_attr_find(m, attr, strlen(attr));
  ck_assert_ptr_nonnull(a);
  json_t *vj = json_loads(value_json, 0, NULL);
  struct tt_av v, key;
  struct tt_error err = {0};
  ck_assert_int_eq(tt_ddb_value_from_json(vj, "v", &v, &err), 0);
  ck_assert_msg(tt_unique_guard_key(m, a, &v, &key, &err) == 0, "%s", err.message);
  json_t *kj = tt_ddb_item_to_json(&key);
  char *text = dump(kj);
  json_decref(kj);
  json_decref(vj);
  tt_av_free(&v);
  tt_av_free(&key);
  return text;
}

START_TEST(guard_keys_by_type) {
  struct tt_model *m = model(MEMBER);
  char *t = guard_key_text(m, "email", "{\"S\":\"a@b.c\"}");
  ck_assert_str_eq(t, "{\"id\":{\"S\":\"UNIQUE#Member#email#a@b.c\"}}");
  free(t);
  t = guard_key_text(m, "num", "{\"N\":\"0012.50\"}");
  ck_assert_str_eq(t, "{\"id\":{\"S\":\"UNIQUE#Member#num#12.5\"}}");
  free(t);
  t = guard_key_text(m, "raw", "{\"B\":\"AP8=\"}");
  ck_assert_str_eq(t, "{\"id\":{\"S\":\"UNIQUE#Member#raw#AP8=\"}}");
  free(t);
  tt_model_unref(m);
  m = model(ACCOUNT);
  t = guard_key_text(m, "code", "{\"S\":\"X\"}");
  ck_assert_str_eq(t, "{\"pk\":{\"S\":\"UNIQUE#Account#code#X\"},\"sk\":{\"N\":\"0\"}}");
  free(t);
  tt_model_unref(m);
}
END_TEST

START_TEST(guard_key_too_long) {
  struct tt_model *m = model(MEMBER);
  const struct tt_model_attr *a = tt_model_attr_find(m, "email", 5);
  char *big = malloc(2100);
  memset(big, 'x', 2099);
  big[2099] = '\0';
  struct tt_av v, key;
  struct tt_error err = {0};
  ck_assert_int_eq(tt_av_string(&v, big, 2099), 0);
  ck_assert_int_eq(tt_unique_guard_key(m, a, &v, &key, &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
  ck_assert_str_eq(err.field, "email");
  ck_assert_ptr_null(strstr(err.message, "xxxx"));
  ck_assert_int_eq(key.type, TT_AV_NULL);
  tt_av_free(&v);
  free(big);
  tt_model_unref(m);
}
END_TEST

START_TEST(model_checks) {
  struct tt_error err = {0};
  struct tt_model *m = model(MEMBER);
  ck_assert(tt_unique_model_has(m));
  ck_assert_uint_eq(tt_unique_count(m), 3);
  ck_assert_int_eq(tt_unique_model_check(m, &err), 0);
  tt_model_unref(m);
  m = model(NUMKEY);
  ck_assert_int_eq(tt_unique_model_check(m, &err), -1);
  ck_assert_str_eq(err.field, "id");
  tt_model_unref(m);
  m = model(BOOLUNIQUE);
  ck_assert_int_eq(tt_unique_model_check(m, &err), -1);
  ck_assert_str_eq(err.field, "on");
  tt_model_unref(m);
  m = model(PLAIN);
  ck_assert(!tt_unique_model_has(m));
  ck_assert_int_eq(tt_unique_model_check(m, &err), 0);
  ck_assert_ptr_null(tt_unique_query_filter(m));
  tt_model_unref(m);
}
END_TEST

START_TEST(reserved_keys_and_guarded_values) {
  struct tt_model *m = model(MEMBER), *p = model(PLAIN);
  struct tt_av a = item("{\"id\":{\"S\":\"UNIQUE#Member#email#x\"}}");
  struct tt_av b = item("{\"id\":{\"S\":\"UNIQUE\"}}");
  struct tt_av c = item("{\"id\":{\"S\":\"user#UNIQUE#\"}}");
  ck_assert(tt_unique_key_reserved(m, &a));
  ck_assert(!tt_unique_key_reserved(m, &b));
  ck_assert(!tt_unique_key_reserved(m, &c));
  ck_assert(!tt_unique_key_reserved(p, &a)); /* no unique attributes: nothing reserved */
  struct tt_av e = item("{\"s\":{\"S\":\"\"},\"n\":{\"N\":\"0\"},\"z\":{\"NULL\":true},"
                        "\"b\":{\"B\":\"\"}}");
  ck_assert(!tt_unique_value_guarded(tt_av_map_get(&e, "s")));
  ck_assert(tt_unique_value_guarded(tt_av_map_get(&e, "n")));
  ck_assert(!tt_unique_value_guarded(tt_av_map_get(&e, "z")));
  ck_assert(!tt_unique_value_guarded(tt_av_map_get(&e, "b")));
  ck_assert(!tt_unique_value_guarded(NULL));
  json_t *f = tt_unique_query_filter(m);
  char *t = dump(f);
  ck_assert_str_eq(t, "{\"attr\":\"_tt_unique\",\"op\":\"not_exists\"}");
  free(t);
  json_decref(f);
  tt_av_free(&a);
  tt_av_free(&b);
  tt_av_free(&c);
  tt_av_free(&e);
  tt_model_unref(m);
  tt_model_unref(p);
}
END_TEST

/* Runs tt_unique_guard_actions and returns the actions as text. */
static char *actions(const struct tt_model *m, const char *old_text, const char *new_text,
                     struct tt_unique_guard *g, size_t *ng) {
  struct tt_av key = item("{\"id\":{\"S\":\"m1\"}}");
  struct tt_av old = {.type = TT_AV_NULL}, neu = {.type = TT_AV_NULL};
  if (old_text)
    old = item(old_text);
  if (new_text)
    neu = item(new_text);
  struct tt_error err = {0};
  *ng = 0;
  ck_assert_msg(tt_unique_guard_actions(m, &key, old_text ? &old : NULL,
                                        new_text ? &neu : NULL, g, ng, &err) == 0,
                "%s", err.message);
  /* The actions as the DynamoDB request spells them. */
  json_t *arr = json_array();
  for (size_t i = 0; i < *ng; i++) {
    json_t *body = json_pack("{s:s, s:o}", "TableName", m->table, g[i].claim ? "Item" : "Key",
                             tt_ddb_item_to_json(&g[i].item));
    if (g[i].claim) {
      json_t *names = json_object();
      for (size_t k = 0; k < g[i].names.len; k++)
        json_object_set_new(names, g[i].names.u.members[k].name,
                            json_string(g[i].names.u.members[k].value.u.bytes));
      json_object_set_new(body, "ConditionExpression", json_string(TT_UNIQUE_CLAIM_CONDITION));
      json_object_set_new(body, "ExpressionAttributeNames", names);
      json_object_set_new(body, "ExpressionAttributeValues", tt_ddb_item_to_json(&g[i].values));
    }
    json_array_append_new(arr, json_pack("{s:o}", g[i].claim ? "Put" : "Delete", body));
    tt_unique_guard_free(&g[i]);
  }
  char *t = dump(arr);
  json_decref(arr);
  tt_av_free(&key);
  tt_av_free(&old);
  tt_av_free(&neu);
  return t;
}

START_TEST(guard_actions_claim_move_release) {
  struct tt_model *m = model(MEMBER);
  struct tt_unique_guard g[6];
  size_t ng;
  /* Create: one claim, with the marker, the owner and the condition. */
  char *t = actions(
      m, NULL, "{\"id\":{\"S\":\"m1\"},\"email\":{\"S\":\"a\"},\"nick\":{\"S\":\"n\"}}", g,
      &ng);
  ck_assert_str_eq(
      t, "[{\"Put\":{\"ConditionExpression\":\"attribute_not_exists(#p) OR #o = :o\","
         "\"ExpressionAttributeNames\":{\"#o\":\"_tt_owner\",\"#p\":\"id\"},"
         "\"ExpressionAttributeValues\":{\":o\":{\"M\":{\"id\":{\"S\":\"m1\"}}}},"
         "\"Item\":{\"_tt_owner\":{\"M\":{\"id\":{\"S\":\"m1\"}}},"
         "\"_tt_unique\":{\"S\":\"Member#email\"},\"id\":{\"S\":\"UNIQUE#Member#email#a\"}},"
         "\"TableName\":\"members\"}}]");
  ck_assert_uint_eq(ng, 1);
  ck_assert_str_eq(g[0].attr->name, "email");
  ck_assert(g[0].claim);
  free(t);
  /* Unchanged values need nothing; a changed one is released and claimed. */
  t = actions(m, "{\"email\":{\"S\":\"a\"},\"num\":{\"N\":\"1\"}}",
              "{\"email\":{\"S\":\"a\"},\"num\":{\"N\":\"1.0\"}}", g, &ng);
  ck_assert_str_eq(t, "[]");
  free(t);
  t = actions(m, "{\"email\":{\"S\":\"a\"}}", "{\"email\":{\"S\":\"b\"}}", g, &ng);
  ck_assert_uint_eq(ng, 2);
  ck_assert(!g[0].claim && g[1].claim);
  ck_assert_ptr_nonnull(strstr(t, "{\"Delete\":{\"Key\":{\"id\":{\"S\":\"UNIQUE#Member#email#a\"}},"
                                  "\"TableName\":\"members\"}}"));
  ck_assert_ptr_nonnull(strstr(t, "\"id\":{\"S\":\"UNIQUE#Member#email#b\"}"));
  free(t);
  /* Delete: every old guarded value is released; an empty one has none. */
  t = actions(m, "{\"email\":{\"S\":\"a\"},\"num\":{\"N\":\"7\"},\"raw\":{\"B\":\"\"}}", NULL, g,
              &ng);
  ck_assert_uint_eq(ng, 2);
  ck_assert(!g[0].claim && !g[1].claim);
  ck_assert_str_eq(g[0].attr->name, "email");
  ck_assert_str_eq(g[1].attr->name, "num");
  free(t);
  tt_model_unref(m);
}
END_TEST

START_TEST(concurrency_default) {
  struct tt_orm orm;
  memset(&orm, 0, sizeof(orm));
  ck_assert_uint_eq(tt_orm_batch_concurrency(&orm), TT_ORM_BATCH_DEFAULT_CONCURRENCY);
  ck_assert_uint_eq(tt_orm_batch_concurrency(NULL), 4);
  orm.batch_concurrency = 9;
  ck_assert_uint_eq(tt_orm_batch_concurrency(&orm), 9);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("orm_batch");
  TCase *tc = tcase_create("unique");
  tcase_add_test(tc, guard_keys_by_type);
  tcase_add_test(tc, guard_key_too_long);
  tcase_add_test(tc, model_checks);
  tcase_add_test(tc, reserved_keys_and_guarded_values);
  tcase_add_test(tc, guard_actions_claim_move_release);
  suite_add_tcase(s, tc);
  tc = tcase_create("batch");
  tcase_add_test(tc, concurrency_default);
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
