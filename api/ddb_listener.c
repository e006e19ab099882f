/* SPDX-License-Identifier: Apache-2.0 */
/* ddb_listener.c -- DynamoDB's wire protocol on a second libmicrohttpd
 * daemon (ddb_listener.h): read the body, parse it (ddb_wire.c), make one
 * backend call through the client layer, answer as DynamoDB does. A request
 * answers only once its call has joined; the deadline cancels and still
 * joins. Logs carry the operation, status and error type, never a body, a
 * key or a credential. */
#include "api/ddb_listener.h"

#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "api/ddb_items.h"
#include "api/ddb_wire.h"
#include "api/server.h"
#include "backend/table_json.h"
#include "obs/log.h"
#include "util/buf.h"
#include "value/codec_ddb.h"
#include "value/json_exact.h"

#define T_SERVICE "com.amazon.coral.service#"
#define T_DDB "com.amazonaws.dynamodb.v20120810#"

#define DISCARD_LIMIT (16u << 20) /* bytes of an oversized body read before closing */

static const char *const l_op_status[] = {"operation", "status"};
static const char *const l_op[] = {"operation"};

struct tt_ddb_req {
  struct tt_ddb_listener *l;
  struct MHD_Connection *conn;
  struct tt_buf body_buf;
  bool too_large;
  uint64_t discarded; /* bytes of an oversized body dropped */
  uint64_t start_ns, start_ms;
  enum tt_ddb_op op;
  bool op_known;
  struct tt_join join;
  struct tt_client_call call;
  bool running;  /* the call was started */
  bool joined;   /* ... and has joined */
  bool answered; /* an answer is ready (status, out) */
  bool queued;
  bool suspended;
  bool deadline_hit, drain_canceled;
  bool mhd_done;
  uv_timer_t timer;
  bool timer_open;
  unsigned status;
  char *out; /* answer body, malloc'd */
  size_t out_len;
  bool json_1_0, xml;
  bool attribute_updates; /* an UpdateItem's update came as AttributeUpdates */
  bool health; /* GET: DynamoDB's health answer */
  bool cors;      /* the request has an Origin header */
  bool preflight; /* ... and is an OPTIONS: CORS's empty answer */
  char request_id[53];
  char error_type[96]; /* short __type, for the log and metrics */
  /* GetItem, PutItem, UpdateItem, DeleteItem, Query and Scan cross the
   * port typed (ddb_items.h), read from a checked `body` (which the typed
   * request borrows, its values in `owned`) or, for a plain GetItem, from
   * the text (ddb_wire.h: tt_ddbw_fast_get, into `get`). */
  struct tt_ddbi_request typed;
  bool fast, tabled;
  union {
    struct tt_ddbw_get get;
    struct tt_ddbi_owned owned;
    /* A table operation's typed request (table_json.h), its arrays in
     * `arena`, its strings borrowed from `body`. */
    struct {
      struct tt_ddb_table_request req;
      struct tt_arena arena;
    } table;
  };
  /* Transactions and batches cross the port typed too (ddb_items.h),
   * borrowing from `body` like the others. */
  struct tt_ddbt_txn txn;
  struct tt_ddbt_batch batch;
  json_t *body;
  /* A copy of ExpressionAttributeValues when an expression may fail on a
   * BETWEEN or attribute_type (see echo_values), and whether the
   * conditions came as legacy parameters. */
  json_t *values;
  bool legacy, query_filter;
  struct tt_ddb_req *prev, *next;   /* the listener's running requests */
  struct tt_ddb_req *aprev, *anext; /* every live request context */
};

int tt_ddb_listener_init(struct tt_ddb_listener *l, uv_loop_t *loop, struct tt_families *fams,
                         struct tt_client *client, const struct tt_ddb_listener_options *opts) {
  memset(l, 0, sizeof(*l));
  l->loop = loop;
  l->fams = fams;
  l->client = client;
  l->opts = *opts;
  l->id_state = tt_server_now_ns();
  tt_sigv4_cache_init(&l->sigv4);
  if (fams) {
    l->requests = tt_metrics_family(fams->registry, TT_METRIC_COUNTER,
                                    "tabletheoryd_dynamodb_requests_total",
                                    "Requests answered by the DynamoDB listener.", l_op_status, 2);
    l->duration = tt_metrics_family(fams->registry, TT_METRIC_HISTOGRAM,
                                    "tabletheoryd_dynamodb_request_duration_seconds",
                                    "Time from request start to answer on the DynamoDB listener.",
                                    l_op, 1);
    if (l->requests == NULL || l->duration == NULL)
      return -1;
  }
  return 0;
}

