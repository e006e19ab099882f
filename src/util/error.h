/* SPDX-License-Identifier: Apache-2.0 */
/* error.h -- the one error type that crosses layers and reaches users. */
#ifndef TT_UTIL_ERROR_H
#define TT_UTIL_ERROR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* Error codes as docs/errors.md names them. The HTTP status of each lives in
 * api/errors.c; lower layers only pick the code. */
enum tt_err_code {
  TT_OK = 0,
  TT_ERR_VALIDATION,          /* 400 ValidationError */
  TT_ERR_INVALID_CURSOR,      /* 400 InvalidCursor */
  TT_ERR_UNKNOWN_PARTNER,     /* 400 UnknownPartner: X-TableTheory-Partner names no configured partner */
  TT_ERR_UNAUTHORIZED,        /* 401 Unauthorized */
  TT_ERR_FORBIDDEN,           /* 403 Forbidden */
  TT_ERR_RESERVED_MODEL,      /* 403 ReservedModel: the job ledger's models and table */
  TT_ERR_ROUTE_NOT_FOUND,     /* 404 RouteNotFound */
  TT_ERR_MODEL_NOT_FOUND,     /* 404 ModelNotFound */
  TT_ERR_ITEM_NOT_FOUND,      /* 404 ItemNotFound */
  TT_ERR_JOB_NOT_FOUND,       /* 404 JobNotFound */
  TT_ERR_TABLE_NOT_FOUND,     /* 404 TableNotFound */
  TT_ERR_METHOD_NOT_ALLOWED,  /* 405 MethodNotAllowed */
  TT_ERR_CONDITION_FAILED,    /* 409 ConditionFailed */
  TT_ERR_VERSION_CONFLICT,    /* 409 VersionConflict */
  TT_ERR_TRANSACTION_CANCELED,/* 409 TransactionCanceled */
  TT_ERR_LEASE_HELD,          /* 409 LeaseHeld */
  TT_ERR_LEASE_NOT_OWNED,     /* 409 LeaseNotOwned */
  TT_ERR_INVALID_TRANSITION,  /* 409 InvalidTransition */
  TT_ERR_ALREADY_EXISTS,      /* 409 AlreadyExists */
  TT_ERR_IMMUTABLE_MODEL_MUTATION, /* 409 ImmutableModelMutation: write_once model */
  TT_ERR_PROTECTED_FIELD_MUTATION, /* 409 ProtectedFieldMutation: protected attribute */
  TT_ERR_UNSAFE_MODEL_CHANGE, /* 409 UnsafeModelChange: a replace stored items would not survive */
  TT_ERR_REJECTED_DEPLOY_AUTHORITY_EVIDENCE, /* 422 RejectedDeployAuthorityEvidence: provenance */
  TT_ERR_ENCRYPTED_FIELD_NOT_QUERYABLE, /* 400 EncryptedFieldNotQueryable: key, condition, filter, add */
  TT_ERR_INVALID_ENCRYPTED_ENVELOPE, /* 500 InvalidEncryptedEnvelope: stored value is no envelope */
  TT_ERR_ENCRYPTION_NOT_CONFIGURED,  /* 501 EncryptionNotConfigured: no KMS key (fail closed) */
  TT_ERR_PAYLOAD_TOO_LARGE,   /* 413 PayloadTooLarge */
  TT_ERR_UNSUPPORTED_MEDIA,   /* 415 UnsupportedMediaType */
  TT_ERR_THROTTLED,           /* 429 Throttled */
  TT_ERR_BACKEND_UNAVAILABLE, /* 503 BackendUnavailable */
  TT_ERR_BATCH_INCOMPLETE,    /* 503 BatchIncomplete */
  TT_ERR_DRAINING,            /* 503 Draining */
  TT_ERR_BACKEND_TIMEOUT,     /* 504 BackendTimeout */
  TT_ERR_INTERNAL,            /* 500 Internal */
  TT_ERR__COUNT
};

/* A user-facing error. `message` says what to change and never carries
 * item values, key values or credentials; `field` is the offending path
 * ("" when none). Fixed-size so it can live on the stack or inside a
 * request context without ownership questions. */
struct tt_error {
  enum tt_err_code code;
  char message[256];
  char field[128];
};

/* Sets *err (when err is non-NULL) and returns -1, so callers can write
 * `return tt_error_set(err, TT_ERR_VALIDATION, "items", "...%s", x);`.
 * `field` may be NULL. The message is truncated to fit. */
int tt_error_set(struct tt_error *err, enum tt_err_code code, const char *field,
                 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Same with a va_list. */
int tt_error_vset(struct tt_error *err, enum tt_err_code code, const char *field,
                  const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));

/* Clears *err to TT_OK. */
void tt_error_clear(struct tt_error *err);

/* The docs/errors.md name of a code ("ValidationError"), never NULL. */
const char *tt_error_code_name(enum tt_err_code code);

/* Whether a client may retry the same call unchanged. */
bool tt_error_code_retryable(enum tt_err_code code);

/* ---- UTF-8 safe cutting -------------------------------------------------
 * Every message, field and log text that is cut to a size goes through
 * these, so a cut never leaves half a character (which would make the JSON
 * error body unencodable). */

/* The length of the longest prefix of s (NUL-terminated, borrowed) of at
 * most max bytes that does not end inside a UTF-8 sequence; for
 * printf's "%.*s" in place of a fixed precision. */
int tt_utf8_prefix(const char *s, size_t max);

/* The same for the n bytes at s (need not be NUL-terminated). */
int tt_utf8_prefix_n(const char *s, size_t n, size_t max);

/* Copies src (borrowed; NULL reads as "") into dst (cap > 0 bytes, always
 * NUL-terminated), cut on a character boundary, then scrubbed as below.
 * Returns dst. */
char *tt_utf8_copy(char *dst, size_t cap, const char *src);

/* Makes s valid UTF-8 in place: an incomplete sequence at the very end (a
 * cut) is dropped; any other byte that is not part of a well-formed
 * sequence becomes '?'. Returns whether s was changed. */
bool tt_utf8_scrub(char *s);

/* Whether s[0..n) is well-formed UTF-8 (NUL bytes included as U+0000). */
bool tt_utf8_valid(const char *s, size_t n);

#endif
