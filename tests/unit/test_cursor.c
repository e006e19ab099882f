/* SPDX-License-Identifier: Apache-2.0 */
/* test_cursor.c -- the DMS cursor against TableTheory's golden fixtures
 * (tests/data/cursor), plus decode validation. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value/base64.h"
#include "value/codec_ddb.h"
#include "value/cursor.h"
#include "value/json_exact.h"

static char *data_path(const char *name) {
  const char *dir = getenv("TT_TEST_DATA");
  struct tt_buf b;
  tt_buf_init(&b, 0);
  ck_assert_int_eq(tt_buf_printf(&b, "%s/cursor/%s", dir && *dir ? dir : "tests/data", name), 0);
  return tt_buf_steal(&b, NULL);
}

/* Whole file, or NULL when it does not exist. */
static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  struct tt_buf b;
  char chunk[4096];
  size_t n;
  if (f == NULL)
    return NULL;
  tt_buf_init(&b, 0);
  while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
    ck_assert_int_eq(tt_buf_append(&b, chunk, n), 0);
  fclose(f);
  return tt_buf_steal(&b, len);
}

static size_t trim_newlines(char *s, size_t len) {
  while (len && (s[len - 1] == '\n' || s[len - 1] == '\r'))
    s[--len] = '\0';
  return len;
}

static int name_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every X.json in the golden folder, sorted. */
static size_t golden_names(char ***out) {
  char *dirpath = data_path("");
  DIR *d = opendir(dirpath);
  ck_assert_msg(d != NULL, "cannot open %s (set TT_TEST_DATA)", dirpath);
  char **names = NULL;
  size_t n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t l = strlen(e->d_name);
    if (l > 5 && strcmp(e->d_name + l - 5, ".json") == 0) {
      names = realloc(names, (n + 1) * sizeof(*names));
      names[n++] = strndup(e->d_name, l - 5);
    }
  }
  closedir(d);
  free(dirpath);
  qsort(names, n, sizeof(*names), name_cmp);
  *out = names;
  return n;
}

START_TEST(golden_encode_and_decode) {
  char **names;
  size_t n = golden_names(&names);
  size_t with_token = 0;
  ck_assert_uint_ge(n, 6);
  for (size_t i = 0; i < n; i++) {
    struct tt_buf path, tok;
    size_t jlen, clen = 0;
    struct tt_error err;
    tt_buf_init(&path, 0);
    tt_buf_init(&tok, 0);
    tt_buf_printf(&path, "%s.json", names[i]);
    char *p = data_path(path.data);
    char *json = slurp(p, &jlen);
    free(p);
    ck_assert_ptr_nonnull(json);
    tt_buf_reset(&path);
    tt_buf_printf(&path, "%s.cursor", names[i]);
    p = data_path(path.data);
    char *want = slurp(p, &clen);
    free(p);
    if (want)
      clen = trim_newlines(want, clen);

    /* The .json file is the input: lastKey, index, sort. */
    json_t *doc = NULL;
    ck_assert_msg(tt_json_parse(json, jlen, NULL, &doc, &err) == 0, "%s", err.message);
    struct tt_av key;
    ck_assert_int_eq(tt_ddb_item_from_json(json_object_get(doc, "lastKey"), "lastKey", &key, &err), 0);
    json_t *ji = json_object_get(doc, "index"), *js = json_object_get(doc, "sort");
    const char *index = ji ? json_string_value(ji) : NULL;
    enum tt_cursor_sort sort = TT_CURSOR_SORT_NONE;
    if (js)
      sort = strcmp(json_string_value(js), "ASC") == 0 ? TT_CURSOR_SORT_ASC : TT_CURSOR_SORT_DESC;
    ck_assert_int_eq(tt_cursor_encode(&tok, &key, index, sort), 0);
    /* No .cursor partner (empty_last_key): the empty cursor. */
    ck_assert_msg(strcmp(tok.data ? tok.data : "", want ? want : "") == 0,
                  "%s: got %s want %s", names[i], tok.data ? tok.data : "", want ? want : "");

    /* Decoding the golden token gives back the same parts. */
    struct tt_cursor c;
    ck_assert_msg(tt_cursor_decode(want ? want : "", clen, &c, &err) == 0, "%s: %s", names[i],
                  err.message);
    ck_assert(tt_av_equal(&c.key, &key));
    ck_assert_int_eq(c.sort, sort);
    if (index)
      ck_assert_str_eq(c.index, index);
    else
      ck_assert_ptr_null(c.index);
    if (want)
      with_token++;
    tt_cursor_free(&c);
    tt_av_free(&key);
    json_decref(doc);
    free(json);
    free(want);
    tt_buf_free(&path);
    tt_buf_free(&tok);
    free(names[i]);
  }
  free(names);
  ck_assert_uint_ge(with_token, 5);
}
END_TEST