void tt_ddb_listener_close(struct tt_ddb_listener *l) { tt_sigv4_cache_clear(&l->sigv4); }

/* DynamoDB's request ids: 52 characters of [0-9A-Z]. */
static void set_request_id(struct tt_ddb_req *r) {
  static const char alphabet[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  uint64_t v = 0;
  for (size_t i = 0; i < 52; i++) {
    if (i % 12 == 0)
      v = tt_server_next_id(&r->l->id_state);
    r->request_id[i] = alphabet[v % 36];
    v /= 36;
  }
  r->request_id[52] = '\0';
}

/* ---- answers ------------------------------------------------------------ */

static void answer_json(struct tt_ddb_req *r, unsigned status, json_t *body) {
  free(r->out);
  r->out = NULL;
  if (body) {
    struct tt_buf b;
    tt_buf_init(&b, 0);
    /* The backend's trees mark strings that begin with U+0000, as
     * process() marks the request's; the listener's own hold none. */
    if (tt_json_dump(body, 0, &b) == 0 && tt_buf_append(&b, "", 1) == 0)
      r->out = tt_buf_steal(&b, NULL);
    tt_buf_free(&b);
  }
  json_decref(body);
  if (r->out == NULL) {
    static const char oom[] = "{\"__type\":\"" T_DDB "InternalServerError\"}";
    r->out = strdup(oom);
    status = 500;
    snprintf(r->error_type, sizeof(r->error_type), "InternalServerError");
  }
  r->out_len = r->out ? strlen(r->out) : 0;
  r->status = status;
  r->answered = true;
}

/* Answers DynamoDB's error; returns -1. */
static int answer_error(struct tt_ddb_req *r, unsigned status, const char *full_type,
                        const char *message, const json_t *extra) {
  const char *hash = strchr(full_type, '#');
  snprintf(r->error_type, sizeof(r->error_type), "%s", hash ? hash + 1 : full_type);
  answer_json(r, status, tt_ddbw_error_body(full_type, message, extra));
  return -1;
}

/* "AttributeValue: {T:v}" for the placeholder at *s (up to a ',' or the
 * end), as DynamoDB prints an operand; false unless it names a string,
 * number or binary of r->values. */
static bool echo_operand(const struct tt_ddb_req *r, const char **s, struct tt_buf *out) {
  size_t n = strcspn(*s, ",");
  char ph[64];
  if (n == 0 || n >= sizeof(ph))
    return false;
  memcpy(ph, *s, n);
  ph[n] = '\0';
  *s += n;
  const json_t *av = json_object_get(r->values, ph);
  const char *t;
  json_t *v;
  if (!json_is_object(av) || json_object_size(av) != 1)
    return false;
  json_object_foreach((json_t *)av, t, v) {
    if ((strcmp(t, "S") != 0 && strcmp(t, "N") != 0 && strcmp(t, "B") != 0) ||
        !json_is_string(v))
      return false;
    return tt_buf_printf(out, "AttributeValue: {%s:%s}", t, json_string_value(v)) == 0;
  }
  return false;
}

/* DynamoDB prints the values of a BETWEEN's bounds and of attribute_type's
 * type name in its messages; the expression parser names their
 * placeholders instead, as its messages also reach the REST API. The
 * listener, which logs no message (only its type), puts the values back
 * into the answer; a BETWEEN from legacy parameters gets DynamoDB's legacy
 * message, a key attribute in a QueryFilter names the QueryFilter. Returns a malloc'd message, or NULL to keep msg. */
static char *echo_values(const struct tt_ddb_req *r, const char *msg) {
  static const char lower[] = "lower bound operand: ", upper[] = ", upper bound operand: ";
  static const char type[] = "Invalid attribute type name found; type: ";
  static const char types[] = ", valid types: { B; NULL; SS; BOOL; L; BS; N; NS; S; M }";
  if (r->values == NULL && !r->legacy)
    return NULL;
  static const char filter_keys[] = "Filter Expression can only contain non-primary key";
  const char *lo = strstr(msg, lower), *ty = strstr(msg, type);
  struct tt_buf out;
  tt_buf_init(&out, 0);
  bool ok = false;
  if (r->query_filter && strncmp(msg, filter_keys, sizeof(filter_keys) - 1) == 0) {
    /* The legacy QueryFilter names itself. */
    ok = tt_buf_printf(&out, "QueryFilter%s", msg + strlen("Filter Expression")) == 0;
  } else if (lo != NULL && strstr(msg, "The BETWEEN operator requires ") != NULL) {
    const char *s = lo + sizeof(lower) - 1;
    if (r->legacy && strstr(msg, "upper bound to be greater") != NULL) {
      ok = tt_buf_printf(&out, "The BETWEEN condition was provided a range where the lower bound "
                               "is greater than the upper bound") == 0;
    } else {
      ok = tt_buf_append(&out, msg, (size_t)(s - msg)) == 0 && echo_operand(r, &s, &out) &&
           strncmp(s, upper, sizeof(upper) - 1) == 0 &&
           tt_buf_append(&out, upper, sizeof(upper) - 1) == 0 &&
           (s += sizeof(upper) - 1, echo_operand(r, &s, &out)) && *s == '\0';
    }
  } else if (ty != NULL) {
    const char *s = ty + sizeof(type) - 1;
    size_t n = strcspn(s, ",");
    char ph[64];
    const json_t *str = NULL;
    if (n > 0 && n < sizeof(ph) && strcmp(s + n, types) == 0) {
      memcpy(ph, s, n);
      ph[n] = '\0';
      str = json_object_get(json_object_get(r->values, ph), "S");
    }
    ok = json_is_string(str) && tt_buf_append(&out, msg, (size_t)(s - msg)) == 0 &&
         tt_buf_printf(&out, "%s, valid types: {B,NULL,SS,BOOL,L,BS,N,NS,S,M}",
                       json_string_value(str)) == 0;
  }
  char *res = ok && tt_buf_append(&out, "", 1) == 0 ? tt_buf_steal(&out, NULL) : NULL;
  tt_buf_free(&out);
  return res;
}

static void answer_backend_error(struct tt_ddb_req *r, const struct tt_backend_error *e) {
  if (strcmp(e->type, "RequestCanceled") == 0 || e->type[0] == '\0') {
    if (r->deadline_hit)
      answer_error(r, 500, T_DDB "InternalServerError",
                   "The request deadline passed before the backend answered", NULL);
    else
      answer_error(r, 503, T_DDB "ServiceUnavailable", "The server is shutting down", NULL);
    return;
  }
  char buf[160];
  const char *full = tt_ddbw_full_type(e->type, buf, sizeof(buf));
  unsigned status = e->http_status >= 400 && e->http_status < 600 ? e->http_status : 500;
  const char *msg = r->attribute_updates ? tt_ddbw_legacy_message(e->message) : e->message;
  char *echoed = status == 400 ? echo_values(r, msg) : NULL;
  answer_error(r, status, full, echoed ? echoed : msg, e->body);
  free(echoed);
}

/* A body sent with chunked transfer encoding (DynamoDB's 413): `cls` is
 * the answer's text (NUL-terminated, or NULL), `pos` what was sent of it. */
static ssize_t chunked_read(void *cls, uint64_t pos, char *buf, size_t max) {
  size_t len = cls ? strlen(cls) : 0;
  if (pos >= len)
    return MHD_CONTENT_READER_END_OF_STREAM;
  size_t n = len - pos < max ? len - pos : max;
  memcpy(buf, (const char *)cls + pos, n);
  return (ssize_t)n;
}

/* CORS's preflight answer: no body, the asked headers and method allowed. */
static enum MHD_Result queue_preflight(struct tt_ddb_req *r) {
  static const char empty[] = "";
  struct MHD_Response *mr =
      MHD_create_response_from_buffer(0, (void *)empty, MHD_RESPMEM_PERSISTENT);
  if (mr == NULL)
    return MHD_NO;
  const char *h = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
                                              "Access-Control-Request-Headers");
  const char *m = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
                                              "Access-Control-Request-Method");
  MHD_add_response_header(mr, "x-amzn-RequestId", r->request_id);
  MHD_add_response_header(mr, "Access-Control-Allow-Origin", "*");
  if (h)
    MHD_add_response_header(mr, "Access-Control-Allow-Headers", h);
  if (m)
    MHD_add_response_header(mr, "Access-Control-Allow-Methods", m);
  MHD_add_response_header(mr, "Access-Control-Max-Age", "172800");
  enum MHD_Result rc = MHD_queue_response(r->conn, 200, mr);
  MHD_destroy_response(mr);
  return rc;
}

