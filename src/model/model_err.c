/* SPDX-License-Identifier: Apache-2.0 */
/* model_err.c -- ValidationError formatting shared by the model module's files. */
#include "model/model_err.h"

#include <stdio.h>
#include <string.h>

void tt_model_utf8_trim(char *s) {
  size_t n = strlen(s);
  if (n == 0)
    return;
  /* Walk back over continuation bytes to the lead byte of the last
   * sequence, then drop that sequence if it is shorter than its lead
   * byte announces. */
  size_t i = n;
  size_t cont = 0;
  while (i > 0 && ((unsigned char)s[i - 1] & 0xC0u) == 0x80u && cont < 4) {
    i--;
    cont++;
  }
  if (i == 0) {
    s[0] = '\0';
    return;
  }
  unsigned char lead = (unsigned char)s[i - 1];
  size_t want;
  if (lead < 0x80u)
    want = 0;
  else if ((lead & 0xE0u) == 0xC0u)
    want = 1;
  else if ((lead & 0xF0u) == 0xE0u)
    want = 2;
  else if ((lead & 0xF8u) == 0xF0u)
    want = 3;
  else
    want = 0; /* not a lead byte: leave it, the input was not UTF-8 */
  if (lead >= 0x80u && cont < want)
    s[i - 1] = '\0';
}

int tt_model_verrorf(struct tt_error *err, enum tt_err_code code, const char *field,
                     const char *fmt, va_list ap) {
  char msg[sizeof(((struct tt_error *)0)->message)];
  vsnprintf(msg, sizeof(msg), fmt, ap);
  tt_model_utf8_trim(msg);
  char fld[sizeof(((struct tt_error *)0)->field)];
  snprintf(fld, sizeof(fld), "%s", field ? field : "");
  tt_model_utf8_trim(fld);
  return tt_error_set(err, code, fld, "%s", msg);
}

int tt_model_errorf(struct tt_error *err, enum tt_err_code code, const char *field,
                    const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tt_model_verrorf(err, code, field, fmt, ap);
  va_end(ap);
  return -1;
}
