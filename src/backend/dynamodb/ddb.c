/* SPDX-License-Identifier: Apache-2.0 */
/* ddb.c -- the dynamodb backend: each port call becomes one signed
 * `POST /` of DynamoDB's JSON protocol on the shared HTTP client. */
#include "backend/dynamodb/ddb.h"
#include "value/json_exact.h"

#include <assert.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/dynamodb/endpoint.h"
#include "backend/dynamodb/errors.h"
#include "backend/dynamodb/typed_wire.h"
#include "backend/dynamodb/wire_reader.h"
#include "backend/dynamodb/sigv4.h"
#include "backend/table_json.h"
#include "util/buf.h"

#define DDB_MAGIC 0x44444231u /* "DDB1" */
/* What differs between the AWS JSON services we speak. */
struct service_def {
  const char *name;          /* signing name and endpoint host prefix */
  const char *target_prefix; /* X-Amz-Target before the operation name */
  const char *content_type;
  enum tt_ddb_op first_op, end_op; /* the ops it serves: [first, end) */
  bool secret_answers;       /* answers carry key material: wipe them */
};

static const struct service_def services[] = {
    [TT_DDB_SERVICE_DYNAMODB] = {"dynamodb", "DynamoDB_20120810.", "application/x-amz-json-1.0",
                                 TT_DDB_GET_ITEM, TT_KMS_GENERATE_DATA_KEY, false},
    [TT_DDB_SERVICE_KMS] = {"kms", "TrentService.", "application/x-amz-json-1.1",
                            TT_KMS_GENERATE_DATA_KEY, TT_DDB_OP__COUNT, true},
};
#define SKEW_MIN_S 60 /* smaller differences are SigV4's 5-minute window's business */

enum req_state {
  REQ_CREDS,    /* waiting for the credentials provider */
  REQ_HTTP,     /* the transfer is running */
  REQ_DEFERRED, /* completed, queued for the defer timer */
};

struct ddb;

/* One AWS account calls can be made in: the default one (index 0) and the
 * partner accounts (call->account 1..n), each with its own credentials,
 * region and endpoint. */
struct ddb_account {
  struct tt_creds_provider *creds;
  struct tt_sigv4_cache sigcache;
  char region[48];
  char *url;  /* "https://dynamodb.eu-west-1.amazonaws.com/" */
  char *host; /* the Host header value, exactly as signed */
};

/* The backend's private state of one call (call->impl). */
struct ddb_req {
  struct ddb *d;
  struct ddb_account *a; /* the account the call runs in */
  struct tt_backend_call *call;
  enum req_state state;
  void *creds_handle;
  bool canceled;
  char *body; /* compact request JSON */
  size_t body_len;
  int64_t signed_at; /* unix seconds used for the signature */
  struct tt_http_call http;
};

struct ddb {
  struct tt_backend base;
  unsigned magic;
  const struct service_def *svc;
  struct tt_http *http;
  bool own_http;
  struct ddb_account *accounts; /* [0] = default, then the partners */
  size_t n_accounts;
  uint64_t timeout_ms;
  tt_ddb_clock_fn clock;
  void *clock_arg;
  int64_t skew; /* endpoint clock minus ours, seconds */
  /* Completions that must not run where they arise (inside start or
   * cancel) wait here, linked through call->next, for the defer timer. */
  uv_timer_t defer;
  struct tt_backend_call *defer_head, *defer_tail;
  size_t outstanding;
  bool in_start;
  bool closing;
  int pending_closes;
  void (*closed)(void *arg);
  void *closed_arg;
};

static int64_t now_s(struct ddb *d) {
  return d->clock ? d->clock(d->clock_arg) : (int64_t)time(NULL);
}

/* ---- completion ---- */

static void finish(struct ddb_req *r) {
  struct ddb *d = r->d;
  struct tt_backend_call *call = r->call;
  d->outstanding--;
  call->impl = NULL;
  free(r->body);
  free(r);
  call->done(call); /* may free call */
}