static char *token_of(const char *json) {
  struct tt_buf b;
  tt_buf_init(&b, 0);
  ck_assert_int_eq(tt_base64_encode(&b, json, strlen(json), TT_BASE64_URL), 0);
  return tt_buf_steal(&b, NULL);
}

static void decode_fails(const char *token, const char *msg_part) {
  struct tt_cursor c;
  struct tt_error err;
  tt_error_clear(&err);
  ck_assert_int_eq(tt_cursor_decode(token, strlen(token), &c, &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_INVALID_CURSOR);
  ck_assert_str_eq(err.field, "cursor");
  ck_assert_msg(strstr(err.message, msg_part) != NULL, "message: %s", err.message);
  tt_cursor_free(&c);
}

static void json_fails(const char *json, const char *msg_part) {
  char *t = token_of(json);
  decode_fails(t, msg_part);
  free(t);
}

START_TEST(decode_rejections) {
  decode_fails("!!!!", "not base64url");
  decode_fails("eyJ+", "not base64url");
  json_fails("{\"lastKey\":", "not JSON");
  json_fails("[]", "not a JSON object");
  json_fails("{\"index\":\"gsi\"}", "lastKey is missing");
  json_fails("{\"lastKey\":{\"PK\":{\"SS\":[\"a\"]}}}", "lastKey values must be S, N or B");
  json_fails("{\"lastKey\":{\"PK\":{\"N\":\"1e999\"}}}", "lastKey.PK: number magnitude");
  json_fails("{\"lastKey\":{\"PK\":{\"S\":\"a\"}},\"sort\":\"UP\"}", "sort must be");
  json_fails("{\"lastKey\":{\"PK\":{\"S\":\"a\"}},\"index\":\"\"}", "index must be");
  json_fails("{\"lastKey\":{\"PK\":{\"S\":\"a\"}},\"extra\":1}", "unknown field");
  json_fails("{\"lastKey\":{\"PK\":{\"S\":\"a\"},\"PK\":{\"S\":\"b\"}}}", "not JSON");
  /* Messages never carry key values. */
  json_fails("{\"lastKey\":{\"PK\":{\"B\":\"secret!\"}}}", "lastKey.PK: B is not valid base64");
}
END_TEST

START_TEST(decode_lenient_and_empty) {
  struct tt_cursor c;
  struct tt_error err;
  /* Empty token: no position. */
  ck_assert_int_eq(tt_cursor_decode("", 0, &c, &err), 0);
  ck_assert_int_eq(c.key.type, TT_AV_M);
  ck_assert_uint_eq(c.key.len, 0);
  tt_cursor_free(&c);
  /* Unpadded tokens are accepted too (single_key golden minus "="). */
  const char *t = "eyJsYXN0S2V5Ijp7IlBLIjp7IlMiOiJVU0VSI3NvbG8ifX19";
  ck_assert_int_eq(tt_cursor_decode(t, strlen(t), &c, &err), 0);
  ck_assert_str_eq(tt_av_map_get(&c.key, "PK")->u.bytes, "USER#solo");
  tt_cursor_free(&c);
}
END_TEST

/* TableTheory writes "sort" as its caller typed it and reads it in any case;
 * a cursor without "sort" is ascending. */
START_TEST(decode_sort_any_case) {
  static const struct {
    const char *sort;
    enum tt_cursor_sort want;
  } cases[] = {{"ASC", TT_CURSOR_SORT_ASC},   {"asc", TT_CURSOR_SORT_ASC},
               {"Asc", TT_CURSOR_SORT_ASC},   {"DESC", TT_CURSOR_SORT_DESC},
               {"desc", TT_CURSOR_SORT_DESC}, {"dEsC", TT_CURSOR_SORT_DESC}};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char json[96];
    snprintf(json, sizeof(json), "{\"lastKey\":{\"PK\":{\"S\":\"a\"}},\"sort\":\"%s\"}",
             cases[i].sort);
    char *t = token_of(json);
    struct tt_cursor c;
    struct tt_error err;
    ck_assert_msg(tt_cursor_decode(t, strlen(t), &c, &err) == 0, "%s: %s", cases[i].sort,
                  err.message);
    ck_assert_int_eq(c.sort, cases[i].want);
    tt_cursor_free(&c);
    free(t);
  }
  /* Near misses stay refused. */
  json_fails("{\"lastKey\":{\"PK\":{\"S\":\"a\"}},\"sort\":\"ascending\"}", "sort must be");
  json_fails("{\"lastKey\":{\"PK\":{\"S\":\"a\"}},\"sort\":\"des\"}", "sort must be");
  json_fails("{\"lastKey\":{\"PK\":{\"S\":\"a\"}},\"sort\":\"\"}", "sort must be");
  json_fails("{\"lastKey\":{\"PK\":{\"S\":\"a\"}},\"sort\":1}", "sort must be");
}
END_TEST

