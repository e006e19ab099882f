/* SPDX-License-Identifier: Apache-2.0 */
/* test_envelope.c -- check suite for TableTheory's encrypted-attribute envelope:
 * the plaintext JSON form of every type, AES-256-GCM with a fixed key, and
 * the envelope parser's refusals. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "orm/envelope.h"
#include "value/codec_ddb.h"

static const unsigned char KEY[32] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                                      11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                                      22, 23, 24, 25, 26, 27, 28, 29, 30, 31};
static const unsigned char NONCE[12] = {100, 101, 102, 103, 104, 105,
                                        106, 107, 108, 109, 110, 111};

/* A value from DynamoDB JSON text. */
static struct tt_av av(const char *ddb) {
  json_error_t je;
  json_t *j = json_loads(ddb, 0, &je);
  ck_assert_msg(j != NULL, "%s", je.text);
  struct tt_av v;
  struct tt_error err;
  ck_assert_msg(tt_ddb_value_from_json(j, "v", &v, &err) == 0, "%s", err.message);
  json_decref(j);
  return v;
}

static char *plaintext(const char *ddb) {
  struct tt_av v = av(ddb);
  struct tt_buf b;
  tt_buf_init(&b, 0);
  ck_assert_int_eq(tt_envelope_plaintext(&b, &v), 0);
  tt_av_free(&v);
  ck_assert_int_eq(tt_buf_append(&b, "", 1), 0);
  return tt_buf_steal(&b, NULL);
}

static void check_plain(const char *ddb, const char *want) {
  char *got = plaintext(ddb);
  ck_assert_str_eq(got, want);
  /* and back */
  struct tt_av v = av(ddb), back;
  struct tt_error err;
  ck_assert_msg(tt_envelope_value_from_plaintext(got, strlen(got), "secret", &back, &err) == 0,
                "%s", err.message);
  ck_assert(tt_av_equal(&v, &back));
  tt_av_free(&v);
  tt_av_free(&back);
  free(got);
}

START_TEST(plaintext_forms) {
  check_plain("{\"S\":\"swordfish\"}", "{\"t\":\"S\",\"s\":\"swordfish\"}");
  check_plain("{\"S\":\"\"}", "{\"t\":\"S\",\"s\":\"\"}");
  check_plain("{\"S\":\"<a&b>\\n\\u0001\\u2028\\\"\"}",
              "{\"t\":\"S\",\"s\":\"\\u003ca\\u0026b\\u003e\\n\\u0001\\u2028\\\"\"}");
  check_plain("{\"N\":\"-1.5\"}", "{\"t\":\"N\",\"n\":\"-1.5\"}");
  check_plain("{\"B\":\"AAE=\"}", "{\"t\":\"B\",\"b\":\"AAE=\"}");
  check_plain("{\"BOOL\":false}", "{\"t\":\"BOOL\",\"bool\":false}");
  check_plain("{\"BOOL\":true}", "{\"t\":\"BOOL\",\"bool\":true}");
  check_plain("{\"NULL\":true}", "{\"t\":\"NULL\",\"null\":true}");
  check_plain("{\"L\":[]}", "{\"t\":\"L\"}");
  check_plain("{\"M\":{}}", "{\"t\":\"M\"}");
  check_plain("{\"SS\":[\"y\",\"x\"]}", "{\"t\":\"SS\",\"ss\":[\"x\",\"y\"]}");
  check_plain("{\"NS\":[\"2\",\"10\"]}", "{\"t\":\"NS\",\"ns\":[\"2\",\"10\"]}");
  check_plain("{\"BS\":[\"AQ==\"]}", "{\"t\":\"BS\",\"bs\":[\"AQ==\"]}");
  check_plain("{\"M\":{\"b\":{\"SS\":[\"x\",\"y\"]},\"a\":{\"L\":[{\"N\":\"1.5\"},{\"NULL\":true},"
              "{\"BOOL\":false}]},\"d\":{\"S\":\"<&>\"},\"c\":{\"B\":\"AAE=\"}}}",
              "{\"t\":\"M\",\"m\":{\"a\":{\"t\":\"L\",\"l\":[{\"t\":\"N\",\"n\":\"1.5\"},"
              "{\"t\":\"NULL\",\"null\":true},{\"t\":\"BOOL\",\"bool\":false}]},"
              "\"b\":{\"t\":\"SS\",\"ss\":[\"x\",\"y\"]},\"c\":{\"t\":\"B\",\"b\":\"AAE=\"},"
              "\"d\":{\"t\":\"S\",\"s\":\"\\u003c\\u0026\\u003e\"}}}");
}
END_TEST