static void on_defer(uv_timer_t *t) {
  struct ddb *d = t->data;
  /* Only what was queued before this callback: a done that starts and
   * fails a new call synchronously cannot keep us here. */
  struct tt_backend_call *list = d->defer_head;
  d->defer_head = d->defer_tail = NULL;
  while (list) {
    struct tt_backend_call *call = list;
    list = call->next;
    call->next = NULL;
    finish(call->impl);
  }
}

/* Completes now when on a loop callback of our own, else via the timer, so
 * done never runs inside start() or cancel(). */
static void complete(struct ddb_req *r, bool defer) {
  struct ddb *d = r->d;
  if (!defer && !d->in_start) {
    finish(r);
    return;
  }
  r->state = REQ_DEFERRED;
  struct tt_backend_call *call = r->call;
  call->next = NULL;
  if (d->defer_tail)
    d->defer_tail->next = call;
  else
    d->defer_head = call;
  d->defer_tail = call;
  uv_timer_start(&d->defer, on_defer, 0, 0);
}

static void fail(struct ddb_req *r, bool defer, const char *type, bool retryable, const char *msg) {
  struct tt_backend_call *call = r->call;
  tt_backend_error_set(&call->error, type, 0, "%s", msg);
  call->error.retryable = retryable;
  call->status = -1;
  complete(r, defer);
}

/* ---- the HTTP answer ---- */

static bool skew_error(const struct tt_backend_error *e) {
  return strcmp(e->type, "RequestTimeTooSkewed") == 0 ||
         strcmp(e->type, "RequestExpired") == 0 || strcmp(e->type, "RequestInTheFuture") == 0 ||
         (strcmp(e->type, "InvalidSignatureException") == 0 &&
          (strstr(e->message, "Signature expired") != NULL ||
           strstr(e->message, "Signature not yet current") != NULL));
}

/* Learns the endpoint's clock from its Date header after a skew error and
 * makes the error retryable when the correction changed the signing time. */
static void adjust_skew(struct ddb_req *r, const struct tt_http_response *resp) {
  struct ddb *d = r->d;
  size_t n;
  const char *v = tt_http_response_header(resp, "date", &n);
  char date[64];
  if (v == NULL || n >= sizeof(date))
    return;
  memcpy(date, v, n);
  date[n] = '\0';
  struct tm tm;
  memset(&tm, 0, sizeof(tm));
  const char *end = strptime(date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == NULL || *end != '\0')
    return;
  int64_t server = (int64_t)timegm(&tm);
  int64_t diff = server - r->signed_at;
  if (diff >= SKEW_MIN_S || diff <= -SKEW_MIN_S) {
    d->skew += diff;
    r->call->error.retryable = true;
  }
}

static void on_http_done(struct tt_http_call *hc, struct tt_http_response *resp, void *arg) {
  (void)hc;
  struct ddb_req *r = arg;
  struct tt_backend_call *call = r->call;
  tt_ddb_call_answer(call, resp);
  if (call->status != 0 && resp->transport == TT_HTTP_OK && skew_error(&call->error))
    adjust_skew(r, resp);
  /* A KMS answer holds a plaintext data key (base64): wipe our copy of the
   * text; the parsed tree is the caller's to wipe (backend/kms/kms.h). */
  if (r->d->svc->secret_answers && resp->body.data)
    OPENSSL_cleanse(resp->body.data, resp->body.alloc);
  finish(r); /* frees r and with it r->http: http.c no longer touches it */
}

/* ---- signing and sending ---- */

