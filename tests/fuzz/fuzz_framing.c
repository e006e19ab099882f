/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_framing.c -- libFuzzer target for api/framing.c: the input is a
 * request's request line and header section; it is parsed in place the way
 * libmicrohttpd 0.9.75 does (tests/unit/mhd_fields.h) and the framing
 * checks must agree with a strict RFC 9112 reading of the raw bytes on
 * every input MHD would hand to the daemon (inputs with NUL bytes: see
 * below), and never read outside the section (ASan). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/framing.h"
#include "tests/unit/mhd_fields.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input without its NUL bytes and with every bare LF made CRLF. */
static char *normalized(const uint8_t *data, size_t size, size_t *out_len) {
  char *out = malloc(2 * size + 1);
  size_t o = 0;
  if (out == NULL)
    return NULL;
  for (size_t i = 0; i < size; i++) {
    if (data[i] == '\0')
      continue;
    if (data[i] == '\n' && (o == 0 || out[o - 1] != '\r'))
      out[o++] = '\r';
    out[o++] = (char)data[i];
  }
  *out_len = o;
  return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* Exactly size bytes: a read past the input is an ASan report. */
  char *buf = malloc(size ? size : 1);
  if (buf == NULL)
    return 0;
  memcpy(buf, data, size);
  static struct mhd_fields m;
  if (mhd_fields_parse(buf, size, &m) == 0) {
    struct tt_framing f;
    bool ok = mhd_fields_framing(&m, &f);
    bool strict = ref_accepts((const char *)data, size);
    if (!ok && (f.why == NULL || !f.bad))
      abort();
    if (memchr(data, '\0', size) == NULL) {
      /* Without NUL bytes the checks are exactly the strict reading. */
      if (ok != strict)
        abort();
    } else {
      /* A replaced line end and a NUL look alike (framing.h): what passes
       * may differ from the strict reading only by NUL bytes and bare LFs,
       * never hide anything else; a strictly valid input always passes. */
      if (strict && !ok)
        abort();
      size_t nlen;
      char *norm = ok ? normalized(data, size, &nlen) : NULL;
      if (norm && !ref_accepts(norm, nlen))
        abort();
      free(norm);
    }
  }
  free(buf);
  return 0;
}