static enum MHD_Result queue_answer(struct tt_ddb_req *r) {
  /* Fixed answers: a request that is not a POST of JSON, and DynamoDB's
   * answer to a GET (load balancers' health checks; the space is its). */
  static const char xml[] = "<UnknownOperationException/>\n";
  static const char health[] = "healthy: dynamodb.us-east-1.amazonaws.com ";
  r->queued = true;
  if (r->preflight)
    return queue_preflight(r);
  const char *fixed = r->health ? health : r->xml ? xml : NULL;
  const char *data = fixed ? fixed : r->out;
  size_t len = fixed ? strlen(fixed) : r->out_len;
  char crc[16];
  tt_server_uint_text(crc, tt_ddbw_crc32(data, len));
  struct MHD_Response *mr = NULL;
  if (fixed) {
    mr = MHD_create_response_from_buffer(len, (void *)fixed, MHD_RESPMEM_PERSISTENT);
  } else if (r->status == 413) {
    /* DynamoDB answers a request over its size limit chunked. */
    mr = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, chunked_read, r->out, free);
  } else {
    mr = MHD_create_response_from_buffer(len, r->out, MHD_RESPMEM_MUST_FREE);
  }
  if (mr == NULL)
    return MHD_NO;
  if (!fixed)
    r->out = NULL; /* MHD frees it */
  MHD_add_response_header(mr, "x-amzn-RequestId", r->request_id);
  if (r->cors)
    MHD_add_response_header(mr, "Access-Control-Allow-Origin", "*");
  MHD_add_response_header(mr, "x-amz-crc32", crc);
  MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE,
                          r->health ? "text/plain"
                          : r->xml  ? "application/xml"
                          : r->json_1_0 ? "application/x-amz-json-1.0"
                                        : "application/json");
  if (r->l->draining)
    MHD_add_response_header(mr, MHD_HTTP_HEADER_CONNECTION, "close");
  enum MHD_Result rc = MHD_queue_response(r->conn, r->status, mr);
  MHD_destroy_response(mr);
  return rc;
}