static void send_signed(struct ddb_req *r, const struct tt_creds *creds) {
  struct ddb *d = r->d;
  struct ddb_account *a = r->a;
  struct tt_backend_call *call = r->call;
  char target[64];
  snprintf(target, sizeof(target), "%s%s", d->svc->target_prefix, tt_ddb_op_name(call->op));
  struct tt_sigv4_header sh[] = {
      {"Host", a->host}, {"Content-Type", d->svc->content_type}, {"X-Amz-Target", target}};
  struct tt_sigv4_request sreq = {.method = "POST", .path = "/", .headers = sh,
                                  .n_headers = 3, .body = r->body, .body_len = r->body_len};
  struct tt_sigv4_credentials sc = {creds->access_key_id, creds->secret_access_key,
                                    creds->session_token};
  struct tt_sigv4_config cfg = {a->region, d->svc->name, 0, &a->sigcache};
  /* Every attempt is signed afresh: a retry needs a new X-Amz-Date. The
   * header lines are wiped after curl copied them. */
  r->signed_at = now_s(d) + d->skew;
  struct tt_buf lines;
  tt_buf_init(&lines, 0);
  const char *hdrs[3 + TT_SIGV4_MAX_ADDED + 2];
  int rc = tt_sigv4_sign_lines(&sreq, &sc, &cfg, (time_t)r->signed_at, NULL, &lines, hdrs);
  if (rc == -1) {
    tt_sigv4_lines_free(&lines);
    fail(r, false, "SigningError", false, "the request could not be signed");
    return;
  }
  if (rc == 0) {
    struct tt_http_request hreq = {.method = "POST", .url = a->url, .headers = hdrs,
                                   .body = r->body, .body_len = r->body_len,
                                   .timeout_ms = d->timeout_ms};
    r->state = REQ_HTTP;
    rc = tt_http_start(d->http, &r->http, &hreq, on_http_done, r);
  }
  tt_sigv4_lines_free(&lines);
  if (rc != 0)
    fail(r, false, "TransportError", true, "the request to the endpoint could not start");
}

/* The provider had no credentials to sign with. */
static void creds_failed(struct ddb_req *r, const struct tt_error *err) {
  /* The provider's messages never carry a secret (credentials.h). */
  char msg[300];
  snprintf(msg, sizeof(msg), "no AWS credentials: %s",
           err && err->message[0] ? err->message : "the provider gave none");
  /* A refusal (STS AccessDenied, ...) is not retryable; an outage is
   * left to the caller: the provider backs off, so retrying at once
   * would only get the same answer. */
  bool refused = err && err->code == TT_ERR_FORBIDDEN;
  fail(r, false, refused ? "CredentialsRefused" : "CredentialsUnavailable", false, msg);
}

static void on_creds(void *arg, const struct tt_creds *creds, const struct tt_error *err) {
  struct ddb_req *r = arg;
  r->creds_handle = NULL;
  if (r->state != REQ_CREDS)
    return; /* canceled: the provider should not call, but be safe */
  if (creds == NULL || err != NULL) {
    creds_failed(r, err);
    return;
  }
  send_signed(r, creds);
}

/* ---- the port ---- */

static int ddb_start(struct tt_backend *b, struct tt_backend_call *call) {
  struct ddb *d = b->impl;
  assert(d->magic == DDB_MAGIC);
  if (d->closing)
    return UV_ESHUTDOWN;
  bool typed = tt_backend_call_typed(call);
  if (call->op < d->svc->first_op || call->op >= d->svc->end_op ||
      (!typed && !json_is_object(call->request)) || call->account >= d->n_accounts)
    return UV_EINVAL;
  struct ddb_req *r = calloc(1, sizeof(*r));
  if (r == NULL)
    return UV_ENOMEM;
  /* JSON goes out through tt_json_dump, not json_dumps: the port's trees
   * mark a string that begins with U+0000 ("\0S" + text, json_exact.h),
   * which json_dumps would send as part of the value. */
  struct tt_buf body;
  tt_buf_init(&body, 0);
  int rc;
  if (typed && call->table != NULL) {
    /* A typed table operation is sent as its JSON request (table_json.h). */
    json_t *table_req = tt_ddb_table_request_json(call->op, call->table);
    rc = table_req ? tt_json_dump(table_req, 0, &body) : -1;
    json_decref(table_req);
  } else if (typed) {
    rc = call->read    ? tt_ddb_read_request_write(&body, call->read)
         : call->txn   ? tt_ddb_txn_request_write(&body, call->txn)
         : call->batch ? tt_ddb_batch_request_write(&body, call->op, call->batch)
                       : tt_ddb_item_request_write(&body, call->op, call->item);
  } else {
    rc = tt_json_dump(call->request, 0, &body);
  }
  if (rc != 0 || body.data == NULL) {
    tt_buf_free(&body);
    free(r);
    return UV_ENOMEM;
  }
  r->body = body.data; /* the buffer's text is ours now */
  r->body_len = body.len;
  r->d = d;
  r->a = &d->accounts[call->account];
  r->call = call;
  r->state = REQ_CREDS;
  call->impl = r;
  call->next = NULL;
  call->canceled = false;
  call->status = 0;
  call->response = NULL;
  memset(&call->item_out, 0, sizeof(call->item_out));
  memset(&call->read_out, 0, sizeof(call->read_out));
  memset(&call->txn_out, 0, sizeof(call->txn_out));
  memset(&call->batch_out, 0, sizeof(call->batch_out));
  call->table_out = NULL;
  tt_backend_error_clear(&call->error);
  d->outstanding++;
  /* The cached credentials sign at once, inside start; only a miss waits
   * for the provider's get, on the loop. What fails here completes from
   * the defer timer (in_start). */
  d->in_start = true;
  rc = tt_creds_acquire(r->a->creds, on_creds, r, &r->creds_handle);
  d->in_start = false;
  if (rc != 0) { /* the provider promises no callback then */
    d->outstanding--;
    call->impl = NULL;
    free(r->body);
    free(r);
    return rc < 0 ? rc : UV_EIO;
  }
  return 0;
}

