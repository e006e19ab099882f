/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_framing.c -- libFuzzer target for api/framing.c: the input is a
 * request's request line and header section; it is parsed in place the way
 * libmicrohttpd 0.9.75 does (tests/unit/mhd_fields.h) and the framing
 * checks must agree with a strict RFC 9112 reading of the raw bytes on
 * every input MHD would hand to the daemon, and never read outside the
 * section (ASan). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/framing.h"
#include "tests/unit/mhd_fields.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
    if (ok != ref_accepts((const char *)data, size))
      abort();
    if (!ok && (f.why == NULL || !f.bad))
      abort();
  }
  free(buf);
  return 0;
}
