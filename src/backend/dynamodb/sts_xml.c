/* SPDX-License-Identifier: Apache-2.0 */
/* sts_xml.c -- reads the credentials and the error code out of STS's XML
 * answers. STS's Query API answers XML only (JSON is not offered for every
 * action), and we need four text fields: a bounded substring search is
 * enough and keeps an XML library out of the daemon. */
#include "backend/dynamodb/sts_xml.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "backend/dynamodb/creds_internal.h"
#include "util/hex.h"

/* Finds <tag>...</tag> inside [s, e). */
static bool xml_find(const char *s, const char *e, const char *tag, const char **vs,
                     const char **ve) {
  char open[64], close[64];
  snprintf(open, sizeof(open), "<%s>", tag);
  snprintf(close, sizeof(close), "</%s>", tag);
  const char *a = memmem(s, (size_t)(e - s), open, strlen(open));
  if (a == NULL)
    return false;
  a += strlen(open);
  const char *b = memmem(a, (size_t)(e - a), close, strlen(close));
  if (b == NULL)
    return false;
  *vs = a;
  *ve = b;
  return true;
}

/* Decodes the text of an element (the five named entities and numeric
 * ASCII references) into out[n]. Returns the length or -1. */
static long xml_text(const char *s, const char *e, char *out, size_t n) {
  size_t w = 0;
  while (s < e) {
    char c = *s++;
    if (c == '<')
      return -1; /* nested markup: not a text value */
    if (c == '&') {
      const char *semi = memchr(s, ';', (size_t)(e - s));
      if (semi == NULL || semi - s > 8)
        return -1;
      size_t en = (size_t)(semi - s);
      if (en == 3 && memcmp(s, "amp", 3) == 0)
        c = '&';
      else if (en == 2 && memcmp(s, "lt", 2) == 0)
        c = '<';
      else if (en == 2 && memcmp(s, "gt", 2) == 0)
        c = '>';
      else if (en == 4 && memcmp(s, "quot", 4) == 0)
        c = '"';
      else if (en == 4 && memcmp(s, "apos", 4) == 0)
        c = '\'';
      else if (en >= 2 && s[0] == '#') {
        unsigned v = 0;
        bool hexa = s[1] == 'x' || s[1] == 'X';
        const char *d = s + (hexa ? 2 : 1);
        if (d == semi)
          return -1;
        for (; d < semi; d++) {
          int dv = tt_hex_digit((unsigned char)*d);
          if (dv < 0 || (!hexa && dv > 9))
            return -1;
          v = v * (hexa ? 16u : 10u) + (unsigned)dv;
          if (v > 0x7f)
            return -1; /* credentials are ASCII */
        }
        c = (char)v;
      } else {
        return -1;
      }
      s = semi + 1;
    }
    if (w + 1 >= n)
      return -1;
    out[w++] = c;
  }
  out[w] = '\0';
  return (long)w;
}

int tt_sts_parse_credentials(const char *body, size_t len, const char *source,
                             struct tt_creds *out, const char **why) {
  struct tt_creds tmp;
  char expires[64];
  const char *cs, *ce, *vs, *ve;
  int64_t exp = 0;
  int rc = -1;
  memset(&tmp, 0, sizeof(tmp));
  const struct {
    const char *tag, *why;
    char *buf;
    size_t cap;
  } f[] = {
      {"AccessKeyId", "the STS response has no valid AccessKeyId", tmp.access_key_id,
       sizeof(tmp.access_key_id)},
      {"SecretAccessKey", "the STS response has no valid SecretAccessKey", tmp.secret_access_key,
       sizeof(tmp.secret_access_key)},
      {"SessionToken", "the STS response has no valid SessionToken", tmp.session_token,
       sizeof(tmp.session_token)},
      {"Expiration", "the STS response has no valid Expiration", expires, sizeof(expires)},
  };
  long n[4];
  tt_creds_clear(out);
  if (body == NULL || !xml_find(body, body + len, "Credentials", &cs, &ce)) {
    *why = "the STS response has no Credentials element";
    goto out;
  }
  for (size_t i = 0; i < 4; i++) {
    if (!xml_find(cs, ce, f[i].tag, &vs, &ve) ||
        (n[i] = xml_text(vs, ve, f[i].buf, f[i].cap)) <= 0 ||
        (i == 3 && creds_parse_time(expires, (size_t)n[i], &exp) != 0)) {
      *why = f[i].why;
      goto out;
    }
  }
  const char *fill_why = NULL;
  if (creds_fill(out, tmp.access_key_id, (size_t)n[0], tmp.secret_access_key, (size_t)n[1],
                 tmp.session_token, (size_t)n[2], exp, source, &fill_why) != 0) {
    *why = "the STS response holds credentials too long or with invalid characters";
    goto out;
  }
  rc = 0;
out:
  tt_creds_clear(&tmp);
  if (rc != 0)
    tt_creds_clear(out);
  return rc;
}

void tt_sts_error_code(const char *body, size_t len, char *out, size_t n) {
  const char *vs, *ve;
  if (n == 0)
    return;
  out[0] = '\0';
  if (body == NULL || !xml_find(body, body + len, "Code", &vs, &ve))
    return;
  size_t w = 0;
  for (; vs < ve && w + 1 < n; vs++) {
    char c = *vs;
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
          c == '.' || c == '_'))
      break;
    out[w++] = c;
  }
  out[w] = '\0';
}