static void ddb_cancel(struct tt_backend *b, struct tt_backend_call *call) {
  struct ddb *d = b->impl;
  assert(d->magic == DDB_MAGIC);
  struct ddb_req *r = call->impl;
  if (r == NULL || r->canceled)
    return;
  r->canceled = true;
  call->canceled = true;
  switch (r->state) {
  case REQ_CREDS:
    tt_creds_cancel(r->a->creds, r->creds_handle);
    r->creds_handle = NULL;
    fail(r, true, "RequestCanceled", false, "the request was canceled");
    break;
  case REQ_HTTP:
    tt_http_cancel(d->http, &r->http); /* on_http_done follows with RequestCanceled */
    break;
  case REQ_DEFERRED:
    break; /* already completed: done reports what happened */
  }
}

static void one_closed(struct ddb *d) {
  if (--d->pending_closes == 0 && d->closed)
    d->closed(d->closed_arg);
}

static void on_defer_closed(uv_handle_t *h) { one_closed(h->data); }
static void on_http_closed(void *arg) { one_closed(arg); }

static void ddb_close(struct tt_backend *b, void (*closed)(void *arg), void *arg) {
  struct ddb *d = b->impl;
  assert(d->magic == DDB_MAGIC);
  assert(d->outstanding == 0); /* the port's contract */
  d->closing = true;
  d->closed = closed;
  d->closed_arg = arg;
  d->pending_closes = 1;
  uv_close((uv_handle_t *)&d->defer, on_defer_closed);
  if (d->own_http) {
    d->pending_closes++;
    tt_http_close(d->http, on_http_closed, d);
  }
}

static void accounts_free(struct ddb *d) {
  for (size_t i = 0; i < d->n_accounts; i++) {
    tt_sigv4_cache_clear(&d->accounts[i].sigcache);
    free(d->accounts[i].url);
    free(d->accounts[i].host);
  }
  free(d->accounts);
  d->accounts = NULL;
  d->n_accounts = 0;
}

static void ddb_destroy(struct tt_backend *b) {
  if (b == NULL)
    return;
  struct ddb *d = b->impl;
  assert(d->magic == DDB_MAGIC);
  d->magic = 0;
  if (d->own_http)
    tt_http_destroy(d->http);
  accounts_free(d);
  free(d);
}

static const struct tt_backend_ops ddb_ops = {
    .name = "dynamodb",
    .start = ddb_start,
    .cancel = ddb_cancel,
    .close = ddb_close,
    .destroy = ddb_destroy,
};

size_t tt_ddb_backend_outstanding(const struct tt_backend *b) {
  return ((const struct ddb *)b->impl)->outstanding;
}

