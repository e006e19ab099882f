/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_ops.c -- libFuzzer target for whole ORM requests on the memory
 * backend: item create/put/get/patch/delete, query and scan bodies,
 * batch-get/batch-write bodies and transaction bodies, parsed and run
 * exactly as the API's handlers start them, on a fresh backend per input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* At most this many requests per input, so one input stays fast. */
#define MAX_OPS 4

/* The input is up to MAX_OPS requests separated by NUL bytes. Each is
 * <kind byte><model byte><flags byte><raw key>\n<JSON body>: kind as in
 * fz_op_kind_of, model by index ('0' + i), flags as FZ_FLAG_* ('@' = none). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_init();
  if (size < 3)
    return 0;
  fz_backend_memory();
  const char *p = (const char *)data, *end = p + size;
  for (int n = 0; n < MAX_OPS && p + 3 <= end; n++) {
    const char *nul = memchr(p, '\0', (size_t)(end - p));
    const char *stop = nul ? nul : end;
    if (stop - p < 3)
      break;
    enum fz_op_kind kind = fz_op_kind_of((uint8_t)p[0]);
    const struct tt_model *m = fz_model((uint8_t)p[1] & 7);
    unsigned flags = (uint8_t)p[2];
    const char *key, *rest;
    size_t key_len, rest_len;
    fz_split_line(p + 3, (size_t)(stop - p - 3), &key, &key_len, &rest, &rest_len);
    json_t *body = fz_body(rest, rest_len);
    if (body != NULL) {
      fz_op(kind, m, flags, key, key_len, body, 0);
      json_decref(body);
    }
    if (nul == NULL)
      break;
    p = nul + 1;
  }
  fz_backend_close();
  return 0;
}
