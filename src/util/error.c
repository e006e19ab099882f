/* SPDX-License-Identifier: Apache-2.0 */
/* error.c -- user-facing error values: codes, names, formatting. */
#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const code_names[TT_ERR__COUNT] = {
    [TT_OK] = "OK",
    [TT_ERR_VALIDATION] = "ValidationError",
    [TT_ERR_INVALID_CURSOR] = "InvalidCursor",
    [TT_ERR_UNAUTHORIZED] = "Unauthorized",
    [TT_ERR_FORBIDDEN] = "Forbidden",
    [TT_ERR_RESERVED_MODEL] = "ReservedModel",
    [TT_ERR_ROUTE_NOT_FOUND] = "RouteNotFound",
    [TT_ERR_MODEL_NOT_FOUND] = "ModelNotFound",
    [TT_ERR_ITEM_NOT_FOUND] = "ItemNotFound",
    [TT_ERR_JOB_NOT_FOUND] = "JobNotFound",
    [TT_ERR_TABLE_NOT_FOUND] = "TableNotFound",
    [TT_ERR_METHOD_NOT_ALLOWED] = "MethodNotAllowed",
    [TT_ERR_CONDITION_FAILED] = "ConditionFailed",
    [TT_ERR_VERSION_CONFLICT] = "VersionConflict",
    [TT_ERR_TRANSACTION_CANCELED] = "TransactionCanceled",
    [TT_ERR_LEASE_HELD] = "LeaseHeld",
    [TT_ERR_LEASE_NOT_OWNED] = "LeaseNotOwned",
    [TT_ERR_INVALID_TRANSITION] = "InvalidTransition",
    [TT_ERR_ALREADY_EXISTS] = "AlreadyExists",
    [TT_ERR_PAYLOAD_TOO_LARGE] = "PayloadTooLarge",
    [TT_ERR_UNSUPPORTED_MEDIA] = "UnsupportedMediaType",
    [TT_ERR_THROTTLED] = "Throttled",
    [TT_ERR_BACKEND_UNAVAILABLE] = "BackendUnavailable",
    [TT_ERR_BATCH_INCOMPLETE] = "BatchIncomplete",
    [TT_ERR_DRAINING] = "Draining",
    [TT_ERR_BACKEND_TIMEOUT] = "BackendTimeout",
    [TT_ERR_INTERNAL] = "Internal",
};

/* Cuts a truncated message back to a whole UTF-8 sequence, so it always
 * encodes as a JSON string. */
static void utf8_trim(char *s) {
  size_t n = strlen(s);
  size_t i = n;
  while (i > 0 && ((unsigned char)s[i - 1] & 0xC0) == 0x80)
    i--; /* continuation bytes */
  if (i > 0 && ((unsigned char)s[i - 1] & 0x80)) {
    unsigned char lead = (unsigned char)s[i - 1];
    size_t want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
    if (n - (i - 1) < want)
      s[i - 1] = '\0';
  }
}

int tt_error_set(struct tt_error *err, enum tt_err_code code, const char *field,
                 const char *fmt, ...) {
  if (err == NULL)
    return -1;
  err->code = code;
  snprintf(err->field, sizeof(err->field), "%s", field ? field : "");
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(err->message, sizeof(err->message), fmt, ap);
  va_end(ap);
  if (n >= (int)sizeof(err->message))
    utf8_trim(err->message);
  return -1;
}

void tt_error_clear(struct tt_error *err) {
  err->code = TT_OK;
  err->message[0] = '\0';
  err->field[0] = '\0';
}

const char *tt_error_code_name(enum tt_err_code code) {
  if ((unsigned)code >= TT_ERR__COUNT)
    return "Internal";
  return code_names[code];
}

bool tt_error_code_retryable(enum tt_err_code code) {
  switch (code) {
  case TT_ERR_THROTTLED:
  case TT_ERR_BACKEND_UNAVAILABLE:
  case TT_ERR_BATCH_INCOMPLETE:
  case TT_ERR_DRAINING:
  case TT_ERR_BACKEND_TIMEOUT:
    return true;
  default:
    return false;
  }
}
