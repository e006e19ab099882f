/* SPDX-License-Identifier: Apache-2.0 */
/* jobs.c -- /v1/jobs and /v1/semaphores: the job ledger over HTTP (jobs,
 * transitions, records, leases, idempotency requests, leased semaphores);
 * the work is src/ledger's. */
#include <string.h>

#include "api/handlers.h"
#include "ledger/ledger.h"

struct ledger_job {
  struct tt_ledger_op op; /* first */
  struct tt_ledger_result result;
  json_t *body;
};

static void ledger_done(struct tt_ledger_op *op) { (void)op; }

static void ledger_joined(struct tt_request *req) {
  struct ledger_job *job = req->handler_data;
  struct tt_ledger_result *r = &job->result;
  if (r->status != 0)
    tt_request_respond_failure(req, &r->err, r->details, r->retry_after_s);
  else
    tt_request_respond_buf(req, r->http_status, &r->body);
  tt_ledger_result_free(r);
  json_decref(job->body);
  job->body = NULL;
}

/* Reads the path parameter `name` when the route has it. Returns 0, or -1
 * after a 400 (a malformed %-escape). */
static int param(struct tt_request *req, const char *name, const char **out) {
  *out = NULL;
  if (tt_route_param(&req->match, name) == NULL)
    return 0;
  *out = tt_request_param(req, name);
  return *out ? 0 : -1;
}

/* Parses the request and starts the ledger operation its route names
 * (TT_ROUTE_ARG); the answer comes from ledger_joined once every backend
 * call it started is joined. Posts and a record's put carry a body. */
void tt_handle_ledger(struct tt_request *req) {
  enum tt_ledger_kind kind = (enum tt_ledger_kind)tt_route_arg(req->match.route);
  bool with_body = req->method == TT_METHOD_POST || kind == TT_LEDGER_RECORD_PUT;
  struct ledger_job *job = tt_arena_alloc(&req->arena, sizeof(*job));
  if (job == NULL) {
    tt_request_fail(req, TT_ERR_INTERNAL, NULL, "out of memory");
    return;
  }
  struct tt_ledger_op *op = &job->op;
  if (param(req, "id", &op->job_id) != 0 || param(req, "rid", &op->record_id) != 0 ||
      param(req, "key", &op->key) != 0 || param(req, "scope", &op->scope) != 0 ||
      param(req, "subject", &op->subject) != 0)
    return;
  if (with_body && (job->body = tt_request_json_body(req, true)) == NULL)
    return;
  memset(&job->result, 0, sizeof(job->result));
  tt_buf_init(&job->result.body, 0);
  op->kind = kind;
  op->orm = req->server->orm;
  op->join = &req->join;
  op->arena = &req->arena;
  op->request_id = req->request_id;
  op->body = job->body;
  op->result = &job->result;
  op->done = ledger_done;
  op->arg = job;
  if (kind == TT_LEDGER_JOB_LIST || kind == TT_LEDGER_RECORD_LIST) {
    op->list.status = tt_request_query(req, "status");
    op->list.tenant_id = kind == TT_LEDGER_JOB_LIST ? tt_request_query(req, "tenant_id") : NULL;
    op->list.limit = tt_request_query(req, "limit");
    op->list.cursor = tt_request_query(req, "cursor");
    op->list.order = tt_request_query(req, "order");
  }
  if (kind == TT_LEDGER_LEASE_RELEASE || kind == TT_LEDGER_SEM_RELEASE)
    op->owner = tt_request_query(req, "owner");
  if (kind == TT_LEDGER_SEM_RELEASE)
    op->slot = tt_request_query(req, "slot");
  req->handler_data = job;
  req->on_joined = ledger_joined;
  tt_ledger_start(op);
}
