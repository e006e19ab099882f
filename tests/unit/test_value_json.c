/* SPDX-License-Identifier: Apache-2.0 */
/* test_value_json.c -- exact JSON parsing/dumping, base64, and the DynamoDB
 * and logical JSON codecs. */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value/av.h"
#include "value/base64.h"
#include "value/codec_ddb.h"
#include "value/codec_logical.h"
#include "value/json_exact.h"
#include "value/number.h"

/* -1E-130 in plain notation: 129 zeros after the point, then 1. */
#define ZEROS64 "0000000000000000000000000000000000000000000000000000000000000000"
#define TINY "-0." ZEROS64 ZEROS64 "0" "1"
/* 9.99...E+125: 38 nines then 88 zeros. */
#define BIG_N "99999999999999999999999999999999999999" ZEROS64 "000000000000000000000000"

static json_t *parse_ok(const char *text) {
  json_t *j = NULL;
  struct tt_error err;
  tt_error_clear(&err);
  ck_assert_msg(tt_json_parse(text, strlen(text), NULL, &j, &err) == 0, "%s", err.message);
  return j;
}

static void parse_fails(const char *text, size_t len, const char *field, const char *msg_part,
                        struct tt_error *err) {
  json_t *j = (json_t *)1;
  tt_error_clear(err);
  ck_assert_int_eq(tt_json_parse(text, len, NULL, &j, err), -1);
  ck_assert_ptr_null(j);
  ck_assert_int_eq(err->code, TT_ERR_VALIDATION);
  ck_assert_str_eq(err->field, field);
  ck_assert_msg(strstr(err->message, msg_part) != NULL, "message: %s", err->message);
}

/* Dumps j compactly and compares with want; consumes j. */
static void dump_is(json_t *j, unsigned flags, const char *want) {
  struct tt_buf b;
  tt_buf_init(&b, 0);
  ck_assert_int_eq(tt_json_dump(j, flags, &b), 0);
  ck_assert_str_eq(b.data, want);
  tt_buf_free(&b);
  json_decref(j);
}

/* ---- json_exact ---- */

/* A marked tree's strings: "\0N" is a number's marker, "\0S" a string's. */
START_TEST(dump_marked_tree) {
  json_t *t = json_pack("{s:s%,s:s%,s:i,s:f,s:[b,n]}", "n", "\0N12", (size_t)4, "s", "\0Sab",
                        (size_t)4, "i", 7, "r", 2.0, "a", 1);
  dump_is(t, 0, "{\"n\":12,\"s\":\"ab\",\"i\":7,\"r\":2.0,\"a\":[true,null]}");
}
END_TEST

START_TEST(exact_numbers_round_trip) {
  const char *text =
      "{\"a\":12345678901234567890123456789012345678,\"b\":[9007199254740993,0.1,-1E-130,"
      "9.9999999999999999999999999999999999999E+125,1.50,-0,1e400]}";
  json_t *j = parse_ok(text);
  json_t *b = json_object_get(j, "b");
  size_t len;
  struct tt_json_numbuf nb;
  ck_assert(tt_json_is_number(json_object_get(j, "a")));
  ck_assert(!tt_json_is_string(json_object_get(j, "a")));
  const char *t = tt_json_number_text(json_array_get(b, 0), &nb, &len);
  ck_assert_uint_eq(len, 16);
  ck_assert_int_eq(memcmp(t, "9007199254740993", 16), 0);
  dump_is(j, 0, text);
  /* Canonical numbers on request; 1e400 is no DynamoDB number: verbatim. */
  j = parse_ok("[1.50,-0,1E+2,1e400]");
  dump_is(j, TT_JSON_CANON_NUMBERS, "[1.5,0,100,1e400]");
  /* Numbers built by hand and plain jansson numbers. */
  j = json_pack("[o,I]", tt_json_number_new("0.10", 4), (json_int_t)-7);
  ck_assert_ptr_null(tt_json_number_new("01", 2));
  ck_assert_ptr_null(tt_json_number_new("1.", 2));
  dump_is(j, 0, "[0.10,-7]");
}
END_TEST

/* Whole numbers in any spelling are integers, as in JSON Schema; fractions,
 * non-numbers and values past int64_t are not. */
START_TEST(exact_integer_values) {
  static const struct {
    const char *text;
    int ok;
    int64_t want;
  } cases[] = {
      {"27", 1, 27},          {"27.0", 1, 27},        {"2.7e1", 1, 27},
      {"270E-1", 1, 27},      {"-3.00", 1, -3},       {"0.0", 1, 0},
      {"-0", 1, 0},           {"1e18", 1, 1000000000000000000LL},
      {"9223372036854775807", 1, INT64_MAX},          {"27.5", 0, 0},
      {"2.75e1", 0, 0},       {"1e-1", 0, 0},         {"9223372036854775808", 0, 0},
      {"1e19", 0, 0},         {"\"27\"", 0, 0},       {"true", 0, 0},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    json_t *j = parse_ok(cases[i].text);
    int64_t got = -12345;
    int rc = tt_json_integer(j, &got);
    ck_assert_msg((rc == 0) == cases[i].ok, "%s: rc %d", cases[i].text, rc);
    if (cases[i].ok)
      ck_assert_msg(got == cases[i].want, "%s: got %lld", cases[i].text, (long long)got);
    json_decref(j);
  }
  /* Trees built by hand hold jansson numbers. */
  json_t *r = json_real(27.0);
  int64_t got = 0;
  ck_assert_int_eq(tt_json_integer(r, &got), 0);
  ck_assert_int_eq(got, 27);
  json_decref(r);
  r = json_real(27.5);
  ck_assert_int_eq(tt_json_integer(r, &got), -1);
  json_decref(r);
  ck_assert_int_eq(tt_json_integer(NULL, &got), -1);
}
END_TEST

