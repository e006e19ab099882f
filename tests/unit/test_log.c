/* SPDX-License-Identifier: Apache-2.0 */
/* test_log.c -- log line encoding: valid JSON, escaping, levels, truncation. */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "obs/log.h"

static char captured[8192];
static size_t captured_len;
static int lines;

static void capture(const char *line, size_t len, void *arg) {
  (void)arg;
  memcpy(captured, line, len);
  captured[len] = '\0';
  captured_len = len;
  lines++;
}

static void setup(void) {
  lines = 0;
  captured[0] = '\0';
  tt_log_set_writer(capture, NULL);
  tt_log_set_level(TT_LOG_INFO);
}

START_TEST(line_is_one_json_object) {
  struct tt_log_line l;
  tt_log_begin(&l, TT_LOG_INFO, "request.completed");
  tt_log_str(&l, "request_id", "abc");
  tt_log_int(&l, "status", 404);
  tt_log_ms(&l, "duration_ms", 1.23456);
  tt_log_end(&l);
  ck_assert_int_eq(lines, 1);
  ck_assert_int_eq(captured[captured_len - 1], '\n');
  json_error_t e;
  json_t *v = json_loads(captured, 0, &e);
  ck_assert_ptr_nonnull(v);
  ck_assert_str_eq(json_string_value(json_object_get(v, "level")), "info");
  ck_assert_str_eq(json_string_value(json_object_get(v, "event")), "request.completed");
  ck_assert_int_eq(json_integer_value(json_object_get(v, "status")), 404);
  ck_assert_double_eq_tol(json_real_value(json_object_get(v, "duration_ms")), 1.235, 1e-9);
  const char *ts = json_string_value(json_object_get(v, "ts"));
  ck_assert_uint_eq(strlen(ts), 27); /* 2026-01-01T00:00:00.000000Z */
  ck_assert_int_eq(ts[26], 'Z');
  json_decref(v);
}
END_TEST

START_TEST(control_characters_are_escaped) {
  struct tt_log_line l;
  tt_log_begin(&l, TT_LOG_WARN, "x");
  tt_log_str(&l, "route", "a\"b\n{\"forged\":1}\x7f");
  tt_log_end(&l);
  ck_assert_ptr_eq(strchr(captured, 0x0a), captured + captured_len - 1); /* one line */
  json_t *v = json_loads(captured, 0, NULL);
  ck_assert_ptr_nonnull(v);
  ck_assert_str_eq(json_string_value(json_object_get(v, "route")), "a\"b\n{\"forged\":1}\x7f");
  ck_assert_ptr_null(json_object_get(v, "forged"));
  json_decref(v);
}
END_TEST

START_TEST(levels_filter) {
  tt_log_set_level(TT_LOG_WARN);
  tt_log_event(TT_LOG_INFO, "quiet", "k", "v", NULL);
  ck_assert_int_eq(lines, 0);
  tt_log_event(TT_LOG_ERROR, "loud", "k", "v", NULL);
  ck_assert_int_eq(lines, 1);
  enum tt_log_level lv;
  ck_assert_int_eq(tt_log_level_parse("debug", &lv), 0);
  ck_assert_int_eq(lv, TT_LOG_DEBUG);
  ck_assert_int_eq(tt_log_level_parse("verbose", &lv), -1);
}
END_TEST

START_TEST(lifecycle_notices_pass_every_level) {
  tt_log_set_level(TT_LOG_ERROR);
  tt_log_event(TT_LOG_WARN, "quiet", NULL);
  ck_assert_int_eq(lines, 0);
  tt_log_event(TT_LOG_NOTICE, "daemon.ready", "listen", "127.0.0.1:1", NULL);
  ck_assert_int_eq(lines, 1);
  json_t *v = json_loads(captured, 0, NULL);
  ck_assert_ptr_nonnull(v);
  ck_assert_str_eq(json_string_value(json_object_get(v, "level")), "notice");
  json_decref(v);
  /* A lifecycle notice is not a level an operator can choose. */
  enum tt_log_level lv;
  ck_assert_int_eq(tt_log_level_parse("notice", &lv), -1);
}
END_TEST

START_TEST(long_lines_are_truncated_but_valid) {
  char big[5000];
  memset(big, 'x', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  struct tt_log_line l;
  tt_log_begin(&l, TT_LOG_INFO, "big");
  tt_log_str(&l, "a", "first");
  tt_log_str(&l, "b", big);
  tt_log_int(&l, "c", 7);
  tt_log_end(&l);
  json_t *v = json_loads(captured, 0, NULL);
  ck_assert_ptr_nonnull(v);
  ck_assert(json_is_true(json_object_get(v, "truncated")));
  ck_assert_str_eq(json_string_value(json_object_get(v, "a")), "first");
  ck_assert_ptr_null(json_object_get(v, "b"));
  json_decref(v);
}
END_TEST

int main(void) {
  Suite *s = suite_create("log");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, NULL);
  tcase_add_test(tc, line_is_one_json_object);
  tcase_add_test(tc, control_characters_are_escaped);
  tcase_add_test(tc, levels_filter);
  tcase_add_test(tc, lifecycle_notices_pass_every_level);
  tcase_add_test(tc, long_lines_are_truncated_but_valid);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
