/* SPDX-License-Identifier: Apache-2.0 */
/* test_wire_reader.c -- the streaming reader of DynamoDB's typed answers
 * (wire_reader.c) against the jansson path it replaced: hand-written edge
 * cases and many seeded random bodies, valid and broken, must give the
 * same values in the same order or the same error (wire_diff.h). */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_memdb.h"
#include "wire_diff.h"

/* Checks one body as an item answer (GetItem and a write) and as a read
 * answer; returns the reader's results (item GetItem, read) in rc[2]. */
static void check_body(const char *text, size_t len, int rc[2]) {
  int r;
  const char *d = wd_compare(false, TT_DDB_GET_ITEM, text, len, &rc[0]);
  ck_assert_msg(d == NULL, "GetItem: %s: %.*s", d, (int)len, text);
  d = wd_compare(false, TT_DDB_PUT_ITEM, text, len, &r);
  ck_assert_msg(d == NULL, "PutItem: %s: %.*s", d, (int)len, text);
  d = wd_compare(true, TT_DDB_QUERY, text, len, &rc[1]);
  ck_assert_msg(d == NULL, "Query: %s: %.*s", d, (int)len, text);
}

static void check_str(const char *text, int want_item, int want_read) {
  int rc[2];
  check_body(text, strlen(text), rc);
  ck_assert_msg(rc[0] == want_item, "item %d != %d: %s", rc[0], want_item, text);
  ck_assert_msg(rc[1] == want_read, "read %d != %d: %s", rc[1], want_read, text);
}

#define NOT_OBJ TT_DDB_WIRE_NOT_OBJECT

