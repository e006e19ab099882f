/* SPDX-License-Identifier: Apache-2.0 */
/* sanitize.h -- redaction and masking of secrets in what the job ledger stores and logs. */
#ifndef TT_LEDGER_SANITIZE_H
#define TT_LEDGER_SANITIZE_H

#include <jansson.h>
#include <stddef.h>

#include "util/error.h"

/* What replaces a redacted value, and a container nested too deep. */
#define TT_SANITIZE_REDACTED "[REDACTED]"
#define TT_SANITIZE_TRUNCATED "[TRUNCATED]"

/* Containers nested deeper than this (the root container is level 1) are
 * replaced by TT_SANITIZE_TRUNCATED; docs/design.md's nesting limit. */
#define TT_SANITIZE_MAX_DEPTH 32

/* How the value under a map key is treated. Keys are compared after ASCII
 * lower-casing and dropping '_', '-', ' ', CR, LF and NUL, so "Access-Token",
 * "ACCESS_TOKEN", "accessToken" and "access token" are one key. */
enum tt_sanitize_rule {
  TT_SANITIZE_RULE_NONE = 0, /* ordinary key: the value is walked */
  TT_SANITIZE_RULE_ALLOW,    /* allowlisted (card_brand, transaction_id, token_type, ...):
                                never redacted because of its name; the value is walked */
  TT_SANITIZE_RULE_REDACT,   /* password, secret, *token*, api_key, cvv, ...: the whole
                                value, of any type, becomes "[REDACTED]" */
  TT_SANITIZE_RULE_CARD,     /* card_number, pan, ...: first 6 and last 4 digits kept */
  TT_SANITIZE_RULE_LAST4,    /* ssn, account_number, tax_id, tin, ein, ...: last 4 kept */
};

/* Classifies a map key of `len` bytes (may contain NUL). Pure; never fails. */
enum tt_sanitize_rule tt_sanitize_key_rule(const char *key, size_t len);

/* Returns a NEW sanitized deep copy of `value` (one new reference, the caller
 * json_decref()s it), or NULL when `value` is NULL or memory ran out.
 * Borrows `value` and never modifies it; the result shares no node with it.
 * Map keys lose CR/LF/NUL and then pick the rule of their value; strings lose
 * CR/LF; numbers, booleans and null are copied; containers deeper than
 * TT_SANITIZE_MAX_DEPTH become "[TRUNCATED]". Free-text rules
 * (tt_sanitize_text) are NOT applied to ordinary string values: structured data
 * is judged by its keys. */
json_t *tt_sanitize_json(json_t *value);

/* Validates and sanitizes the ledger's error envelope
 * {"type","code","message","retryable","fields"}: all members optional (null
 * counts as absent and is dropped), type/code/message strings, retryable a
 * boolean, fields an object. type, code and message go through
 * tt_sanitize_text; fields, and any extra member, through the tt_sanitize_json
 * rules (the envelope is level 1 of the depth limit).
 * Borrows `envelope`. On success returns 0 and sets *out to a NEW object
 * (caller decrefs). On failure returns -1, leaves *out NULL and fills *err:
 * TT_ERR_VALIDATION with field "error" or "error.<member>" for a wrong shape,
 * TT_ERR_INTERNAL when memory ran out. Messages never quote the value. */
int tt_sanitize_error_envelope(json_t *envelope, json_t **out, struct tt_error *err);

/* Sanitizes free text (error messages, log text) of `len` bytes: each run of
 * CR/LF becomes one space (none at either end), so words stay apart;
 * `key=value` / `key: value` / `"key":"value"` pairs whose key has a REDACT,
 * CARD or LAST4 rule get their value replaced or masked; `Bearer <token>`,
 * JWTs ("eyJ..." with two dots) and URL userinfo ("scheme://user:pw@") become
 * "[REDACTED]"; runs of 13+ digits (single ' ' or '-' between groups allowed)
 * keep their first 6 and last 4 digits; "ddd-dd-dddd" becomes "***-**-dddd".
 * Returns a NEW malloc'd NUL-terminated string (caller frees) and its length
 * in *out_len (when non-NULL), or NULL when memory ran out. Borrows `s`. */
char *tt_sanitize_text(const char *s, size_t len, size_t *out_len);

#endif
