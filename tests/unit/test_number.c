/* SPDX-License-Identifier: Apache-2.0 */
/* test_number.c -- exact decimal canonicalization, limits, comparison and
 * addition of DynamoDB numbers. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "value/number.h"

static const char *canon(const char *in, char *out) {
  struct tt_error err;
  tt_error_clear(&err);
  if (tt_number_canonical(in, strlen(in), out, TT_NUMBER_TEXT_MAX, "n", &err) != 0)
    return NULL;
  return out;
}

static const char *canon_err(const char *in, struct tt_error *err) {
  char out[TT_NUMBER_TEXT_MAX];
  tt_error_clear(err);
  ck_assert_int_eq(tt_number_canonical(in, strlen(in), out, sizeof(out), "price", err), -1);
  return err->message;
}

START_TEST(canonical_known_answers) {
  static const char *const cases[][2] = {
      {"12345678901234567890123456789012345678", "12345678901234567890123456789012345678"},
      {"9007199254740993", "9007199254740993"},
      {"0.1", "0.1"},
      {"1.50", "1.5"},
      {"+007", "7"},
      {"-0", "0"},
      {"-0.000", "0"},
      {"0e10", "0"},
      {"1E+2", "100"},
      {"1e2", "100"},
      {"100e-2", "1"},
      {".5", "0.5"},
      {"5.", "5"},
      {"-12.3400e1", "-123.4"},
      {"1234567890.125", "1234567890.125"},
      {"0.12345678901234567", "0.12345678901234567"},
      {"1000000000000000000000000000000000000000", "1000000000000000000000000000000000000000"},
      {"0.000000000000000000000000000000000000000000000000001", "0.000000000000000000000000000000000000000000000000001"},
  };
  char out[TT_NUMBER_TEXT_MAX];
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    const char *got = canon(cases[i][0], out);
    ck_assert_msg(got != NULL, "rejected %s", cases[i][0]);
    ck_assert_str_eq(got, cases[i][1]);
  }
}
END_TEST

START_TEST(canonical_extremes) {
  char out[TT_NUMBER_TEXT_MAX], want[TT_NUMBER_TEXT_MAX];
  /* -1E-130: "-0." then 129 zeros then 1. */
  memcpy(want, "-0.", 3);
  memset(want + 3, '0', 129);
  memcpy(want + 132, "1", 2);
  ck_assert_str_eq(canon("-1E-130", out), want);
  /* The largest magnitude: 38 nines then 88 zeros (126 integer digits). */
  memset(want, '9', 38);
  memset(want + 38, '0', 88);
  want[126] = '\0';
  ck_assert_str_eq(canon("9.9999999999999999999999999999999999999E+125", out), want);
  ck_assert_str_eq(canon("-9.9999999999999999999999999999999999999E+125", out) + 1, want);
  /* The smallest 38-digit one fits the documented text bound. */
  ck_assert_ptr_nonnull(canon("-1.2345678901234567890123456789012345678E-130", out));
  ck_assert_uint_eq(strlen(out), 1 + 2 + 129 + 38);
}
END_TEST