/* ---- SigV4 verification (--dynamodb-auth verify) ------------------------ */

/* Parses X-Amz-Date ("20150830T123600Z"); -1 when malformed. */
static int parse_amz_date(const char *s, time_t *out) {
  struct tm tm;
  memset(&tm, 0, sizeof(tm));
  if (s == NULL || strlen(s) != 16 || s[8] != 'T' || s[15] != 'Z')
    return -1;
  for (int i = 0; i < 15; i++)
    if (i != 8 && (s[i] < '0' || s[i] > '9'))
      return -1;
#define D2(i) ((s[i] - '0') * 10 + s[(i) + 1] - '0') /* two digits, checked above */
  tm.tm_year = D2(0) * 100 + D2(2) - 1900;
  tm.tm_mon = D2(4) - 1;
  tm.tm_mday = D2(6);
  tm.tm_hour = D2(9);
  tm.tm_min = D2(11);
  tm.tm_sec = D2(13);
#undef D2
  *out = timegm(&tm);
  return 0;
}

#define MAX_SIGNED 32

/* Recomputes the request's signature with the configured secret and
 * compares (constant time). Returns 0, or -1 after answering the error. */
static int verify_signature(struct tt_ddb_req *r, const char *url, const struct tt_ddbw_auth *a) {
  const struct tt_ddb_listener_options *o = &r->l->opts;
  if (strcmp(a->access_key, o->access_key_id) != 0)
    return answer_error(r, 400, T_SERVICE "UnrecognizedClientException",
                        "The security token included in the request is invalid.", NULL);
  const char *amz_date = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "X-Amz-Date");
  time_t when;
  if (parse_amz_date(amz_date, &when) != 0)
    return answer_error(r, 400, T_SERVICE "IncompleteSignatureException",
                        "Date must be in ISO-8601 'basic format'.", NULL);
  /* DynamoDB refuses a signature more than 15 minutes from its clock. */
  time_t now = time(NULL);
  if (when < now - 15 * 60 || when > now + 15 * 60)
    return answer_error(r, 400, T_SERVICE "InvalidSignatureException",
                        "Signature expired: the request's X-Amz-Date is more than 15 minutes "
                        "from the server's time",
                        NULL);
  struct tt_sigv4_header hs[MAX_SIGNED];
  size_t n = 0;
  char names[sizeof(a->signed_headers)];
  snprintf(names, sizeof(names), "%s", a->signed_headers);
  bool host = false;
  for (char *p = names; *p && n < MAX_SIGNED;) {
    size_t len = strcspn(p, ";");
    bool last = p[len] == '\0';
    p[len] = '\0';
    const char *v = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, p);
    host = host || strcasecmp(p, "host") == 0;
    hs[n++] = (struct tt_sigv4_header){p, v ? v : ""};
    if (last)
      break;
    p += len + 1;
  }
  if (!host)
    return answer_error(r, 400, T_SERVICE "InvalidSignatureException",
                        "'Host' must be a 'SignedHeader' in the AWS Authorization.", NULL);
  const char *token =
      MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "X-Amz-Security-Token");
  struct tt_sigv4_request sr = {.method = "POST",
                                .path = url,
                                .headers = hs,
                                .n_headers = n,
                                .body = r->body_buf.data,
                                .body_len = r->body_buf.len};
  struct tt_sigv4_credentials cr = {o->access_key_id, o->secret_access_key, token};
  struct tt_sigv4_config cfg = {.region = a->region, .service = a->service, .cache = &r->l->sigv4};
  struct tt_sigv4_result res;
  struct tt_error err;
  int rc = tt_sigv4_sign(&sr, &cr, &cfg, when, &res, &err);
  bool ok = rc == 0 && strlen(a->signature) == TT_SIGV4_HEX_LEN &&
            CRYPTO_memcmp(res.signature, a->signature, TT_SIGV4_HEX_LEN) == 0;
  tt_sigv4_result_free(&res);
  if (!ok)
    return answer_error(r, 400, T_SERVICE "InvalidSignatureException",
                        "The request signature we calculated does not match the signature "
                        "you provided. Check your AWS Secret Access Key and signing method. "
                        "Consult the service documentation for details.",
                        NULL);
  return 0;
}

