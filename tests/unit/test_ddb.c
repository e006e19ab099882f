/* SPDX-License-Identifier: Apache-2.0 */
/* test_ddb.c -- the dynamodb backend: the wire request (target, body,
 * SigV4 header verified by re-signing) and error classification against a
 * canned server on the test's loop; then real operations against dynalite
 * and moto started by tests/peers/start_peer.sh (skipped with exit 77 when
 * neither can be started). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "api/ddb_items.h"
#include "backend/backend.h"
#include "backend/dynamodb/ddb.h"
#include "backend/kms/kms.h"
#include "backend/dynamodb/sigv4.h"
#include "http_test_server.h"

#define AKID "AKIDTESTONLY"
#define SECRET "secret/TESTONLY+key"
#define REGION "us-east-1"
#define T0 1700000000 /* 2023-11-14T22:13:20Z */

/* ---- a credentials provider for the tests (not the real chain) ---- */

struct tcreds {
  struct tt_creds_provider p;
  struct tt_creds c;
  uv_timer_t timer;
  uint64_t delay_ms; /* 0: peek answers (a cache hit); else peek misses and get answers then */
  bool fail;
  int peeks, gets, cancels, answered;
  tt_creds_cb pending_cb;
  void *pending_arg;
};

static void tcreds_answer(struct tcreds *t, tt_creds_cb cb, void *arg) {
  t->answered++;
  if (t->fail) {
    struct tt_error e;
    tt_error_set(&e, TT_ERR_INTERNAL, NULL, "test provider: no credentials configured");
    cb(arg, NULL, &e);
  } else {
    cb(arg, &t->c, NULL);
  }
}

static void tcreds_fire(uv_timer_t *timer) {
  struct tcreds *t = timer->data;
  tt_creds_cb cb = t->pending_cb;
  t->pending_cb = NULL;
  if (cb)
    tcreds_answer(t, cb, t->pending_arg);
}

static int tcreds_peek(struct tt_creds_provider *p, const struct tt_creds **creds,
                       struct tt_error *err) {
  struct tcreds *t = p->impl;
  t->peeks++;
  if (t->delay_ms != 0)
    return TT_CREDS_PEEK_MISS;
  t->answered++;
  if (t->fail) {
    tt_error_set(err, TT_ERR_INTERNAL, NULL, "test provider: no credentials configured");
    return TT_CREDS_PEEK_FAILED;
  }
  *creds = &t->c;
  return 0;
}

static int tcreds_get(struct tt_creds_provider *p, tt_creds_cb cb, void *arg, void **handle) {
  struct tcreds *t = p->impl;
  t->gets++;
  ck_assert_ptr_null(t->pending_cb); /* one pending get is all these tests need */
  t->pending_cb = cb;
  t->pending_arg = arg;
  *handle = t;
  uv_timer_start(&t->timer, tcreds_fire, t->delay_ms, 0); /* never inside get */
  return 0;
}

static void tcreds_cancel(struct tt_creds_provider *p, void *handle) {
  struct tcreds *t = p->impl;
  if (handle == NULL)
    return;
  t->cancels++;
  t->pending_cb = NULL;
  uv_timer_stop(&t->timer);
}

static void tcreds_close(struct tt_creds_provider *p, void (*closed)(void *arg), void *arg) {
  struct tcreds *t = p->impl;
  uv_close((uv_handle_t *)&t->timer, NULL);
  if (closed)
    closed(arg);
}

static void tcreds_destroy(struct tt_creds_provider *p) { (void)p; }

static const struct tt_creds_provider_ops tcreds_ops = {tcreds_peek, tcreds_get, tcreds_cancel,
                                                        tcreds_close, tcreds_destroy};

static void tcreds_init(struct tcreds *t, uv_loop_t *loop, const char *token) {
  memset(t, 0, sizeof(*t));
  t->p.ops = &tcreds_ops;
  t->p.impl = t;
  snprintf(t->c.access_key_id, sizeof(t->c.access_key_id), "%s", AKID);
  snprintf(t->c.secret_access_key, sizeof(t->c.secret_access_key), "%s", SECRET);
  snprintf(t->c.session_token, sizeof(t->c.session_token), "%s", token ? token : "");
  snprintf(t->c.source, sizeof(t->c.source), "test");
  uv_timer_init(loop, &t->timer);
  t->timer.data = t;
}

/* ---- the canned server ---- */

enum mode {
  M_OK,
  M_THROTTLE,
  M_500_HTML,
  M_503_EMPTY,
  M_CCF_ITEM,
  M_TX_CANCELED,
  M_ERRTYPE_HEADER,
  M_GARBAGE_200,
  M_SKEW,
  M_HANG,
  M_RESET,
};

static enum mode g_mode;
static int64_t g_now = T0;
static char g_date_hdr[128];

static int64_t test_clock(void *arg) {
  (void)arg;
  return g_now;
}

static void canned(void *arg, const struct tts_request *r, struct tts_response *resp) {
  (void)arg;
  (void)r;
  static const char *const pfx = "com.amazonaws.dynamodb.v20120810#";
  static char body[1024];
  switch (g_mode) {
  case M_OK:
    resp->headers = "Content-Type: application/x-amz-json-1.0\r\nx-amzn-RequestId: OKREQ1\r\n";
    resp->body = "{\"Item\":{\"pk\":{\"S\":\"a\\u0000b\"},\"n\":{\"N\":\"1.50\"}},"
                 "\"ConsumedCapacity\":"
                 "{\"TableName\":\"t\",\"CapacityUnits\":0.5}}";
    break;
  case M_THROTTLE:
    resp->status = 400;
    resp->headers = "x-amzn-RequestId: THROTTLEREQ1\r\nx-amz-retry-after: 1500\r\n";
    snprintf(body, sizeof(body),
             "{\"__type\":\"%sProvisionedThroughputExceededException\",\"message\":\"The level of "
             "configured provisioned throughput for the table was exceeded.\"}",
             pfx);
    resp->body = body;
    break;
  case M_500_HTML:
    resp->status = 500;
    resp->body = "<html>internal</html>";
    break;
  case M_503_EMPTY:
    resp->status = 503;
    resp->headers = "x-amzn-RequestId: R503\r\n";
    break;
  case M_CCF_ITEM:
    resp->status = 400;
    snprintf(body, sizeof(body),
             "{\"__type\":\"%sConditionalCheckFailedException\",\"message\":\"The conditional "
             "request failed\",\"Item\":{\"pk\":{\"S\":\"a\"},\"v\":{\"N\":\"7\"}}}",
             pfx);
    resp->body = body;
    break;
  case M_TX_CANCELED:
    resp->status = 400;
    snprintf(body, sizeof(body),
             "{\"__type\":\"%sTransactionCanceledException\",\"Message\":\"Transaction cancelled, "
             "please refer cancellation reasons for specific reasons [ConditionalCheckFailed, "
             "None]\",\"CancellationReasons\":[{\"Code\":\"ConditionalCheckFailed\",\"Message\":"
             "\"The conditional request failed\",\"Item\":{\"v\":{\"N\":\"7\"}}},"
             "{\"Code\":\"None\"}]}",
             pfx);
    resp->body = body;
    break;
  case M_ERRTYPE_HEADER:
    resp->status = 400;
    resp->headers = "x-amzn-ErrorType: ValidationException:http://internal.amazon.com/coral/"
                    "com.amazon.coral.validate/\r\n";
    break;
  case M_GARBAGE_200:
    resp->body = "this is not json";
    break;
  case M_SKEW:
    resp->status = 400;
    resp->headers = g_date_hdr;
    resp->body = "{\"__type\":\"com.amazon.coral.service#InvalidSignatureException\",\"message\":"
                 "\"Signature expired: 20231114T221320Z is now earlier than 20231114T222820Z "
                 "(20231114T223320Z - 5 min.)\"}";
    break;
  case M_HANG:
    resp->action = TTS_HANG;
    break;
  case M_RESET:
    resp->action = TTS_RESET;
    break;
  }
}