START_TEST(exact_strings) {
  json_t *j = parse_ok("[\"a\\u00e9\\ud83d\\ude00\\n\\\"\", \"\\u0000N1\", \"\\/\"]");
  size_t len;
  const char *s = tt_json_string_text(json_array_get(j, 0), &len);
  ck_assert_uint_eq(len, 1 + 2 + 4 + 2);
  ck_assert_int_eq(memcmp(s, "a\xc3\xa9\xf0\x9f\x98\x80\n\"", len), 0);
  /* A real string that looks like a number marker stays a string. */
  json_t *fake = json_array_get(j, 1);
  ck_assert(!tt_json_is_number(fake));
  s = tt_json_string_text(fake, &len);
  ck_assert_uint_eq(len, 3);
  ck_assert_int_eq(memcmp(s, "\0N1", 3), 0);
  dump_is(j, 0, "[\"a\xc3\xa9\xf0\x9f\x98\x80\\n\\\"\",\"\\u0000N1\",\"/\"]");

  j = json_pack("[o]", tt_json_string_new("<a&b>\xe2\x80\xa8", 8));
  dump_is(j, TT_JSON_GO_ESCAPE, "[\"\\u003ca\\u0026b\\u003e\\u2028\"]");
  ck_assert_ptr_null(tt_json_string_new("\xff", 1));
}
END_TEST

START_TEST(exact_sort_keys) {
  json_t *j = parse_ok("{\"b\":1,\"a\":{\"z\":1,\"B\":2},\"\":0}");
  dump_is(json_incref(j), 0, "{\"b\":1,\"a\":{\"z\":1,\"B\":2},\"\":0}");
  dump_is(j, TT_JSON_SORT_KEYS, "{\"\":0,\"a\":{\"B\":2,\"z\":1},\"b\":1}");
}
END_TEST

