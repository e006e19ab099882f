/* SPDX-License-Identifier: Apache-2.0 */
/* test_errors.c -- error codes, statuses and the error envelope. */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "api/errors.h"

START_TEST(statuses_follow_the_contract) {
  ck_assert_uint_eq(tt_api_error_status(TT_ERR_VALIDATION), 400);
  ck_assert_uint_eq(tt_api_error_status(TT_ERR_INVALID_CURSOR), 400);
  ck_assert_uint_eq(tt_api_error_status(TT_ERR_UNAUTHORIZED), 401);
  ck_assert_uint_eq(tt_api_error_status(TT_ERR_ROUTE_NOT_FOUND), 404);
  ck_assert_uint_eq(tt_api_error_status(TT_ERR_METHOD_NOT_ALLOWED), 405);
  ck_assert_uint_eq(tt_api_error_status(TT_ERR_VERSION_CONFLICT), 409);
  ck_assert_uint_eq(tt_api_error_status(TT_ERR_PAYLOAD_TOO_LARGE), 413);
  ck_assert_uint_eq(tt_api_error_status(TT_ERR_UNSUPPORTED_MEDIA), 415);
  ck_assert_uint_eq(tt_api_error_status(TT_ERR_THROTTLED), 429);
  ck_assert_uint_eq(tt_api_error_status(TT_ERR_DRAINING), 503);
  ck_assert_uint_eq(tt_api_error_status(TT_ERR_BACKEND_TIMEOUT), 504);
  ck_assert_uint_eq(tt_api_error_status(TT_ERR_INTERNAL), 500);
  ck_assert_str_eq(tt_error_code_name(TT_ERR_UNSUPPORTED_MEDIA), "UnsupportedMediaType");
  ck_assert(tt_error_code_retryable(TT_ERR_THROTTLED));
  ck_assert(!tt_error_code_retryable(TT_ERR_CONDITION_FAILED));
}
END_TEST

START_TEST(envelope_shape) {
  struct tt_error err;
  tt_error_set(&err, TT_ERR_VALIDATION, "items[3].email", "email must be a \"string\"");
  json_t *extra = json_pack("{s:i}", "index", 3);
  struct tt_buf out;
  tt_buf_init(&out, 0);
  ck_assert_int_eq(tt_api_error_body(&out, &err, "req-1", extra), 0);
  json_t *v = json_loads(out.data, 0, NULL);
  ck_assert_ptr_nonnull(v);
  json_t *e = json_object_get(v, "error");
  ck_assert_str_eq(json_string_value(json_object_get(e, "code")), "ValidationError");
  ck_assert_str_eq(json_string_value(json_object_get(e, "message")), "email must be a \"string\"");
  ck_assert(json_is_false(json_object_get(e, "retryable")));
  json_t *d = json_object_get(e, "details");
  ck_assert_str_eq(json_string_value(json_object_get(d, "field")), "items[3].email");
  ck_assert_int_eq(json_integer_value(json_object_get(d, "index")), 3);
  ck_assert_str_eq(json_string_value(json_object_get(v, "request_id")), "req-1");
  json_decref(v);
  json_decref(extra);
  tt_buf_free(&out);
}
END_TEST

START_TEST(envelope_without_field_has_empty_details) {
  struct tt_error err;
  tt_error_set(&err, TT_ERR_DRAINING, NULL, "shutting down");
  struct tt_buf out;
  tt_buf_init(&out, 0);
  ck_assert_int_eq(tt_api_error_body(&out, &err, "r", NULL), 0);
  ck_assert_str_eq(out.data, "{\"error\":{\"code\":\"Draining\",\"message\":\"shutting down\","
                             "\"retryable\":true,\"details\":{}},\"request_id\":\"r\"}");
  tt_buf_free(&out);
}
END_TEST

int main(void) {
  Suite *s = suite_create("errors");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, statuses_follow_the_contract);
  tcase_add_test(tc, envelope_shape);
  tcase_add_test(tc, envelope_without_field_has_empty_details);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