START_TEST(sort_same_direction) {
  /* No order reads ascending; only DESC differs. */
  ck_assert(tt_cursor_sort_same(TT_CURSOR_SORT_NONE, TT_CURSOR_SORT_NONE));
  ck_assert(tt_cursor_sort_same(TT_CURSOR_SORT_NONE, TT_CURSOR_SORT_ASC));
  ck_assert(tt_cursor_sort_same(TT_CURSOR_SORT_ASC, TT_CURSOR_SORT_NONE));
  ck_assert(tt_cursor_sort_same(TT_CURSOR_SORT_DESC, TT_CURSOR_SORT_DESC));
  ck_assert(!tt_cursor_sort_same(TT_CURSOR_SORT_NONE, TT_CURSOR_SORT_DESC));
  ck_assert(!tt_cursor_sort_same(TT_CURSOR_SORT_DESC, TT_CURSOR_SORT_ASC));
  ck_assert(!tt_cursor_sort_same(TT_CURSOR_SORT_ASC, TT_CURSOR_SORT_DESC));
}
END_TEST

START_TEST(encode_go_escaping) {
  /* Go's encoding/json escapes <, >, & and U+2028; so must we for
   * byte-identical cursors. */
  struct tt_av key, v;
  struct tt_buf tok;
  unsigned char raw[256];
  size_t n;
  struct tt_cursor c;
  struct tt_error err;
  ck_assert_int_eq(tt_av_map(&key, 0), 0);
  ck_assert_int_eq(tt_av_string(&v, "a<b>&\xe2\x80\xa8\"\n", 10), 0);
  ck_assert_int_eq(tt_av_map_put(&key, "PK", 2, &v), 0);
  tt_buf_init(&tok, 0);
  ck_assert_int_eq(tt_cursor_encode(&tok, &key, "gsi&1", TT_CURSOR_SORT_ASC), 0);
  ck_assert_int_eq(tt_base64_decode(tok.data, tok.len, TT_BASE64_URL, 0, raw, &n), 0);
  raw[n] = '\0';
  ck_assert_str_eq((char *)raw, "{\"lastKey\":{\"PK\":{\"S\":\"a\\u003cb\\u003e\\u0026\\u2028\\\"\\n\"}},"
                                "\"index\":\"gsi\\u00261\",\"sort\":\"ASC\"}");
  ck_assert_int_eq(tt_cursor_decode(tok.data, tok.len, &c, &err), 0);
  ck_assert(tt_av_equal(&c.key, &key));
  ck_assert_str_eq(c.index, "gsi&1");
  tt_cursor_free(&c);
  /* No key, no token; an empty index is left out. */
  tt_buf_reset(&tok);
  ck_assert_int_eq(tt_cursor_encode(&tok, NULL, "gsi", TT_CURSOR_SORT_ASC), 0);
  ck_assert_uint_eq(tok.len, 0);
  ck_assert_int_eq(tt_cursor_encode(&tok, &key, "", TT_CURSOR_SORT_NONE), 0);
  ck_assert_int_eq(tt_base64_decode(tok.data, tok.len, TT_BASE64_URL, 0, raw, &n), 0);
  ck_assert_ptr_null(memmem(raw, n, "index", 5));
  tt_buf_free(&tok);
  tt_av_free(&key);
}
END_TEST

static Suite *cursor_suite(void) {
  Suite *s = suite_create("cursor");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, golden_encode_and_decode);
  tcase_add_test(tc, decode_rejections);
  tcase_add_test(tc, decode_lenient_and_empty);
  tcase_add_test(tc, encode_go_escaping);
  tcase_add_test(tc, decode_sort_any_case);
  tcase_add_test(tc, sort_same_direction);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(cursor_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
