/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_trace.c -- libFuzzer target for the trace-context and OTEL_* list
 * parsers (obs/trace.c, obs/otlp.c): traceparent, tracestate,
 * OTEL_EXPORTER_OTLP_HEADERS and OTEL_RESOURCE_ATTRIBUTES. The input is a
 * length-delimited, non-NUL-terminated buffer, as a header value arrives;
 * accepted values must round-trip and stay within their bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "obs/otlp.h"
#include "obs/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* An exact-size copy, so ASan sees any read past the end. */
  char *buf = malloc(size ? size : 1);
  if (buf == NULL)
    return 0;
  memcpy(buf, data, size);
  struct tt_trace_ctx c;
  if (tt_traceparent_parse(buf, size, &c) == 0) {
    char out[TT_TRACEPARENT_LEN + 1];
    tt_traceparent_format(&c, out);
    struct tt_trace_ctx again;
    if (tt_traceparent_parse(out, strlen(out), &again) != 0 ||
        memcmp(again.trace_id, c.trace_id, 16) != 0 || memcmp(again.span_id, c.span_id, 8) != 0)
      abort();
  }
  if (tt_tracestate_valid(buf, size) && size > TT_TRACESTATE_MAX)
    abort();
  char why[160];
  for (int header = 0; header < 2; header++) {
    struct tt_otlp_kvs kv;
    if (tt_otlp_kv_parse(buf, size, header, &kv, why, sizeof(why)) == 0) {
      if (kv.n > TT_OTLP_KV_MAX)
        abort();
      for (size_t i = 0; i < kv.n; i++)
        if (kv.items[i].key[0] == '\0' || strlen(kv.items[i].value) > size)
          abort();
      tt_otlp_kvs_free(&kv);
    } else if (kv.n != 0 || kv.items != NULL) {
      abort();
    }
  }
  free(buf);
  return 0;
}
