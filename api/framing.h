/* SPDX-License-Identifier: Apache-2.0 */
/* framing.h -- one pass over a request's header fields, as the HTTP layer
 * parsed them, that refuses every header section two HTTP parsers (a
 * proxy's and ours) could read differently (RFC 9112 sections 2.2, 5 and
 * 6): field names that are not tokens, control characters in values, a
 * repeated framing or security header, Transfer-Encoding other than a lone
 * "chunked", or with Content-Length, or in HTTP/1.0; a malformed
 * Content-Length; an HTTP/1.1 request without Host.
 *
 * With libmicrohttpd 0.9.75 the fields are NUL-terminated in place in its
 * read buffer, CR and LF of each line end replaced by NUL, and an obs-fold
 * continuation copied elsewhere. When the caller passes where the request
 * line ends (tt_framing_begin's line_end) and where the section ends, each
 * field must also sit where the previous line ended, after a CRLF, and the
 * empty line must end the section: that refuses bare LF line ends, a NUL
 * inside a name or value (which would cut it short), and obs-fold. What a
 * replaced line end and a NUL byte look like is the same, so NUL bytes at
 * the very end of a value can pass when the line ends around them are bare
 * LFs in the right number ("v\0\n" reads as "v\r\n"); no other byte can
 * hide behind them. */
#ifndef TT_API_FRAMING_H
#define TT_API_FRAMING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The headers a request may carry at most once. */
enum tt_framing_single {
  TT_FRAMING_AUTHORIZATION,
  TT_FRAMING_PARTNER,
  TT_FRAMING_IF_MATCH,
  TT_FRAMING_IF_NONE_MATCH,
  TT_FRAMING_CONTENT_LENGTH,
  TT_FRAMING_CONTENT_TYPE,
  TT_FRAMING_TRANSFER_ENCODING,
  TT_FRAMING_HOST,
  TT_FRAMING_NSINGLE
};

struct tt_framing {
  const char *expect; /* where the next line must start; NULL: no layout check */
  unsigned seen;      /* bit per enum tt_framing_single */
  uint64_t content_length;
  /* Set on the first refusal: the header's canonical name (or NULL for the
   * section as a whole) and a static sentence for the error message. */
  bool bad;
  const char *field;
  const char *why;
  /* For a refused value: the field's name as sent (a token), else NULL. */
  const char *name;
  size_t name_len;
};

/* Starts a scan. line_end: where the request line's HTTP version ends in
 * the in-place buffer described above, or NULL to skip the layout checks.
 * Returns false (f->bad set) when the request line does not end in CRLF. */
bool tt_framing_begin(struct tt_framing *f, const char *line_end);

/* One field, in the order received; name and value are name_len and
 * value_len bytes (value without the leading whitespace). Returns false
 * (f->bad set) to refuse the request: stop the scan. */
bool tt_framing_field(struct tt_framing *f, const char *name, size_t name_len, const char *value,
                      size_t value_len);

/* After the last field: the checks across fields. http10 for an HTTP/1.0
 * request; section_end (with the layout checks) is where the header
 * section ends, just past its empty line: the last field's line end and
 * that CRLF must reach exactly there, so no NUL hides at a value's end.
 * Returns false (f->bad set) to refuse. */
bool tt_framing_end(struct tt_framing *f, bool http10, const char *section_end);

/* Whether the scan saw the header (enum tt_framing_single). */
static inline bool tt_framing_has(const struct tt_framing *f, enum tt_framing_single h) {
  return (f->seen >> h) & 1u;
}

#endif