int64_t tt_ddb_backend_clock_skew(const struct tt_backend *b) {
  return ((const struct ddb *)b->impl)->skew;
}

/* ---- construction ---- */

static const struct tt_aws_endpoint_msgs endpoint_msgs = {
    "endpoint", "the endpoint must be an absolute http:// or https:// URL",
    "the endpoint's scheme must be http or https",
    "the endpoint must have no path, query or user part (the service is served at /)"};

/* Fills account `a` (zeroed) from its settings; `endpoint` NULL or "" =
 * the region's default. */
static int account_init(struct ddb_account *a, const struct service_def *svc, const char *region,
                        const char *endpoint,
                        struct tt_creds_provider *creds, struct tt_error *err) {
  if (region == NULL || !tt_aws_region_ok(region))
    return tt_error_set(err, TT_ERR_VALIDATION, "region",
                        "a region such as eu-west-1 is required for the dynamodb backend");
  if (creds == NULL || creds->ops == NULL)
    return tt_error_set(err, TT_ERR_VALIDATION, "creds",
                        "the dynamodb backend needs a credentials provider");
  snprintf(a->region, sizeof(a->region), "%s", region);
  a->creds = creds;
  tt_sigv4_cache_init(&a->sigcache);
  return tt_aws_endpoint_parse(endpoint, svc->name, a->region, &endpoint_msgs, &a->url, &a->host,
                               err);
}

int tt_ddb_backend_new(uv_loop_t *loop, const struct tt_ddb_options *opts,
                       struct tt_backend **out, struct tt_error *err) {
  if (opts == NULL)
    return tt_error_set(err, TT_ERR_VALIDATION, "region",
                        "a region such as eu-west-1 is required for the dynamodb backend");
  if (opts->n_accounts > 0 && opts->accounts == NULL)
    return tt_error_set(err, TT_ERR_VALIDATION, "accounts", "the partner accounts are missing");
  struct ddb *d = calloc(1, sizeof(*d));
  if (d == NULL)
    return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
  d->magic = DDB_MAGIC;
  if ((unsigned)opts->service >= sizeof(services) / sizeof(services[0])) {
    free(d);
    return tt_error_set(err, TT_ERR_VALIDATION, "service", "unknown AWS service");
  }
  d->svc = &services[opts->service];
  d->accounts = calloc(opts->n_accounts + 1, sizeof(*d->accounts));
  if (d->accounts == NULL) {
    tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
    goto fail;
  }
  d->n_accounts = opts->n_accounts + 1;
  if (account_init(&d->accounts[0], d->svc, opts->region, opts->endpoint, opts->creds, err) != 0)
    goto fail;
  for (size_t i = 0; i < opts->n_accounts; i++) {
    const struct tt_ddb_account *pa = &opts->accounts[i];
    /* A partner without an endpoint of its own shares an explicit one
     * (moto, DynamoDB Local), else uses its region's default. */
    const char *ep = pa->endpoint && pa->endpoint[0] ? pa->endpoint : opts->endpoint;
    if (account_init(&d->accounts[i + 1], d->svc, pa->region ? pa->region : opts->region, ep, pa->creds,
                     err) != 0)
      goto fail;
  }
  d->timeout_ms = opts->timeout_ms ? opts->timeout_ms : 10000;
  d->clock = opts->clock;
  d->clock_arg = opts->clock_arg;
  if (opts->http) {
    d->http = opts->http;
  } else {
    struct tt_http_options ho = {.default_timeout_ms = d->timeout_ms,
                                 .max_body_bytes = opts->max_response_bytes};
    if (tt_http_new(loop, &ho, &d->http) != 0) {
      tt_error_set(err, TT_ERR_INTERNAL, NULL, "the HTTP client could not be created");
      goto fail;
    }
    d->own_http = true;
  }
  uv_timer_init(loop, &d->defer);
  d->defer.data = d;
  d->base.ops = &ddb_ops;
  d->base.loop = loop;
  d->base.impl = d;
  *out = &d->base;
  return 0;
fail:
  accounts_free(d);
  free(d);
  return -1;
}
