/* SPDX-License-Identifier: Apache-2.0 */
/* base64.h -- RFC 4648 base64, standard and URL-safe alphabets. */
#ifndef TT_VALUE_BASE64_H
#define TT_VALUE_BASE64_H

#include <stddef.h>

#include "util/buf.h"

enum tt_base64_variant {
  TT_BASE64_STD = 0, /* A-Z a-z 0-9 + /, '=' padding */
  TT_BASE64_URL = 1  /* A-Z a-z 0-9 - _, '=' padding */
};

/* Appends the padded encoding of n bytes to b. Returns 0, or -1 when the
 * buffer's cap or memory runs out. */
int tt_base64_encode(struct tt_buf *b, const void *p, size_t n, enum tt_base64_variant v);

/* Decodes `len` characters into out, which must hold len / 4 * 3 + 3
 * bytes; *out_len gets the decoded length. Padding is required unless
 * `pad_optional`; no whitespace, no characters of the other alphabet, no
 * data after padding. Bits below the last full byte are ignored (as Go's
 * and most decoders do). Returns 0, or -1 on malformed input. */
int tt_base64_decode(const char *in, size_t len, enum tt_base64_variant v, int pad_optional,
                     unsigned char *out, size_t *out_len);

struct tt_av;

/* A B value of the `len` characters decoded (as tt_base64_decode), in one
 * allocation. Returns 0, 1 when the text is not base64 or -1 when memory
 * runs out; on failure *out is left as it was. */
int tt_base64_decode_av(struct tt_av *out, const char *in, size_t len, enum tt_base64_variant v,
                        int pad_optional);

/* The bytes of B value v in standard base64 as a JSON string appended to
 * b, quoted (0 or -1 as tt_base64_encode). */
int tt_base64_write_av(struct tt_buf *b, const struct tt_av *v);

/* Upper bound of decoded bytes for `len` characters, for sizing `out`. */
#define TT_BASE64_DECODED_MAX(len) ((len) / 4 * 3 + 3)

#endif