START_TEST(plaintext_go_defaults) {
  /* Go's decoder reads missing members as zero values. */
  struct tt_av v;
  struct tt_error err;
  ck_assert_int_eq(tt_envelope_value_from_plaintext("{\"t\":\"N\"}", 9, "x", &v, &err), 0);
  ck_assert_int_eq(v.type, TT_AV_N);
  ck_assert_str_eq(v.u.bytes, "0");
  tt_av_free(&v);
  ck_assert_int_eq(tt_envelope_value_from_plaintext("{\"t\":\"S\"}", 9, "x", &v, &err), 0);
  ck_assert_int_eq(v.type, TT_AV_S);
  ck_assert_uint_eq(v.len, 0);
  tt_av_free(&v);
  static const char *const bad[] = {"", "[]", "{}", "{\"t\":\"Q\"}", "{\"t\":\"S\",\"s\":1}",
                                    "{\"t\":\"N\",\"n\":\"x\"}", "{\"t\":\"B\",\"b\":\"!\"}",
                                    "{\"t\":\"SS\",\"ss\":[\"a\",\"a\"]}", "{\"t\":\"L\",\"l\":[1]}"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    ck_assert_int_eq(tt_envelope_value_from_plaintext(bad[i], strlen(bad[i]), "x", &v, &err), -1);
    ck_assert_int_eq(err.code, TT_ERR_INVALID_ENCRYPTED_ENVELOPE);
    ck_assert_int_eq(v.type, TT_AV_NULL);
  }
}
END_TEST

static const char KAT_CT_HEX[] =
    "3339aa4443cb05bc12402ccae047198a2db0626ce21f9b50da90a05805f6f46df62d4761edbf31e47e";

static void hex(const char *h, unsigned char *out, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned x;
    ck_assert_int_eq(sscanf(h + 2 * i, "%2x", &x), 1);
    out[i] = (unsigned char)x;
  }
}