START_TEST(exact_rejections) {
  struct tt_error err;
  parse_fails("{\"item\":{\"a\":1,\"a\":2}}", 22, "item.a", "duplicate object key", &err);
  parse_fails("{\"a\":01}", 8, "a", "invalid number", &err);
  parse_fails("[1,]", 4, "[1]", "unexpected character", &err);
  parse_fails("[1.]", 4, "[0]", "invalid number", &err);
  parse_fails("[\"\\ud800\"]", 10, "[0]", "lone high surrogate", &err);
  parse_fails("[\"\\udc00\"]", 10, "[0]", "lone low surrogate", &err);
  parse_fails("[\"\xff\"]", 5, "[0]", "invalid UTF-8", &err);
  parse_fails("[\"\xed\xa0\x80\"]", 7, "[0]", "invalid UTF-8", &err); /* UTF-8 surrogate */
  parse_fails("[\"\xc0\xaf\"]", 6, "[0]", "invalid UTF-8", &err);     /* overlong */
  parse_fails("\"a\tb\"", 5, "", "control character", &err);
  parse_fails("{} x", 4, "", "unexpected data after", &err);
  parse_fails("{\"k\\u0000\":1}", 13, "", "NUL", &err);
  parse_fails("", 0, "", "unexpected end", &err);
  parse_fails("[1 2]", 5, "", "expected ',' or ']'", &err);
  parse_fails("{\"a\" 1}", 7, "a", "expected ':'", &err);
  parse_fails("[\"\\x\"]", 6, "[0]", "invalid escape", &err);
  parse_fails("tru", 3, "", "invalid literal", &err);
  /* Line and column, never the content. */
  parse_fails("{\n  \"secret\": \"hunter2", 22, "secret", "line 2", &err);
  ck_assert_ptr_null(strstr(err.message, "hunter2"));

  /* 32 levels pass, 33 fail with the path of the deepest container. */
  char deep[80];
  memset(deep, '[', 32);
  memset(deep + 32, ']', 32);
  json_t *j = NULL;
  ck_assert_int_eq(tt_json_parse(deep, 64, NULL, &j, &err), 0);
  json_decref(j);
  memset(deep, '[', 33);
  memset(deep + 33, ']', 33);
  parse_fails(deep, 66, "[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]",
              "nesting deeper than 32 levels", &err);

  /* Byte cap. */
  struct tt_json_opts o = {4, 0};
  ck_assert_int_eq(tt_json_parse("[1,2]", 5, &o, &j, &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_PAYLOAD_TOO_LARGE);
  ck_assert_int_eq(tt_json_parse("[12]", 4, &o, &j, &err), 0);
  json_decref(j);
}
END_TEST

/* ---- base64 ---- */

static void b64_is(const char *raw, enum tt_base64_variant v, const char *want) {
  struct tt_buf b;
  unsigned char out[64];
  size_t n;
  tt_buf_init(&b, 0);
  ck_assert_int_eq(tt_base64_encode(&b, raw, strlen(raw), v), 0);
  ck_assert_str_eq(b.data ? b.data : "", want);
  ck_assert_int_eq(tt_base64_decode(want, strlen(want), v, 0, out, &n), 0);
  ck_assert_uint_eq(n, strlen(raw));
  ck_assert_int_eq(memcmp(out, raw, n), 0);
  tt_buf_free(&b);
}

START_TEST(base64_vectors) {
  /* RFC 4648 section 10. */
  b64_is("", TT_BASE64_STD, "");
  b64_is("f", TT_BASE64_STD, "Zg==");
  b64_is("fo", TT_BASE64_STD, "Zm8=");
  b64_is("foo", TT_BASE64_STD, "Zm9v");
  b64_is("foob", TT_BASE64_STD, "Zm9vYg==");
  b64_is("fooba", TT_BASE64_STD, "Zm9vYmE=");
  b64_is("foobar", TT_BASE64_STD, "Zm9vYmFy");
  b64_is("\xfb\xff", TT_BASE64_STD, "+/8=");
  b64_is("\xfb\xff", TT_BASE64_URL, "-_8=");
  unsigned char out[16];
  size_t n;
  ck_assert_int_eq(tt_base64_decode("Zg", 2, TT_BASE64_STD, 0, out, &n), -1);
  ck_assert_int_eq(tt_base64_decode("Zg", 2, TT_BASE64_STD, 1, out, &n), 0);
  ck_assert_uint_eq(n, 1);
  ck_assert_int_eq(tt_base64_decode("-_8=", 4, TT_BASE64_STD, 0, out, &n), -1);
  ck_assert_int_eq(tt_base64_decode("+/8=", 4, TT_BASE64_URL, 0, out, &n), -1);
  ck_assert_int_eq(tt_base64_decode("Z===", 4, TT_BASE64_STD, 0, out, &n), -1);
  ck_assert_int_eq(tt_base64_decode("Zg=a", 4, TT_BASE64_STD, 0, out, &n), -1);
  ck_assert_int_eq(tt_base64_decode("Zm9v\n", 5, TT_BASE64_STD, 1, out, &n), -1);
}
END_TEST

/* ---- codec_ddb ---- */

static void ddb_item_round_trip(const char *in, const char *want) {
  json_t *j = parse_ok(in);
  struct tt_av item;
  struct tt_error err;
  struct tt_buf b;
  ck_assert_msg(tt_ddb_item_from_json(j, "Item", &item, &err) == 0, "%s", err.message);
  json_decref(j);
  tt_buf_init(&b, 0);
  ck_assert_int_eq(tt_ddb_item_write(&b, &item, 0), 0);
  ck_assert_str_eq(b.data, want);
  /* The tree form dumps to the same bytes. */
  json_t *tree = tt_ddb_item_to_json(&item);
  tt_buf_reset(&b);
  ck_assert_int_eq(tt_json_dump(tree, 0, &b), 0);
  ck_assert_str_eq(b.data, want);
  json_decref(tree);
  tt_buf_free(&b);
  tt_av_free(&item);
}

START_TEST(ddb_round_trip) {
  ddb_item_round_trip(
      "{\"PK\":{\"S\":\"USER#1\"},\"n\":{\"N\":\"001.50\"},\"b\":{\"B\":\"AQID\"},"
      "\"t\":{\"BOOL\":true},\"z\":{\"NULL\":true},\"ss\":{\"SS\":[\"b\",\"a\"]},"
      "\"ns\":{\"NS\":[\"10\",\"9\",\"-1E-130\"]},\"bs\":{\"BS\":[\"Bgc=\",\"BAU=\"]},"
      "\"m\":{\"M\":{\"y\":{\"S\":\"1\"},\"x\":{\"L\":[{\"N\":\"1\"},{\"M\":{}}]}}},"
      "\"l\":{\"L\":[]}}",
      "{\"PK\":{\"S\":\"USER#1\"},\"b\":{\"B\":\"AQID\"},\"bs\":{\"BS\":[\"BAU=\",\"Bgc=\"]},"
      "\"l\":{\"L\":[]},\"m\":{\"M\":{\"x\":{\"L\":[{\"N\":\"1\"},{\"M\":{}}]},\"y\":{\"S\":\"1\"}}},"
      "\"n\":{\"N\":\"1.5\"},\"ns\":{\"NS\":[\"" TINY "\","
      "\"9\",\"10\"]},\"ss\":{\"SS\":[\"a\",\"b\"]},\"t\":{\"BOOL\":true},\"z\":{\"NULL\":true}}");
  /* 38 digits survive DynamoDB JSON both ways. */
  ddb_item_round_trip("{\"big\":{\"N\":\"12345678901234567890123456789012345678\"}}",
                      "{\"big\":{\"N\":\"12345678901234567890123456789012345678\"}}");
}
END_TEST

static void ddb_value_fails(const char *in, const char *field, const char *msg) {
  json_t *j = parse_ok(in);
  struct tt_av v;
  struct tt_error err;
  tt_error_clear(&err);
  ck_assert_int_eq(tt_ddb_value_from_json(j, "x", &v, &err), -1);
  ck_assert_int_eq(v.type, TT_AV_NULL);
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
  ck_assert_str_eq(err.field, field);
  ck_assert_str_eq(err.message, msg);
  json_decref(j);
}

START_TEST(ddb_rejections) {
  ddb_value_fails("{\"SS\":[]}", "x", "x: a set cannot be empty");
  ddb_value_fails("{\"SS\":[\"a\",\"a\"]}", "x", "x: a set cannot contain duplicate members");
  ddb_value_fails("{\"NS\":[\"1\",\"1.0\"]}", "x", "x: a set cannot contain duplicate members");
  ddb_value_fails("{\"BS\":[\"AQ==\",\"AQ==\"]}", "x", "x: a set cannot contain duplicate members");
  ddb_value_fails("{\"NS\":[\"1\",\"x\"]}", "x[1]", "x[1]: not a valid decimal number");
  ddb_value_fails("{\"N\":\"1e999\"}", "x",
                  "x: number magnitude is outside DynamoDB's range (1E-130 to "
                  "9.9999999999999999999999999999999999999E+125)");
  ddb_value_fails("{\"N\":\"123456789012345678901234567890123456789\"}", "x",
                  "x: a number can have at most 38 significant digits");
  ddb_value_fails("{\"N\":1}", "x", "x: N must be a string holding a number");
  ddb_value_fails("{\"NULL\":false}", "x", "x: NULL must be true");
  ddb_value_fails("{\"BOOL\":\"true\"}", "x", "x: BOOL must be true or false");
  ddb_value_fails("{\"S\":1}", "x", "x: S must be a string");
  ddb_value_fails("{\"B\":\"AQI\"}", "x", "x: B is not valid base64");
  ddb_value_fails("{\"X\":\"1\"}", "x", "x: unknown AttributeValue type");
  ddb_value_fails("{\"S\":\"a\",\"N\":\"1\"}", "x",
                  "x: an AttributeValue must be an object with exactly one type key");
  ddb_value_fails("{\"M\":{\"a\":{\"L\":[{\"S\":\"ok\"},{\"Q\":1}]}}}", "x.a[1]",
                  "x.a[1]: unknown AttributeValue type");
  /* 32 nested M pass, 33 fail. */
  struct tt_buf d;
  tt_buf_init(&d, 0);
  for (int i = 0; i < 33; i++)
    tt_buf_puts(&d, "{\"M\":{\"a\":");
  tt_buf_puts(&d, "{\"S\":\"v\"}");
  for (int i = 0; i < 33; i++)
    tt_buf_puts(&d, "}}");
  const char *deep = d.data;
  json_t *j = NULL;
  struct tt_error err;
  struct tt_json_opts o = {0, 100};
  struct tt_av v;
  ck_assert_int_eq(tt_json_parse(deep + 10, strlen(deep) - 12, &o, &j, &err), 0);
  ck_assert_int_eq(tt_ddb_value_from_json(j, "x", &v, &err), 0);
  tt_av_free(&v);
  json_decref(j);
  ck_assert_int_eq(tt_json_parse(deep, strlen(deep), &o, &j, &err), 0);
  ck_assert_int_eq(tt_ddb_value_from_json(j, "x", &v, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.message, "at most 32 levels"));
  json_decref(j);
  tt_buf_free(&d);
}
END_TEST

/* ---- codec_logical ---- */

static struct tt_av logical_ok(const char *json, enum tt_av_type t, unsigned flags,
                               const char *attr) {
  json_t *j = parse_ok(json);
  struct tt_av v;
  struct tt_error err;
  tt_error_clear(&err);
  ck_assert_msg(tt_logical_to_av(j, t, flags, attr, &v, &err) == 0, "%s", err.message);
  json_decref(j);
  return v;
}

static void logical_fails(const char *json, enum tt_av_type t, unsigned flags, const char *attr,
                          const char *field, const char *msg) {
  json_t *j = parse_ok(json);
  struct tt_av v;
  struct tt_error err;
  tt_error_clear(&err);
  ck_assert_int_eq(tt_logical_to_av(j, t, flags, attr, &v, &err), -1);
  ck_assert_int_eq(v.type, TT_AV_NULL);
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
  ck_assert_str_eq(err.field, field);
  ck_assert_str_eq(err.message, msg);
  json_decref(j);
}

/* Logical JSON of v through both output paths (text and tree). */
static void out_is(const struct tt_av *v, enum tt_av_type t, unsigned flags, const char *want) {
  struct tt_buf b;
  tt_buf_init(&b, 0);
  ck_assert_int_eq(tt_logical_write(&b, v, t, flags), 0);
  ck_assert_str_eq(b.data, want);
  tt_buf_reset(&b);
  json_t *tree = tt_logical_from_av(v, t, flags);
  ck_assert_ptr_nonnull(tree);
  ck_assert_int_eq(tt_json_dump(tree, 0, &b), 0);
  ck_assert_str_eq(b.data, want);
  json_decref(tree);
  tt_buf_free(&b);
}

static void n_round_trip(const char *in, unsigned flags, const char *stored, const char *out) {
  struct tt_av v = logical_ok(in, TT_AV_N, flags, "n");
  ck_assert_int_eq(v.type, TT_AV_N);
  ck_assert_str_eq(v.u.bytes, stored);
  out_is(&v, TT_AV_N, flags, out);
  tt_av_free(&v);
}

START_TEST(logical_numbers_exact) {
  n_round_trip("12345678901234567890123456789012345678", 0,
               "12345678901234567890123456789012345678",
               "\"12345678901234567890123456789012345678\"");
  n_round_trip("\"12345678901234567890123456789012345678\"", 0,
               "12345678901234567890123456789012345678",
               "\"12345678901234567890123456789012345678\"");
  n_round_trip("9007199254740993", 0, "9007199254740993", "\"9007199254740993\"");
  n_round_trip("9007199254740992", 0, "9007199254740992", "9007199254740992");
  n_round_trip("0.1", 0, "0.1", "0.1");
  n_round_trip("\"0.12345678901234567\"", 0, "0.12345678901234567", "\"0.12345678901234567\"");
  n_round_trip("1234567890.125", 0, "1234567890.125", "1234567890.125");
  n_round_trip("1234567890.125", TT_LOGICAL_N_STRING, "1234567890.125", "\"1234567890.125\"");
  n_round_trip("-1E-130", 0, TINY, TINY);
  n_round_trip("9.9999999999999999999999999999999999999E+125", 0, BIG_N, "\"" BIG_N "\"");
  logical_fails("123456789012345678901234567890123456789", TT_AV_N, 0, "largeInteger",
                "largeInteger", "largeInteger: a number can have at most 38 significant digits");
  logical_fails("\"1E+126\"", TT_AV_N, 0, "n", "n",
                "n: number magnitude is outside DynamoDB's range (1E-130 to "
                "9.9999999999999999999999999999999999999E+125)");
  logical_fails("1E-131", TT_AV_N, 0, "n", "n",
                "n: number magnitude is outside DynamoDB's range (1E-130 to "
                "9.9999999999999999999999999999999999999E+125)");
  logical_fails("true", TT_AV_N, 0, "n", "n", "n: expected a number or a decimal string (N)");
  logical_fails("\"\"", TT_AV_N, 0, "n", "n", "n: not a valid decimal number");
}
END_TEST

/* The TypeMatrix scenario of the TableTheory contract (p0/11). */
START_TEST(logical_type_matrix) {
  static const struct {
    const char *attr;
    enum tt_av_type t;
    const char *in;
    enum tt_av_type stored;
    const char *out;
  } cases[] = {
      {"numberSet", TT_AV_NS, "[\"9007199254740993\", \"42\"]", TT_AV_NS,
       "[42,\"9007199254740993\"]"},
      {"binaryBlob", TT_AV_B, "\"AQID\"", TT_AV_B, "\"AQID\""},
      {"binarySet", TT_AV_BS, "[\"Bgc=\", \"BAU=\"]", TT_AV_BS, "[\"BAU=\",\"Bgc=\"]"},
      {"flag", TT_AV_BOOL, "true", TT_AV_BOOL, "true"},
      {"nothing", TT_AV_NULL, "null", TT_AV_NULL, "null"},
      {"items", TT_AV_L, "[\"alpha\", true, null, {\"nested\": \"value\"}]", TT_AV_L,
       "[\"alpha\",true,null,{\"nested\":\"value\"}]"},
      {"metadata", TT_AV_M, "{\"label\":\"meta\",\"active\":true,\"child\":{\"nested\":\"value\"}}",
       TT_AV_M, "{\"active\":true,\"child\":{\"nested\":\"value\"},\"label\":\"meta\"}"},
      {"emptyNumberSet", TT_AV_NS, "[]", TT_AV_NULL, "[]"},
      {"emptyBinarySet", TT_AV_BS, "[]", TT_AV_NULL, "[]"},
      {"optionalString", TT_AV_S, "\"\"", TT_AV_S, "\"\""},
      {"tags", TT_AV_SS, "[\"b\",\"a\"]", TT_AV_SS, "[\"a\",\"b\"]"},
      {"tags", TT_AV_SS, "null", TT_AV_NULL, "[]"},
      {"any", TT_LOGICAL_INFER, "{\"n\":[1.50,\"x\",false]}", TT_AV_M,
       "{\"n\":[1.5,\"x\",false]}"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    struct tt_av v = logical_ok(cases[i].in, cases[i].t, 0, cases[i].attr);
    ck_assert_msg(v.type == cases[i].stored, "%s stored as %s", cases[i].attr,
                  tt_av_type_name(v.type));
    out_is(&v, cases[i].t, 0, cases[i].out);
    tt_av_free(&v);
  }
  struct tt_av v = logical_ok("\"AQID\"", TT_AV_B, 0, "b");
  ck_assert_uint_eq(v.len, 3);
  ck_assert_int_eq(memcmp(v.u.bytes, "\x01\x02\x03", 3), 0);
  tt_av_free(&v);
}
END_TEST

START_TEST(logical_rejections) {
  logical_fails("[\"a\",\"b\",\"a\"]", TT_AV_SS, 0, "tags", "tags",
                "tags: a set cannot contain duplicate members");
  logical_fails("[1, \"1.0\"]", TT_AV_NS, 0, "scores", "scores",
                "scores: a set cannot contain duplicate members");
  logical_fails("[\"AQ==\", \"AQ==\"]", TT_AV_BS, 0, "blobs", "blobs",
                "blobs: a set cannot contain duplicate members");
  logical_fails("[\"a\", 1]", TT_AV_SS, 0, "tags", "tags[1]", "tags[1]: expected a string (SS member)");
  logical_fails("\"a\"", TT_AV_SS, 0, "tags", "tags", "tags: expected a JSON array of strings (SS)");
  logical_fails("42", TT_AV_S, 0, "nickname", "nickname", "nickname: expected a string (S)");
  logical_fails("\"AQI\"", TT_AV_B, 0, "blob", "blob",
                "blob: expected standard base64 with padding (B)");
  logical_fails("\"AQ-_\"", TT_AV_B, 0, "blob", "blob",
                "blob: expected standard base64 with padding (B)");
  logical_fails("\"yes\"", TT_AV_BOOL, 0, "flag", "flag", "flag: expected true or false (BOOL)");
  logical_fails("false", TT_AV_NULL, 0, "nothing", "nothing", "nothing: expected null (NULL)");
  logical_fails("[]", TT_AV_M, 0, "metadata", "metadata", "metadata: expected a JSON object (M)");
  logical_fails("{\"a\":[1,{\"b\":1e999}]}", TT_AV_M, 0, "metadata", "metadata.a[1].b",
                "metadata.a[1].b: number magnitude is outside DynamoDB's range (1E-130 to "
                "9.9999999999999999999999999999999999999E+125)");
  /* Nesting: 32 levels pass, 33 fail. */
  char deep[100];
  memset(deep, '[', 32);
  memset(deep + 32, ']', 32);
  deep[64] = '\0';
  struct tt_av v = logical_ok(deep, TT_AV_L, 0, "items");
  tt_av_free(&v);
  struct tt_json_opts o = {0, 40};
  json_t *j;
  struct tt_error err;
  memset(deep, '[', 33);
  memset(deep + 33, ']', 33);
  ck_assert_int_eq(tt_json_parse(deep, 66, &o, &j, &err), 0);
  ck_assert_int_eq(tt_logical_to_av(j, TT_AV_L, 0, "items", &v, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.message, "nested at most 32 levels"));
  json_decref(j);
}
END_TEST

START_TEST(logical_json_true) {
  /* Same document, different key order and spacing: same stored bytes. */
  struct tt_av a = logical_ok("{\"b\":1,\"a\":[true,null,{\"d\":\"x<y\",\"c\":1.50}]}", TT_AV_S,
                              TT_LOGICAL_JSON, "profile");
  struct tt_av b = logical_ok(" { \"a\" : [ true , null , { \"c\" : 1.5 , \"d\" : \"x<y\" } ] ,"
                              " \"b\" : 1e0 } ",
                              TT_AV_S, TT_LOGICAL_JSON, "profile");
  ck_assert_int_eq(a.type, TT_AV_S);
  ck_assert_str_eq(a.u.bytes, "{\"a\":[true,null,{\"c\":1.5,\"d\":\"x\\u003cy\"}],\"b\":1}");
  ck_assert(tt_av_equal(&a, &b));
  /* Reads parse it back. */
  out_is(&a, TT_AV_S, TT_LOGICAL_JSON, "{\"a\":[true,null,{\"c\":1.5,\"d\":\"x<y\"}],\"b\":1}");
  tt_av_free(&a);
  tt_av_free(&b);
  /* A string document is stored JSON-encoded; null is stored as NULL. */
  a = logical_ok("\"hi\"", TT_AV_S, TT_LOGICAL_JSON, "doc");
  ck_assert_str_eq(a.u.bytes, "\"hi\"");
  out_is(&a, TT_AV_S, TT_LOGICAL_JSON, "\"hi\"");
  tt_av_free(&a);
  a = logical_ok("null", TT_AV_S, TT_LOGICAL_JSON, "doc");
  ck_assert_int_eq(a.type, TT_AV_NULL);
  tt_av_free(&a);
  /* With M the value is stored natively... */
  a = logical_ok("{\"k\":\"v\"}", TT_AV_M, TT_LOGICAL_JSON, "profile");
  ck_assert_int_eq(a.type, TT_AV_M);
  out_is(&a, TT_AV_M, TT_LOGICAL_JSON, "{\"k\":\"v\"}");
  tt_av_free(&a);
  /* ...and an old S-encoded document still reads as JSON. */
  ck_assert_int_eq(tt_av_string(&a, "{\"k\": \"v\"}", 10), 0);
  out_is(&a, TT_AV_M, TT_LOGICAL_JSON, "{\"k\":\"v\"}");
  tt_av_free(&a);
  /* Not JSON at all: the plain string. */
  ck_assert_int_eq(tt_av_string(&a, "plain", 5), 0);
  out_is(&a, TT_AV_S, TT_LOGICAL_JSON, "\"plain\"");
  tt_av_free(&a);
}
END_TEST

/* The string writer before it scanned 16 bytes at a time, byte by byte:
 * the reference the fast writer must match exactly. */
static void ref_write_string(struct tt_buf *b, const unsigned char *u, size_t len, bool go) {
  static const char hex[] = "0123456789abcdef";
  tt_buf_append(b, "\"", 1);
  for (size_t i = 0; i < len; i++) {
    unsigned char c = u[i];
    char esc[7] = {0};
    if (c == '"' || c == '\\') {
      esc[0] = '\\';
      esc[1] = (char)c;
    } else if (c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t') {
      esc[0] = '\\';
      esc[1] = c == '\b' ? 'b' : c == '\f' ? 'f' : c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
    } else if (c < 0x20 || (go && (c == '<' || c == '>' || c == '&'))) {
      memcpy(esc, "\\u00", 4);
      esc[4] = hex[c >> 4];
      esc[5] = hex[c & 15];
    } else if (go && c == 0xE2 && i + 2 < len && u[i + 1] == 0x80 &&
               (u[i + 2] == 0xA8 || u[i + 2] == 0xA9)) {
      memcpy(esc, u[i + 2] == 0xA8 ? "\\u2028" : "\\u2029", 6);
      i += 2;
    }
    if (esc[0])
      tt_buf_puts(b, esc);
    else
      tt_buf_append(b, &c, 1);
  }
  tt_buf_append(b, "\"", 1);
}

/* Random strings over the bytes that matter (every escape, the U+2028
 * lead bytes, high bytes) at every length and alignment around the
 * 16-byte blocks: same bytes as the reference, in both modes. */
START_TEST(write_string_matches_reference) {
  static const unsigned char alphabet[] = {'a', 'x', ' ', '"', '\\', '/', '<', '>', '&', 0x00,
                                           0x01, 0x08, 0x09, 0x0a, 0x0c, 0x0d, 0x1f, 0x20,
                                           0x7f, 0x80, 0xA8, 0xA9, 0xE2, 0xff, 'Z', '~'};
  unsigned char text[80];
  uint32_t seed = 12345;
  struct tt_buf got, want;
  tt_buf_init(&got, 0);
  tt_buf_init(&want, 0);
  for (int round = 0; round < 20000; round++) {
    size_t len = (size_t)round % 70, off = (size_t)(round / 70) % 8;
    int plain_bias = round % 3; /* mostly-plain strings exercise the long skips */
    for (size_t i = 0; i < len; i++) {
      seed = seed * 1103515245u + 12345u;
      unsigned r = seed >> 16;
      text[off + i] = (plain_bias && r % 8 != 0) ? 'p' : alphabet[r % sizeof(alphabet)];
      if (r % 29 == 0 && i + 2 < len) { /* a whole U+2028 / U+2029 */
        text[off + i] = 0xE2;
        text[off + i + 1] = 0x80;
        text[off + i + 2] = (r & 64) ? 0xA8 : 0xA9;
        i += 2;
      }
    }
    for (int go = 0; go < 2; go++) {
      tt_buf_reset(&got);
      tt_buf_reset(&want);
      ref_write_string(&want, text + off, len, go);
      ck_assert_int_eq(
          tt_json_write_string(&got, (const char *)text + off, len, go ? TT_JSON_GO_ESCAPE : 0), 0);
      ck_assert_uint_eq(got.len, want.len);
      ck_assert_msg(memcmp(got.data, want.data, got.len) == 0, "round %d go %d: %s vs %s", round,
                    go, got.data, want.data);
    }
  }
  tt_buf_free(&got);
  tt_buf_free(&want);
}
END_TEST

/* A string that does not fit the cap fails and the buffer keeps a text to
 * discard; one that just fits passes. */
START_TEST(write_string_cap) {
  struct tt_buf b;
  tt_buf_init(&b, 20);
  ck_assert_int_eq(tt_json_write_string(&b, "0123456789abcdefgh", 18, 0), 0); /* 20 bytes */
  ck_assert_str_eq(b.data, "\"0123456789abcdefgh\"");
  tt_buf_reset(&b);
  ck_assert_int_eq(tt_json_write_string(&b, "0123456789abcdefghi", 19, 0), -1);
  tt_buf_reset(&b);
  ck_assert_int_eq(tt_json_write_string(&b, "0123456789abcdefg\n", 18, 0), -1); /* 21 */
  tt_buf_free(&b);
}
END_TEST

/* N texts on both sides of write_number's short-integer path: the JSON
 * number / string choice is tt_number_json_safe's. */
START_TEST(logical_number_choice) {
  static const char *const texts[] = {"0", "-0", "7", "-7", "42", "007", "999999999999999",
                                      "-999999999999999", "1000000000000000", "9007199254740992",
                                      "9007199254740993", "-9007199254740993", "0.5", "1E+3",
                                      "123456789012345678"};
  for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
    struct tt_av v;
    ck_assert_int_eq(tt_av_string(&v, texts[i], strlen(texts[i])), 0);
    v.type = TT_AV_N; /* the text as stored, canonical or not */
    char want[64];
    snprintf(want, sizeof(want), tt_number_json_safe(texts[i]) ? "%s" : "\"%s\"", texts[i]);
    struct tt_buf b;
    tt_buf_init(&b, 0);
    ck_assert_int_eq(tt_logical_write(&b, &v, TT_AV_N, 0), 0);
    ck_assert_str_eq(b.data, want);
    tt_buf_reset(&b);
    ck_assert_int_eq(tt_logical_write(&b, &v, TT_AV_N, TT_LOGICAL_N_STRING), 0);
    snprintf(want, sizeof(want), "\"%s\"", texts[i]);
    ck_assert_str_eq(b.data, want);
    tt_buf_free(&b);
    tt_av_free(&v);
  }
}
END_TEST

/* Long strings through the parser's and tt_json_string_new's block scans:
 * every text written comes back byte for byte, and one bad UTF-8 byte
 * anywhere (inside a block or after it) is refused. */
START_TEST(parse_strings_by_blocks) {
  static const char *const pieces[] = {"a", "b", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                                       "\"", "\\", "\n", "\x01", "/", "<", " ", "\xe2\x80\xa8"};
  char text[200];
  uint32_t seed = 99;
  struct tt_buf b;
  tt_buf_init(&b, 0);
  for (int round = 0; round < 3000; round++) {
    size_t len = 0, target = (size_t)round % 150;
    while (len < target) {
      seed = seed * 1103515245u + 12345u;
      unsigned r = seed >> 16;
      const char *pc = (r % 4) ? "x" : pieces[r % (sizeof(pieces) / sizeof(pieces[0]))];
      size_t n = strlen(pc);
      if (len + n > target)
        break;
      memcpy(text + len, pc, n);
      len += n;
    }
    tt_buf_reset(&b);
    ck_assert_int_eq(tt_json_write_string(&b, text, len, (round & 1) ? TT_JSON_GO_ESCAPE : 0), 0);
    json_t *j = NULL;
    struct tt_error err;
    ck_assert_int_eq(tt_json_parse(b.data, b.len, NULL, &j, &err), 0);
    size_t got_len;
    const char *got = tt_json_string_text(j, &got_len);
    ck_assert_uint_eq(got_len, len);
    ck_assert_int_eq(memcmp(got, text, len), 0);
    json_decref(j);
    j = tt_json_string_new(text, len);
    ck_assert_ptr_nonnull(j);
    json_decref(j);
    if (len == 0)
      continue;
    /* The same text with one byte made invalid. */
    size_t at = (size_t)(seed >> 8) % len;
    text[at] = (char)0xff;
    ck_assert_ptr_null(tt_json_string_new(text, len));
    /* Written with 0xff raw (it needs no escape): the parser stops at it. */
    tt_buf_reset(&b);
    tt_json_write_string(&b, text, len, 0);
    ck_assert_int_eq(tt_json_parse(b.data, b.len, NULL, &j, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.message, "UTF-8"));
  }
  tt_buf_free(&b);
}
END_TEST

/* A plain jansson tree (a DynamoDB answer) read by the codec: strings
 * beginning with NUL are data, not markers, once marked. */
START_TEST(plain_tree_strings_beginning_with_nul) {
  static const char text[] =
      "{\"Items\":[{\"a\":{\"S\":\"\\u0000Sabc\"},\"b\":{\"S\":\"\\u0000N12\"},"
      "\"c\":{\"SS\":[\"\\u0000\",\"x\"]},\"d\":{\"S\":\"plain\"},\"e\":{\"N\":\"7\"}}],"
      "\"Count\":1}";
  json_error_t jerr;
  json_t *j = json_loadb(text, sizeof(text) - 1, JSON_ALLOW_NUL, &jerr);
  ck_assert_ptr_nonnull(j);
  ck_assert_int_eq(tt_json_mark_plain_strings(j), 0);
  /* Numbers of the plain tree stay jansson numbers. */
  ck_assert(json_is_integer(json_object_get(j, "Count")));
  struct tt_av item;
  struct tt_error err;
  ck_assert_int_eq(
      tt_ddb_item_from_json(json_array_get(json_object_get(j, "Items"), 0), "Item", &item, &err),
      0);
  const struct tt_av *a = tt_av_map_get(&item, "a"), *b = tt_av_map_get(&item, "b");
  const struct tt_av *c = tt_av_map_get(&item, "c"), *d = tt_av_map_get(&item, "d");
  ck_assert_uint_eq(a->len, 5);
  ck_assert_int_eq(memcmp(a->u.bytes, "\0Sabc", 5), 0);
  ck_assert_int_eq(b->type, TT_AV_S);
  ck_assert_uint_eq(b->len, 4);
  ck_assert_int_eq(memcmp(b->u.bytes, "\0N12", 4), 0);
  ck_assert_uint_eq(c->len, 2);
  ck_assert_uint_eq(c->u.elems[0].len, 1);
  ck_assert_str_eq(d->u.bytes, "plain");
  ck_assert_str_eq(tt_av_map_get(&item, "e")->u.bytes, "7");
  tt_av_free(&item);
  json_decref(j);
}
END_TEST

static Suite *json_suite(void) {
  Suite *s = suite_create("value_json");
  TCase *tc = tcase_create("json_exact");
  tcase_add_test(tc, dump_marked_tree);
  tcase_add_test(tc, exact_numbers_round_trip);
  tcase_add_test(tc, exact_integer_values);
  tcase_add_test(tc, exact_strings);
  tcase_add_test(tc, exact_sort_keys);
  tcase_add_test(tc, exact_rejections);
  tcase_add_test(tc, base64_vectors);
  tcase_add_test(tc, write_string_matches_reference);
  tcase_add_test(tc, write_string_cap);
  tcase_add_test(tc, parse_strings_by_blocks);
  suite_add_tcase(s, tc);
  tc = tcase_create("codec_ddb");
  tcase_add_test(tc, ddb_round_trip);
  tcase_add_test(tc, ddb_rejections);
  tcase_add_test(tc, plain_tree_strings_beginning_with_nul);
  suite_add_tcase(s, tc);
  tc = tcase_create("codec_logical");
  tcase_add_test(tc, logical_numbers_exact);
  tcase_add_test(tc, logical_type_matrix);
  tcase_add_test(tc, logical_rejections);
  tcase_add_test(tc, logical_json_true);
  tcase_add_test(tc, logical_number_choice);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(json_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