/* Keeps what echo_values needs when the request has a condition that can
 * fail on a BETWEEN or attribute_type (a copy: the backend reads the body
 * meanwhile). Runs before the legacy parameters are rewritten. */
static int keep_values(struct tt_ddb_req *r, const json_t *body) {
  static const char *const legacy[] = {"Expected", "KeyConditions", "QueryFilter", "ScanFilter"};
  static const char *const exprs[] = {"ConditionExpression", "FilterExpression",
                                      "KeyConditionExpression"};
  bool want = false;
  for (size_t i = 0; i < sizeof(legacy) / sizeof(legacy[0]); i++)
    if (json_object_get(body, legacy[i]) != NULL)
      r->legacy = want = true;
  r->query_filter = json_object_get(body, "QueryFilter") != NULL;
  for (size_t i = 0; i < sizeof(exprs) / sizeof(exprs[0]) && !want; i++) {
    const char *t = json_string_value(json_object_get(body, exprs[i]));
    want = t && (strcasestr(t, "between") != NULL || strstr(t, "attribute_type") != NULL);
  }
  const json_t *values = json_object_get(body, "ExpressionAttributeValues");
  if (want && r->values == NULL && json_is_object(values))
    r->values = json_deep_copy(values);
  return 0;
}

/* ---- the request's call ------------------------------------------------- */

static void req_free(struct tt_ddb_req *r) {
  struct tt_ddb_listener *l = r->l;
  LIST_UNLINK(l->all, r, aprev, anext);
  if (r->fast)
    tt_av_free(&r->get.key);
  else if (r->tabled)
    tt_arena_free(&r->table.arena);
  else
    tt_ddbi_owned_free(&r->owned);
  tt_ddbt_txn_free(&r->txn);
  tt_ddbt_batch_free(&r->batch);
  json_decref(r->body);
  json_decref(r->values);
  tt_buf_free(&r->body_buf);
  free(r->out);
  free(r);
  l->active--;
  if (l->draining && l->active == 0 && l->idle)
    l->idle(l->hook_arg);
}

static void maybe_free(struct tt_ddb_req *r) {
  if (r->mhd_done && !r->timer_open && (!r->running || r->joined))
    req_free(r);
}

static void timer_closed_cb(uv_handle_t *h) {
  struct tt_ddb_req *r = h->data;
  r->timer_open = false;
  maybe_free(r);
}

/* The call's answer: its error (a cancelled transaction's with the reasons
 * DynamoDB sends, made from the typed ones: its error.body is NULL), or its
 * result as DynamoDB's JSON; the item and read operations' is written as
 * text (ddb_items.h). */
static void call_done(struct tt_client_call *c) {
  struct tt_ddb_req *r = c->arg;
  if (c->bc.status != 0) {
    struct tt_backend_error e = c->bc.error;
    json_t *reasons =
        r->txn.steps && c->bc.txn_out.n_reasons ? tt_ddbt_txn_reasons(&c->bc.txn_out) : NULL;
    if (reasons)
      e.body = reasons;
    answer_backend_error(r, &e);
    json_decref(reasons);
    return;
  }
  if (r->txn.steps || r->batch.tables || r->tabled) {
    json_t *out = r->txn.steps ? tt_ddbt_txn_answer(c->bc.op, &c->bc.txn_out)
                  : r->batch.tables
                      ? tt_ddbt_batch_answer(c->bc.op, r->body, &r->batch, &c->bc.batch_out)
                      : tt_ddb_table_desc_json(c->bc.op, c->bc.table_out);
    if (out == NULL)
      answer_error(r, 500, T_DDB "InternalServerError", "out of memory", NULL);
    else
      answer_json(r, 200, out);
    return;
  }
  struct tt_buf b;
  tt_buf_init(&b, 0);
  if (tt_ddbi_answer_write(&r->typed, &c->bc, &b) == 0 && tt_buf_append(&b, "", 1) == 0) {
    free(r->out);
    r->out_len = b.len - 1;
    r->out = tt_buf_steal(&b, NULL);
    r->status = 200;
    r->answered = true;
  } else {
    answer_error(r, 500, T_DDB "InternalServerError", "out of memory", NULL);
  }
  tt_buf_free(&b);
}