START_TEST(canonical_rejections) {
  struct tt_error err;
  ck_assert_str_eq(canon_err("123456789012345678901234567890123456789", &err),
                   "price: a number can have at most 38 significant digits");
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
  ck_assert_str_eq(err.field, "price");
  canon_err("1.0000000000000000000000000000000000000001", &err);
  ck_assert_str_eq(err.message, "price: a number can have at most 38 significant digits");
  ck_assert_ptr_nonnull(strstr(canon_err("1E-131", &err), "outside DynamoDB's range"));
  ck_assert_ptr_nonnull(strstr(canon_err("0.1E-130", &err), "outside DynamoDB's range"));
  ck_assert_ptr_nonnull(strstr(canon_err("1E+126", &err), "outside DynamoDB's range"));
  ck_assert_ptr_nonnull(strstr(canon_err("10E+125", &err), "outside DynamoDB's range"));
  ck_assert_ptr_nonnull(strstr(canon_err("1e99999999999999999999999", &err), "range"));
  static const char *const bad[] = {"", "-", "+", "abc", "1e", "1e+", "1.2.3", "1 ", " 1",
                                    ".", "-.e1", "0x10", "1,5", "NaN", "Infinity"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    ck_assert_str_eq(canon_err(bad[i], &err), "price: not a valid decimal number");
}
END_TEST

START_TEST(compare_numeric) {
  ck_assert_int_lt(tt_number_compare("1", "2"), 0);
  ck_assert_int_gt(tt_number_compare("10", "9.99"), 0);
  ck_assert_int_lt(tt_number_compare("-2", "-1"), 0);
  ck_assert_int_lt(tt_number_compare("-1", "0"), 0);
  ck_assert_int_eq(tt_number_compare("100", "1E+2"), 0);
  ck_assert_int_eq(tt_number_compare("0", "-0"), 0);
  ck_assert_int_lt(tt_number_compare("0.1", "0.10000000000000000000000000000000000001"), 0);
  ck_assert_int_lt(tt_number_compare("9007199254740992", "9007199254740993"), 0);
  ck_assert_int_gt(tt_number_compare("0.001", "-1000"), 0);
  ck_assert_int_lt(tt_number_compare("-1000", "-0.001"), 0);
  ck_assert_int_gt(tt_number_compare("12345678901234567890123456789012345678",
                                     "12345678901234567890123456789012345677"), 0);
}
END_TEST

static void add_ok(const char *a, const char *b, int sub, const char *want) {
  char out[TT_NUMBER_TEXT_MAX];
  struct tt_error err;
  tt_error_clear(&err);
  ck_assert_msg(tt_number_add(a, b, sub, out, sizeof(out), &err) == 0, "%s %c %s: %s", a,
                sub ? '-' : '+', b, err.message);
  ck_assert_str_eq(out, want);
}

static void add_fails(const char *a, const char *b, int sub, const char *msg_part) {
  char out[TT_NUMBER_TEXT_MAX];
  struct tt_error err;
  tt_error_clear(&err);
  ck_assert_int_eq(tt_number_add(a, b, sub, out, sizeof(out), &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
  ck_assert_ptr_nonnull(strstr(err.message, msg_part));
}

START_TEST(add_exact) {
  add_ok("1", "2", 0, "3");
  add_ok("0.1", "0.2", 0, "0.3"); /* a double says 0.30000000000000004 */
  add_ok("9007199254740993", "1", 0, "9007199254740994");
  add_ok("-5", "3", 0, "-2");
  add_ok("5", "5", 1, "0");
  add_ok("1", "0.001", 1, "0.999");
  add_ok("-1", "-1", 1, "0");
  add_ok("0", "-7.5", 0, "-7.5");
  add_ok("99999999999999999999999999999999999999", "1", 0,
         "100000000000000000000000000000000000000");
  add_ok("12345678901234567890123456789012345678", "-12345678901234567890123456789012345677",
         0, "1");
  add_fails("99999999999999999999999999999999999999", "0.1", 0, "38 significant digits");
  add_fails("1E+125", "1E-130", 0, "38 significant digits");
  add_fails("9.9999999999999999999999999999999999999E+125", "1E+88", 0, "range");
  add_fails("1.1E-130", "1E-130", 1, "range");
}
END_TEST

START_TEST(int64_and_json_safety) {
  int64_t v = 0;
  char buf[32];
  ck_assert_int_eq(tt_number_to_int64("9223372036854775807", &v), 0);
  ck_assert(v == INT64_MAX);
  ck_assert_int_eq(tt_number_to_int64("-9223372036854775808", &v), 0);
  ck_assert(v == INT64_MIN);
  ck_assert_int_eq(tt_number_to_int64("9223372036854775808", &v), -1);
  ck_assert_int_eq(tt_number_to_int64("1.5", &v), -1);
  ck_assert_int_eq(tt_number_to_int64("1000", &v), 0);
  ck_assert(v == 1000);
  ck_assert_int_eq(tt_number_from_int64(INT64_MIN, buf, sizeof(buf)), 20);
  ck_assert_str_eq(buf, "-9223372036854775808");

  ck_assert(tt_number_json_safe("9007199254740992"));
  ck_assert(tt_number_json_safe("-9007199254740992"));
  ck_assert(!tt_number_json_safe("9007199254740993"));
  ck_assert(!tt_number_json_safe("100000000000000000000"));
  ck_assert(tt_number_json_safe("0"));
  ck_assert(tt_number_json_safe("0.1"));
  ck_assert(tt_number_json_safe("1234567890.125"));
  ck_assert(tt_number_json_safe("0.123456789012345"));
  ck_assert(!tt_number_json_safe("0.1234567890123456"));
  ck_assert(!tt_number_json_safe("0.12345678901234567"));
}
END_TEST

START_TEST(number_size) {
  /* One byte per two significant digits, plus one; zeros trimmed. */
  ck_assert_uint_eq(tt_number_size("12345"), 4);
  ck_assert_uint_eq(tt_number_size("0.0012"), 2);
  ck_assert_uint_eq(tt_number_size("1200000"), 2);
  ck_assert_uint_eq(tt_number_size("-1"), 2);
  ck_assert_uint_eq(tt_number_size("12345678901234567890123456789012345678"), 20);
}
END_TEST

static Suite *number_suite(void) {
  Suite *s = suite_create("number");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, canonical_known_answers);
  tcase_add_test(tc, canonical_extremes);
  tcase_add_test(tc, canonical_rejections);
  tcase_add_test(tc, compare_numeric);
  tcase_add_test(tc, add_exact);
  tcase_add_test(tc, int64_and_json_safety);
  tcase_add_test(tc, number_size);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(number_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
