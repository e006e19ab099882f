/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_ddb.c -- libFuzzer target for DynamoDB's answers as the dynamodb
 * backend and the layers above read them: each backend call of a fixed,
 * valid request (item get/put/patch/delete, unique-attribute writes,
 * query, scan, batch-get/-write, transactions, tables, ledger steps) is
 * answered with the next fuzzed HTTP response, read by tt_ddb_call_answer
 * exactly as the backend reads it (typed calls into typed results). */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/dynamodb/typed_wire.h"
#include "harness.h"
#include "ledger/ledger.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- a backend that answers from the input ------------------------------- */

struct scripted {
  struct tt_backend pub;
  uv_idle_t idle;
  struct tt_backend_call *head, *tail;
  const char *p, *end; /* responses left, separated by NUL bytes */
  unsigned calls;
  void (*closed)(void *arg);
  void *closed_arg;
};

/* Builds the next HTTP response: "<status or transport byte>\n<header
 * lines>\n\n<body>". A first byte that is not a digit is a transport
 * failure (byte modulo the transports). Header names are lower-cased, as
 * http.c stores them. */
static void next_response(struct scripted *s, struct tt_http_response *r) {
  memset(r, 0, sizeof(*r));
  tt_buf_init(&r->body, 0);
  tt_buf_init(&r->headers, 0);
  const char *nul = memchr(s->p, '\0', (size_t)(s->end - s->p));
  const char *stop = nul ? nul : s->end;
  const char *q = s->p;
  s->p = nul ? nul + 1 : s->end;
  if (q < stop && (*q < '0' || *q > '9')) {
    r->transport = (enum tt_http_transport)(1 + (uint8_t)*q % TT_HTTP_OTHER);
    return;
  }
  while (q < stop && *q >= '0' && *q <= '9' && r->status < 100000)
    r->status = r->status * 10 + (*q++ - '0');
  if (q < stop && *q == '\n')
    q++;
  while (q < stop && *q != '\n') { /* header lines until an empty one */
    const char *nl = memchr(q, '\n', (size_t)(stop - q));
    const char *le = nl ? nl : stop;
    const char *colon = memchr(q, ':', (size_t)(le - q));
    for (const char *c = q; c < le; c++) {
      char ch = c < (colon ? colon : le) ? (char)tolower((unsigned char)*c) : *c;
      if (tt_buf_append(&r->headers, &ch, 1) != 0)
        abort();
    }
    if (tt_buf_puts(&r->headers, "\r\n") != 0)
      abort();
    q = nl ? nl + 1 : stop;
  }
  if (q < stop && *q == '\n')
    q++;
  if (tt_buf_append(&r->body, q, (size_t)(stop - q)) != 0)
    abort();
}

static void answer(struct scripted *s, struct tt_backend_call *c) {
  c->response = NULL;
  if (c->canceled) {
    c->status = tt_backend_error_set(&c->error, "RequestCanceled", 0, "canceled");
  } else if (s->p >= s->end) {
    /* Out of script: a definite, non-retryable refusal ends every loop. */
    c->status = tt_backend_error_set(&c->error, "ValidationException", 400, "no more answers");
  } else {
    struct tt_http_response r;
    next_response(s, &r);
    tt_ddb_call_answer(c, &r);
    tt_buf_free(&r.body);
    tt_buf_free(&r.headers);
  }
}

static void idle_cb(uv_idle_t *h) {
  struct scripted *s = h->data;
  struct tt_backend_call *last = s->tail;
  while (s->head) {
    struct tt_backend_call *c = s->head;
    s->head = c->next;
    if (s->head == NULL)
      s->tail = NULL;
    c->next = NULL;
    bool was_last = c == last;
    answer(s, c);
    c->done(c);
    if (was_last)
      break;
  }
  if (s->head == NULL)
    uv_idle_stop(&s->idle);
}