START_TEST(edge_cases_agree) {
  static const struct {
    const char *text;
    int item, read; /* the reader's result: 0, -1 (InvalidResponse), NOT_OBJ */
  } cases[] = {
      {"", NOT_OBJ, NOT_OBJ},
      {" \n", NOT_OBJ, NOT_OBJ},
      {"[]", NOT_OBJ, NOT_OBJ},
      {"null", NOT_OBJ, NOT_OBJ},
      {"{}", 0, 0},
      {" {} \r\n\t", 0, 0},
      {"{} x", NOT_OBJ, NOT_OBJ},
      {"{}{}", NOT_OBJ, NOT_OBJ},
      {"{\"Item\":null}", 0, 0},
      {"{\"Item\":{}}", 0, 0},
      {"{\"Item\":[]}", -1, 0},
      {"{\"Item\":nul}", NOT_OBJ, NOT_OBJ},
      {"{\"Item\":nullx}", NOT_OBJ, NOT_OBJ},
      {"{\"Item\":{\"a\":{\"S\":\"x\"}},\"Item\":null}", 0, 0},
      {"{\"Item\":{\"a\":{\"S\":1}},\"Item\":{\"b\":{\"N\":\"2\"}}}", 0, 0},
      {"{\"Item\":{\"b\":{\"N\":\"2\"}},\"Item\":{\"a\":{\"S\":1}}}", -1, 0},
      {"{\"Item\":{\"a\":{\"S\":\"x\",\"S\":\"y\"}}}", 0, 0},
      {"{\"Item\":{\"a\":{\"S\":\"x\",\"N\":\"1\"}}}", -1, 0},
      {"{\"Item\":{\"a\":{\"S\":\"x\",\"N\":\"1\",\"S\":\"y\"}}}", -1, 0},
      {"{\"Item\":{\"a\":{\"N\":\"bad\"},\"a\":{\"N\":\"1\"}}}", 0, 0},
      {"{\"Item\":{\"a\":{\"N\":\"1\"},\"a\":{\"N\":\"bad\"}}}", -1, 0},
      {"{\"Item\":{\"b\":{\"S\":\"1\"},\"a\":{\"N\":\"1\"},\"b\":{\"BOOL\":true}}}", 0, 0},
      {"{\"Item\":{\"\":{\"S\":\"x\"}}}", -1, 0},
      {"{\"Item\":{\"a\":{\"M\":{\"\":{\"S\":\"x\"}}}}}", 0, 0},
      {"{\"Item\":{\"a\\u0000\":{\"S\":\"x\"}}}", NOT_OBJ, NOT_OBJ},
      {"{\"X\\u0000\":1}", NOT_OBJ, NOT_OBJ},
      {"{\"Item\":{\"a\":{\"S\":\"\\u0000x\"}}}", 0, 0},
      {"{\"Item\":{\"a\":{\"S\":\"\\ud83d\\ude00 \\u00e9\\/\\b\\f\\n\\r\\t\\\"\\\\\"}}}", 0, 0},
      {"{\"Item\":{\"a\":{\"S\":\"\\ud83d\"}}}", NOT_OBJ, NOT_OBJ},
      {"{\"Item\":{\"a\":{\"S\":\"\\ude00\"}}}", NOT_OBJ, NOT_OBJ},
      {"{\"Item\":{\"a\":{\"S\":\"\\ud83d\\u0041\"}}}", NOT_OBJ, NOT_OBJ},
      {"{\"Item\":{\"a\":{\"S\":\"\\u12\"}}}", NOT_OBJ, NOT_OBJ},
      {"{\"Item\":{\"a\":{\"S\":\"\\x\"}}}", NOT_OBJ, NOT_OBJ},
      {"{\"Item\":{\"a\":{\"S\":\"\xc3\xa9\xf0\x9f\x98\x80\"}}}", 0, 0},
      {"{\"Item\":{\"a\":{\"S\":\"\xc0\x80\"}}}", NOT_OBJ, NOT_OBJ},
      {"{\"Item\":{\"a\":{\"S\":\"\xed\xa0\x80\"}}}", NOT_OBJ, NOT_OBJ},
      {"{\"Item\":{\"a\":{\"S\":\"\xf4\x90\x80\x80\"}}}", NOT_OBJ, NOT_OBJ},
      {"{\"Item\":{\"a\":{\"S\":\"\xe2\x82\"}}}", NOT_OBJ, NOT_OBJ},
      {"{\"Item\":{\"a\":{\"S\":\"\xff\"}}}", NOT_OBJ, NOT_OBJ},
      {"{\"Item\":{\"a\":{\"S\":\"\x01\"}}}", NOT_OBJ, NOT_OBJ},
      {"{\"Item\":{\"a\":{\"S\":\"\x7f\"}}}", 0, 0},
      {"{\"Item\":{\"a\":{\"N\":\"\\u0031\\u0030\"}}}", 0, 0},
      {"{\"Item\":{\"a\":{\"N\":\"1e126\"},\"b\":{\"N\":\"1e-131\"}}}", -1, 0},
      {"{\"Item\":{\"a\":{\"N\":\" 1\"}}}", -1, 0},
      {"{\"Item\":{\"a\":{\"N\":\"00012.500\"}}}", 0, 0},
      {"{\"Item\":{\"a\":{\"N\":\"123456789012345678901234567890123456789\"}}}", -1, 0},
      {"{\"Item\":{\"a\":{\"B\":\"YQ\\u003d\\u003d\"},\"b\":{\"B\":\"\"}}}", 0, 0},
      {"{\"Item\":{\"a\":{\"B\":\"YQ\"}}}", -1, 0},
      {"{\"Item\":{\"a\":{\"BOOL\":false},\"b\":{\"NULL\":true}}}", 0, 0},
      {"{\"Item\":{\"a\":{\"BOOL\":null}}}", -1, 0},
      {"{\"Item\":{\"a\":{\"NULL\":false}}}", -1, 0},
      {"{\"Item\":{\"a\":{\"BOOL\":True}}}", NOT_OBJ, NOT_OBJ},
      {"{\"Item\":{\"a\":{\"SS\":[\"b\",\"a\",\"c\"]}}}", 0, 0},
      {"{\"Item\":{\"a\":{\"SS\":[\"b\",\"b\"]}}}", -1, 0},
      {"{\"Item\":{\"a\":{\"SS\":[]}}}", -1, 0},
      {"{\"Item\":{\"a\":{\"NS\":[\"1\",\"1.0\"]}}}", -1, 0},
      {"{\"Item\":{\"a\":{\"NS\":[\"10\",\"9\",\"-1\"]}}}", 0, 0},
      {"{\"Item\":{\"a\":{\"BS\":[\"Yg==\",\"YQ==\"]}}}", 0, 0},
      {"{\"Item\":{\"a\":{\"SS\":[\"a\",1]}}}", -1, 0},
      {"{\"Item\":{\"a\":{\"L\":[]},\"b\":{\"L\":[{\"S\":\"x\"},{\"N\":\"1\"}]}}}", 0, 0},
      {"{\"Item\":{\"a\":{\"L\":[1,]}}}", NOT_OBJ, NOT_OBJ},
      {"{\"Item\":{\"a\":{\"M\":{\"x\":{\"S\":\"y\"},}}}}", NOT_OBJ, NOT_OBJ},
      {"{\"Item\":{\"a\":{}}}", -1, 0},
      {"{\"Item\":{\"a\":{\"X\":1}}}", -1, 0},
      {"{\"Item\":{\"a\":\"x\"}}", -1, 0},
      {"{\"Attributes\":{\"a\":{\"S\":1}}}", 0, 0},
      {"{\"Items\":[],\"Count\":0,\"ScannedCount\":0}", 0, 0},
      {"{\"Items\":null}", 0, -1},
      {"{\"Items\":{}}", 0, -1},
      {"{\"Items\":[{}]}", 0, 0},
      {"{\"Items\":[1]}", 0, -1},
      {"{\"Items\":[{\"a\":{\"S\":\"x\"}},{\"a\":{\"N\":\"1\"}}],\"Count\":2}", 0, 0},
      {"{\"Items\":[1],\"Items\":[{\"a\":{\"S\":\"x\"}}]}", 0, 0},
      {"{\"Items\":[{\"a\":{\"S\":\"x\"}}],\"Items\":[1]}", 0, -1},
      {"{\"Count\":-0}", 0, 0},
      {"{\"Count\":-1}", 0, -1},
      {"{\"Count\":1.0}", 0, -1},
      {"{\"Count\":1e2}", 0, -1},
      {"{\"Count\":\"1\"}", 0, -1},
      {"{\"Count\":null}", 0, -1},
      {"{\"Count\":-1,\"Count\":3}", 0, 0},
      {"{\"ScannedCount\":true}", 0, -1},
      {"{\"Count\":9223372036854775807}", 0, 0},
      {"{\"Count\":9223372036854775808}", NOT_OBJ, NOT_OBJ},
      {"{\"Count\":-9223372036854775808}", 0, -1},
      {"{\"Count\":-9223372036854775809}", NOT_OBJ, NOT_OBJ},
      {"{\"X\":1e400}", NOT_OBJ, NOT_OBJ},
      {"{\"X\":-1e400}", NOT_OBJ, NOT_OBJ},
      {"{\"X\":1e-400}", 0, 0},
      {"{\"X\":01}", NOT_OBJ, NOT_OBJ},
      {"{\"X\":1.}", NOT_OBJ, NOT_OBJ},
      {"{\"X\":.5}", NOT_OBJ, NOT_OBJ},
      {"{\"X\":-}", NOT_OBJ, NOT_OBJ},
      {"{\"X\":1e}", NOT_OBJ, NOT_OBJ},
      {"{\"X\":[1,{\"a\":[true,false,null,\"s\",-0.5e+3]}]}", 0, 0},
      {"{\"X\":1,}", NOT_OBJ, NOT_OBJ},
      {"{\"X\" 1}", NOT_OBJ, NOT_OBJ},
      {"{X:1}", NOT_OBJ, NOT_OBJ},
      {"{\"LastEvaluatedKey\":null}", 0, 0},
      {"{\"LastEvaluatedKey\":{}}", 0, 0},
      {"{\"LastEvaluatedKey\":\"x\"}", 0, -1},
      {"{\"LastEvaluatedKey\":[]}", 0, -1},
      {"{\"LastEvaluatedKey\":{\"k\":{\"S\":\"v\"}}}", 0, 0},
      {"{\"LastEvaluatedKey\":{\"k\":{\"S\":1}}}", 0, -1},
      {"{\"LastEvaluatedKey\":{\"k\":{\"S\":1}},\"Count\":-1}", 0, -1},
      {"{\"L\\u0061stEvaluatedKey\":{\"k\":{\"S\":1}}}", 0, -1},
      {"{\"\\u0049tem\":{\"a\":{\"S\":1}}}", -1, 0},
      {"{\"ConsumedCapacity\":{\"TableName\":\"t\",\"CapacityUnits\":0.5},"
       "\"Item\":{\"id\":{\"S\":\"1\"}}}",
       0, 0},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
    check_str(cases[i].text, cases[i].item, cases[i].read);
}
END_TEST

/* jansson loses one NUL byte right after a number or a word (it puts the
 * byte back into a buffer where NUL means "empty"); the reader follows. */
#define T(lit) lit, sizeof(lit) - 1 /* a literal and its length, NUL bytes included */
START_TEST(nul_after_a_token_agrees) {
  static const struct {
    const char *text;
    size_t len;
    int item, read;
  } cases[] = {
      {T("{\"Count\":2\0,\"Items\":[]}"), 0, 0},
      {T("{\"Count\":2\0\0,\"Items\":[]}"), NOT_OBJ, NOT_OBJ},
      {T("{\"X\":true\0}"), 0, 0},
      {T("{\"X\":-1.5e3\0}\0"), NOT_OBJ, NOT_OBJ},
      {T("{\"X\":-1.5e3\0}"), 0, 0},
      {T("{\"X\":\"s\"\0}"), NOT_OBJ, NOT_OBJ},
      {T("{\"X\":1}\0"), NOT_OBJ, NOT_OBJ},
      {T("{\"X\":\0 1}"), NOT_OBJ, NOT_OBJ},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    int rc[2];
    check_body(cases[i].text, cases[i].len, rc);
    ck_assert_msg(rc[0] == cases[i].item && rc[1] == cases[i].read, "case %zu: %d %d", i,
                  rc[0], rc[1]);
  }
}
END_TEST

/* Builds `prefix` + n times `open` + `mid` + n times `close` + `suffix`. */
static char *nested(const char *prefix, const char *open, size_t n, const char *mid,
                    const char *close, const char *suffix) {
  struct tt_buf b;
  tt_buf_init(&b, 0);
  ck_assert_int_eq(tt_buf_puts(&b, prefix), 0);
  for (size_t i = 0; i < n; i++)
    ck_assert_int_eq(tt_buf_puts(&b, open), 0);
  ck_assert_int_eq(tt_buf_puts(&b, mid), 0);
  for (size_t i = 0; i < n; i++)
    ck_assert_int_eq(tt_buf_puts(&b, close), 0);
  ck_assert_int_eq(tt_buf_puts(&b, suffix), 0);
  ck_assert_int_eq(tt_buf_append(&b, "", 1), 0);
  return b.data;
}

START_TEST(nesting_limits_agree) {
  /* Documents: 32 levels of M are fine, 33 are not (codec_ddb.c). */
  for (size_t n = 30; n <= 34; n++) {
    char *t = nested("{\"Item\":{\"a\":", "{\"M\":{\"b\":", n, "{\"S\":\"x\"}", "}}", "}}");
    check_str(t, n <= 32 ? 0 : -1, 0);
    free(t);
    t = nested("{\"Item\":{\"a\":", "{\"L\":[", n, "{\"S\":\"x\"}", "]}", "}}");
    check_str(t, n <= 32 ? 0 : -1, 0);
    free(t);
  }
  /* JSON: values nest at most 2048 deep (jansson), here inside a skipped
   * member at depth 2 and inside an invalid, skipped document. */
  for (size_t n = 2045; n <= 2049; n++) {
    char *t = nested("{\"X\":", "[", n, "1", "]", "}");
    int want = n + 2 <= 2048 ? 0 : NOT_OBJ;
    check_str(t, want, want);
    free(t);
    t = nested("{\"X\":", "[", n, "", "]", "}");
    want = n + 1 <= 2048 ? 0 : NOT_OBJ;
    check_str(t, want, want);
    free(t);
    t = nested("{\"Item\":{\"a\":{\"L\":", "[", n, "", "]", "}}}");
    want = n + 3 <= 2048 ? -1 : NOT_OBJ;
    check_str(t, want, want == -1 ? 0 : want);
    free(t);
  }
}
END_TEST

/* The one difference from the jansson path (wire_diff.h): strings starting
 * with U+0000 'S' or 'N' are kept whole. */
START_TEST(strings_starting_with_nul_are_kept) {
  const char *t = "{\"Item\":{\"a\":{\"S\":\"\\u0000Sx\"},\"b\":{\"SS\":[\"\\u0000N1\"]}}}";
  struct tt_av v;
  struct tt_backend_error e;
  memset(&e, 0, sizeof(e));
  ck_assert_int_eq(tt_ddb_item_response_parse(TT_DDB_GET_ITEM, t, strlen(t), &v, &e), 0);
  const struct tt_av *a = tt_av_map_get(&v, "a"), *b = tt_av_map_get(&v, "b");
  ck_assert_int_eq(a->type, TT_AV_S);
  ck_assert_uint_eq(a->len, 3);
  ck_assert_int_eq(memcmp(a->u.bytes, "\0Sx", 3), 0);
  ck_assert_int_eq(b->type, TT_AV_SS);
  ck_assert_uint_eq(b->u.elems[0].len, 3);
  tt_av_free(&v);
}
END_TEST

START_TEST(read_answer_values) {
  const char *t = "{\"Count\":2,\"ScannedCount\":5,\"Items\":[{\"z\":{\"N\":\"1.50\"},\"a\":"
                  "{\"SS\":[\"y\",\"x\"]}},{}],\"LastEvaluatedKey\":{\"pk\":{\"S\":\"k\"}}}";
  struct tt_ddb_read_result r;
  struct tt_backend_error e;
  memset(&e, 0, sizeof(e));
  ck_assert_int_eq(tt_ddb_read_response_parse(t, strlen(t), &r, &e), 0);
  ck_assert_uint_eq(r.count, 2);
  ck_assert_uint_eq(r.scanned_count, 5);
  ck_assert_uint_eq(r.n_items, 2);
  char *s = wd_text(&r.items[0]);
  ck_assert_str_eq(s, "{\"a\":{\"SS\":[\"x\",\"y\"]},\"z\":{\"N\":\"1.5\"}}");
  free(s);
  ck_assert_uint_eq(r.items[1].len, 0);
  s = wd_text(&r.last_key);
  ck_assert_str_eq(s, "{\"pk\":{\"S\":\"k\"}}");
  free(s);
  tt_ddb_read_result_free(&r);
  /* Errors name the member as the jansson path does. */
  t = "{\"Items\":[1],\"Count\":-1}";
  ck_assert_int_eq(tt_ddb_read_response_parse(t, strlen(t), &r, &e), -1);
  ck_assert_str_eq(e.type, "InvalidResponse");
  ck_assert_str_eq(e.message, "the DynamoDB endpoint answered an invalid Count");
  ck_assert_ptr_null(r.items);
}
END_TEST

/* ---- seeded random bodies ---- */

struct gen {
  uint64_t s;
  struct tt_buf b;
};

static uint32_t rnd(struct gen *g) {
  g->s ^= g->s << 13;
  g->s ^= g->s >> 7;
  g->s ^= g->s << 17;
  return (uint32_t)(g->s >> 11);
}

static unsigned pick(struct gen *g, unsigned n) { return rnd(g) % n; }
static void put(struct gen *g, const char *s) { ck_assert_int_eq(tt_buf_puts(&g->b, s), 0); }
static void sp(struct gen *g) {
  static const char *const w[] = {" ", "\n", "\t ", "\r\n  "};
  if (pick(g, 8) == 0)
    put(g, w[pick(g, 4)]);
}

static void gen_string(struct gen *g) {
  static const char *const pieces[] = {
      "a", "b", "Zz", "hello", "\\n", "\\\"", "\\\\", "\\/", "\\u00e9", "\\u0000", "\\ud83d\\ude00",
      "\xc3\xa9", "\xf0\x9f\x98\x80", "\\u0041", "\\t", " ", "1",
      /* rare breakage */
      "\\ud800", "\xff", "\x01", "\\q"};
  put(g, "\"");
  unsigned n = pick(g, 4);
  for (unsigned i = 0; i < n; i++)
    put(g, pieces[pick(g, 8) == 0 ? pick(g, 21) : pick(g, 17)]);
  put(g, "\"");
}

static void gen_number_string(struct gen *g) {
  static const char *const nums[] = {
      "\"1\"", "\"-0.5\"", "\"1e3\"", "\"00012.500\"", "\"0\"", "\"-0\"", "\"1E+2\"",
      "\"12345678901234567890123456789012345678\"", "\"\\u0037\"", "\"9.99e125\"",
      /* invalid */
      "\"1e126\"", "\"abc\"", "\"\"", "\" 1\"", "\".5\"", "\"1.\"", "1", "\"123456789012345678901234567890123456789\""};
  put(g, nums[pick(g, 6) == 0 ? pick(g, 18) : pick(g, 10)]);
}

static void gen_base64(struct gen *g) {
  static const char *const b[] = {"\"\"", "\"YQ==\"", "\"YWI=\"", "\"YWJj\"", "\"AAEC/w==\"",
                                  "\"YQ\\u003d\\u003d\"",
                                  /* invalid */
                                  "\"YQ\"", "\"====\"", "\"Y!==\"", "7"};
  put(g, b[pick(g, 6) == 0 ? pick(g, 10) : pick(g, 6)]);
}

static void gen_map(struct gen *g, int depth, bool item);

static void gen_av(struct gen *g, int depth) {
  unsigned t = pick(g, depth > 3 ? 8 : 12);
  sp(g);
  if (pick(g, 25) == 0) { /* a broken AttributeValue */
    static const char *const bad[] = {"{}", "{\"S\":\"a\",\"N\":\"1\"}", "{\"X\":1}", "\"s\"",
                                      "[]", "{\"S\":1}", "null", "{\"S\":\"a\",\"S\":\"b\"}",
                                      "{\"N\":\"x\",\"N\":\"2\"}"};
    put(g, bad[pick(g, 9)]);
    return;
  }
  switch (t) {
  case 0:
  case 1:
    put(g, "{\"S\":");
    gen_string(g);
    break;
  case 2:
    put(g, "{\"N\":");
    gen_number_string(g);
    break;
  case 3:
    put(g, "{\"B\":");
    gen_base64(g);
    break;
  case 4:
    put(g, pick(g, 10) ? (pick(g, 2) ? "{\"BOOL\":true" : "{\"BOOL\":false") : "{\"BOOL\":null");
    break;
  case 5:
    put(g, pick(g, 10) ? "{\"NULL\":true" : "{\"NULL\":false");
    break;
  case 6:
  case 7: {
    static const char *const kinds[] = {"{\"SS\":[", "{\"NS\":[", "{\"BS\":["};
    unsigned k = pick(g, 3), n = pick(g, 10) ? 1 + pick(g, 4) : 0;
    put(g, kinds[k]);
    for (unsigned i = 0; i < n; i++) {
      if (i)
        put(g, ",");
      sp(g);
      if (k == 0)
        gen_string(g);
      else if (k == 1)
        gen_number_string(g);
      else
        gen_base64(g);
    }
    put(g, "]");
    break;
  }
  case 8:
  case 9:
  case 10:
    put(g, "{\"M\":");
    gen_map(g, depth + 1, false);
    break;
  default: {
    unsigned n = pick(g, 4);
    put(g, "{\"L\":[");
    for (unsigned i = 0; i < n; i++) {
      if (i)
        put(g, ",");
      gen_av(g, depth + 1);
    }
    put(g, "]");
    break;
  }
  }
  sp(g);
  put(g, "}");
}

static void gen_map(struct gen *g, int depth, bool item) {
  static const char *const names[] = {"\"a\"", "\"b\"", "\"id\"", "\"name\"", "\"z\"",
                                      "\"\xc3\xa9\"", "\"a\\u0062\"", "\"ab\"", "\"\"",
                                      "\"\\u0000\"", "\"tags\"", "\"B\""};
  unsigned n = pick(g, 6);
  put(g, "{");
  for (unsigned i = 0; i < n; i++) {
    if (i)
      put(g, ",");
    sp(g);
    unsigned k = pick(g, 12);
    if ((k == 8 && item && pick(g, 3)) || (k == 9 && pick(g, 4)))
      k = 0; /* keep the bodies that fail at once rarer */
    put(g, names[k]);
    sp(g);
    put(g, ":");
    gen_av(g, depth);
  }
  sp(g);
  put(g, "}");
}

static void gen_junk(struct gen *g, int depth) {
  static const char *const s[] = {"1", "-0.5e+3", "true", "false", "null", "\"s\"", "0",
                                  "1e-400", "1e400", "99999999999999999999", "12.5E2"};
  unsigned t = depth > 3 ? 0 : pick(g, 4);
  if (t == 0) {
    put(g, s[pick(g, 12) == 0 ? 7 + pick(g, 4) : pick(g, 7)]);
  } else if (t == 1) {
    put(g, "[");
    for (unsigned i = 0, n = pick(g, 3); i < n; i++) {
      if (i)
        put(g, ",");
      gen_junk(g, depth + 1);
    }
    put(g, "]");
  } else {
    put(g, "{");
    for (unsigned i = 0, n = pick(g, 3); i < n; i++) {
      if (i)
        put(g, ",");
      gen_string(g);
      put(g, ":");
      gen_junk(g, depth + 1);
    }
    put(g, "}");
  }
}

static void gen_count(struct gen *g) {
  static const char *const c[] = {"0", "1", "42", "-0", "-1", "1.0", "\"3\"", "null", "2e1"};
  put(g, c[pick(g, 4) == 0 ? pick(g, 9) : pick(g, 3)]);
}

static void gen_body(struct gen *g) {
  static const char *const members[] = {"\"Item\"",  "\"Attributes\"",     "\"Items\"",
                                        "\"Count\"", "\"ScannedCount\"",   "\"LastEvaluatedKey\"",
                                        "\"ConsumedCapacity\"", "\"Other\""};
  unsigned n = pick(g, 5);
  sp(g);
  put(g, "{");
  for (unsigned i = 0; i < n; i++) {
    if (i)
      put(g, ",");
    sp(g);
    unsigned m = pick(g, 8);
    put(g, members[m]);
    put(g, ":");
    sp(g);
    switch (m) {
    case 0:
    case 1:
    case 5:
      if (pick(g, 10) == 0)
        put(g, pick(g, 2) ? "null" : "\"x\"");
      else
        gen_map(g, 0, true);
      break;
    case 2: {
      put(g, pick(g, 15) ? "[" : "{");
      for (unsigned k = 0, nk = pick(g, 4); k < nk; k++) {
        if (k)
          put(g, ",");
        gen_map(g, 0, true);
      }
      put(g, "]"); /* after a "{": not JSON */
      break;
    }
    case 3:
    case 4:
      gen_count(g);
      break;
    default:
      gen_junk(g, 0);
      break;
    }
    sp(g);
  }
  put(g, "}");
  sp(g);
}

/* Breaks a body at one place: a byte changed, dropped or added, or the
 * text cut short. */
static void mutate(struct gen *g) {
  static const char set[] = "{}[]:,\"\\ 0a-eE.nu\x80\xff";
  size_t len = g->b.len;
  if (len == 0)
    return;
  size_t at = pick(g, (unsigned)len);
  switch (pick(g, 4)) {
  case 0:
    g->b.data[at] = set[pick(g, sizeof(set) - 1)];
    break;
  case 1:
    memmove(g->b.data + at, g->b.data + at + 1, len - at - 1);
    g->b.len--;
    break;
  case 2:
    ck_assert_int_eq(tt_buf_append(&g->b, "x", 1), 0);
    memmove(g->b.data + at + 1, g->b.data + at, len - at);
    g->b.data[at] = set[pick(g, sizeof(set) - 1)];
    break;
  default:
    g->b.len = at;
    break;
  }
}

START_TEST(random_bodies_agree) {
  struct gen g = {.s = 0x9E3779B97F4A7C15u};
  unsigned seen[2][3] = {{0}}; /* [item, read][ok, invalid, not an object] */
  const unsigned n = 20000;
  for (unsigned i = 0; i < n; i++) {
    tt_buf_init(&g.b, 0);
    gen_body(&g);
    if (pick(&g, 4) == 0)
      mutate(&g);
    int rc[2];
    check_body(g.b.data ? g.b.data : "", g.b.len, rc);
    for (int k = 0; k < 2; k++)
      seen[k][rc[k] == 0 ? 0 : rc[k] == -1 ? 1 : 2]++;
    tt_buf_free(&g.b);
  }
  /* The corpus reaches every outcome often enough to mean something. */
  for (int k = 0; k < 2; k++)
    for (int o = 0; o < 3; o++)
      ck_assert_msg(seen[k][o] > n / 50, "outcome %d of kind %d seen %u times", o, k,
                    seen[k][o]);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("wire_reader");
  TCase *t = tcase_create("differential");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, edge_cases_agree);
  tcase_add_test(t, nesting_limits_agree);
  tcase_add_test(t, nul_after_a_token_agrees);
  tcase_add_test(t, strings_starting_with_nul_are_kept);
  tcase_add_test(t, read_answer_values);
  tcase_add_test(t, random_bodies_agree);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return fx_run_suite(suite()); }
