/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_wire_reader.c -- libFuzzer target for the streaming reader of
 * DynamoDB's typed answers (wire_reader.c), run differentially against the
 * jansson path it replaced (tests/unit/wire_diff.h): the input is one
 * response body, read as a GetItem answer, a write's answer and a
 * Query/Scan answer; any difference in values, order or error aborts. */
#include <stdint.h>
#include <stdlib.h>

#include "tests/unit/wire_diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  int rc;
  if (wd_compare(false, TT_DDB_GET_ITEM, text, size, &rc) != NULL ||
      wd_compare(false, TT_DDB_UPDATE_ITEM, text, size, &rc) != NULL ||
      wd_compare(true, TT_DDB_SCAN, text, size, &rc) != NULL)
    abort();
  return 0;
}