static int sb_start(struct tt_backend *b, struct tt_backend_call *call) {
  struct scripted *s = b->impl;
  if ((call->request == NULL && !tt_backend_call_typed(call)) || ++s->calls > 64)
    return -1; /* a bound on one input's calls: refused synchronously */
  call->next = NULL;
  call->canceled = false;
  if (s->tail)
    s->tail->next = call;
  else
    s->head = call;
  s->tail = call;
  uv_idle_start(&s->idle, idle_cb);
  return 0;
}

static void sb_cancel(struct tt_backend *b, struct tt_backend_call *call) { call->canceled = true; }

static void sb_idle_closed(uv_handle_t *h) {
  struct scripted *s = h->data;
  s->closed(s->closed_arg);
}

static void sb_close(struct tt_backend *b, void (*closed)(void *arg), void *arg) {
  struct scripted *s = b->impl;
  s->closed = closed;
  s->closed_arg = arg;
  uv_close((uv_handle_t *)&s->idle, sb_idle_closed);
}

static void sb_destroy(struct tt_backend *b) { free(b->impl); }

static const struct tt_backend_ops sb_ops = {"scripted", sb_start, sb_cancel, sb_close,
                                             sb_destroy, NULL};

static void scripted_use(const char *p, size_t n) {
  struct scripted *s = calloc(1, sizeof(*s));
  if (s == NULL || uv_idle_init(&FZ.loop, &s->idle) != 0)
    abort();
  s->idle.data = s;
  s->pub.ops = &sb_ops;
  s->pub.loop = &FZ.loop;
  s->pub.impl = s;
  s->p = p;
  s->end = p + n;
  fz_backend_use(&s->pub);
}

/* ---- the requests ---------------------------------------------------------- */

struct req {
  enum fz_op_kind kind;
  const char *model;
  unsigned flags;
  const char *key;
  const char *body;
};

static const struct req reqs[] = {
    {FZ_GET, "User", FZ_FLAG_CONSISTENT, "U%231/P", "{\"select\":[\"nickname\",\"profile.x\"]}"},
    {FZ_GET, "Order", FZ_FLAG_RAW, "O%231/2024", "{}"},
    {FZ_PUT, "User", FZ_FLAG_IF_MATCH | (3u << 5), "U%231/P",
     "{\"PK\":\"U#1\",\"SK\":\"P\",\"nickname\":\"n\",\"tags\":[\"a\"]}"},
    {FZ_CREATE, "Order", 0, "", "{\"PK\":\"O#1\",\"SK\":\"2024\",\"amount\":5}"},
    {FZ_PATCH, "Order", FZ_FLAG_IF_MATCH | (1u << 5), "O%231/2024",
     "{\"set\":{\"status\":\"PAID\"},\"add\":{\"amount\":1}}"},
    {FZ_DELETE, "User", FZ_FLAG_IF_MATCH, "U%231/P", "{}"},
    {FZ_CREATE, "Member", 0, "", "{\"id\":\"m1\",\"email\":\"a@b.c\",\"num\":1}"},
    {FZ_PATCH, "Member", 0, "m1", "{\"set\":{\"email\":\"d@e.f\"}}"},
    {FZ_DELETE, "Member", 0, "m1", "{}"},
    {FZ_QUERY, "Order", 0, "",
     "{\"key\":[{\"attr\":\"PK\",\"op\":\"=\",\"value\":\"O#1\"}],\"limit\":3,\"order\":\"desc\","
     "\"select\":[\"SK\",\"amount\"]}"},
    {FZ_QUERY, "Order", 0, "",
     "{\"index\":\"gsi-status\",\"key\":[{\"attr\":\"status\",\"op\":\"=\",\"value\":\"NEW\"}],"
     "\"count\":true}"},
    {FZ_SCAN, "User", 0, "", "{\"segments\":2,\"limit\":5}"},
    {FZ_BATCH_GET, "Order", 0, "",
     "{\"keys\":[{\"PK\":\"O#1\",\"SK\":\"a\"},{\"PK\":\"O#1\",\"SK\":\"b\"},{\"PK\":\"O#2\","
     "\"SK\":\"c\"}]}"},
    {FZ_BATCH_WRITE, "Order", 0, "",
     "{\"put\":[{\"PK\":\"O#1\",\"SK\":\"a\"},{\"PK\":\"O#1\",\"SK\":\"b\"}],\"delete\":[{\"PK\":"
     "\"O#2\",\"SK\":\"c\"}]}"},
    {FZ_TXN_WRITE, NULL, 0, "",
     "{\"client_token\":\"t\",\"items\":[{\"op\":\"create\",\"model\":\"Member\",\"item\":{\"id\":"
     "\"m2\",\"email\":\"x@y.z\"}},{\"op\":\"update\",\"model\":\"Order\",\"key\":{\"PK\":\"O#1\","
     "\"SK\":\"a\"},\"set\":{\"status\":\"X\"}},{\"op\":\"check\",\"model\":\"User\",\"key\":{"
     "\"PK\":\"U\",\"SK\":\"P\"},\"condition\":{\"attr\":\"nickname\",\"op\":\"exists\"}}]}"},
    {FZ_TXN_GET, NULL, 0, "",
     "{\"items\":[{\"model\":\"Member\",\"key\":{\"id\":\"m1\"}},{\"model\":\"Order\",\"key\":{"
     "\"PK\":\"O#1\",\"SK\":\"a\"},\"select\":[\"amount\"]}]}"},
    {FZ_TABLE_ENSURE, "Order", 0, "", "{}"},
    {FZ_TABLE_DESCRIBE, "User", 0, "", "{}"},
};
#define NREQS (sizeof(reqs) / sizeof(reqs[0]))

