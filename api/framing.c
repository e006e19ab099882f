/* SPDX-License-Identifier: Apache-2.0 */
/* framing.c -- refuses request framing two HTTP parsers could read differently:
 * one pass over a request's header fields (framing.h). */
#include "api/framing.h"

#include <strings.h>

#include "api/server.h"

static const char *const single_names[TT_FRAMING_NSINGLE] = {
    [TT_FRAMING_AUTHORIZATION] = "Authorization",
    [TT_FRAMING_PARTNER] = TT_API_PARTNER_HEADER,
    [TT_FRAMING_IF_MATCH] = "If-Match",
    [TT_FRAMING_IF_NONE_MATCH] = "If-None-Match",
    [TT_FRAMING_CONTENT_LENGTH] = "Content-Length",
    [TT_FRAMING_CONTENT_TYPE] = "Content-Type",
    [TT_FRAMING_TRANSFER_ENCODING] = "Transfer-Encoding",
    [TT_FRAMING_HOST] = "Host",
};

/* RFC 9110 tchar: the characters of a field name. */
static const unsigned char tchar[256] = {
    ['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1, ['*'] = 1, ['+'] = 1,
    ['-'] = 1, ['.'] = 1, ['^'] = 1, ['_'] = 1, ['`'] = 1, ['|'] = 1, ['~'] = 1,
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
    ['8'] = 1, ['9'] = 1,
    ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1,
    ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1,
    ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1,
    ['Y'] = 1, ['Z'] = 1,
    ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1,
    ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1,
    ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1,
    ['y'] = 1, ['z'] = 1,
};

static bool refuse(struct tt_framing *f, const char *field, const char *why) {
  f->bad = true;
  f->field = field;
  f->why = why;
  return false;
}

/* The single-instance header this name is, or -1: by length first, so most
 * names cost one switch. */
static int single_of(const char *name, size_t n) {
  int h;
  switch (n) {
  case 4:
    h = TT_FRAMING_HOST;
    break;
  case 8:
    h = TT_FRAMING_IF_MATCH;
    break;
  case 12:
    h = TT_FRAMING_CONTENT_TYPE;
    break;
  case 13:
    h = (name[0] | 0x20) == 'a' ? TT_FRAMING_AUTHORIZATION : TT_FRAMING_IF_NONE_MATCH;
    break;
  case 14:
    h = TT_FRAMING_CONTENT_LENGTH;
    break;
  case 17:
    h = TT_FRAMING_TRANSFER_ENCODING;
    break;
  case 21:
    h = TT_FRAMING_PARTNER;
    break;
  default:
    return -1;
  }
  return strncasecmp(name, single_names[h], n) == 0 ? h : -1;
}

bool tt_framing_begin(struct tt_framing *f, const char *line_end) {
  *f = (struct tt_framing){0};
  if (line_end == NULL)
    return true;
  if (line_end[0] != '\0' || line_end[1] != '\0')
    return refuse(f, NULL, "the request line must end with CRLF");
  f->expect = line_end + 2;
  return true;
}

/* Where the field's line must be in the in-place buffer: at f->expect, the
 * colon (now NUL) right after the name, only spaces and tabs up to the
 * value, and CR LF (both NUL) right after it. Reads stay inside that line
 * and its line end, which the HTTP layer has already received. */
static bool in_place(struct tt_framing *f, const char *name, size_t name_len, const char *value,
                     size_t value_len) {
  if (name != f->expect || name[name_len] != '\0' || value < name + name_len + 1)
    return false;
  for (const char *p = name + name_len + 1; p < value; p++)
    if (*p != ' ' && *p != '\t')
      return false;
  if (value[value_len] != '\0' || value[value_len + 1] != '\0')
    return false;
  f->expect = value + value_len + 2;
  return true;
}

static bool content_length_ok(struct tt_framing *f, const char *v, size_t n) {
  uint64_t x = 0;
  if (n == 0)
    return false;
  for (size_t i = 0; i < n; i++) {
    if (v[i] < '0' || v[i] > '9')
      return false;
    unsigned d = (unsigned)(v[i] - '0');
    if (x > (UINT64_MAX - d) / 10)
      return false;
    x = x * 10 + d;
  }
  /* All ones is the HTTP layer's "length unknown" (MHD_SIZE_UNKNOWN). */
  if (x == UINT64_MAX)
    return false;
  f->content_length = x;
  return true;
}

bool tt_framing_field(struct tt_framing *f, const char *name, size_t name_len, const char *value,
                      size_t value_len) {
  if (f->expect && !in_place(f, name, name_len, value, value_len))
    return refuse(f, NULL,
                  "the header section must be field lines ending with CRLF, without NUL "
                  "bytes or obs-fold continuation lines");
  if (name_len == 0)
    return refuse(f, NULL, "a header field name is empty");
  for (size_t i = 0; i < name_len; i++)
    if (!tchar[(unsigned char)name[i]])
      return refuse(f, NULL,
                    "a header field name has a character outside RFC 9110's token "
                    "(whitespace before the colon, or a separator)");
  int h = single_of(name, name_len);
  const char *field = h >= 0 ? single_names[h] : NULL;
  for (size_t i = 0; i < value_len; i++) {
    unsigned char c = (unsigned char)value[i];
    if ((c < 0x20 && c != '\t') || c == 0x7f) {
      /* The name is a token here, so it may be quoted in the answer. */
      f->name = name;
      f->name_len = name_len;
      return refuse(f, field, "a header value has a control character (other than tab)");
    }
  }
  if (h < 0)
    return true;
  if (f->seen & (1u << h))
    return refuse(f, field, "this header may appear only once");
  f->seen |= 1u << h;
  if (h == TT_FRAMING_TRANSFER_ENCODING &&
      !(value_len == 7 && strncasecmp(value, "chunked", 7) == 0))
    return refuse(f, field, "the only transfer coding accepted is a lone \"chunked\"");
  if (h == TT_FRAMING_CONTENT_LENGTH && !content_length_ok(f, value, value_len))
    return refuse(f, field, "Content-Length must be a decimal number of bytes");
  return true;
}

bool tt_framing_end(struct tt_framing *f, bool http10, const char *section_end) {
  if (f->bad)
    return false;
  /* The empty line that ends the section: CR LF, both NUL now. */
  if (f->expect &&
      (f->expect + 2 != section_end || f->expect[0] != '\0' || f->expect[1] != '\0'))
    return refuse(f, NULL, "the header section must end with an empty line (CRLF)");
  if (tt_framing_has(f, TT_FRAMING_TRANSFER_ENCODING)) {
    if (tt_framing_has(f, TT_FRAMING_CONTENT_LENGTH))
      return refuse(f, single_names[TT_FRAMING_TRANSFER_ENCODING],
                    "Transfer-Encoding and Content-Length may not both be sent");
    if (http10)
      return refuse(f, single_names[TT_FRAMING_TRANSFER_ENCODING],
                    "HTTP/1.0 requests may not use Transfer-Encoding");
  }
  if (!http10 && !tt_framing_has(f, TT_FRAMING_HOST))
    return refuse(f, single_names[TT_FRAMING_HOST], "an HTTP/1.1 request must send Host");
  return true;
}
