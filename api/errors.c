/* SPDX-License-Identifier: Apache-2.0 */
/* errors.c -- HTTP statuses of error codes and the error envelope. */
#include "api/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned tt_api_error_status(enum tt_err_code code) {
  /* A code without an entry is 500: Internal, and InvalidEncryptedEnvelope
   * (stored data is damaged: a server-side fault). */
  static const unsigned short status[TT_ERR__COUNT] = {
      [TT_OK] = 200,
      [TT_ERR_VALIDATION] = 400,
      [TT_ERR_INVALID_CURSOR] = 400,
      [TT_ERR_UNKNOWN_PARTNER] = 400,
      [TT_ERR_ENCRYPTED_FIELD_NOT_QUERYABLE] = 400,
      [TT_ERR_UNAUTHORIZED] = 401,
      [TT_ERR_FORBIDDEN] = 403,
      [TT_ERR_RESERVED_MODEL] = 403,
      [TT_ERR_ROUTE_NOT_FOUND] = 404,
      [TT_ERR_MODEL_NOT_FOUND] = 404,
      [TT_ERR_ITEM_NOT_FOUND] = 404,
      [TT_ERR_JOB_NOT_FOUND] = 404,
      [TT_ERR_TABLE_NOT_FOUND] = 404,
      [TT_ERR_METHOD_NOT_ALLOWED] = 405,
      [TT_ERR_CONDITION_FAILED] = 409,
      [TT_ERR_VERSION_CONFLICT] = 409,
      [TT_ERR_TRANSACTION_CANCELED] = 409,
      [TT_ERR_LEASE_HELD] = 409,
      [TT_ERR_LEASE_NOT_OWNED] = 409,
      [TT_ERR_INVALID_TRANSITION] = 409,
      [TT_ERR_ALREADY_EXISTS] = 409,
      [TT_ERR_IMMUTABLE_MODEL_MUTATION] = 409,
      [TT_ERR_PROTECTED_FIELD_MUTATION] = 409,
      [TT_ERR_UNSAFE_MODEL_CHANGE] = 409,
      /* Well-formed, but the evidence cannot authorize: not about stored state. */
      [TT_ERR_REJECTED_DEPLOY_AUTHORITY_EVIDENCE] = 422,
      [TT_ERR_PAYLOAD_TOO_LARGE] = 413,
      [TT_ERR_UNSUPPORTED_MEDIA] = 415,
      [TT_ERR_THROTTLED] = 429,
      [TT_ERR_BACKEND_UNAVAILABLE] = 503,
      [TT_ERR_BATCH_INCOMPLETE] = 503,
      [TT_ERR_DRAINING] = 503,
      [TT_ERR_BACKEND_TIMEOUT] = 504,
      /* The daemon is not set up to serve this model's attributes. */
      [TT_ERR_ENCRYPTION_NOT_CONFIGURED] = 501,
  };
  _Static_assert(TT_ERR__COUNT == 35, "a new error code needs its status here");
  return (unsigned)code < TT_ERR__COUNT && status[code] ? status[code] : 500;
}

int tt_api_error_fallback(char *out, size_t cap, const char *request_id) {
  int n = snprintf(out, cap,
                   "{\"error\":{\"code\":\"Internal\",\"message\":\"out of memory\","
                   "\"retryable\":false,\"details\":{}},\"request_id\":\"%.*s\"}",
                   tt_utf8_prefix(request_id, 128), request_id);
  return n < 0 ? 0 : (size_t)n >= cap ? (int)cap - 1 : n;
}

int tt_api_error_body(struct tt_buf *out, const struct tt_error *in, const char *request_id,
                      const json_t *extra) {
  int rc = -1;
  char *details_text = NULL;
  /* Texts may quote what a client sent, cut anywhere: the body must still
   * be valid UTF-8 JSON, so work on a scrubbed copy. */
  struct tt_error copy = *in;
  const struct tt_error *err = &copy;
  copy.field[sizeof(copy.field) - 1] = '\0';
  copy.message[sizeof(copy.message) - 1] = '\0';
  tt_utf8_scrub(copy.field);
  tt_utf8_scrub(copy.message);
  json_t *details = json_object();
  if (details == NULL)
    goto fail;
  if (err->field[0] && json_object_set_new(details, "field", json_string(err->field)) != 0)
    goto fail;
  if (extra && json_is_object(extra) && json_object_update(details, (json_t *)extra) != 0)
    goto fail;
  details_text = json_dumps(details, JSON_COMPACT | JSON_SORT_KEYS);
  if (details_text == NULL)
    goto fail;
  if (tt_buf_puts(out, "{\"error\":{\"code\":\"") != 0 ||
      tt_buf_puts(out, tt_error_code_name(err->code)) != 0 ||
      tt_buf_puts(out, "\",\"message\":\"") != 0 ||
      tt_buf_json_escape(out, err->message, strlen(err->message)) != 0 ||
      tt_buf_printf(out, "\",\"retryable\":%s,\"details\":%s},\"request_id\":\"",
                    tt_error_code_retryable(err->code) ? "true" : "false", details_text) != 0 ||
      tt_buf_json_escape(out, request_id, strlen(request_id)) != 0 || tt_buf_puts(out, "\"}") != 0)
    goto fail;
  rc = 0;
fail:
  free(details_text);
  json_decref(details);
  return rc;
}