/* The typed request of the call: the six item and read operations'
 * (ddb_items.h) from the one-pass GetItem or the checked body, a
 * transaction's or a batch's (ddb_items.h), or a table operation's
 * (table_json.h). The request keeps the body, which they borrow. Returns 0,
 * or -1 after answering the refusal. */
static int typed_request(struct tt_ddb_req *r, bool fast, json_t *body) {
  struct tt_backend_error e;
  memset(&e, 0, sizeof(e));
  r->body = body; /* released with the request */
  int rc = 0;
  if (fast) {
    r->typed.op = TT_DDB_GET_ITEM;
    r->typed.item = (struct tt_ddb_item_request){
        .table = r->get.table,
        .key = &r->get.key,
        .consistent_read = r->get.consistent_read,
    };
  } else if (tt_ddbi_typed_op(r->op)) {
    rc = tt_ddbi_request_from_json(r->op, body, &r->typed, &r->owned, &e);
  } else if (tt_ddbt_is_txn(r->op)) {
    rc = tt_ddbt_txn_parse(r->op, body, &r->txn, &e);
  } else if (tt_ddbt_is_batch(r->op)) {
    rc = tt_ddbt_batch_parse(r->op, body, &r->batch, &e);
  } else {
    r->tabled = true;
    tt_arena_init(&r->table.arena);
    rc = tt_ddb_table_request_read(r->op, body, &r->table.arena, &r->table.req, &e);
  }
  if (rc != 0) {
    answer_backend_error(r, &e);
    tt_backend_error_clear(&e);
  }
  return rc != 0 ? -1 : 0;
}

static void joined_cb(struct tt_join *j, void *arg) {
  struct tt_ddb_req *r = arg;
  (void)j;
  r->joined = true;
  LIST_UNLINK(r->l->running, r, prev, next);
  if (!r->answered)
    answer_error(r, 500, T_DDB "InternalServerError", "The call produced no answer", NULL);
  if (r->timer_open && !uv_is_closing((uv_handle_t *)&r->timer))
    uv_close((uv_handle_t *)&r->timer, timer_closed_cb);
  if (r->mhd_done) { /* the connection is gone: nobody to answer */
    maybe_free(r);
    return;
  }
  if (r->suspended) {
    r->suspended = false;
    MHD_resume_connection(r->conn);
    if (r->l->wake)
      r->l->wake(r->l->hook_arg);
  }
}

static void deadline_cb(uv_timer_t *t) {
  struct tt_ddb_req *r = t->data;
  r->deadline_hit = true;
  tt_join_cancel(&r->join);
}

/* The presigned-request parameters of the query string into the input
 * (cls); a parameter given without a value ("?X-Amz-Algorithm") is present
 * and empty. */
static enum MHD_Result query_arg_cb(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value) {
  static const char *const names[5] = {"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Signature",
                                       "X-Amz-SignedHeaders", "X-Amz-Date"};
  struct tt_ddbw_input *in = cls;
  (void)kind;
  for (int i = 0; i < 5; i++)
    if (key && strcmp(key, names[i]) == 0 && in->query[i] == NULL) {
      in->query[i] = value ? value : "";
      in->query_auth = in->query_auth || i == 0;
    }
  return MHD_YES;
}

/* The checks of a request the one-pass reader did not take, in DynamoDB's
 * order (ddb_wire.h), and the legacy rewrite. Returns 0, or -1 after
 * answering the refusal. */
static int generic_checks(struct tt_ddb_req *r, struct tt_ddbw_request *req,
                          const struct tt_ddbw_input *in) {
  struct tt_ddbw_error err;
  r->attribute_updates = json_object_get(req->body, "AttributeUpdates") != NULL;
  if (tt_ddbw_check_request(req->op, req->body, &err) != 0 || keep_values(r, req->body) != 0 ||
      tt_ddbw_legacy(req->op, req->body, &err) != 0)
    return answer_error(r, err.status, err.type, err.message, NULL);
  /* The backend reads strings through json_exact.h, where one that begins
   * with U+0000 carries the "\0S" marker (so "\0N1" is no number): mark
   * them, after the checks above have measured them as sent. JSON spells
   * U+0000 only as \u0000, so a body without it needs no walk. */
  if (memmem(in->body, in->body_len, "\\u0000", 6) != NULL &&
      tt_json_mark_plain_strings(req->body) != 0)
    return answer_error(r, 500, T_DDB "InternalServerError", "out of memory", NULL);
  return 0;
}

