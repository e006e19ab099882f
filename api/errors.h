/* SPDX-License-Identifier: Apache-2.0 */
/* errors.h -- maps error codes to HTTP statuses and writes the envelope. */
#ifndef TT_API_ERRORS_H
#define TT_API_ERRORS_H

#include <jansson.h>

#include "util/buf.h"
#include "util/error.h"

/* The HTTP status docs/errors.md assigns to a code. */
unsigned tt_api_error_status(enum tt_err_code code);

/* Appends the error envelope
 *   {"error":{"code","message","retryable","details":{...}},"request_id"}
 * to out. details gets "field" when err->field is set, plus every member
 * of `extra` (borrowed, may be NULL). Returns 0 or -1 (buffer cap/OOM). */
int tt_api_error_body(struct tt_buf *out, const struct tt_error *err, const char *request_id,
                      const json_t *extra);

/* Writes the fixed 500 Internal envelope carrying `request_id` (at most 128
 * characters of [A-Za-z0-9._:-], as the server makes them) into out (cap
 * bytes, NUL-terminated) without allocating; for when tt_api_error_body
 * failed. Returns the length written. */
int tt_api_error_fallback(char *out, size_t cap, const char *request_id);

#endif