/* ---- fixture ---- */

struct fx {
  uv_loop_t loop;
  struct tts_server srv;
  bool srv_up;
  struct tcreds creds;
  struct tt_backend *b;
  int closed;
};

static struct fx F;

struct res {
  struct tt_backend_call call;
  int ndone;
  json_t *body;        /* a transaction's or batch's JSON, which its typed form borrows */
  struct tt_ddbt_txn txn;
  struct tt_ddbt_batch batch;
};

static void on_done_nop(struct tt_backend_call *call) { (void)call; }

static void on_done(struct tt_backend_call *call) {
  struct res *r = call->arg;
  r->ndone++;
  uv_stop(&F.loop);
}

static void fx_backend(const char *endpoint, const char *token, uint64_t timeout_ms,
                       bool fixed_clock) {
  tcreds_init(&F.creds, &F.loop, token);
  struct tt_ddb_options o = {.region = REGION, .endpoint = endpoint, .creds = &F.creds.p,
                             .timeout_ms = timeout_ms,
                             .clock = fixed_clock ? test_clock : NULL};
  struct tt_error err;
  int rc = tt_ddb_backend_new(&F.loop, &o, &F.b, &err);
  ck_assert_msg(rc == 0, "backend: %s", err.message);
}

static char g_endpoint[128];

static void setup_canned(void) {
  memset(&F, 0, sizeof(F));
  g_mode = M_OK;
  g_now = T0;
  ck_assert_int_eq(uv_loop_init(&F.loop), 0);
  ck_assert_int_eq(tts_start(&F.srv, &F.loop, canned, NULL), 0);
  F.srv_up = true;
  snprintf(g_endpoint, sizeof(g_endpoint), "http://127.0.0.1:%d", F.srv.port);
  fx_backend(g_endpoint, NULL, 2000, true);
}

static void on_closed(void *arg) { *(int *)arg = 1; }