/* Ledger steps read their own results back (ledger_result_json). */
static const struct {
  enum tt_ledger_kind kind;
  const char *body;
} ledger_reqs[] = {
    {TT_LEDGER_JOB_GET, NULL},
    {TT_LEDGER_JOB_TRANSITION, "{\"expected_version\":1,\"to\":\"RUNNING\"}"},
    {TT_LEDGER_JOB_LIST, NULL},
    {TT_LEDGER_LEASE_ACQUIRE, "{\"owner\":\"w\",\"duration_seconds\":30}"},
    {TT_LEDGER_LEASE_RELEASE, NULL},
    {TT_LEDGER_REQUEST_CREATE, "{}"},
    {TT_LEDGER_REQUEST_COMPLETE, "{\"result\":{\"n\":1}}"},
    {TT_LEDGER_RECORD_LIST, NULL},
};
#define NLEDGER (sizeof(ledger_reqs) / sizeof(ledger_reqs[0]))

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void run_ledger(unsigned i) {
  struct fz_run r;
  struct tt_ledger_op op;
  json_t *body = ledger_reqs[i].body ? fz_body(ledger_reqs[i].body, strlen(ledger_reqs[i].body))
                                     : NULL;
  fz_ledger_begin(&r, &op);
  op.kind = ledger_reqs[i].kind;
  op.job_id = "j1";
  op.record_id = "r1";
  op.key = "k1";
  op.owner = "w";
  op.list.status = op.kind == TT_LEDGER_JOB_LIST || op.kind == TT_LEDGER_RECORD_LIST ? "RUNNING"
                                                                                     : NULL;
  op.list.limit = "2";
  op.body = body;
  fz_ledger_end(&r, &op);
  json_decref(body);
}

/* The first byte picks the request; the rest are its backend answers in
 * call order, separated by NUL bytes. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_init();
  if (size < 1)
    return 0;
  unsigned pick = data[0] % (NREQS + NLEDGER);
  scripted_use((const char *)data + 1, size - 1);
  FZ.orm.auto_create_tables = false;
  if (pick < NREQS) {
    const struct req *q = &reqs[pick];
    json_t *body = fz_body(q->body, strlen(q->body));
    if (body == NULL)
      abort();
    const struct tt_model *m = q->model ? tt_model_registry_get(FZ.models, q->model) : NULL;
    /* A deadline in the past: unprocessed batch work is reported, not
     * retried after a real sleep. */
    fz_op(q->kind, m, q->flags, q->key, strlen(q->key), body, mono_ns() + 1);
    json_decref(body);
  } else {
    run_ledger(pick - NREQS);
  }
  fz_backend_close();
  return 0;
}
