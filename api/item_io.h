/* SPDX-License-Identifier: Apache-2.0 */
/* item_io.h -- the {key} of an item URL percent-decoded and typed by the
 * model's key attributes: what the item handlers hand the ORM. */
#ifndef TT_API_ITEM_IO_H
#define TT_API_ITEM_IO_H

#include <stddef.h>

#include "model/model.h"
#include "util/error.h"
#include "value/av.h"

/* Builds the key of model `m` from the raw (still percent-encoded) `{key}`
 * part of an item URL: "pk" for a partition-key-only table, "pk/sk" for a
 * composite key. The split happens on raw '/' before decoding, so "%2F"
 * inside a key is data. Each part is percent-decoded (%XX, either case; '+'
 * stays '+', as in paths) and typed: S as UTF-8 text, N as decimal text
 * (canonicalized, 38 digits), B as base64url with or without '=' padding.
 * Errors are ValidationErrors with field "key" whose message names the
 * attribute, never the value: wrong number of parts, a bad escape, invalid
 * UTF-8, an empty key value, a malformed number or base64. On success
 * *key_out is a new M holding exactly the key attributes (caller frees);
 * on failure a NULL value. Returns 0 or -1. */
int tt_api_item_key(const struct tt_model *m, const char *raw, size_t len,
                     struct tt_av *key_out, struct tt_error *err);

#endif
