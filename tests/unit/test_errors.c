/* SPDX-License-Identifier: Apache-2.0 */
/* test_errors.c -- error codes, statuses and the error envelope. */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
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
  /* DMS write policies (orm/policy.h). */
  ck_assert_uint_eq(tt_api_error_status(TT_ERR_IMMUTABLE_MODEL_MUTATION), 409);
  ck_assert_uint_eq(tt_api_error_status(TT_ERR_PROTECTED_FIELD_MUTATION), 409);
  ck_assert_str_eq(tt_error_code_name(TT_ERR_IMMUTABLE_MODEL_MUTATION), "ImmutableModelMutation");
  ck_assert_str_eq(tt_error_code_name(TT_ERR_PROTECTED_FIELD_MUTATION), "ProtectedFieldMutation");
  ck_assert(!tt_error_code_retryable(TT_ERR_PROTECTED_FIELD_MUTATION));
  /* Model replaces (model/registry.h). */
  ck_assert_uint_eq(tt_api_error_status(TT_ERR_UNSAFE_MODEL_CHANGE), 409);
  ck_assert_str_eq(tt_error_code_name(TT_ERR_UNSAFE_MODEL_CHANGE), "UnsafeModelChange");
  ck_assert(!tt_error_code_retryable(TT_ERR_UNSAFE_MODEL_CHANGE));
  ck_assert_uint_eq(tt_api_error_status(TT_ERR_REJECTED_DEPLOY_AUTHORITY_EVIDENCE), 422);
  ck_assert_str_eq(tt_error_code_name(TT_ERR_REJECTED_DEPLOY_AUTHORITY_EVIDENCE),
                   "RejectedDeployAuthorityEvidence");
  ck_assert(!tt_error_code_retryable(TT_ERR_REJECTED_DEPLOY_AUTHORITY_EVIDENCE));
  /* Encrypted attributes (orm/crypt.h). */
  ck_assert_uint_eq(tt_api_error_status(TT_ERR_ENCRYPTED_FIELD_NOT_QUERYABLE), 400);
  ck_assert_uint_eq(tt_api_error_status(TT_ERR_ENCRYPTION_NOT_CONFIGURED), 501);
  ck_assert_uint_eq(tt_api_error_status(TT_ERR_INVALID_ENCRYPTED_ENVELOPE), 500);
  ck_assert_str_eq(tt_error_code_name(TT_ERR_ENCRYPTED_FIELD_NOT_QUERYABLE),
                   "EncryptedFieldNotQueryable");
  ck_assert_str_eq(tt_error_code_name(TT_ERR_ENCRYPTION_NOT_CONFIGURED), "EncryptionNotConfigured");
  ck_assert_str_eq(tt_error_code_name(TT_ERR_INVALID_ENCRYPTED_ENVELOPE),
                   "InvalidEncryptedEnvelope");
  ck_assert(!tt_error_code_retryable(TT_ERR_ENCRYPTION_NOT_CONFIGURED));
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

/* ---- UTF-8 safe cutting --------------------------------------------------- */

static bool valid_utf8(const char *s) { return tt_utf8_valid(s, strlen(s)); }

START_TEST(utf8_prefix_never_splits_a_character) {
  /* "aé" is 61 c3 a9: a cut at 2 bytes keeps only the "a". */
  ck_assert_int_eq(tt_utf8_prefix("a\xc3\xa9", 2), 1);
  ck_assert_int_eq(tt_utf8_prefix("a\xc3\xa9", 3), 3);
  ck_assert_int_eq(tt_utf8_prefix("\xf0\x9f\x98\x80x", 3), 0);
  ck_assert_int_eq(tt_utf8_prefix("\xf0\x9f\x98\x80x", 4), 4);
  ck_assert_int_eq(tt_utf8_prefix("abc", 64), 3);
  ck_assert_int_eq(tt_utf8_prefix_n("a\xc3\xa9zzz", 3, 2), 1); /* a counted span */
  ck_assert_int_eq(tt_utf8_prefix_n("a\xc3\xa9zzz", 3, 9), 3);
}
END_TEST

