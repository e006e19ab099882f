/* SPDX-License-Identifier: Apache-2.0 */
/* json_exact.h -- JSON text <-> jansson trees that keep every number's exact
 * text, with duplicate-key, depth and size limits. */
#ifndef TT_VALUE_JSON_EXACT_H
#define TT_VALUE_JSON_EXACT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/error.h"

/* jansson turns numbers into doubles or json_int_t and loses digits. Our
 * parser (not jansson's) builds the jansson tree directly and stores each
 * number as a *marked string*: the bytes "\0N" followed by the number token
 * exactly as written. A real string that happens to begin with a NUL byte
 * is stored behind the marker "\0S" so the two can never be confused. Read
 * strings and numbers of such trees only through the helpers below, and
 * write them with tt_json_dump (json_dumps would print the markers). */

#define TT_JSON_MAX_DEPTH 32

struct tt_json_opts {
  size_t max_bytes; /* input larger than this: PayloadTooLarge; 0 = no cap */
  int max_depth;    /* containers nested deeper: ValidationError; 0 = 32 */
};

/* Parses `len` bytes of JSON text (RFC 8259: one value, UTF-8, surrounding
 * whitespace allowed). On success *out is a new reference the caller
 * decrefs. Errors (ValidationError unless noted, `field` = the JSON path
 * such as "item.tags[2]", "" for the top level; messages give line and
 * column, never content): malformed JSON, invalid UTF-8, lone surrogate
 * escapes, duplicate object keys, keys containing NUL, nesting deeper than
 * max_depth, input over max_bytes (PayloadTooLarge). `opts` may be NULL
 * (defaults). Returns 0 or -1. */
int tt_json_parse(const char *text, size_t len, const struct tt_json_opts *opts, json_t **out,
                  struct tt_error *err);

/* A JSON string token as its text between the quotes. */
struct tt_json_str {
  const char *raw;
  size_t raw_len; /* the decoded text is never longer */
  bool escaped;   /* holds a backslash: decode before use */
  bool nul;       /* decodes to text holding U+0000 */
};

/* Checks the string token whose text begins at p (after its opening
 * quote), as jansson checks one: no control character, valid escapes, \u
 * surrogates in pairs, valid UTF-8. Returns NULL with *s filled (the token
 * ends at s->raw + s->raw_len + 1), or the refusal ("unterminated string",
 * "invalid UTF-8 in string", ...) with *at where it stands. */
const char *tt_json_str_scan(const char *p, const char *end, struct tt_json_str *s,
                             const char **at);

/* Writes the text of s (checked by tt_json_str_scan) to dst, which has
 * room for s->raw_len bytes. Returns its length. */
size_t tt_json_str_decode(const struct tt_json_str *s, char *dst);

/* The length of the JSON number token at s (before end), or 0 when none
 * starts there. */
size_t tt_json_number_len(const char *s, const char *end);

/* Whether `len` bytes are exactly one JSON number token. */
bool tt_json_number_syntax(const char *s, size_t len);

/* Whether j is a number: a marked number, or a jansson integer or real
 * (trees built by hand may hold those). */
bool tt_json_is_number(const json_t *j);

/* Room to format a jansson integer/real for tt_json_number_text. */
struct tt_json_numbuf {
  char text[40];
};

/* The text of a number (see tt_json_is_number): for a marked number, a
 * pointer into j (borrowed, valid while j lives); for a jansson integer or
 * real, formatted into *nb. NULL when j is not a number. */
const char *tt_json_number_text(const json_t *j, struct tt_json_numbuf *nb, size_t *len);

/* The value of a number j that is a whole number, however it is spelled
 * ("27", "27.0", "2.7e1", as JSON Schema's "integer" allows), into *out.
 * Returns 0, or -1 when j is not a number, has a fraction (27.5) or does
 * not fit in int64_t. */
int tt_json_integer(const json_t *j, int64_t *out);

/* A new marked number holding `text` verbatim. NULL when the text is not a
 * JSON number token or memory runs out. */
json_t *tt_json_number_new(const char *text, size_t len);

/* Makes a plain jansson tree (json_loadb, JSON_ALLOW_NUL) readable by the
 * helpers here: every string value that begins with NUL gets the "\0S"
 * marker, so that one beginning with NUL 'N' is not taken for a number and
 * one beginning with NUL 'S' keeps its first two bytes. Object keys are
 * left alone. Recursive: for trees from json_loadb, whose parser refuses
 * nesting deeper than 2048. Returns 0, or -1 (out of memory). */
int tt_json_mark_plain_strings(json_t *j);

/* Whether j nests arrays and objects more than `limit` levels deep (a
 * scalar is 0 levels, [] or {} 1). Recursive, to at most limit + 1 levels. */
bool tt_json_too_deep(const json_t *j, size_t limit);

/* Whether j is a real string (a jansson string that is not a number). */
bool tt_json_is_string(const json_t *j);

/* The bytes of a real string without any marker (borrowed from j); NULL
 * when j is not a real string. */
const char *tt_json_string_text(const json_t *j, size_t *len);

/* An optional string member of obj as a C string (borrowed): 0 with *out
 * NULL when absent or null, or its text; -1 when it is not a real string
 * or holds a NUL byte. */
int tt_json_member_text(const json_t *obj, const char *key, const char **out);

/* A new real string from `len` bytes of UTF-8 (adds the "\0S" marker when
 * needed). NULL on invalid UTF-8 or out of memory. */
json_t *tt_json_string_new(const char *s, size_t len);

enum {
  TT_JSON_SORT_KEYS = 1,     /* object keys in byte order (else insertion order) */
  TT_JSON_CANON_NUMBERS = 2, /* numbers that are valid DynamoDB numbers are
                              * written in number.h canonical form */
  TT_JSON_GO_ESCAPE = 4      /* escape strings as Go's encoding/json does:
                              * also <, >, &, U+2028, U+2029 */
};

/* Appends the compact JSON text of j (no spaces) to b, numbers verbatim.
 * Returns 0, or -1 when b's cap or memory runs out (b then holds a partial
 * text the caller discards). */
int tt_json_dump(const json_t *j, unsigned flags, struct tt_buf *b);

/* Appends `len` bytes as a quoted JSON string (TT_JSON_GO_ESCAPE honoured).
 * Returns 0 or -1 (cap or memory). */
int tt_json_write_string(struct tt_buf *b, const char *s, size_t len, unsigned flags);

#endif