static void teardown(void) {
  ck_assert_uint_eq(tt_ddb_backend_outstanding(F.b), 0);
  F.b->ops->close(F.b, on_closed, &F.closed);
  F.creds.p.ops->close(&F.creds.p, NULL, NULL);
  if (F.srv_up)
    tts_close(&F.srv);
  uv_run(&F.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(F.closed, 1);
  F.b->ops->destroy(F.b);
  F.creds.p.ops->destroy(&F.creds.p);
  ck_assert_int_eq(uv_loop_close(&F.loop), 0);
}

/* Parses JSON written with ' for ". */
static json_t *js(const char *text) {
  char *s = strdup(text);
  for (char *p = s; *p; p++)
    if (*p == '\'')
      *p = '"';
  json_error_t e;
  json_t *j = json_loads(s, 0, &e);
  ck_assert_msg(j != NULL, "bad test JSON: %s", e.text);
  free(s);
  return j;
}

/* Starts one call, checks done does not run inside start, runs the loop
 * until done ran. The request is stolen. */
/* Runs a call. A transaction or batch, given as JSON, crosses the port
 * typed (converted as the DynamoDB listener converts it); its result is
 * written back into response / error.body as the listener answers. */
static void run(struct res *r, enum tt_ddb_op op, json_t *request) {
  memset(r, 0, sizeof(*r));
  r->call.op = op;
  r->call.request = request;
  r->call.done = on_done;
  r->call.arg = r;
  if (tt_ddbt_is_txn(op) || tt_ddbt_is_batch(op)) {
    struct tt_backend_error e;
    memset(&e, 0, sizeof(e));
    ck_assert_msg((tt_ddbt_is_txn(op) ? tt_ddbt_txn_parse(op, request, &r->txn, &e)
                                      : tt_ddbt_batch_parse(op, request, &r->batch, &e)) == 0,
                  "%s", e.message);
    r->body = request;
    r->call.request = NULL;
    if (tt_ddbt_is_txn(op))
      r->call.txn = &r->txn.req;
    else
      r->call.batch = &r->batch.req;
  }
  ck_assert_int_eq(F.b->ops->start(F.b, &r->call), 0);
  ck_assert_int_eq(r->ndone, 0);
  while (r->ndone == 0)
    uv_run(&F.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(r->ndone, 1);
  if (r->call.txn) {
    if (r->call.status == 0)
      r->call.response = tt_ddbt_txn_answer(op, &r->call.txn_out);
    else if (r->call.txn_out.n_reasons)
      r->call.error.body = tt_ddbt_txn_reasons(&r->call.txn_out);
    tt_ddb_txn_result_free(&r->call.txn_out);
  }
  if (r->call.batch) {
    if (r->call.status == 0)
      r->call.response = tt_ddbt_batch_answer(op, r->body, &r->batch, &r->call.batch_out);
    tt_ddb_batch_result_free(&r->call.batch_out);
  }
}

static void res_free(struct res *r) {
  json_decref(r->body);
  tt_ddbt_txn_free(&r->txn);
  tt_ddbt_batch_free(&r->batch);
  r->body = NULL;
  json_decref(r->call.request);
  json_decref(r->call.response);
  tt_backend_error_clear(&r->call.error);
  r->call.request = r->call.response = NULL;
}

/* The string at "a.b.c" (objects only), or NULL. */
static const char *sget(const json_t *j, const char *path) {
  const json_t *cur = j;
  while (cur && *path) {
    size_t n = strcspn(path, ".");
    char key[128];
    snprintf(key, sizeof(key), "%.*s", (int)n, path);
    cur = json_object_get(cur, key);
    path += n + (path[n] == '.');
  }
  return json_string_value(cur);
}

/* ---- the wire request ---- */

/* Checks the Authorization header's form, then signs the request as the
 * server received it and compares: the signature covers what was sent. */
static void assert_signed(const struct tts_request *r, const char *token) {
  char auth[600], date[32], host[128], ctype[64], target[96], tok[256];
  ck_assert_ptr_nonnull(tts_header(r, "authorization", auth, sizeof(auth)));
  ck_assert_ptr_nonnull(tts_header(r, "x-amz-date", date, sizeof(date)));
  ck_assert_ptr_nonnull(tts_header(r, "host", host, sizeof(host)));
  ck_assert_ptr_nonnull(tts_header(r, "content-type", ctype, sizeof(ctype)));
  ck_assert_ptr_nonnull(tts_header(r, "x-amz-target", target, sizeof(target)));
  ck_assert_int_eq(strlen(date), 16);
  char want[300];
  snprintf(want, sizeof(want), "AWS4-HMAC-SHA256 Credential=" AKID "/%.8s/" REGION
           "/dynamodb/aws4_request, SignedHeaders=%s, Signature=",
           date,
           token ? "content-type;host;x-amz-date;x-amz-security-token;x-amz-target"
                 : "content-type;host;x-amz-date;x-amz-target");
  ck_assert_int_eq(strncmp(auth, want, strlen(want)), 0);
  const char *sig = auth + strlen(want);
  ck_assert_int_eq(strlen(sig), 64);
  ck_assert_int_eq(strspn(sig, "0123456789abcdef"), 64);
  if (token) {
    ck_assert_ptr_nonnull(tts_header(r, "x-amz-security-token", tok, sizeof(tok)));
    ck_assert_str_eq(tok, token);
  } else {
    ck_assert_ptr_null(tts_header(r, "x-amz-security-token", tok, sizeof(tok)));
  }
  struct tm tm;
  memset(&tm, 0, sizeof(tm));
  ck_assert_ptr_nonnull(strptime(date, "%Y%m%dT%H%M%SZ", &tm));
  time_t when = timegm(&tm);
  struct tt_sigv4_header sh[] = {{"Host", host}, {"Content-Type", ctype}, {"X-Amz-Target", target}};
  struct tt_sigv4_request sreq = {.method = r->method, .path = r->path, .headers = sh,
                                  .n_headers = 3, .body = r->body, .body_len = r->body_len};
  struct tt_sigv4_credentials sc = {AKID, SECRET, token};
  struct tt_sigv4_config cfg = {REGION, "dynamodb", 0, NULL};
  struct tt_sigv4_result out;
  struct tt_error err;
  ck_assert_int_eq(tt_sigv4_sign(&sreq, &sc, &cfg, when, &out, &err), 0);
  ck_assert_str_eq(out.authorization, auth);
  tt_sigv4_result_free(&out);
}

START_TEST(wire_request_is_signed_json_protocol) {
  struct res r;
  json_t *req = js("{'TableName':'t','Key':{'pk':{'S':'a'}},'ConsistentRead':true}");
  char *want_body = json_dumps(req, JSON_COMPACT);
  run(&r, TT_DDB_GET_ITEM, req);
  ck_assert_int_eq(r.call.status, 0);
  ck_assert_str_eq(sget(r.call.response, "Item.n.N"), "1.50");
  /* A string holding U+0000 survives. */
  json_t *item = json_object_get(r.call.response, "Item");
  json_t *pk = json_object_get(json_object_get(item, "pk"), "S");
  ck_assert_int_eq(json_string_length(pk), 3);
  ck_assert_int_eq(memcmp(json_string_value(pk), "a\0b", 3), 0);
  const struct tts_request *q = &F.srv.last;
  ck_assert_str_eq(q->method, "POST");
  ck_assert_str_eq(q->path, "/");
  ck_assert_str_eq(q->body, want_body);
  char v[128], host[64];
  ck_assert_str_eq(tts_header(q, "x-amz-target", v, sizeof(v)), "DynamoDB_20120810.GetItem");
  ck_assert_str_eq(tts_header(q, "content-type", v, sizeof(v)), "application/x-amz-json-1.0");
  snprintf(host, sizeof(host), "127.0.0.1:%d", F.srv.port);
  ck_assert_str_eq(tts_header(q, "host", v, sizeof(v)), host);
  ck_assert_str_eq(tts_header(q, "x-amz-date", v, sizeof(v)), "20231114T221320Z");
  assert_signed(q, NULL);
  free(want_body);
  res_free(&r);

  /* Each attempt is signed afresh, on the same keep-alive connection. */
  g_now = T0 + 1;
  run(&r, TT_DDB_PUT_ITEM, js("{'TableName':'t','Item':{'pk':{'S':'b'}}}"));
  ck_assert_int_eq(r.call.status, 0);
  ck_assert_str_eq(tts_header(&F.srv.last, "x-amz-date", v, sizeof(v)), "20231114T221321Z");
  ck_assert_str_eq(tts_header(&F.srv.last, "x-amz-target", v, sizeof(v)),
                   "DynamoDB_20120810.PutItem");
  assert_signed(&F.srv.last, NULL);
  ck_assert_uint_eq(F.srv.connections, 1);
  res_free(&r);
}
END_TEST

START_TEST(every_operation_has_its_target) {
  char v[128], want[128];
  for (int op = 0; op < TT_KMS_GENERATE_DATA_KEY; op++) {
    struct res r;
    /* Transactions have only the typed form: one step each. */
    run(&r, (enum tt_ddb_op)op,
        js(op == TT_DDB_TRANSACT_WRITE_ITEMS
               ? "{'TransactItems':[{'Put':{'TableName':'t','Item':{'pk':{'S':'a'}}}}]}"
           : op == TT_DDB_TRANSACT_GET_ITEMS
               ? "{'TransactItems':[{'Get':{'TableName':'t','Key':{'pk':{'S':'a'}}}}]}"
               : "{'TableName':'t'}"));
    ck_assert_int_eq(r.call.status, 0);
    snprintf(want, sizeof(want), "DynamoDB_20120810.%s", tt_ddb_op_name((enum tt_ddb_op)op));
    ck_assert_str_eq(tts_header(&F.srv.last, "x-amz-target", v, sizeof(v)), want);
    res_free(&r);
  }
  ck_assert_uint_eq(F.srv.requests, TT_KMS_GENERATE_DATA_KEY);
  /* KMS operations belong to a KMS backend only. */
  struct tt_backend_call c = {.op = TT_KMS_DECRYPT, .request = js("{}"), .done = on_done_nop};
  ck_assert_int_ne(F.b->ops->start(F.b, &c), 0);
  json_decref(c.request);
}
END_TEST

/* A typed transaction is written member by member; a Get carries no
 * ConsistentRead, a write no ReturnValues. */
START_TEST(transaction_request_is_written_typed) {
  struct res r;
  run(&r, TT_DDB_TRANSACT_WRITE_ITEMS,
      js("{'TransactItems':[{'Update':{'TableName':'t','Key':{'pk':{'S':'a'}},"
         "'UpdateExpression':'SET #n = :v','ConditionExpression':'attribute_exists(pk)',"
         "'ExpressionAttributeNames':{'#n':'n'},'ExpressionAttributeValues':{':v':{'N':'1'}},"
         "'ReturnValuesOnConditionCheckFailure':'ALL_OLD'}},{'ConditionCheck':{'TableName':'t',"
         "'Key':{'pk':{'S':'b'}},'ConditionExpression':'attribute_not_exists(pk)'}}],"
         "'ClientRequestToken':'tok'}"));
  ck_assert_int_eq(r.call.status, 0);
  ck_assert_str_eq(
      F.srv.last.body,
      "{\"TransactItems\":[{\"Update\":{\"TableName\":\"t\",\"Key\":{\"pk\":{\"S\":\"a\"}},"
      "\"ConditionExpression\":\"attribute_exists(pk)\",\"UpdateExpression\":\"SET #n = :v\","
      "\"ExpressionAttributeNames\":{\"#n\":\"n\"},\"ExpressionAttributeValues\":{\":v\":"
      "{\"N\":\"1\"}},\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\"}},{\"ConditionCheck\":"
      "{\"TableName\":\"t\",\"Key\":{\"pk\":{\"S\":\"b\"}},\"ConditionExpression\":"
      "\"attribute_not_exists(pk)\"}}],\"ClientRequestToken\":\"tok\"}");
  res_free(&r);
  run(&r, TT_DDB_TRANSACT_GET_ITEMS,
      js("{'TransactItems':[{'Get':{'TableName':'t','Key':{'pk':{'S':'a'}},"
         "'ProjectionExpression':'#p','ExpressionAttributeNames':{'#p':'pk'}}}]}"));
  ck_assert_int_eq(r.call.status, 0);
  ck_assert_str_eq(F.srv.last.body,
                   "{\"TransactItems\":[{\"Get\":{\"TableName\":\"t\",\"Key\":{\"pk\":{\"S\":"
                   "\"a\"}},\"ProjectionExpression\":\"#p\",\"ExpressionAttributeNames\":"
                   "{\"#p\":\"pk\"}}}]}");
  res_free(&r);
}
END_TEST

/* A typed batch is written the same way: the tables in the request's
 * order, their entries, a BatchGetItem table's other members after its
 * keys. */
START_TEST(batch_request_is_written_typed) {
  struct res r;
  run(&r, TT_DDB_BATCH_GET_ITEM,
      js("{'RequestItems':{'t':{'Keys':[{'pk':{'S':'a'}},{'pk':{'S':'b'}}],"
         "'ProjectionExpression':'#p','ExpressionAttributeNames':{'#p':'pk'},"
         "'ConsistentRead':true},'u':{'Keys':[{'k':{'N':'1'}}]}},"
         "'ReturnConsumedCapacity':'INDEXES'}"));
  ck_assert_int_eq(r.call.status, 0);
  ck_assert_str_eq(F.srv.last.body,
                   "{\"RequestItems\":{\"t\":{\"Keys\":[{\"pk\":{\"S\":\"a\"}},{\"pk\":{\"S\":"
                   "\"b\"}}],\"ProjectionExpression\":\"#p\",\"ExpressionAttributeNames\":"
                   "{\"#p\":\"pk\"},\"ConsistentRead\":true},\"u\":{\"Keys\":[{\"k\":{\"N\":"
                   "\"1\"}}]}},\"ReturnConsumedCapacity\":\"INDEXES\"}");
  res_free(&r);
  run(&r, TT_DDB_BATCH_WRITE_ITEM,
      js("{'RequestItems':{'t':[{'PutRequest':{'Item':{'pk':{'S':'a'}}}},"
         "{'DeleteRequest':{'Key':{'pk':{'S':'b'}}}}]}}"));
  ck_assert_int_eq(r.call.status, 0);
  ck_assert_str_eq(F.srv.last.body,
                   "{\"RequestItems\":{\"t\":[{\"PutRequest\":{\"Item\":{\"pk\":{\"S\":\"a\"}}}},"
                   "{\"DeleteRequest\":{\"Key\":{\"pk\":{\"S\":\"b\"}}}}]}}");
  res_free(&r);
}
END_TEST

START_TEST(kms_service_targets_and_signing) {
  /* The same transport as KMS: JSON 1.1, TrentService, signed for "kms". */
  struct tt_backend *k;
  struct tt_error err;
  struct tt_kms_options o = {.region = REGION, .endpoint = g_endpoint, .creds = &F.creds.p};
  ck_assert_int_eq(tt_kms_backend_new(&F.loop, &o, &k, &err), 0);
  char v[600];
  static const enum tt_ddb_op ops[] = {TT_KMS_GENERATE_DATA_KEY, TT_KMS_DECRYPT};
  for (size_t i = 0; i < 2; i++) {
    struct res r;
    memset(&r, 0, sizeof(r));
    r.call.op = ops[i];
    r.call.request = tt_kms_generate_data_key_request("alias/k");
    r.call.done = on_done;
    r.call.arg = &r;
    ck_assert_int_eq(k->ops->start(k, &r.call), 0);
    while (r.ndone == 0)
      uv_run(&F.loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(r.call.status, 0);
    ck_assert_str_eq(tts_header(&F.srv.last, "x-amz-target", v, sizeof(v)),
                     i == 0 ? "TrentService.GenerateDataKey" : "TrentService.Decrypt");
    ck_assert_str_eq(tts_header(&F.srv.last, "content-type", v, sizeof(v)),
                     "application/x-amz-json-1.1");
    ck_assert_ptr_nonnull(strstr(tts_header(&F.srv.last, "authorization", v, sizeof(v)),
                                 "/" REGION "/kms/aws4_request"));
    res_free(&r);
  }
  /* DynamoDB's operations are not KMS's. */
  struct tt_backend_call c = {.op = TT_DDB_GET_ITEM, .request = js("{}"), .done = on_done_nop};
  ck_assert_int_ne(k->ops->start(k, &c), 0);
  json_decref(c.request);
  int closed = 0;
  k->ops->close(k, on_closed, &closed);
  while (!closed)
    uv_run(&F.loop, UV_RUN_ONCE);
  k->ops->destroy(k);
}
END_TEST

START_TEST(kms_data_key_answers) {
  unsigned char key[32];
  struct tt_buf edk;
  struct tt_error err;
  tt_buf_init(&edk, 0);
  /* 32 bytes of 0x01 and a 3-byte blob. */
  json_t *ok = js("{'Plaintext':'AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=','CiphertextBlob':'AQID'}");
  ck_assert_int_eq(tt_kms_data_key(ok, key, &edk, &err), 0);
  ck_assert_uint_eq(key[0], 1);
  ck_assert_uint_eq(key[31], 1);
  ck_assert_uint_eq(edk.len, 3);
  /* The key's text is wiped in the answer tree. */
  ck_assert_ptr_null(strstr(json_string_value(json_object_get(ok, "Plaintext")), "AQEB"));
  json_decref(ok);
  json_t *short_key = js("{'Plaintext':'AQEB','CiphertextBlob':'AQID'}");
  ck_assert_int_eq(tt_kms_data_key(short_key, key, NULL, &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_BACKEND_UNAVAILABLE);
  json_decref(short_key);
  tt_buf_free(&edk);
}
END_TEST

START_TEST(session_token_is_sent_and_signed) {
  /* Replace the fixture's backend with one whose credentials carry a token. */
  F.b->ops->close(F.b, NULL, NULL);
  F.creds.p.ops->close(&F.creds.p, NULL, NULL);
  uv_run(&F.loop, UV_RUN_NOWAIT);
  F.b->ops->destroy(F.b);
  fx_backend(g_endpoint, "FwoGZXIvYXdzEXAMPLETOKEN==", 2000, true);
  struct res r;
  run(&r, TT_DDB_QUERY, js("{'TableName':'t','KeyConditionExpression':'pk = :p',"
                           "'ExpressionAttributeValues':{':p':{'S':'x'}}}"));
  ck_assert_int_eq(r.call.status, 0);
  assert_signed(&F.srv.last, "FwoGZXIvYXdzEXAMPLETOKEN==");
  res_free(&r);
}
END_TEST

/* ---- classification from canned answers ---- */

START_TEST(throttling_with_retry_after) {
  g_mode = M_THROTTLE;
  struct res r;
  run(&r, TT_DDB_PUT_ITEM, js("{'TableName':'t','Item':{'pk':{'S':'a'}}}"));
  struct tt_backend_error *e = &r.call.error;
  ck_assert_int_eq(r.call.status, -1);
  ck_assert_ptr_null(r.call.response);
  ck_assert_str_eq(e->type, "ProvisionedThroughputExceededException");
  ck_assert_str_eq(e->message,
                   "The level of configured provisioned throughput for the table was exceeded.");
  ck_assert_uint_eq(e->http_status, 400);
  ck_assert(e->throttling);
  ck_assert(e->retryable);
  ck_assert_uint_eq(e->retry_after_ms, 1500);
  ck_assert_str_eq(e->request_id, "THROTTLEREQ1");
  ck_assert_ptr_null(e->body); /* nothing beyond type and message */
  res_free(&r);
}
END_TEST

START_TEST(server_errors_are_transient) {
  struct res r;
  g_mode = M_500_HTML;
  run(&r, TT_DDB_GET_ITEM, js("{'TableName':'t'}"));
  ck_assert_str_eq(r.call.error.type, "InternalServerError");
  ck_assert_uint_eq(r.call.error.http_status, 500);
  ck_assert(r.call.error.retryable);
  ck_assert(!r.call.error.throttling);
  ck_assert_str_eq(r.call.error.message, "the DynamoDB endpoint answered HTTP 500");
  ck_assert_str_eq(r.call.error.request_id, "");
  res_free(&r);
  g_mode = M_503_EMPTY;
  run(&r, TT_DDB_GET_ITEM, js("{'TableName':'t'}"));
  ck_assert_str_eq(r.call.error.type, "ServiceUnavailable");
  ck_assert_uint_eq(r.call.error.http_status, 503);
  ck_assert(r.call.error.retryable);
  ck_assert_str_eq(r.call.error.request_id, "R503");
  res_free(&r);
}
END_TEST

START_TEST(error_bodies_with_data_are_kept) {
  struct res r;
  g_mode = M_CCF_ITEM;
  run(&r, TT_DDB_PUT_ITEM, js("{'TableName':'t','Item':{'pk':{'S':'a'}}}"));
  ck_assert_str_eq(r.call.error.type, "ConditionalCheckFailedException");
  ck_assert_str_eq(r.call.error.message, "The conditional request failed");
  ck_assert(!r.call.error.retryable);
  ck_assert_ptr_nonnull(r.call.error.body);
  ck_assert_str_eq(sget(r.call.error.body, "Item.v.N"), "7");
  res_free(&r);

  g_mode = M_TX_CANCELED;
  run(&r, TT_DDB_TRANSACT_WRITE_ITEMS,
      js("{'TransactItems':[{'Put':{'TableName':'t','Item':{'pk':{'S':'a'}}}}]}"));
  ck_assert_str_eq(r.call.error.type, "TransactionCanceledException");
  ck_assert_int_eq(strncmp(r.call.error.message, "Transaction cancelled", 21), 0);
  ck_assert(!r.call.error.retryable);
  json_t *reasons = json_object_get(r.call.error.body, "CancellationReasons");
  ck_assert_int_eq(json_array_size(reasons), 2);
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(reasons, 0), "Code")),
                   "ConditionalCheckFailed");
  ck_assert_str_eq(sget(json_array_get(reasons, 0), "Item.v.N"), "7");
  ck_assert_ptr_null(json_object_get(json_array_get(reasons, 1), "Message"));
  res_free(&r);
}
END_TEST

START_TEST(error_type_from_header_and_bad_success) {
  struct res r;
  g_mode = M_ERRTYPE_HEADER;
  run(&r, TT_DDB_SCAN, js("{'TableName':'t'}"));
  ck_assert_str_eq(r.call.error.type, "ValidationException");
  ck_assert_uint_eq(r.call.error.http_status, 400);
  ck_assert(!r.call.error.retryable);
  res_free(&r);
  g_mode = M_GARBAGE_200;
  run(&r, TT_DDB_SCAN, js("{'TableName':'t'}"));
  ck_assert_int_eq(r.call.status, -1);
  ck_assert_str_eq(r.call.error.type, "InvalidResponse");
  ck_assert(!r.call.error.retryable);
  ck_assert_ptr_null(strstr(r.call.error.message, "not json")); /* never quotes the body */
  res_free(&r);
}
END_TEST

START_TEST(clock_skew_is_learned) {
  g_mode = M_SKEW;
  /* The endpoint's clock is 10 minutes ahead of ours. */
  time_t server = (time_t)(T0 + 600);
  struct tm tm;
  gmtime_r(&server, &tm);
  char d[64];
  strftime(d, sizeof(d), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  snprintf(g_date_hdr, sizeof(g_date_hdr), "Date: %s\r\n", d);
  struct res r;
  run(&r, TT_DDB_GET_ITEM, js("{'TableName':'t'}"));
  ck_assert_str_eq(r.call.error.type, "InvalidSignatureException");
  ck_assert(r.call.error.retryable); /* signing again with the right time will do */
  ck_assert_int_eq(tt_ddb_backend_clock_skew(F.b), 600);
  res_free(&r);
  /* Same answer again: the skew is known, so no retry is suggested. */
  run(&r, TT_DDB_GET_ITEM, js("{'TableName':'t'}"));
  ck_assert(!r.call.error.retryable);
  ck_assert_int_eq(tt_ddb_backend_clock_skew(F.b), 600);
  res_free(&r);
  g_mode = M_OK;
  run(&r, TT_DDB_GET_ITEM, js("{'TableName':'t'}"));
  char v[32];
  ck_assert_str_eq(tts_header(&F.srv.last, "x-amz-date", v, sizeof(v)), "20231114T222320Z");
  res_free(&r);
}
END_TEST

/* ---- transport failures ---- */

START_TEST(transport_timeout_reset_refused) {
  struct res r;
  g_mode = M_HANG;
  /* The fixture's backend times out after 2 s; use a quicker one. */
  F.b->ops->close(F.b, NULL, NULL);
  F.creds.p.ops->close(&F.creds.p, NULL, NULL);
  uv_run(&F.loop, UV_RUN_NOWAIT);
  F.b->ops->destroy(F.b);
  fx_backend(g_endpoint, NULL, 150, true);
  run(&r, TT_DDB_GET_ITEM, js("{'TableName':'t'}"));
  ck_assert_str_eq(r.call.error.type, "Timeout");
  ck_assert_uint_eq(r.call.error.http_status, 0);
  ck_assert(r.call.error.retryable);
  res_free(&r);

  g_mode = M_RESET;
  run(&r, TT_DDB_GET_ITEM, js("{'TableName':'t'}"));
  ck_assert_str_eq(r.call.error.type, "ConnectionReset");
  ck_assert(r.call.error.retryable);
  res_free(&r);

  F.b->ops->close(F.b, NULL, NULL);
  F.creds.p.ops->close(&F.creds.p, NULL, NULL);
  uv_run(&F.loop, UV_RUN_NOWAIT);
  F.b->ops->destroy(F.b);
  char ep[64];
  snprintf(ep, sizeof(ep), "http://127.0.0.1:%d", tts_unused_port());
  fx_backend(ep, NULL, 2000, true);
  run(&r, TT_DDB_GET_ITEM, js("{'TableName':'t'}"));
  ck_assert_str_eq(r.call.error.type, "ServiceUnavailable");
  ck_assert_uint_eq(r.call.error.http_status, 0);
  ck_assert(r.call.error.retryable);
  ck_assert_str_eq(r.call.error.message, "could not connect to the DynamoDB endpoint");
  res_free(&r);
}
END_TEST

/* ---- cancellation ---- */

START_TEST(cancel_in_flight) {
  g_mode = M_HANG;
  struct res r;
  memset(&r, 0, sizeof(r));
  r.call.op = TT_DDB_QUERY;
  r.call.request = js("{'TableName':'t'}");
  r.call.done = on_done;
  r.call.arg = &r;
  ck_assert_int_eq(F.b->ops->start(F.b, &r.call), 0);
  /* Canceled once the (hanging) server has the request, however long the
   * connection took: the test server runs on this loop. */
  while (F.srv.requests == 0 && r.ndone == 0)
    uv_run(&F.loop, UV_RUN_ONCE);
  F.b->ops->cancel(F.b, &r.call);
  ck_assert_int_eq(r.ndone, 0); /* never inside cancel */
  while (r.ndone == 0)
    uv_run(&F.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(r.call.status, -1);
  ck_assert_str_eq(r.call.error.type, "RequestCanceled");
  ck_assert(!r.call.error.retryable);
  ck_assert(r.call.canceled);
  ck_assert_uint_eq(F.srv.requests, 1); /* it had reached the server */
  F.b->ops->cancel(F.b, &r.call);       /* after completion: nothing */
  uv_run(&F.loop, UV_RUN_NOWAIT);
  ck_assert_int_eq(r.ndone, 1);
  res_free(&r);

  /* Canceled right after start, before the loop ran once. */
  memset(&r, 0, sizeof(r));
  r.call.op = TT_DDB_QUERY;
  r.call.request = js("{'TableName':'t'}");
  r.call.done = on_done;
  r.call.arg = &r;
  ck_assert_int_eq(F.b->ops->start(F.b, &r.call), 0);
  F.b->ops->cancel(F.b, &r.call);
  ck_assert_int_eq(r.ndone, 0);
  while (r.ndone == 0)
    uv_run(&F.loop, UV_RUN_DEFAULT);
  ck_assert_str_eq(r.call.error.type, "RequestCanceled");
  res_free(&r);
}
END_TEST

START_TEST(cancel_while_waiting_for_credentials) {
  F.creds.delay_ms = 200;
  struct res r;
  memset(&r, 0, sizeof(r));
  r.call.op = TT_DDB_GET_ITEM;
  r.call.request = js("{'TableName':'t'}");
  r.call.done = on_done;
  r.call.arg = &r;
  ck_assert_int_eq(F.b->ops->start(F.b, &r.call), 0);
  F.b->ops->cancel(F.b, &r.call);
  ck_assert_int_eq(r.ndone, 0);
  while (r.ndone == 0)
    uv_run(&F.loop, UV_RUN_DEFAULT);
  ck_assert_str_eq(r.call.error.type, "RequestCanceled");
  ck_assert_int_eq(F.creds.cancels, 1);
  ck_assert_int_eq(F.creds.answered, 0);
  ck_assert_uint_eq(F.srv.requests, 0);
  res_free(&r);
  /* Delayed credentials then work. */
  run(&r, TT_DDB_GET_ITEM, js("{'TableName':'t'}"));
  ck_assert_int_eq(r.call.status, 0);
  ck_assert_int_eq(F.creds.answered, 1);
  res_free(&r);
}
END_TEST

/* A cache hit signs inside start (peek, no get); a miss gets, and the
 * answer signs later on the loop; a failure a get answers fails the call. */
START_TEST(peek_first_get_on_a_miss) {
  struct res r;
  run(&r, TT_DDB_GET_ITEM, js("{'TableName':'t'}"));
  ck_assert_int_eq(r.call.status, 0);
  ck_assert_int_eq(F.creds.peeks, 1);
  ck_assert_int_eq(F.creds.gets, 0);
  res_free(&r);
  F.creds.delay_ms = 1;
  run(&r, TT_DDB_GET_ITEM, js("{'TableName':'t'}"));
  ck_assert_int_eq(r.call.status, 0);
  ck_assert_int_eq(F.creds.peeks, 2);
  ck_assert_int_eq(F.creds.gets, 1);
  ck_assert_uint_eq(F.srv.requests, 2);
  res_free(&r);
  F.creds.fail = true;
  run(&r, TT_DDB_GET_ITEM, js("{'TableName':'t'}"));
  ck_assert_str_eq(r.call.error.type, "CredentialsUnavailable");
  ck_assert_int_eq(F.creds.gets, 2);
  ck_assert_uint_eq(F.srv.requests, 2);
  res_free(&r);
}
END_TEST

START_TEST(credentials_failure) {
  F.creds.fail = true; /* peek answers the failure inside start: done runs later */
  struct res r;
  run(&r, TT_DDB_GET_ITEM, js("{'TableName':'t'}"));
  ck_assert_str_eq(r.call.error.type, "CredentialsUnavailable");
  ck_assert(!r.call.error.retryable);
  ck_assert_str_eq(r.call.error.message,
                   "no AWS credentials: test provider: no credentials configured");
  ck_assert_uint_eq(F.srv.requests, 0);
  res_free(&r);
}
END_TEST

START_TEST(start_refuses_bad_calls) {
  struct tt_backend_call c;
  memset(&c, 0, sizeof(c));
  c.op = TT_DDB_OP__COUNT;
  c.request = js("{}");
  c.done = (tt_backend_done_cb)abort;
  ck_assert_int_eq(F.b->ops->start(F.b, &c), UV_EINVAL);
  json_decref(c.request);
  c.op = TT_DDB_GET_ITEM;
  c.request = js("[1]");
  ck_assert_int_eq(F.b->ops->start(F.b, &c), UV_EINVAL);
  json_decref(c.request);
  ck_assert_uint_eq(tt_ddb_backend_outstanding(F.b), 0);
}
END_TEST

START_TEST(options_are_validated) {
  struct tt_error err;
  struct tt_backend *b = NULL;
  struct tt_ddb_options o = {.region = NULL, .creds = &F.creds.p};
  ck_assert_int_eq(tt_ddb_backend_new(&F.loop, &o, &b, &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
  ck_assert_str_eq(err.field, "region");
  o.region = "EU West";
  ck_assert_int_eq(tt_ddb_backend_new(&F.loop, &o, &b, &err), -1);
  ck_assert_str_eq(err.field, "region");
  o.region = REGION;
  o.creds = NULL;
  ck_assert_int_eq(tt_ddb_backend_new(&F.loop, &o, &b, &err), -1);
  ck_assert_str_eq(err.field, "creds");
  o.creds = &F.creds.p;
  const char *bad[] = {"ftp://127.0.0.1:21", "http://127.0.0.1:8000/prefix", "not a url",
                       "http://127.0.0.1:8000/?x=1", "http://user@127.0.0.1:8000"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    o.endpoint = bad[i];
    ck_assert_int_eq(tt_ddb_backend_new(&F.loop, &o, &b, &err), -1);
    ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
    ck_assert_str_eq(err.field, "endpoint");
  }
  ck_assert_ptr_null(b);
}
END_TEST

/* A default-port endpoint signs a Host without the port, and a shared
 * HTTP client is borrowed, not closed. */
START_TEST(shared_http_client) {
  struct tt_http *http;
  ck_assert_int_eq(tt_http_new(&F.loop, NULL, &http), 0);
  struct tt_ddb_options o = {.region = "eu-west-1", .endpoint = g_endpoint, .creds = &F.creds.p,
                             .http = http, .clock = test_clock};
  struct tt_backend *b;
  struct tt_error err;
  ck_assert_int_eq(tt_ddb_backend_new(&F.loop, &o, &b, &err), 0);
  struct res r;
  memset(&r, 0, sizeof(r));
  r.call.op = TT_DDB_DESCRIBE_TABLE;
  r.call.request = js("{'TableName':'t'}");
  r.call.done = on_done;
  r.call.arg = &r;
  ck_assert_int_eq(b->ops->start(b, &r.call), 0);
  while (r.ndone == 0)
    uv_run(&F.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(r.call.status, 0);
  char v[300];
  ck_assert_ptr_nonnull(tts_header(&F.srv.last, "authorization", v, sizeof(v)));
  ck_assert_ptr_nonnull(strstr(v, "/20231114/eu-west-1/dynamodb/aws4_request"));
  res_free(&r);
  int closed = 0;
  b->ops->close(b, on_closed, &closed);
  uv_run(&F.loop, UV_RUN_NOWAIT);
  ck_assert_int_eq(closed, 1);
  b->ops->destroy(b);
  int hclosed = 0;
  tt_http_close(http, on_closed, &hclosed); /* still ours to close */
  uv_run(&F.loop, UV_RUN_NOWAIT);
  ck_assert_int_eq(hclosed, 1);
  tt_http_destroy(http);
}
END_TEST

/* ---- against real peers ---- */

struct peer {
  const char *kind;
  bool up;
  char endpoint[128];
  char pid[32];
};

static struct peer peers[] = {{.kind = "dynalite"}, {.kind = "moto"}};
#define NPEERS ((int)(sizeof(peers) / sizeof(peers[0])))
static int up_peers[NPEERS];
static int n_up;

static void peer_start(struct peer *p) {
  const char *src = getenv("TT_SRCDIR");
  char cmd[1024];
  snprintf(cmd, sizeof(cmd), "bash '%s/tests/peers/start_peer.sh' %s", src ? src : ".", p->kind);
  FILE *f = popen(cmd, "r");
  if (f == NULL)
    return;
  char line[256];
  while (fgets(line, sizeof(line), f)) {
    line[strcspn(line, "\r\n")] = '\0';
    if (strncmp(line, "ENDPOINT=", 9) == 0)
      snprintf(p->endpoint, sizeof(p->endpoint), "%.120s", line + 9);
    else if (strncmp(line, "PID=", 4) == 0)
      snprintf(p->pid, sizeof(p->pid), "%.30s", line + 4);
  }
  int rc = pclose(f);
  p->up = rc == 0 && p->endpoint[0] && p->pid[0];
  if (!p->up)
    printf("test_ddb: skipping the %s tests: %s could not be started (see the messages of "
           "tests/peers/start_peer.sh above)\n",
           p->kind, p->kind);
}

static void peer_stop(struct peer *p) {
  if (!p->up)
    return;
  const char *src = getenv("TT_SRCDIR");
  char cmd[1024];
  snprintf(cmd, sizeof(cmd), "bash '%s/tests/peers/stop_peer.sh' %s", src ? src : ".", p->pid);
  if (system(cmd) != 0)
    fprintf(stderr, "test_ddb: could not stop %s (pid %s)\n", p->kind, p->pid);
}

static struct peer *P;

static void setup_peer_i(int i) {
  memset(&F, 0, sizeof(F));
  ck_assert_int_eq(uv_loop_init(&F.loop), 0);
  P = &peers[up_peers[i]];
  fx_backend(P->endpoint, NULL, 10000, false);
}

/* Check's loop tests pass the index to the test, not to the fixture. */
#define PEER_TEST_BEGIN(name)                                                                      \
  START_TEST(name) {                                                                               \
    setup_peer_i(_i);
#define PEER_TEST_END                                                                              \
  teardown();                                                                                      \
  }                                                                                                \
  END_TEST

static void ok_call(struct res *r, enum tt_ddb_op op, const char *json) {
  run(r, op, js(json));
  ck_assert_msg(r->call.status == 0, "%s on %s failed: %s: %s", tt_ddb_op_name(op), P->kind,
                r->call.error.type, r->call.error.message);
  ck_assert(json_is_object(r->call.response));
}

#define TABLE_DEF(name)                                                                            \
  "{'TableName':'" name "','BillingMode':'PAY_PER_REQUEST','AttributeDefinitions':["             \
  "{'AttributeName':'pk','AttributeType':'S'},{'AttributeName':'sk','AttributeType':'S'}],"      \
  "'KeySchema':[{'AttributeName':'pk','KeyType':'HASH'},{'AttributeName':'sk','KeyType':"        \
  "'RANGE'}]}"

static void create_table(const char *def, const char *name) {
  struct res r;
  ok_call(&r, TT_DDB_CREATE_TABLE, def);
  ck_assert_str_eq(sget(r.call.response, "TableDescription.TableName"), name);
  res_free(&r);
  char q[128];
  snprintf(q, sizeof(q), "{'TableName':'%s'}", name);
  for (int i = 0; i < 100; i++) { /* dynalite may report CREATING briefly */
    ok_call(&r, TT_DDB_DESCRIBE_TABLE, q);
    bool active = strcmp(sget(r.call.response, "Table.TableStatus"), "ACTIVE") == 0;
    res_free(&r);
    if (active)
      return;
    usleep(20000);
  }
  ck_abort_msg("table %s never became ACTIVE on %s", name, P->kind);
}

PEER_TEST_BEGIN(peer_items_and_query)
struct res r;
create_table(TABLE_DEF("tt_items"), "tt_items");
ok_call(&r, TT_DDB_PUT_ITEM,
        "{'TableName':'tt_items','Item':{'pk':{'S':'p1'},'sk':{'S':'a'},'n':{'N':'42'},"
        "'s':{'S':'h\\u00e9llo \\u2603'}}}");
res_free(&r);
ok_call(&r, TT_DDB_PUT_ITEM,
        "{'TableName':'tt_items','Item':{'pk':{'S':'p1'},'sk':{'S':'b'},'n':{'N':'-0.5'}}}");
res_free(&r);
ok_call(&r, TT_DDB_GET_ITEM,
        "{'TableName':'tt_items','Key':{'pk':{'S':'p1'},'sk':{'S':'a'}},'ConsistentRead':true}");
ck_assert_str_eq(sget(r.call.response, "Item.n.N"), "42");
ck_assert_str_eq(sget(r.call.response, "Item.s.S"), "h\xc3\xa9llo \xe2\x98\x83");
res_free(&r);
ok_call(&r, TT_DDB_QUERY,
        "{'TableName':'tt_items','KeyConditionExpression':'pk = :p',"
        "'ExpressionAttributeValues':{':p':{'S':'p1'}}}");
ck_assert_int_eq(json_integer_value(json_object_get(r.call.response, "Count")), 2);
json_t *items = json_object_get(r.call.response, "Items");
ck_assert_str_eq(sget(json_array_get(items, 0), "sk.S"), "a");
ck_assert_str_eq(sget(json_array_get(items, 1), "sk.S"), "b");
ck_assert_str_eq(sget(json_array_get(items, 1), "n.N"), "-0.5");
res_free(&r);
ok_call(&r, TT_DDB_UPDATE_ITEM,
        "{'TableName':'tt_items','Key':{'pk':{'S':'p1'},'sk':{'S':'a'}},"
        "'UpdateExpression':'SET n = n + :one','ExpressionAttributeValues':{':one':{'N':'1'}},"
        "'ReturnValues':'UPDATED_NEW'}");
ck_assert_str_eq(sget(r.call.response, "Attributes.n.N"), "43");
res_free(&r);
ok_call(&r, TT_DDB_BATCH_WRITE_ITEM,
        "{'RequestItems':{'tt_items':[{'PutRequest':{'Item':{'pk':{'S':'p2'},'sk':{'S':'c'}}}},"
        "{'DeleteRequest':{'Key':{'pk':{'S':'p1'},'sk':{'S':'b'}}}}]}}");
ck_assert_int_eq(json_object_size(json_object_get(r.call.response, "UnprocessedItems")), 0);
res_free(&r);
ok_call(&r, TT_DDB_BATCH_GET_ITEM,
        "{'RequestItems':{'tt_items':{'Keys':[{'pk':{'S':'p1'},'sk':{'S':'a'}},"
        "{'pk':{'S':'p2'},'sk':{'S':'c'}},{'pk':{'S':'p1'},'sk':{'S':'b'}}]}}}");
ck_assert_int_eq(json_array_size(json_object_get(json_object_get(r.call.response, "Responses"),
                                                 "tt_items")),
                 2);
res_free(&r);
ok_call(&r, TT_DDB_SCAN, "{'TableName':'tt_items'}");
ck_assert_int_eq(json_integer_value(json_object_get(r.call.response, "Count")), 2);
res_free(&r);
ok_call(&r, TT_DDB_DELETE_ITEM,
        "{'TableName':'tt_items','Key':{'pk':{'S':'p2'},'sk':{'S':'c'}},'ReturnValues':'ALL_OLD'}");
ck_assert_str_eq(sget(r.call.response, "Attributes.pk.S"), "p2");
res_free(&r);
ok_call(&r, TT_DDB_GET_ITEM, "{'TableName':'tt_items','Key':{'pk':{'S':'p2'},'sk':{'S':'c'}}}");
ck_assert_ptr_null(json_object_get(r.call.response, "Item"));
res_free(&r);
ok_call(&r, TT_DDB_DELETE_TABLE, "{'TableName':'tt_items'}");
res_free(&r);
PEER_TEST_END

PEER_TEST_BEGIN(peer_errors_are_classified)
struct res r;
create_table(TABLE_DEF("tt_errors"), "tt_errors");
ok_call(&r, TT_DDB_PUT_ITEM, "{'TableName':'tt_errors','Item':{'pk':{'S':'k'},'sk':{'S':'1'}}}");
res_free(&r);
run(&r, TT_DDB_PUT_ITEM,
    js("{'TableName':'tt_errors','Item':{'pk':{'S':'k'},'sk':{'S':'1'}},"
       "'ConditionExpression':'attribute_not_exists(pk)'}"));
struct tt_backend_error *e = &r.call.error;
ck_assert_int_eq(r.call.status, -1);
ck_assert_str_eq(e->type, "ConditionalCheckFailedException");
ck_assert_uint_eq(e->http_status, 400);
ck_assert(!e->retryable);
ck_assert(!e->throttling);
ck_assert_msg(e->request_id[0] != '\0', "%s sent no x-amzn-RequestId", P->kind);
ck_assert(e->message[0] != '\0');
res_free(&r);

run(&r, TT_DDB_GET_ITEM, js("{'TableName':'tt_missing','Key':{'pk':{'S':'k'},'sk':{'S':'1'}}}"));
ck_assert_str_eq(e->type, "ResourceNotFoundException");
ck_assert_uint_eq(e->http_status, 400);
ck_assert(!e->retryable);
res_free(&r);

/* The sort key is missing from the item. */
run(&r, TT_DDB_PUT_ITEM, js("{'TableName':'tt_errors','Item':{'pk':{'S':'k'}}}"));
ck_assert_str_eq(e->type, "ValidationException");
ck_assert(!e->retryable);
res_free(&r);
PEER_TEST_END

PEER_TEST_BEGIN(peer_transactions_and_ttl)
struct res r;
if (strcmp(P->kind, "dynalite") == 0) {
  /* dynalite implements neither transactions nor UpdateTimeToLive (see
   * docs/design.md, "Peers"); it must say so in a classified way, then we stop here. */
  run(&r, TT_DDB_TRANSACT_WRITE_ITEMS,
      js("{'TransactItems':[{'Put':{'TableName':'tt_tx','Item':{'pk':{'S':'a'}}}}]}"));
  ck_assert_int_eq(r.call.status, -1);
  ck_assert_str_eq(r.call.error.type, "UnknownOperationException");
  ck_assert(!r.call.error.retryable);
  res_free(&r);
  printf("test_ddb: dynalite lacks TransactWriteItems/TransactGetItems/UpdateTimeToLive: those "
         "run on moto only\n");
} else {
  create_table(TABLE_DEF("tt_tx"), "tt_tx");
  ok_call(&r, TT_DDB_UPDATE_TIME_TO_LIVE,
          "{'TableName':'tt_tx','TimeToLiveSpecification':{'Enabled':true,'AttributeName':'exp'}}");
  ck_assert_str_eq(sget(r.call.response, "TimeToLiveSpecification.AttributeName"), "exp");
  res_free(&r);
  ok_call(&r, TT_DDB_TRANSACT_WRITE_ITEMS,
          "{'TransactItems':[{'Put':{'TableName':'tt_tx','Item':{'pk':{'S':'t'},'sk':{'S':'1'}}}},"
          "{'Put':{'TableName':'tt_tx','Item':{'pk':{'S':'t'},'sk':{'S':'2'}}}}]}");
  res_free(&r);
  ok_call(&r, TT_DDB_TRANSACT_GET_ITEMS,
          "{'TransactItems':[{'Get':{'TableName':'tt_tx','Key':{'pk':{'S':'t'},'sk':{'S':'1'}}}},"
          "{'Get':{'TableName':'tt_tx','Key':{'pk':{'S':'t'},'sk':{'S':'2'}}}}]}");
  json_t *resp = json_object_get(r.call.response, "Responses");
  ck_assert_int_eq(json_array_size(resp), 2);
  ck_assert_str_eq(sget(json_array_get(resp, 1), "Item.sk.S"), "2");
  res_free(&r);
  run(&r, TT_DDB_TRANSACT_WRITE_ITEMS,
      js("{'TransactItems':[{'ConditionCheck':{'TableName':'tt_tx','Key':{'pk':{'S':'t'},"
         "'sk':{'S':'1'}},'ConditionExpression':'attribute_not_exists(pk)'}},"
         "{'Put':{'TableName':'tt_tx','Item':{'pk':{'S':'t'},'sk':{'S':'3'}}}}]}"));
  ck_assert_int_eq(r.call.status, -1);
  ck_assert_str_eq(r.call.error.type, "TransactionCanceledException");
  ck_assert(!r.call.error.retryable);
  json_t *reasons = json_object_get(r.call.error.body, "CancellationReasons");
  ck_assert_int_eq(json_array_size(reasons), 2);
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(reasons, 0), "Code")),
                   "ConditionalCheckFailed");
  res_free(&r);
}
PEER_TEST_END

static Suite *suite(void) {
  Suite *s = suite_create("ddb");
  TCase *tc = tcase_create("canned");
  tcase_add_checked_fixture(tc, setup_canned, teardown);
  tcase_set_timeout(tc, 20);
  tcase_add_test(tc, wire_request_is_signed_json_protocol);
  tcase_add_test(tc, every_operation_has_its_target);
  tcase_add_test(tc, transaction_request_is_written_typed);
  tcase_add_test(tc, batch_request_is_written_typed);
  tcase_add_test(tc, kms_service_targets_and_signing);
  tcase_add_test(tc, kms_data_key_answers);
  tcase_add_test(tc, session_token_is_sent_and_signed);
  tcase_add_test(tc, throttling_with_retry_after);
  tcase_add_test(tc, server_errors_are_transient);
  tcase_add_test(tc, error_bodies_with_data_are_kept);
  tcase_add_test(tc, error_type_from_header_and_bad_success);
  tcase_add_test(tc, clock_skew_is_learned);
  tcase_add_test(tc, transport_timeout_reset_refused);
  tcase_add_test(tc, cancel_in_flight);
  tcase_add_test(tc, cancel_while_waiting_for_credentials);
  tcase_add_test(tc, peek_first_get_on_a_miss);
  tcase_add_test(tc, credentials_failure);
  tcase_add_test(tc, start_refuses_bad_calls);
  tcase_add_test(tc, options_are_validated);
  tcase_add_test(tc, shared_http_client);
  suite_add_tcase(s, tc);
  if (n_up > 0) {
    TCase *tp = tcase_create("peers");
    tcase_set_timeout(tp, 60);
    tcase_add_loop_test(tp, peer_items_and_query, 0, n_up);
    tcase_add_loop_test(tp, peer_errors_are_classified, 0, n_up);
    tcase_add_loop_test(tp, peer_transactions_and_ttl, 0, n_up);
    suite_add_tcase(s, tp);
  }
  return s;
}

int main(void) {
  /* TT_DDB_PEERS="dynalite moto" (default), "" to run the canned tests only. */
  const char *want = getenv("TT_DDB_PEERS");
  fflush(stdout);
  for (int i = 0; i < NPEERS; i++) {
    if (want && !strstr(want, peers[i].kind))
      continue;
    peer_start(&peers[i]);
    if (peers[i].up)
      up_peers[n_up++] = i;
  }
  fflush(stdout); /* or the forked tests would print it again */
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  for (int i = 0; i < NPEERS; i++)
    peer_stop(&peers[i]);
  if (failed)
    return EXIT_FAILURE;
  if (n_up == 0 && !(want && want[0] == '\0')) {
    printf("SKIP: no DynamoDB peer (dynalite, moto) could be started; only the canned-server "
           "tests ran\n");
    return 77;
  }
  return EXIT_SUCCESS;
}