START_TEST(utf8_scrub_and_validity) {
  ck_assert(tt_utf8_valid("a\xc3\xa9", 3));
  ck_assert(!tt_utf8_valid("a\xc3", 2));
  ck_assert(!tt_utf8_valid("\xc0\x80", 2));         /* overlong NUL */
  ck_assert(!tt_utf8_valid("\xed\xa0\x80", 3));     /* surrogate */
  ck_assert(!tt_utf8_valid("\xf4\x90\x80\x80", 4)); /* past U+10FFFF */
  char cut[] = "ab\xc3";
  ck_assert(tt_utf8_scrub(cut));
  ck_assert_str_eq(cut, "ab"); /* a cut at the end is dropped */
  char lone[] = "x\xc3\"y\xff";
  ck_assert(tt_utf8_scrub(lone));
  ck_assert_str_eq(lone, "x?\"y?"); /* others become '?' */
  char fine[] = "caf\xc3\xa9";
  ck_assert(!tt_utf8_scrub(fine));
  ck_assert_str_eq(fine, "caf\xc3\xa9");
}
END_TEST

START_TEST(error_set_cuts_field_and_message_on_characters) {
  /* 126 'a' then an 'é': the 128-byte field holds 127 bytes, so a byte cut
   * would keep half of the 'é'. */
  char name[200];
  memset(name, 'a', 126);
  memcpy(name + 126, "\xc3\xa9\xc3\xa9", 5);
  struct tt_error err;
  tt_error_set(&err, TT_ERR_VALIDATION, name, "attribute %s is not declared and %s", name, name);
  ck_assert_uint_eq(strlen(err.field), 126);
  ck_assert(valid_utf8(err.field));
  ck_assert(valid_utf8(err.message));
  ck_assert_uint_le(strlen(err.message), sizeof(err.message) - 1);
  /* A precision cut in the middle of a message ("%.64s"), then text. */
  char mid[80];
  memset(mid, 'b', 63);
  memcpy(mid + 63, "\xc3\xa9", 3);
  tt_error_set(&err, TT_ERR_VALIDATION, NULL, "unknown \"%.*s\" here", tt_utf8_prefix(mid, 64),
               mid);
  ck_assert(valid_utf8(err.message));
  ck_assert_ptr_nonnull(strstr(err.message, "b\" here"));
}
END_TEST

START_TEST(envelope_of_broken_texts_is_valid_json_with_request_id) {
  /* Texts written around the helpers (a raw byte cut) must still give a
   * body that parses, with the request id. */
  struct tt_error err = {.code = TT_ERR_VALIDATION};
  memset(err.field, 'f', sizeof(err.field) - 2);
  err.field[sizeof(err.field) - 2] = (char)0xc3;
  err.field[sizeof(err.field) - 1] = '\0';
  snprintf(err.message, sizeof(err.message), "bad \xe2\x82 name \xff");
  struct tt_buf out;
  tt_buf_init(&out, 0);
  ck_assert_int_eq(tt_api_error_body(&out, &err, "rid-7", NULL), 0);
  ck_assert(tt_utf8_valid(out.data, out.len));
  json_t *v = json_loadb(out.data, out.len, 0, NULL);
  ck_assert_ptr_nonnull(v);
  ck_assert_str_eq(json_string_value(json_object_get(v, "request_id")), "rid-7");
  json_t *d = json_object_get(json_object_get(v, "error"), "details");
  ck_assert_uint_eq(strlen(json_string_value(json_object_get(d, "field"))), sizeof(err.field) - 2);
  json_decref(v);
  tt_buf_free(&out);
}
END_TEST

START_TEST(fallback_envelope_names_the_request) {
  char body[256];
  int n = tt_api_error_fallback(body, sizeof(body), "0123456789abcdef0123456789abcdef");
  ck_assert_int_eq(n, (int)strlen(body));
  json_t *v = json_loads(body, 0, NULL);
  ck_assert_ptr_nonnull(v);
  ck_assert_str_eq(json_string_value(json_object_get(v, "request_id")),
                   "0123456789abcdef0123456789abcdef");
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(v, "error"), "code")),
                   "Internal");
  json_decref(v);
  char longest[129];
  memset(longest, 'r', 128);
  longest[128] = '\0';
  n = tt_api_error_fallback(body, sizeof(body), longest);
  v = json_loads(body, 0, NULL);
  ck_assert_ptr_nonnull(v);
  ck_assert_str_eq(json_string_value(json_object_get(v, "request_id")), longest);
  json_decref(v);
}
END_TEST

int main(void) {
  Suite *s = suite_create("errors");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, statuses_follow_the_contract);
  tcase_add_test(tc, envelope_shape);
  tcase_add_test(tc, envelope_without_field_has_empty_details);
  tcase_add_test(tc, utf8_prefix_never_splits_a_character);
  tcase_add_test(tc, utf8_scrub_and_validity);
  tcase_add_test(tc, error_set_cuts_field_and_message_on_characters);
  tcase_add_test(tc, envelope_of_broken_texts_is_valid_json_with_request_id);
  tcase_add_test(tc, fallback_envelope_names_the_request);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
