/* SPDX-License-Identifier: Apache-2.0 */
/* error.c -- user-facing error values: codes, names, formatting, UTF-8-safe cutting. */
#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/utf8.h"

static const char *const code_names[TT_ERR__COUNT] = {
    [TT_OK] = "OK",
    [TT_ERR_VALIDATION] = "ValidationError",
    [TT_ERR_INVALID_CURSOR] = "InvalidCursor",
    [TT_ERR_UNKNOWN_PARTNER] = "UnknownPartner",
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
    [TT_ERR_IMMUTABLE_MODEL_MUTATION] = "ImmutableModelMutation",
    [TT_ERR_PROTECTED_FIELD_MUTATION] = "ProtectedFieldMutation",
    [TT_ERR_UNSAFE_MODEL_CHANGE] = "UnsafeModelChange",
    [TT_ERR_REJECTED_DEPLOY_AUTHORITY_EVIDENCE] = "RejectedDeployAuthorityEvidence",
    [TT_ERR_ENCRYPTED_FIELD_NOT_QUERYABLE] = "EncryptedFieldNotQueryable",
    [TT_ERR_INVALID_ENCRYPTED_ENVELOPE] = "InvalidEncryptedEnvelope",
    [TT_ERR_ENCRYPTION_NOT_CONFIGURED] = "EncryptionNotConfigured",
    [TT_ERR_PAYLOAD_TOO_LARGE] = "PayloadTooLarge",
    [TT_ERR_UNSUPPORTED_MEDIA] = "UnsupportedMediaType",
    [TT_ERR_THROTTLED] = "Throttled",
    [TT_ERR_BACKEND_UNAVAILABLE] = "BackendUnavailable",
    [TT_ERR_BATCH_INCOMPLETE] = "BatchIncomplete",
    [TT_ERR_DRAINING] = "Draining",
    [TT_ERR_BACKEND_TIMEOUT] = "BackendTimeout",
    [TT_ERR_INTERNAL] = "Internal",
};

int tt_utf8_prefix(const char *s, size_t max) { return tt_utf8_prefix_n(s, strlen(s), max); }

int tt_utf8_prefix_n(const char *s, size_t n, size_t max) {
  size_t i = 0;
  while (i < n) {
    bool cut;
    size_t k = tt_utf8_seq((const unsigned char *)s + i, n - i, &cut);
    if (k == 0)
      k = 1; /* an ill-formed byte is one unit; tt_utf8_scrub replaces it */
    if (i + k > max)
      break;
    i += k;
  }
  return (int)(i > (size_t)0x7fffffff ? 0x7fffffff : i);
}

bool tt_utf8_scrub(char *s) {
  size_t n = strlen(s);
  bool changed = false;
  for (size_t i = 0; i < n;) {
    bool cut;
    size_t k = tt_utf8_seq((const unsigned char *)s + i, n - i, &cut);
    if (k > 0) {
      i += k;
    } else if (cut) {
      s[i] = '\0';
      return true;
    } else {
      s[i++] = '?';
      changed = true;
    }
  }
  return changed;
}

bool tt_utf8_valid(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s, *end = p + n;
  while (p < end) {
    /* ASCII, the common text, 16 bytes a step: no byte has its high bit. */
    if (end - p >= 16) {
      uint64_t w[2];
      memcpy(w, p, 16);
      if (((w[0] | w[1]) & UINT64_C(0x8080808080808080)) == 0) {
        p += 16;
        continue;
      }
    }
    size_t k = tt_utf8_seq(p, (size_t)(end - p), NULL);
    if (k == 0)
      return false;
    p += k;
  }
  return true;
}

char *tt_utf8_copy(char *dst, size_t cap, const char *src) {
  if (src == NULL)
    src = "";
  int n = tt_utf8_prefix(src, cap - 1);
  memmove(dst, src, (size_t)n); /* dst may be src */
  dst[n] = '\0';
  tt_utf8_scrub(dst);
  return dst;
}

int tt_error_vset(struct tt_error *err, enum tt_err_code code, const char *field,
                  const char *fmt, va_list ap) {
  if (err == NULL)
    return -1;
  err->code = code;
  tt_utf8_copy(err->field, sizeof(err->field), field);
  /* Format into a larger buffer, then cut on a character boundary. */
  char text[2 * sizeof(err->message)];
  vsnprintf(text, sizeof(text), fmt, ap);
  tt_utf8_copy(err->message, sizeof(err->message), text);
  return -1;
}

int tt_error_set(struct tt_error *err, enum tt_err_code code, const char *field,
                 const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tt_error_vset(err, code, field, fmt, ap);
  va_end(ap);
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