START_TEST(seal_known_answer_and_open) {
  /* Known answer computed independently (Python cryptography AESGCM) for
   * plaintext {"t":"S","s":"swordfish"} and AAD
   * "theorydb:encrypted:v1|attr=secret". */
  struct tt_av v = av("{\"S\":\"swordfish\"}"), env, back;
  struct tt_error err;
  ck_assert_int_eq(tt_envelope_seal(&v, "secret", 6, KEY, NONCE, "EDK", 3, &env, &err), 0);
  ck_assert_int_eq(env.type, TT_AV_M);
  ck_assert_uint_eq(env.len, 4);
  const struct tt_av *ct = tt_av_map_get(&env, "ct");
  unsigned char want[41];
  hex(KAT_CT_HEX, want, sizeof(want));
  ck_assert_uint_eq(ct->len, sizeof(want));
  ck_assert(memcmp(ct->u.bytes, want, sizeof(want)) == 0);
  ck_assert_str_eq(tt_av_map_get(&env, "v")->u.bytes, "1");
  ck_assert_int_eq(tt_av_map_get(&env, "edk")->type, TT_AV_B);
  struct tt_envelope_parts p;
  ck_assert_int_eq(tt_envelope_parse(&env, "secret", &p, &err), 0);
  ck_assert_uint_eq(p.edk_len, 3);
  ck_assert_int_eq(tt_envelope_open(&p, "secret", 6, KEY, &back, &err), 0);
  ck_assert(tt_av_equal(&v, &back));
  tt_av_free(&back);
  /* Another attribute name (AAD) or key does not authenticate. */
  ck_assert_int_eq(tt_envelope_open(&p, "other", 5, KEY, &back, &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_INVALID_ENCRYPTED_ENVELOPE);
  unsigned char k2[32];
  memcpy(k2, KEY, 32);
  k2[0] ^= 1;
  ck_assert_int_eq(tt_envelope_open(&p, "secret", 6, k2, &back, &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_INVALID_ENCRYPTED_ENVELOPE);
  tt_av_free(&env);
  tt_av_free(&v);
}
END_TEST

START_TEST(round_trip_every_type) {
  static const char *const vals[] = {
      "{\"S\":\"\"}", "{\"N\":\"12345678901234567890.5\"}", "{\"B\":\"\"}", "{\"NULL\":true}",
      "{\"L\":[{\"M\":{\"k\":{\"NS\":[\"1\",\"2\"]}}},{\"BS\":[\"AA==\",\"AQ==\"]}]}"};
  for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
    struct tt_av v = av(vals[i]), env, back;
    struct tt_envelope_parts p;
    struct tt_error err;
    ck_assert_int_eq(tt_envelope_seal(&v, "a", 1, KEY, NONCE, "E", 1, &env, &err), 0);
    ck_assert_int_eq(tt_envelope_parse(&env, "a", &p, &err), 0);
    ck_assert_int_eq(tt_envelope_open(&p, "a", 1, KEY, &back, &err), 0);
    ck_assert(tt_av_equal(&v, &back));
    tt_av_free(&v);
    tt_av_free(&env);
    tt_av_free(&back);
  }
}
END_TEST

START_TEST(parse_refusals) {
  static const char *const bad[] = {
      "{\"S\":\"plain\"}",
      "{\"M\":{}}",
      "{\"M\":{\"v\":{\"N\":\"2\"},\"edk\":{\"B\":\"AQ==\"},\"nonce\":{\"B\":\"AAAAAAAAAAAAAAAA\"},"
      "\"ct\":{\"B\":\"AAAAAAAAAAAAAAAAAAAAAA==\"}}}",
      "{\"M\":{\"v\":{\"S\":\"1\"},\"edk\":{\"B\":\"AQ==\"},\"nonce\":{\"B\":\"AAAAAAAAAAAAAAAA\"},"
      "\"ct\":{\"B\":\"AAAAAAAAAAAAAAAAAAAAAA==\"}}}",
      "{\"M\":{\"v\":{\"N\":\"1\"},\"nonce\":{\"B\":\"AAAAAAAAAAAAAAAA\"},"
      "\"ct\":{\"B\":\"AAAAAAAAAAAAAAAAAAAAAA==\"}}}",
      "{\"M\":{\"v\":{\"N\":\"1\"},\"edk\":{\"B\":\"AQ==\"},\"nonce\":{\"B\":\"AAAA\"},"
      "\"ct\":{\"B\":\"AAAAAAAAAAAAAAAAAAAAAA==\"}}}",
      "{\"M\":{\"v\":{\"N\":\"1\"},\"edk\":{\"B\":\"AQ==\"},\"nonce\":{\"B\":\"AAAAAAAAAAAAAAAA\"},"
      "\"ct\":{\"B\":\"AAAA\"}}}",
      "{\"M\":{\"v\":{\"N\":\"1\"},\"edk\":{\"S\":\"x\"},\"nonce\":{\"B\":\"AAAAAAAAAAAAAAAA\"},"
      "\"ct\":{\"B\":\"AAAAAAAAAAAAAAAAAAAAAA==\"}}}",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    struct tt_av v = av(bad[i]);
    struct tt_envelope_parts p;
    struct tt_error err;
    ck_assert_msg(tt_envelope_parse(&v, "secret", &p, &err) == -1, "case %zu", i);
    ck_assert_int_eq(err.code, TT_ERR_INVALID_ENCRYPTED_ENVELOPE);
    ck_assert_str_eq(err.field, "secret");
    tt_av_free(&v);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("envelope");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, plaintext_forms);
  tcase_add_test(tc, plaintext_go_defaults);
  tcase_add_test(tc, seal_known_answer_and_open);
  tcase_add_test(tc, round_trip_every_type);
  tcase_add_test(tc, parse_refusals);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