/* Parses the request and starts its call, or answers at once. */
static void process(struct tt_ddb_req *r, const char *url, const char *method) {
  struct tt_ddb_listener *l = r->l;
  if (l->draining) {
    answer_error(r, 503, T_DDB "ServiceUnavailable", "The server is shutting down", NULL);
    return;
  }
  if (r->too_large) {
    char msg[128];
    snprintf(msg, sizeof(msg), "Request size exceeds %llu bytes",
             (unsigned long long)l->opts.max_body_bytes);
    answer_error(r, 413, "com.amazon.coral.validate#ValidationException", msg, NULL);
    return;
  }
  r->cors = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Origin") != NULL;
  r->preflight = r->cors && strcmp(method, "OPTIONS") == 0;
  r->health = !r->preflight && strcmp(method, "GET") == 0;
  if (r->preflight || r->health) {
    r->status = 200;
    r->answered = true;
    return;
  }
  struct MHD_Connection *c = r->conn;
  struct tt_ddbw_input in = {
      .method = method,
      .content_type = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type"),
      .target = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Amz-Target"),
      .authorization = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization"),
      .amz_date = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Amz-Date"),
      .date = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Date"),
      .body = r->body_buf.data,
      .body_len = r->body_buf.len,
  };
  MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, query_arg_cb, &in);
  struct tt_ddbw_request req;
  struct tt_ddbw_error err;
  bool not_json;
  /* The answer's type follows the request's, as DynamoDB's does:
   * application/x-amz-json-1.0 when asked, else application/json. */
  r->json_1_0 = tt_ddbw_is_json_1_0(in.content_type);
  /* A plain GetItem is read in one pass, and passes every check below by
   * construction; anything else takes the generic path. */
  bool fast = r->fast = tt_ddbw_fast_get(&in, &r->get, &req.auth);
  if (fast) {
    req.op = TT_DDB_GET_ITEM;
    req.body = NULL;
  } else if (tt_ddbw_parse(&in, &req, &err, &not_json) != 0) {
    r->xml = not_json;
    if (tt_ddbw_target(in.target, &r->op) == 0)
      r->op_known = true;
    answer_error(r, err.status, err.type, err.message, NULL);
    return;
  }
  r->op = req.op;
  r->op_known = true;
  /* Presigned (query-string) requests are not verified: refuse them. */
  if ((l->opts.verify && in.authorization == NULL &&
       answer_error(r, 400, T_SERVICE "MissingAuthenticationTokenException",
                    "Request is missing Authentication Token", NULL) != 0) ||
      (l->opts.verify && verify_signature(r, url, &req.auth) != 0) ||
      (!fast && generic_checks(r, &req, &in) != 0)) {
    json_decref(req.body);
    return;
  }
  bool typed = tt_ddbi_typed_op(req.op);
  if (typed_request(r, fast, req.body) != 0)
    return;
  tt_join_init(&r->join, l->fams, joined_cb, r);
  r->join.deadline_ms = r->start_ms + l->opts.request_timeout_ms;
  r->running = true;
  LIST_PUSH(l->running, r, prev, next);
  struct tt_client *cl = l->client;
  int started =
      typed && (req.op == TT_DDB_QUERY || req.op == TT_DDB_SCAN)
          ? tt_client_start_read(cl, &r->join, &r->call, req.op, &r->typed.read, call_done, r)
      : typed ? tt_client_start_item(cl, &r->join, &r->call, req.op, &r->typed.item, call_done, r)
      : r->txn.steps
          ? tt_client_start_txn(cl, &r->join, &r->call, req.op, &r->txn.req, call_done, r)
      : r->batch.tables
          ? tt_client_start_batch(cl, &r->join, &r->call, req.op, &r->batch.req, call_done, r)
          : tt_client_start_table(cl, &r->join, &r->call, req.op, &r->table.req, call_done, r);
  if (started != 0)
    answer_backend_error(r, &r->call.bc.error);
  tt_join_release(&r->join); /* may join at once */
  if (!r->joined)
    tt_server_run_ready(l->loop, l->client, r->join.deadline_ms);
}

/* ---- libmicrohttpd callbacks -------------------------------------------- */

