/* SPDX-License-Identifier: Apache-2.0 */
/* mhd_fields.h -- for tests of api/framing.c: how libmicrohttpd 0.9.75
 * leaves a request's header fields (connection.c: get_next_header_line,
 * process_header_line, process_broken_line), and a strict reference reading
 * of the same bytes by RFC 9112 to compare tt_framing with. */
#ifndef TT_TESTS_MHD_FIELDS_H
#define TT_TESTS_MHD_FIELDS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "api/framing.h"

#define MHD_FIELDS_MAX 64

struct mhd_fields {
  const char *version;     /* NUL-terminated, in place */
  const char *version_end; /* line_end for tt_framing_begin */
  const char *section_end; /* just past the empty line */
  size_t n;
  struct {
    const char *name, *value;
    size_t name_len, value_len;
  } f[MHD_FIELDS_MAX];
  char fold[8192]; /* names that obs-fold continuations were appended to */
  size_t fold_used;
};

/* The next line of buf[*pos..len), its line end replaced by NUL (CRLF or a
 * bare LF, as MHD 0.9.75 takes either); NULL when no line end is left. */
static char *mhd_next_line(char *buf, size_t len, size_t *pos, size_t *line_len) {
  for (size_t i = *pos; i < len; i++) {
    if (buf[i] == '\r' && i + 1 < len && buf[i + 1] == '\n') {
      char *line = buf + *pos;
      *line_len = i - *pos;
      buf[i] = buf[i + 1] = '\0';
      *pos = i + 2;
      return line;
    }
    if (buf[i] == '\n') {
      char *line = buf + *pos;
      *line_len = i - *pos;
      buf[i] = '\0';
      *pos = i + 1;
      return line;
    }
  }
  return NULL;
}

/* Parses buf (len bytes, modified in place) as MHD 0.9.75 would up to the empty line. Returns 0 when MHD would
 * hand the fields to the application, -1 when it refuses or waits. */
static int mhd_fields_parse(char *buf, size_t len, struct mhd_fields *m) {
  size_t pos = 0;
  m->n = 0;
  m->fold_used = 0;
  size_t line_len;
  char *line = mhd_next_line(buf, len, &pos, &line_len);
  if (line == NULL)
    return -1;
  /* The version is what follows the last space; MHD wants exactly 8 bytes. */
  char *sp = NULL;
  for (size_t i = line_len; i > 0 && sp == NULL; i--)
    if (line[i - 1] == ' ')
      sp = line + i - 1;
  if (sp == NULL || sp == line || line + line_len - (sp + 1) != 8)
    return -1;
  *sp = '\0';
  m->version = sp + 1;
  m->version_end = sp + 9;
  if (memcmp(m->version, "HTTP/1.", 7) != 0 || (m->version[7] != '0' && m->version[7] != '1'))
    return -1;
  char *last = NULL, *colon = NULL;
  for (;;) {
    line = mhd_next_line(buf, len, &pos, &line_len);
    if (line == NULL)
      return -1;
    if (last && (line[0] == ' ' || line[0] == '\t')) {
      /* MHD 0.9.75 appends the continuation to the *name*, in a new block. */
      const char *t = line;
      while (*t == ' ' || *t == '\t')
        t++;
      size_t ln = strlen(last), tn = strlen(t);
      if (m->fold_used + ln + tn + 1 > sizeof(m->fold))
        return -1;
      char *nb = m->fold + m->fold_used;
      memcpy(nb, last, ln);
      memcpy(nb + ln, t, tn + 1);
      m->fold_used += ln + tn + 1;
      last = nb;
      continue;
    }
    if (last) {
      if (m->n == MHD_FIELDS_MAX)
        return -1;
      m->f[m->n].name = last;
      m->f[m->n].name_len = strlen(last);
      m->f[m->n].value = colon;
      m->f[m->n].value_len = strlen(colon);
      m->n++;
      last = NULL;
    }
    if (line[0] == '\0') {
      m->section_end = buf + pos;
      return 0;
    }
    char *c = strchr(line, ':');
    if (c == NULL)
      return -1;
    *c++ = '\0';
    while (*c == ' ' || *c == '\t')
      c++;
    last = line;
    colon = c;
  }
}

/* Runs tt_framing over what mhd_fields_parse left. */
static bool mhd_fields_framing(const struct mhd_fields *m, struct tt_framing *f) {
  if (!tt_framing_begin(f, m->version_end))
    return false;
  for (size_t i = 0; i < m->n; i++)
    if (!tt_framing_field(f, m->f[i].name, m->f[i].name_len, m->f[i].value, m->f[i].value_len))
      return false;
  return tt_framing_end(f, m->version[7] == '0', m->section_end);
}

/* ---- the reference: RFC 9112 read strictly from the raw bytes ---- */

static bool ref_tchar(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* Whether raw (len bytes: request line, fields, empty line, then anything)
 * has a request line ending in CRLF and a header section tt_framing must
 * accept. (The request target's own checks are api/server.c's.) Exact for
 * inputs without NUL bytes; with them, see fuzz_framing.c. */
static bool ref_accepts(const char *raw, size_t len) {
  const char *lf = memchr(raw, '\n', len);
  if (lf == NULL || lf == raw || lf[-1] != '\r')
    return false;
  size_t i = (size_t)(lf - raw) - 1;
  bool http10 = i >= 8 && memcmp(raw + i - 8, "HTTP/1.0", 8) == 0;
  i += 2;
  unsigned seen = 0;
  bool te = false, cl = false;
  for (;;) {
    if (i + 1 < len && raw[i] == '\r' && raw[i + 1] == '\n')
      break;
    if (i < len && raw[i] == '\n')
      return false;
    size_t n0 = i;
    while (i < len && raw[i] != ':' && ref_tchar((unsigned char)raw[i]))
      i++;
    if (i >= len || raw[i] != ':' || i == n0)
      return false;
    size_t nlen = i - n0;
    i++;
    while (i < len && (raw[i] == ' ' || raw[i] == '\t'))
      i++;
    size_t v0 = i;
    while (i < len && raw[i] != '\r' && raw[i] != '\n') {
      unsigned char c = (unsigned char)raw[i];
      if ((c < 0x20 && c != '\t') || c == 0x7f)
        return false;
      i++;
    }
    if (i + 1 >= len || raw[i] != '\r' || raw[i + 1] != '\n')
      return false;
    size_t vlen = i - v0;
    i += 2;
    static const char *const singles[] = {"Authorization", "X-TableTheory-Partner", "If-Match",
                                          "If-None-Match", "Content-Length", "Content-Type",
                                          "Transfer-Encoding", "Host"};
    for (unsigned h = 0; h < 8; h++) {
      if (strlen(singles[h]) != nlen || strncasecmp(raw + n0, singles[h], nlen) != 0)
        continue;
      if (seen & (1u << h))
        return false;
      seen |= 1u << h;
      if (h == 6) {
        te = true;
        if (vlen != 7 || strncasecmp(raw + v0, "chunked", 7) != 0)
          return false;
      }
      if (h == 4) {
        cl = true;
        if (vlen == 0)
          return false;
        uint64_t x = 0;
        for (size_t k = 0; k < vlen; k++) {
          char c = raw[v0 + k];
          if (c < '0' || c > '9')
            return false;
          if (x > (UINT64_MAX - (uint64_t)(c - '0')) / 10)
            return false;
          x = x * 10 + (uint64_t)(c - '0');
        }
        if (x == UINT64_MAX)
          return false;
      }
    }
  }
  if (te && (cl || http10))
    return false;
  if (!http10 && !(seen & (1u << 7)))
    return false;
  return true;
}

#endif
