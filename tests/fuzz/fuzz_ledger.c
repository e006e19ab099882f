/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_ledger.c -- libFuzzer target for the job ledger's requests (jobs,
 * transitions, records, leases, idempotency records, lists, semaphores) run through
 * tt_ledger_start on the memory backend, a fresh one per input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ledger/ledger.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_OPS 4
#define NPARAMS 12

/* One request: <kind byte>params\n<JSON body>. The kind byte is 'A' +
 * kind - 1 (A table ensure ... M request complete), any byte modulo 13,
 * except 'n' to 'q': the semaphore kinds (acquire, refresh, release,
 * inspect), kept out of the modulo so that older corpus entries keep their
 * meaning; params are '|'-separated: job_id|record_id|key|owner|status|
 * tenant_id|limit|cursor|order|scope|subject|slot (empty: absent, except the
 * ids the path always has). */
static void one(const char *p, size_t n) {
  struct fz_run r;
  const char *line, *rest;
  size_t line_len, rest_len;
  const char *v[NPARAMS] = {0};
  fz_split_line(p + 1, n - 1, &line, &line_len, &rest, &rest_len);
  json_t *body = fz_body(rest, rest_len);
  if (body == NULL)
    return;
  struct tt_ledger_op op;
  fz_ledger_begin(&r, &op);
  for (size_t i = 0, at = 0; i < NPARAMS && at <= line_len; i++) {
    const char *bar = memchr(line + at, '|', line_len - at);
    size_t len = bar ? (size_t)(bar - line - at) : line_len - at;
    v[i] = tt_arena_strndup(&r.arena, line + at, len);
    if (v[i] == NULL)
      abort();
    at += len + 1;
  }
  uint8_t k = (uint8_t)p[0];
  op.kind = k >= 'n' && k <= 'q' ? (enum tt_ledger_kind)(TT_LEDGER_SEM_ACQUIRE + (k - 'n'))
                                 : (enum tt_ledger_kind)(k % 13 + 1);
  op.job_id = v[0] ? v[0] : "";
  op.record_id = v[1] ? v[1] : "";
  op.key = v[2] ? v[2] : "";
  op.owner = v[3] && v[3][0] ? v[3] : NULL;
  op.list.status = v[4] && v[4][0] ? v[4] : NULL;
  op.list.tenant_id = v[5] && v[5][0] ? v[5] : NULL;
  op.list.limit = v[6] && v[6][0] ? v[6] : NULL;
  op.list.cursor = v[7] && v[7][0] ? v[7] : NULL;
  op.list.order = v[8] && v[8][0] ? v[8] : NULL;
  op.scope = v[9] ? v[9] : "";
  op.subject = v[10] ? v[10] : "";
  op.slot = v[11] && v[11][0] ? v[11] : NULL;
  op.body = json_object_size(body) ? body : NULL;
  fz_ledger_end(&r, &op);
  json_decref(body);
}

/* Up to MAX_OPS requests separated by NUL bytes, on one fresh backend. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_init();
  if (size < 1)
    return 0;
  fz_backend_memory_table(TT_LEDGER_DEFAULT_TABLE);
  const char *p = (const char *)data, *end = p + size;
  for (int n = 0; n < MAX_OPS && p < end; n++) {
    const char *nul = memchr(p, '\0', (size_t)(end - p));
    const char *stop = nul ? nul : end;
    if (stop > p)
      one(p, (size_t)(stop - p));
    if (nul == NULL)
      break;
    p = nul + 1;
  }
  fz_backend_close();
  return 0;
}