enum MHD_Result tt_ddb_listener_access_cb(void *cls, struct MHD_Connection *conn,
                                          const char *url, const char *method,
                                          const char *version, const char *upload_data,
                                          size_t *upload_data_size, void **con_cls) {
  struct tt_ddb_listener *l = cls;
  struct tt_ddb_req *r = *con_cls;
  (void)version;
  if (r == NULL) {
    r = calloc(1, sizeof(*r));
    if (r == NULL)
      return MHD_NO;
    r->l = l;
    r->conn = conn;
    r->start_ns = tt_server_now_ns();
    r->start_ms = uv_now(l->loop);
    tt_buf_init(&r->body_buf, l->opts.max_body_bytes);
    set_request_id(r);
    l->active++;
    LIST_PUSH(l->all, r, aprev, anext);
    *con_cls = r;
    return MHD_YES;
  }
  if (*upload_data_size > 0) {
    if (!r->too_large && tt_buf_append(&r->body_buf, upload_data, *upload_data_size) != 0) {
      r->too_large = true;
      tt_buf_free(&r->body_buf);
    }
    /* An oversized body is read and dropped so that the 413 can be sent
     * (libmicrohttpd 0.9.75 answers only after the upload), up to a bound:
     * past it the connection is closed. */
    if (r->too_large && (r->discarded += *upload_data_size) > DISCARD_LIMIT)
      return MHD_NO;
    *upload_data_size = 0;
    return MHD_YES;
  }
  if (r->queued)
    return MHD_YES;
  if (!r->answered && !r->running) {
    process(r, url, method);
    if (r->running && !r->joined) {
      r->suspended = true;
      if (uv_timer_init(l->loop, &r->timer) == 0) {
        r->timer.data = r;
        r->timer_open = true;
        uint64_t now = uv_now(l->loop);
        uint64_t dl = r->join.deadline_ms;
        uv_timer_start(&r->timer, deadline_cb, dl > now ? dl - now : 0, 0);
      }
      MHD_suspend_connection(conn);
      return MHD_YES;
    }
  }
  if (!r->answered)
    return MHD_YES;
  return queue_answer(r);
}

void tt_ddb_listener_completed_cb(void *cls, struct MHD_Connection *conn, void **con_cls,
                                  enum MHD_RequestTerminationCode toe) {
  struct tt_ddb_listener *l = cls;
  struct tt_ddb_req *r = *con_cls;
  (void)conn;
  if (r == NULL)
    return;
  *con_cls = NULL;
  bool gone = toe != MHD_REQUEST_TERMINATED_COMPLETED_OK || !r->queued;
  unsigned status = gone ? 499 : r->status;
  char status_text[12];
  tt_server_uint_text(status_text, status);
  const char *op = r->op_known ? tt_ddb_op_name(r->op) : "Unknown";
  const char *labels[2] = {op, status_text};
  double secs = (double)(tt_server_now_ns() - r->start_ns) / 1e9;
  if (l->requests) {
    tt_metric_add(l->requests, labels, 1);
    tt_metric_observe(l->duration, labels, secs);
  }
  struct tt_log_line ln;
  tt_log_begin(&ln, status >= 500 && status != 503 ? TT_LOG_ERROR : TT_LOG_INFO,
               "dynamodb.request");
  tt_log_str(&ln, "request_id", r->request_id);
  tt_log_str(&ln, "operation", op);
  tt_log_int(&ln, "status", status);
  if (r->error_type[0])
    tt_log_str(&ln, "error_type", r->error_type);
  else if (gone)
    tt_log_str(&ln, "error_type", "ClientClosed");
  tt_log_ms(&ln, "duration_ms", secs * 1000.0);
  tt_log_end(&ln);
  r->mhd_done = true;
  if (r->running && !r->joined)
    tt_join_cancel(&r->join);
  maybe_free(r);
}

void tt_ddb_listener_drain(struct tt_ddb_listener *l) {
  l->draining = true;
  if (l->active == 0 && l->idle)
    l->idle(l->hook_arg);
}

void tt_ddb_listener_cancel_all(struct tt_ddb_listener *l) {
  /* A client still sending its request (or not reading its answer) gets
   * one second more, then libmicrohttpd closes its connection. */
  for (struct tt_ddb_req *r = l->all; r; r = r->anext)
    if ((!r->running || r->joined) && !r->mhd_done)
      MHD_set_connection_option(r->conn, MHD_CONNECTION_OPTION_TIMEOUT, 1u);
  if (l->all && l->wake)
    l->wake(l->hook_arg); /* MHD's next timeout changed */
  for (struct tt_ddb_req *r = l->running; r;) {
    if (r->drain_canceled) {
      r = r->next;
      continue;
    }
    r->drain_canceled = true;
    tt_join_cancel(&r->join);
    r = l->running; /* the cancel may have joined and unlinked it: restart */
  }
}
