/* SPDX-License-Identifier: Apache-2.0 */
/* test_ledger.c -- the job ledger on the memory backend through the ORM:
 * built-in models, jobs, transitions, records, lists, leases and leased
 * semaphores on an injected clock, idempotency records, and what
 * sanitization does to stored errors. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "backend/memory/memdb.h"
#include "client/client.h"
#include "ledger/ledger.h"
#include "model/registry.h"
#include "orm/orm.h"
#include "test_memdb.h"
#include "value/json_exact.h"

#define SEC INT64_C(1000000000)
#define T0 (INT64_C(1700000000) * SEC) /* 2023-11-14T22:13:20Z */

struct lfx {
  uv_loop_t loop;
  struct tt_backend *b;
  struct tt_client client;
  struct tt_model_registry *models;
  struct tt_orm orm;
  int64_t now_ns;
  unsigned joins_done;
};

static struct lfx F;

static int64_t fx_clock(void *arg) { return ((struct lfx *)arg)->now_ns; }

static void orm_done(struct tt_orm_ctx *ctx) { *(int *)ctx->arg = 1; }

static void join_done(struct tt_join *j, void *arg) {
  (void)j;
  ((struct lfx *)arg)->joins_done++;
}

static void setup(void) {
  memset(&F, 0, sizeof(F));
  ck_assert_int_eq(uv_loop_init(&F.loop), 0);
  ck_assert_int_eq(tt_memdb_new(&F.loop, NULL, &F.b), 0);
  tt_client_init(&F.client, F.b, &F.loop, NULL);
  F.models = tt_model_registry_new();
  struct tt_error err;
  ck_assert_int_eq(tt_ledger_register_models(F.models, NULL, &err), 0);
  F.now_ns = T0;
  F.orm.models = F.models;
  F.orm.client = &F.client;
  F.orm.now_ns = fx_clock;
  F.orm.clock_arg = &F;
  /* The jobs table, through the ORM path PUT /v1/jobs/table takes. */
  struct tt_arena arena;
  tt_arena_init(&arena);
  struct tt_join join;
  tt_join_init(&join, NULL, join_done, &F);
  struct tt_orm_ctx ctx;
  struct tt_orm_result res;
  memset(&res, 0, sizeof(res));
  int done = 0;
  tt_orm_ctx_init(&ctx, &F.orm, &join, &arena, "test",
                  tt_model_registry_get_internal(F.models, TT_LEDGER_MODEL_META), &res, orm_done, &done);
  ck_assert_int_eq(tt_orm_table_ensure(&ctx), 0);
  ck_assert_int_eq(done, 0); /* never inside the start */
  tt_join_release(&join);
  uv_run(&F.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(done, 1);
  ck_assert_int_eq(res.status, 0);
  ck_assert_int_eq(res.answer, TT_ORM_ANSWER_TABLE);
  ck_assert(res.table.created && res.table.ensured);
  ck_assert_str_eq(res.table.table, "tabletheory-jobs");
  tt_orm_result_free(&res);
  tt_arena_free(&arena);
}

static void teardown(void) {
  fx_close_backend(&F.loop, F.b);
  tt_model_registry_free(F.models);
}

/* ---- running one ledger operation to its answer ----------------------------- */

struct answer {
  int status; /* 0 or -1 */
  unsigned http;
  enum tt_err_code code;
  char field[128];
  json_t *body;    /* parsed answer (NULL for an empty body) */
  json_t *details; /* error details or NULL */
};

static void answer_free(struct answer *a) {
  json_decref(a->body);
  json_decref(a->details);
  memset(a, 0, sizeof(*a));
}

struct call {
  enum tt_ledger_kind kind;
  const char *job, *rid, *key, *owner;
  const char *scope, *subject, *slot; /* semaphores */
  const char *body; /* JSON with ' for " */
  struct tt_ledger_list_args list;
};

static int op_done_count;
static void op_done(struct tt_ledger_op *op) { (void)op; op_done_count++; }

static struct answer run(struct call c) {
  struct tt_arena arena;
  tt_arena_init(&arena);
  struct tt_join join;
  tt_join_init(&join, NULL, join_done, &F);
  struct tt_ledger_result res;
  memset(&res, 0, sizeof(res));
  tt_buf_init(&res.body, 0);
  json_t *body = c.body ? fx_json(c.body) : NULL;
  struct tt_ledger_op op;
  memset(&op, 0, sizeof(op));
  op.kind = c.kind;
  op.orm = &F.orm;
  op.join = &join;
  op.arena = &arena;
  op.request_id = "req-test";
  op.job_id = c.job;
  op.record_id = c.rid;
  op.key = c.key;
  op.owner = c.owner;
  op.scope = c.scope;
  op.subject = c.subject;
  op.slot = c.slot;
  op.body = body;
  op.list = c.list;
  op.result = &res;
  op.done = op_done;
  op_done_count = 0;
  unsigned before = F.joins_done;
  if (tt_ledger_start(&op) != 0)
    op_done_count++; /* finished inside its start: done never runs */
  else
    ck_assert_int_eq(op_done_count, 0); /* never inside the start */
  tt_join_release(&join);
  uv_run(&F.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(op_done_count, 1);          /* done ran exactly once */
  ck_assert_uint_eq(F.joins_done, before + 1); /* every call was joined */
  ck_assert_uint_eq(tt_join_pending(&join), 0);
  struct answer a;
  memset(&a, 0, sizeof(a));
  a.status = res.status;
  if (res.status != 0 && getenv("LEDGER_DEBUG"))
    fprintf(stderr, "error %s field=%s: %s\n", tt_error_code_name(res.err.code), res.err.field, res.err.message);
  a.http = res.http_status;
  if (res.status != 0) {
    a.code = res.err.code;
    snprintf(a.field, sizeof(a.field), "%s", res.err.field);
    a.details = res.details ? json_incref(res.details) : NULL;
  } else if (res.body.len) {
    struct tt_error err;
    ck_assert_int_eq(tt_json_parse(res.body.data, res.body.len, NULL, &a.body, &err), 0);
  }
  tt_ledger_result_free(&res);
  json_decref(body);
  tt_arena_free(&arena);
  return a;
}

static void expect_error(struct answer a, enum tt_err_code code, const char *field) {
  ck_assert_msg(a.status == -1, "expected %s, got HTTP %u", tt_error_code_name(code), a.http);
  ck_assert_str_eq(tt_error_code_name(a.code), tt_error_code_name(code));
  if (field)
    ck_assert_str_eq(a.field, field);
}

static const char *str(const json_t *o, const char *name) {
  size_t len;
  const json_t *v = json_object_get(o, name);
  return v ? tt_json_string_text(v, &len) : NULL;
}

static long long num(const json_t *o, const char *name) {
  struct tt_json_numbuf nb;
  size_t len;
  const json_t *v = json_object_get(o, name);
  const char *t = v ? tt_json_number_text(v, &nb, &len) : NULL;
  ck_assert_msg(t != NULL, "%s is not a number", name);
  return strtoll(t, NULL, 10);
}

static void create_job(const char *id, const char *tenant, const char *status) {
  char body[256];
  snprintf(body, sizeof(body), "{'job_id':'%s','tenant_id':'%s','status':'%s'}", id, tenant,
           status);
  struct answer a = run((struct call){.kind = TT_LEDGER_JOB_CREATE, .body = body});
  ck_assert_msg(a.status == 0, "create failed: %s", tt_error_code_name(a.code));
  ck_assert_uint_eq(a.http, 201);
  answer_free(&a);
}

/* ---- models, identifiers ------------------------------------------------------ */

/* The stored item (DynamoDB wire form, new reference) read through the
 * backend port: the model routes no longer serve ledger items, so this is
 * how the key layout and the sanitized copy are checked. NULL if absent. */
static json_t *raw_item(const char *pk, const char *sk) {
  json_t *req = json_pack("{s:s, s:{s:{s:s}, s:{s:s}}, s:b}", "TableName", "tabletheory-jobs",
                          "Key", "pk", "S", pk, "sk", "S", sk, "ConsistentRead", 1);
  struct tt_backend_call c;
  fx_call(&F.loop, F.b, TT_DDB_GET_ITEM, req, &c);
  ck_assert_int_eq(c.status, 0);
  json_t *item = json_incref(json_object_get(c.response, "Item"));
  json_decref(c.response);
  json_decref(req);
  return item;
}

START_TEST(test_stored_layout) {
  create_job("j/1", "t1", "PENDING");
  json_t *meta = raw_item("JOB#j/1", "META");
  ck_assert_ptr_nonnull(meta);
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(meta, "version"), "N")),
                   "1");
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(meta, "job_id"), "S")),
                   "j/1");
  json_decref(meta);
  struct answer a = run((struct call){
      .kind = TT_LEDGER_RECORD_PUT, .job = "j/1", .rid = "r1",
      .body = "{'status':'FAILED','error':{'type':'Http','code':'E1','message':'password="
              "hunter2','retryable':false,'fields':{'api_key':'k-123'}}}"});
  ck_assert_uint_eq(a.http, 200);
  answer_free(&a);
  json_t *rec = raw_item("JOB#j/1", "REC#r1");
  ck_assert_ptr_nonnull(rec);
  char *text = json_dumps(rec, JSON_COMPACT);
  ck_assert_ptr_null(strstr(text, "hunter2"));
  ck_assert_ptr_null(strstr(text, "k-123"));
  ck_assert_ptr_nonnull(strstr(text, "[REDACTED]"));
  free(text);
  json_decref(rec);
  a = run((struct call){.kind = TT_LEDGER_REQUEST_CREATE, .job = "j/1", .key = "k1",
                        .body = "{}"});
  ck_assert_uint_eq(a.http, 201);
  answer_free(&a);
  json_t *req = raw_item("JOB#j/1", "REQ#k1");
  ck_assert_ptr_nonnull(req);
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(req, "status"), "S")),
                   "IN_PROGRESS");
  json_decref(req);
}
END_TEST

/* The whole stored items, attribute by attribute: what the ledger builds as
 * values plus the lifecycle attributes the ORM adds (JobMeta's version is
 * the ledger's 1; the role's starts at 0 and grows by one per write). */
START_TEST(test_stored_items_exactly) {
  create_job("j1", "t1", "PENDING");
  struct answer a = run((struct call){.kind = TT_LEDGER_REQUEST_CREATE, .job = "j1", .key = "k1",
                                      .body = "{}"});
  ck_assert_uint_eq(a.http, 201);
  answer_free(&a);
  a = run((struct call){.kind = TT_LEDGER_REQUEST_COMPLETE, .job = "j1", .key = "k1",
                        .body = "{'result':{'n':1},'error':{}}"});
  ck_assert_uint_eq(a.http, 200);
  answer_free(&a);
  const char *want[][2] = {
      {"META", "{\"created_at\":{\"S\":\"2023-11-14T22:13:20Z\"},\"job_id\":{\"S\":"
       "\"j1\"},\"pk\":{\"S\":\"JOB#j1\"},\"sk\":{\"S\":\"META\"},\"status\":{\"S\":"
       "\"PENDING\"},\"tenant_id\":{\"S\":\"t1\"},\"updated_at\":{\"S\":"
       "\"2023-11-14T22:13:20Z\"},\"version\":{\"N\":\"1\"}}"},
      {"REQ#k1", "{\"completed_at\":{\"S\":\"2023-11-14T22:13:20Z\"},\"created_at\":{\"S\":"
       "\"2023-11-14T22:13:20Z\"},\"idempotency_key\":{\"S\":\"k1\"},\"job_id\":{\"S\":"
       "\"j1\"},\"pk\":{\"S\":\"JOB#j1\"},\"result\":{\"S\":\"{\\\"n\\\":1}\"},\"sk\":"
       "{\"S\":\"REQ#k1\"},\"status\":{\"S\":\"COMPLETED\"},\"ttl\":{\"N\":"
       "\"1700086400\"},\"updated_at\":{\"S\":\"2023-11-14T22:13:20Z\"},\"version\":{\"N\":"
       "\"1\"}}"}};
  for (size_t i = 0; i < 2; i++) {
    json_t *it = raw_item("JOB#j1", want[i][0]);
    ck_assert_ptr_nonnull(it);
    char *text = json_dumps(it, JSON_COMPACT | JSON_SORT_KEYS);
    ck_assert_str_eq(text, want[i][1]);
    free(text);
    json_decref(it);
  }
}
END_TEST

START_TEST(test_models_registered_on_the_table) {
  const char *names[] = {"JobMeta", "JobRecord", "JobLock", "JobRequest", "SemaphoreLease"};
  for (size_t i = 0; i < 5; i++) {
    const struct tt_model *m = tt_model_registry_get_internal(F.models, names[i]);
    ck_assert_ptr_nonnull(m);
    ck_assert_str_eq(m->table, "tabletheory-jobs");
    ck_assert_str_eq(m->pk->name, "pk");
    ck_assert_str_eq(m->sk->name, "sk");
    ck_assert_str_eq(tt_model_lifecycle(m, TT_LC_TTL)->name, "ttl");
  }
  const struct tt_model *meta = tt_model_registry_get_internal(F.models, "JobMeta");
  const struct tt_model_index *ix = tt_model_index_find(meta, "status-created-index");
  ck_assert_ptr_nonnull(ix);
  ck_assert_str_eq(ix->partition->name, "status");
  ck_assert_str_eq(ix->sort->name, "created_at");
  ck_assert_int_eq(ix->projection, TT_PROJECTION_ALL);
  ix = tt_model_index_find(meta, "tenant-created-index");
  ck_assert_ptr_nonnull(ix);
  ck_assert_str_eq(ix->partition->name, "tenant_id");
  /* JobMeta's version is the ledger's (starts at 1), the others' the ORM's. */
  ck_assert_ptr_null(tt_model_lifecycle(meta, TT_LC_VERSION));
  ck_assert_ptr_nonnull(tt_model_lifecycle(tt_model_registry_get_internal(F.models, "JobLock"),
                                           TT_LC_VERSION));
  /* Registering again is idempotent; another table name is a clash. */
  struct tt_error err;
  ck_assert_int_eq(tt_ledger_register_models(F.models, "tabletheory-jobs", &err), 0);
  ck_assert_int_eq(tt_ledger_register_models(F.models, "other-jobs", &err), -1);
  ck_assert_str_eq(err.field, "jobs-table");
}
END_TEST

START_TEST(test_models_custom_and_bad_table) {
  struct tt_model_registry *r = tt_model_registry_new();
  struct tt_error err;
  ck_assert_int_eq(tt_ledger_register_models(r, "acme_jobs", &err), 0);
  ck_assert_str_eq(tt_model_registry_get_internal(r, "JobRequest")->table, "acme_jobs");
  ck_assert_uint_eq(tt_model_registry_count(r), 5);
  tt_model_registry_free(r);
  r = tt_model_registry_new();
  ck_assert_int_eq(tt_ledger_register_models(r, "x", &err), -1); /* too short for DynamoDB */
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
  ck_assert_str_eq(err.field, "jobs-table");
  ck_assert_uint_eq(tt_model_registry_count(r), 0);
  tt_model_registry_free(r);
}
END_TEST

/* The registry serves the ledger's models to the ledger only, and keeps
 * every other model off its table (docs/ledger.md "Reserved models"). */
START_TEST(test_models_reserved) {
  struct tt_model_registry *r = tt_model_registry_new();
  struct tt_error err;
  ck_assert_int_eq(tt_ledger_register_models(r, "acme_jobs", &err), 0);
  const struct tt_model *lock = tt_model_registry_get_internal(r, "JobLock");
  ck_assert_ptr_nonnull(lock);
  ck_assert(tt_model_registry_is_reserved(r, lock));
  ck_assert_ptr_null(tt_model_registry_get(r, "JobLock"));
  /* The five ledger models are there, but none of them is the user's. */
  ck_assert_uint_eq(tt_model_registry_count(r), 5);
  ck_assert_uint_eq(tt_model_registry_count_user(r), 0);
  ck_assert_ptr_null(tt_model_registry_lookup(r, "JobLock", "model", &err));
  ck_assert_int_eq(err.code, TT_ERR_RESERVED_MODEL);
  ck_assert_str_eq(err.field, "model");
  ck_assert_ptr_null(tt_model_registry_lookup(r, "Nope", "model", &err));
  ck_assert_int_eq(err.code, TT_ERR_MODEL_NOT_FOUND);
  /* Replacing a ledger model, even with itself. */
  enum tt_model_put_result what;
  struct tt_model *same = NULL;
  json_t *lock_json = tt_model_to_json(lock);
  ck_assert_int_eq(tt_model_from_json(lock_json, NULL, &same, &err), 0);
  json_decref(lock_json);
  ck_assert_int_eq(tt_model_registry_put(r, same, true, &what, &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_RESERVED_MODEL);
  /* A new model on the reserved table, at run time or from a file. */
  static const char spy[] =
      "{\"dms_version\":\"0.2\",\"models\":[{\"name\":\"Spy\",\"table\":{\"name\":"
      "\"acme_jobs\"},\"keys\":{\"partition\":{\"attribute\":\"pk\",\"type\":\"S\"},"
      "\"sort\":{\"attribute\":\"sk\",\"type\":\"S\"}},\"attributes\":["
      "{\"attribute\":\"pk\",\"type\":\"S\",\"required\":true,\"roles\":[\"pk\"]},"
      "{\"attribute\":\"sk\",\"type\":\"S\",\"required\":true,\"roles\":[\"sk\"]}],"
      "\"tags\":{\"additional_attributes\":true}}]}";
  ck_assert_int_eq(tt_model_registry_load_text(r, spy, sizeof(spy) - 1, "spy.json", &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_RESERVED_MODEL);
  ck_assert_str_eq(err.field, "table");
  ck_assert_ptr_null(tt_model_registry_get_internal(r, "Spy"));
  json_t *docs = json_loads(spy, 0, NULL);
  json_t *obj = json_array_get(json_object_get(docs, "models"), 0);
  struct tt_model *m = NULL;
  ck_assert_int_eq(tt_model_from_json(obj, NULL, &m, &err), 0);
  ck_assert_int_eq(tt_model_registry_put(r, m, false, &what, &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_RESERVED_MODEL);
  /* Another table is fine. */
  json_object_set_new(json_object_get(obj, "table"), "name", json_string("spy_table"));
  ck_assert_int_eq(tt_model_from_json(obj, NULL, &m, &err), 0);
  ck_assert_int_eq(tt_model_registry_put(r, m, false, &what, &err), 0);
  ck_assert_int_eq(what, TT_MODEL_PUT_CREATED);
  ck_assert_ptr_nonnull(tt_model_registry_get(r, "Spy"));
  json_decref(docs);
  ck_assert_uint_eq(tt_model_registry_count(r), 6);
  tt_model_registry_free(r);
}
END_TEST

START_TEST(test_uuid4_shape) {
  char a[37], b[37];
  ck_assert_int_eq(tt_ledger_uuid4(a), 0);
  ck_assert_int_eq(tt_ledger_uuid4(b), 0);
  ck_assert_uint_eq(strlen(a), 36);
  ck_assert_str_ne(a, b);
  ck_assert(a[8] == '-' && a[13] == '-' && a[18] == '-' && a[23] == '-');
  ck_assert_int_eq(a[14], '4');
  ck_assert_ptr_nonnull(strchr("89ab", a[19]));
  for (size_t i = 0; i < 36; i++)
    ck_assert(a[i] == '-' || strchr("0123456789abcdef", a[i]));
}
END_TEST

START_TEST(test_check_id) {
  struct tt_error err;
  ck_assert_int_eq(tt_ledger_check_id("job-1", 5, "job_id", &err), 0);
  ck_assert_int_eq(tt_ledger_check_id("caf\xc3\xa9/a b", 8, "job_id", &err), 0);
  ck_assert_int_eq(tt_ledger_check_id("", 0, "job_id", &err), -1);
  ck_assert_str_eq(err.field, "job_id");
  ck_assert_int_eq(tt_ledger_check_id("a\nb", 3, "owner", &err), -1);
  ck_assert_str_eq(err.message, "owner must not contain control characters");
  ck_assert_int_eq(tt_ledger_check_id("a\0b", 3, "key", &err), -1);
  ck_assert_int_eq(tt_ledger_check_id("\xc3\x28", 2, "key", &err), -1);
  ck_assert_str_eq(err.message, "key must be valid UTF-8");
  ck_assert_int_eq(tt_ledger_check_id("\xed\xa0\x80", 3, "key", &err), -1); /* surrogate */
  char big[TT_LEDGER_MAX_ID_BYTES + 2];
  memset(big, 'a', sizeof(big));
  ck_assert_int_eq(tt_ledger_check_id(big, TT_LEDGER_MAX_ID_BYTES, "key", &err), 0);
  ck_assert_int_eq(tt_ledger_check_id(big, TT_LEDGER_MAX_ID_BYTES + 1, "key", &err), -1);
  ck_assert(tt_ledger_job_status_terminal("CANCELED"));
  ck_assert(!tt_ledger_job_status_terminal("RUNNING"));
  ck_assert(tt_ledger_record_status_valid("SKIPPED"));
  ck_assert(!tt_ledger_record_status_valid("RUNNING"));
  ck_assert(!tt_ledger_job_status_valid("pending"));
}
END_TEST

/* ---- jobs ------------------------------------------------------------------- */

START_TEST(test_job_create_and_get) {
  struct answer a = run((struct call){
      .kind = TT_LEDGER_JOB_CREATE, .body = "{'job_id':'j1','tenant_id':'t1','ttl_seconds':60}"});
  ck_assert_int_eq(a.status, 0);
  ck_assert_uint_eq(a.http, 201);
  ck_assert_str_eq(str(a.body, "job_id"), "j1");
  ck_assert_str_eq(str(a.body, "tenant_id"), "t1");
  ck_assert_str_eq(str(a.body, "status"), "PENDING");
  ck_assert_int_eq(num(a.body, "version"), 1);
  ck_assert_int_eq(num(a.body, "ttl"), 1700000060);
  ck_assert_str_eq(str(a.body, "created_at"), "2023-11-14T22:13:20Z");
  ck_assert_str_eq(str(a.body, "updated_at"), "2023-11-14T22:13:20Z");
  ck_assert_ptr_null(json_object_get(a.body, "pk")); /* storage keys are not shown */
  ck_assert_ptr_null(json_object_get(a.body, "sk"));
  answer_free(&a);
  a = run((struct call){.kind = TT_LEDGER_JOB_GET, .job = "j1"});
  ck_assert_uint_eq(a.http, 200);
  ck_assert_str_eq(str(a.body, "job_id"), "j1");
  ck_assert_int_eq(num(a.body, "version"), 1);
  answer_free(&a);
  a = run((struct call){.kind = TT_LEDGER_JOB_CREATE,
                        .body = "{'job_id':'j1','tenant_id':'t2'}"});
  expect_error(a, TT_ERR_ALREADY_EXISTS, "job_id");
  answer_free(&a);
  a = run((struct call){.kind = TT_LEDGER_JOB_GET, .job = "nope"});
  expect_error(a, TT_ERR_JOB_NOT_FOUND, "job_id");
  answer_free(&a);
}
END_TEST

START_TEST(test_job_create_generates_uuid) {
  struct answer a = run((struct call){.kind = TT_LEDGER_JOB_CREATE,
                                      .body = "{'tenant_id':'t1','status':'RUNNING'}"});
  ck_assert_uint_eq(a.http, 201);
  const char *id = str(a.body, "job_id");
  ck_assert_uint_eq(strlen(id), 36);
  ck_assert_int_eq(id[14], '4');
  ck_assert_str_eq(str(a.body, "status"), "RUNNING");
  ck_assert_ptr_null(json_object_get(a.body, "ttl"));
  answer_free(&a);
}
END_TEST

START_TEST(test_job_create_validation) {
  struct {
    const char *body, *field;
  } rows[] = {
      {"{'job_id':'j'}", "tenant_id"},
      {"{'tenant_id':''}", "tenant_id"},
      {"{'tenant_id':5}", "tenant_id"},
      {"{'tenant_id':'t','status':'DONE'}", "status"},
      {"{'tenant_id':'t','ttl_seconds':0}", "ttl_seconds"},
      {"{'tenant_id':'t','ttl_seconds':1.5}", "ttl_seconds"},
      {"{'tenant_id':'t','job_id':''}", "job_id"},
      {"{'tenant_id':'t','version':3}", "version"},
  };
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
    struct answer a = run((struct call){.kind = TT_LEDGER_JOB_CREATE, .body = rows[i].body});
    expect_error(a, TT_ERR_VALIDATION, rows[i].field);
    answer_free(&a);
  }
}
END_TEST

START_TEST(test_transition) {
  create_job("j1", "t1", "PENDING");
  F.now_ns += 5 * SEC;
  struct answer a = run((struct call){.kind = TT_LEDGER_JOB_TRANSITION, .job = "j1",
                                      .body = "{'expected_version':1,'to':'RUNNING',"
                                              "'from':'PENDING'}"});
  ck_assert_uint_eq(a.http, 200);
  ck_assert_str_eq(str(a.body, "status"), "RUNNING");
  ck_assert_int_eq(num(a.body, "version"), 2);
  ck_assert_str_eq(str(a.body, "updated_at"), "2023-11-14T22:13:25Z");
  ck_assert_str_eq(str(a.body, "created_at"), "2023-11-14T22:13:20Z");
  answer_free(&a);
  /* A stale version. */
  a = run((struct call){.kind = TT_LEDGER_JOB_TRANSITION, .job = "j1",
                        .body = "{'expected_version':1,'to':'SUCCEEDED'}"});
  expect_error(a, TT_ERR_VERSION_CONFLICT, "expected_version");
  ck_assert_int_eq(json_integer_value(json_object_get(a.details, "version")), 2);
  ck_assert_int_eq(json_integer_value(json_object_get(a.details, "expected_version")), 1);
  answer_free(&a);
  /* The right version but the wrong from. */
  a = run((struct call){.kind = TT_LEDGER_JOB_TRANSITION, .job = "j1",
                        .body = "{'expected_version':2,'to':'SUCCEEDED','from':'PENDING'}"});
  expect_error(a, TT_ERR_INVALID_TRANSITION, "from");
  ck_assert_str_eq(json_string_value(json_object_get(a.details, "status")), "RUNNING");
  answer_free(&a);
  a = run((struct call){.kind = TT_LEDGER_JOB_TRANSITION, .job = "j1",
                        .body = "{'expected_version':2,'to':'SUCCEEDED'}"});
  ck_assert_uint_eq(a.http, 200);
  ck_assert_int_eq(num(a.body, "version"), 3);
  answer_free(&a);
  /* Out of a terminal status, found by the condition (version right or not). */
  a = run((struct call){.kind = TT_LEDGER_JOB_TRANSITION, .job = "j1",
                        .body = "{'expected_version':3,'to':'RUNNING'}"});
  expect_error(a, TT_ERR_INVALID_TRANSITION, "to");
  ck_assert_str_eq(json_string_value(json_object_get(a.details, "status")), "SUCCEEDED");
  answer_free(&a);
  a = run((struct call){.kind = TT_LEDGER_JOB_TRANSITION, .job = "j1",
                        .body = "{'expected_version':1,'to':'RUNNING'}"});
  expect_error(a, TT_ERR_INVALID_TRANSITION, "to");
  answer_free(&a);
  a = run((struct call){.kind = TT_LEDGER_JOB_GET, .job = "j1"});
  ck_assert_str_eq(str(a.body, "status"), "SUCCEEDED");
  ck_assert_int_eq(num(a.body, "version"), 3);
  answer_free(&a);
  a = run((struct call){.kind = TT_LEDGER_JOB_TRANSITION, .job = "ghost",
                        .body = "{'expected_version':1,'to':'RUNNING'}"});
  expect_error(a, TT_ERR_JOB_NOT_FOUND, "job_id");
  answer_free(&a);
}
END_TEST

START_TEST(test_transition_terminal_from_refused_before_io) {
  /* The job does not even exist: the answer comes without reading it. */
  struct answer a = run((struct call){.kind = TT_LEDGER_JOB_TRANSITION, .job = "ghost",
                                      .body = "{'expected_version':1,'to':'RUNNING',"
                                              "'from':'FAILED'}"});
  expect_error(a, TT_ERR_INVALID_TRANSITION, "from");
  answer_free(&a);
  const char *bad[][2] = {{"{'to':'RUNNING'}", "expected_version"},
                          {"{'expected_version':-1,'to':'RUNNING'}", "expected_version"},
                          {"{'expected_version':1}", "to"},
                          {"{'expected_version':1,'to':'running'}", "to"},
                          {"{'expected_version':1,'to':'RUNNING','from':'X'}", "from"},
                          {"{'expected_version':1,'to':'RUNNING','force':true}", "force"}};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    a = run((struct call){.kind = TT_LEDGER_JOB_TRANSITION, .job = "ghost", .body = bad[i][0]});
    expect_error(a, TT_ERR_VALIDATION, bad[i][1]);
    answer_free(&a);
  }
}
END_TEST

/* ---- records ----------------------------------------------------------------- */

START_TEST(test_record_upsert_and_sanitized_error) {
  create_job("j1", "t1", "RUNNING");
  struct answer a = run((struct call){.kind = TT_LEDGER_RECORD_PUT, .job = "j1", .rid = "r/1",
                                      .body = "{'status':'PROCESSING'}"});
  ck_assert_uint_eq(a.http, 200);
  ck_assert_str_eq(str(a.body, "job_id"), "j1");
  ck_assert_str_eq(str(a.body, "record_id"), "r/1");
  ck_assert_str_eq(str(a.body, "status"), "PROCESSING");
  ck_assert_int_eq(num(a.body, "version"), 1);
  ck_assert_str_eq(str(a.body, "created_at"), "2023-11-14T22:13:20Z");
  answer_free(&a);
  F.now_ns += 2 * SEC;
  a = run((struct call){
      .kind = TT_LEDGER_RECORD_PUT, .job = "j1", .rid = "r/1",
      .body = "{'status':'FAILED','error':{'type':'Http','code':'E401','message':'login "
              "failed: password=hunter2\\nAuthorization: Bearer abc.def',"
              "'retryable':false,'fields':{'api_key':'k-123','card_number':'4111111111111111',"
              "'ssn':123456789,'row':7}}}"});
  ck_assert_uint_eq(a.http, 200);
  ck_assert_int_eq(num(a.body, "version"), 2);
  ck_assert_str_eq(str(a.body, "created_at"), "2023-11-14T22:13:20Z"); /* kept */
  ck_assert_str_eq(str(a.body, "updated_at"), "2023-11-14T22:13:22Z");
  json_t *e = json_object_get(a.body, "error");
  ck_assert_str_eq(str(e, "type"), "Http");
  ck_assert_str_eq(str(e, "message"),
                   "login failed: password=[REDACTED] Authorization: Bearer [REDACTED]");
  ck_assert(json_is_false(json_object_get(e, "retryable")));
  json_t *f = json_object_get(e, "fields");
  ck_assert_str_eq(str(f, "api_key"), "[REDACTED]");
  ck_assert_str_eq(str(f, "card_number"), "411111******1111");
  ck_assert_str_eq(str(f, "ssn"), "*****6789");
  ck_assert_int_eq(num(f, "row"), 7);
  answer_free(&a);
  /* The stored copy is the sanitized one. */
  a = run((struct call){.kind = TT_LEDGER_RECORD_GET, .job = "j1", .rid = "r/1"});
  ck_assert_str_eq(str(json_object_get(json_object_get(a.body, "error"), "fields"), "api_key"),
                   "[REDACTED]");
  answer_free(&a);
  /* No error: the stored one goes. */
  a = run((struct call){.kind = TT_LEDGER_RECORD_PUT, .job = "j1", .rid = "r/1",
                        .body = "{'status':'SUCCEEDED','error':null}"});
  ck_assert_uint_eq(a.http, 200);
  ck_assert_ptr_null(json_object_get(a.body, "error"));
  ck_assert_int_eq(num(a.body, "version"), 3);
  answer_free(&a);
  a = run((struct call){.kind = TT_LEDGER_RECORD_PUT, .job = "j1", .rid = "r/1",
                        .body = "{'status':'SUCCEEDED','ttl_seconds':3600}"});
  ck_assert_int_eq(num(a.body, "ttl"), 1700000002 + 3600);
  answer_free(&a);
  a = run((struct call){.kind = TT_LEDGER_RECORD_GET, .job = "j1", .rid = "r2"});
  expect_error(a, TT_ERR_ITEM_NOT_FOUND, "record_id");
  answer_free(&a);
  const char *bad[][2] = {{"{'status':'RUNNING'}", "status"},
                          {"{}", "status"},
                          {"{'status':'FAILED','error':'boom'}", "error"},
                          {"{'status':'FAILED','error':{'message':5}}", "error.message"},
                          {"{'status':'FAILED','error':{'retryable':'yes'}}", "error.retryable"},
                          {"{'status':'FAILED','note':'x'}", "note"}};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    a = run((struct call){.kind = TT_LEDGER_RECORD_PUT, .job = "j1", .rid = "r3",
                          .body = bad[i][0]});
    expect_error(a, TT_ERR_VALIDATION, bad[i][1]);
    answer_free(&a);
  }
}
END_TEST

START_TEST(test_lists) {
  create_job("a", "tA", "PENDING");
  F.now_ns += SEC;
  create_job("b", "tA", "RUNNING");
  F.now_ns += SEC;
  create_job("c", "tB", "PENDING");
  /* Records and requests with statuses that jobs also have. */
  for (int i = 0; i < 5; i++) {
    char rid[16];
    snprintf(rid, sizeof(rid), "r%d", i);
    struct answer a =
        run((struct call){.kind = TT_LEDGER_RECORD_PUT, .job = "a", .rid = rid,
                          .body = i % 2 ? "{'status':'PENDING'}" : "{'status':'SUCCEEDED'}"});
    ck_assert_uint_eq(a.http, 200);
    answer_free(&a);
  }
  struct answer a = run((struct call){.kind = TT_LEDGER_JOB_LIST,
                                      .list = {.status = "PENDING"}});
  ck_assert_uint_eq(a.http, 200);
  json_t *jobs = json_object_get(a.body, "jobs");
  ck_assert_uint_eq(json_array_size(jobs), 2);
  ck_assert_str_eq(str(json_array_get(jobs, 0), "job_id"), "a"); /* oldest first */
  ck_assert_str_eq(str(json_array_get(jobs, 1), "job_id"), "c");
  ck_assert(json_is_null(json_object_get(a.body, "cursor")));
  answer_free(&a);
  a = run((struct call){.kind = TT_LEDGER_JOB_LIST,
                        .list = {.status = "PENDING", .order = "desc", .limit = "1"}});
  jobs = json_object_get(a.body, "jobs");
  ck_assert_uint_eq(json_array_size(jobs), 1);
  ck_assert_str_eq(str(json_array_get(jobs, 0), "job_id"), "c");
  const char *cursor = str(a.body, "cursor");
  ck_assert_ptr_nonnull(cursor);
  char *saved = strdup(cursor);
  answer_free(&a);
  a = run((struct call){.kind = TT_LEDGER_JOB_LIST,
                        .list = {.status = "PENDING", .order = "desc", .limit = "1",
                                 .cursor = saved}});
  jobs = json_object_get(a.body, "jobs");
  ck_assert_uint_eq(json_array_size(jobs), 1);
  ck_assert_str_eq(str(json_array_get(jobs, 0), "job_id"), "a");
  answer_free(&a);
  free(saved);
  a = run((struct call){.kind = TT_LEDGER_JOB_LIST, .list = {.tenant_id = "tA"}});
  ck_assert_uint_eq(json_array_size(json_object_get(a.body, "jobs")), 2);
  answer_free(&a);
  a = run((struct call){.kind = TT_LEDGER_JOB_LIST,
                        .list = {.tenant_id = "tA", .status = "RUNNING"}});
  jobs = json_object_get(a.body, "jobs");
  ck_assert_uint_eq(json_array_size(jobs), 1);
  ck_assert_str_eq(str(json_array_get(jobs, 0), "job_id"), "b");
  answer_free(&a);
  a = run((struct call){.kind = TT_LEDGER_RECORD_LIST, .job = "a"});
  ck_assert_uint_eq(json_array_size(json_object_get(a.body, "records")), 5);
  answer_free(&a);
  a = run((struct call){.kind = TT_LEDGER_RECORD_LIST, .job = "a",
                        .list = {.status = "PENDING"}});
  json_t *recs = json_object_get(a.body, "records");
  ck_assert_uint_eq(json_array_size(recs), 2);
  ck_assert_str_eq(str(json_array_get(recs, 0), "record_id"), "r1");
  ck_assert_str_eq(str(json_array_get(recs, 1), "record_id"), "r3");
  answer_free(&a);
  a = run((struct call){.kind = TT_LEDGER_RECORD_LIST, .job = "b"});
  ck_assert_uint_eq(json_array_size(json_object_get(a.body, "records")), 0);
  answer_free(&a);
  /* Refusals before any I/O. */
  struct {
    struct tt_ledger_list_args l;
    const char *field;
  } bad[] = {{{0}, "status"},
             {{.status = "DONE"}, "status"},
             {{.status = "PENDING", .limit = "0"}, "limit"},
             {{.status = "PENDING", .limit = "1001"}, "limit"},
             {{.status = "PENDING", .limit = "2x"}, "limit"},
             {{.status = "PENDING", .order = "up"}, "order"}};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    a = run((struct call){.kind = TT_LEDGER_JOB_LIST, .list = bad[i].l});
    expect_error(a, TT_ERR_VALIDATION, bad[i].field);
    answer_free(&a);
  }
  a = run((struct call){.kind = TT_LEDGER_JOB_LIST,
                        .list = {.status = "PENDING", .cursor = "bm90IGEgY3Vyc29y"}});
  expect_error(a, TT_ERR_INVALID_CURSOR, NULL);
  answer_free(&a);
}
END_TEST

/* ---- leases --------------------------------------------------------------------- */

static struct answer lease(enum tt_ledger_kind kind, const char *owner, int seconds) {
  char body[128];
  snprintf(body, sizeof(body), "{'owner':'%s','duration_seconds':%d}", owner, seconds);
  return run((struct call){.kind = kind, .job = "j1", .body = body});
}

static struct answer release(const char *owner) {
  return run((struct call){.kind = TT_LEDGER_LEASE_RELEASE, .job = "j1", .owner = owner});
}

START_TEST(test_lease_lifecycle) {
  create_job("j1", "t1", "PENDING");
  struct answer a = lease(TT_LEDGER_LEASE_ACQUIRE, "w1", 30);
  ck_assert_uint_eq(a.http, 200);
  ck_assert_str_eq(str(a.body, "owner"), "w1");
  ck_assert_str_eq(str(a.body, "job_id"), "j1");
  ck_assert_int_eq(num(a.body, "expires_at"), 1700000030);
  answer_free(&a);
  a = lease(TT_LEDGER_LEASE_ACQUIRE, "w2", 30);
  expect_error(a, TT_ERR_LEASE_HELD, "owner");
  answer_free(&a);
  /* Ours again: re-acquiring extends it. */
  F.now_ns += 10 * SEC;
  a = lease(TT_LEDGER_LEASE_ACQUIRE, "w1", 30);
  ck_assert_int_eq(num(a.body, "expires_at"), 1700000040);
  answer_free(&a);
  /* Exactly at the expiry second the lease still holds (expired means < now). */
  F.now_ns = T0 + 40 * SEC;
  a = lease(TT_LEDGER_LEASE_ACQUIRE, "w2", 30);
  expect_error(a, TT_ERR_LEASE_HELD, NULL);
  answer_free(&a);
  a = lease(TT_LEDGER_LEASE_REFRESH, "w1", 5);
  ck_assert_uint_eq(a.http, 200);
  ck_assert_int_eq(num(a.body, "expires_at"), 1700000045);
  answer_free(&a);
  /* Expired: another owner takes it; the old owner can neither refresh nor
   * release it any more. */
  F.now_ns = T0 + 46 * SEC;
  a = lease(TT_LEDGER_LEASE_REFRESH, "w1", 30);
  expect_error(a, TT_ERR_LEASE_NOT_OWNED, "owner");
  answer_free(&a);
  a = lease(TT_LEDGER_LEASE_ACQUIRE, "w2", 30);
  ck_assert_uint_eq(a.http, 200);
  answer_free(&a);
  a = lease(TT_LEDGER_LEASE_REFRESH, "w1", 30);
  expect_error(a, TT_ERR_LEASE_NOT_OWNED, "owner");
  answer_free(&a);
  a = release("w1");
  expect_error(a, TT_ERR_LEASE_NOT_OWNED, "owner");
  answer_free(&a);
  a = lease(TT_LEDGER_LEASE_REFRESH, "w2", 30);
  ck_assert_uint_eq(a.http, 200);
  answer_free(&a);
  a = release("w2");
  ck_assert_int_eq(a.status, 0);
  ck_assert_uint_eq(a.http, 204);
  ck_assert_ptr_null(a.body);
  answer_free(&a);
  a = release("w2"); /* already gone */
  ck_assert_uint_eq(a.http, 204);
  answer_free(&a);
  a = lease(TT_LEDGER_LEASE_REFRESH, "w2", 30); /* no lock at all */
  expect_error(a, TT_ERR_LEASE_NOT_OWNED, NULL);
  answer_free(&a);
  a = lease(TT_LEDGER_LEASE_ACQUIRE, "w1", 30); /* free again */
  ck_assert_uint_eq(a.http, 200);
  answer_free(&a);
}
END_TEST

START_TEST(test_lease_refusals) {
  struct answer a = lease(TT_LEDGER_LEASE_ACQUIRE, "w1", 30);
  expect_error(a, TT_ERR_JOB_NOT_FOUND, "job_id"); /* no job j1 */
  answer_free(&a);
  create_job("j1", "t1", "PENDING");
  const char *bad[][2] = {{"{'duration_seconds':5}", "owner"},
                          {"{'owner':'','duration_seconds':5}", "owner"},
                          {"{'owner':'w'}", "duration_seconds"},
                          {"{'owner':'w','duration_seconds':0}", "duration_seconds"},
                          {"{'owner':'w','duration_seconds':86401}", "duration_seconds"},
                          {"{'owner':'w','duration_seconds':5,'x':1}", "x"}};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    a = run((struct call){.kind = TT_LEDGER_LEASE_ACQUIRE, .job = "j1", .body = bad[i][0]});
    expect_error(a, TT_ERR_VALIDATION, bad[i][1]);
    answer_free(&a);
  }
  a = run((struct call){.kind = TT_LEDGER_LEASE_RELEASE, .job = "j1"});
  expect_error(a, TT_ERR_VALIDATION, "owner");
  answer_free(&a);
  a = run((struct call){.kind = TT_LEDGER_JOB_GET, .job = ""});
  expect_error(a, TT_ERR_VALIDATION, "job_id");
  answer_free(&a);
}
END_TEST

/* ---- idempotency ------------------------------------------------------------------ */

static struct answer request(const char *key, const char *body) {
  return run((struct call){.kind = TT_LEDGER_REQUEST_CREATE, .job = "j1", .key = key,
                           .body = body});
}

static struct answer complete(const char *key, const char *body) {
  return run((struct call){.kind = TT_LEDGER_REQUEST_COMPLETE, .job = "j1", .key = key,
                           .body = body});
}

START_TEST(test_idempotency) {
  struct answer a = request("k1", NULL);
  ck_assert_uint_eq(a.http, 201);
  ck_assert_str_eq(str(a.body, "outcome"), "created");
  answer_free(&a);
  a = request("k1", "{}");
  ck_assert_uint_eq(a.http, 200);
  ck_assert_str_eq(str(a.body, "outcome"), "already_in_progress");
  answer_free(&a);
  a = complete("k1", "{'result':{'rows':3,'big':123456789012345678901234567890,"
                     "'token':'abc','note':'a\\nb'}}");
  ck_assert_uint_eq(a.http, 200);
  ck_assert_str_eq(str(a.body, "outcome"), "completed");
  json_t *r = json_object_get(a.body, "result");
  ck_assert_int_eq(num(r, "rows"), 3);
  struct tt_json_numbuf nb;
  size_t len;
  ck_assert_str_eq(tt_json_number_text(json_object_get(r, "big"), &nb, &len),
                   "123456789012345678901234567890"); /* exact */
  ck_assert_str_eq(str(r, "token"), "[REDACTED]");
  ck_assert_str_eq(str(r, "note"), "ab");
  ck_assert(json_is_null(json_object_get(a.body, "error")));
  answer_free(&a);
  /* A second completion does not replace the first. */
  a = complete("k1", "{'result':'other','error':{'code':'X'}}");
  ck_assert_uint_eq(a.http, 200);
  ck_assert_str_eq(str(a.body, "outcome"), "already_completed");
  ck_assert_int_eq(num(json_object_get(a.body, "result"), "rows"), 3);
  ck_assert(json_is_null(json_object_get(a.body, "error")));
  answer_free(&a);
  a = request("k1", NULL);
  ck_assert_uint_eq(a.http, 200);
  ck_assert_str_eq(str(a.body, "outcome"), "already_completed");
  ck_assert_int_eq(num(json_object_get(a.body, "result"), "rows"), 3);
  answer_free(&a);
  /* A completion with an error only. */
  a = request("k2", "{'ttl_seconds':60}");
  ck_assert_uint_eq(a.http, 201);
  answer_free(&a);
  a = complete("k2", "{'error':{'code':'E1','message':'secret: s3cr3t'}}");
  ck_assert_str_eq(str(a.body, "outcome"), "completed");
  ck_assert(json_is_null(json_object_get(a.body, "result")));
  ck_assert_str_eq(str(json_object_get(a.body, "error"), "message"), "secret: [REDACTED]");
  answer_free(&a);
  a = complete("never", "{}");
  expect_error(a, TT_ERR_ITEM_NOT_FOUND, "key");
  answer_free(&a);
  a = request("k3", "{'ttl_seconds':0}");
  expect_error(a, TT_ERR_VALIDATION, "ttl_seconds");
  answer_free(&a);
  a = complete("k1", "{'results':1}");
  expect_error(a, TT_ERR_VALIDATION, "results");
  answer_free(&a);
}
END_TEST

START_TEST(test_idempotency_expired_record_counts_as_absent) {
  struct answer a = request("k1", "{'ttl_seconds':10}");
  ck_assert_uint_eq(a.http, 201);
  answer_free(&a);
  a = complete("k1", "{'result':1}");
  ck_assert_str_eq(str(a.body, "outcome"), "completed");
  answer_free(&a);
  F.now_ns += 10 * SEC; /* ttl == now: still valid */
  a = request("k1", NULL);
  ck_assert_str_eq(str(a.body, "outcome"), "already_completed");
  answer_free(&a);
  F.now_ns += SEC; /* expired, not yet deleted by TTL */
  a = request("k1", NULL);
  ck_assert_uint_eq(a.http, 201);
  ck_assert_str_eq(str(a.body, "outcome"), "created");
  answer_free(&a);
  a = request("k1", NULL);
  ck_assert_str_eq(str(a.body, "outcome"), "already_in_progress");
  answer_free(&a);
}
END_TEST

/* ---- leased semaphores ------------------------------------------------------ */

static struct answer sem_acquire(const char *owner, int limit, int seconds) {
  char body[160];
  snprintf(body, sizeof(body), "{'owner':'%s','limit':%d,'duration_seconds':%d}", owner, limit,
           seconds);
  return run((struct call){.kind = TT_LEDGER_SEM_ACQUIRE, .scope = "imports",
                           .subject = "acme/1", .body = body});
}

static struct answer sem_refresh(const char *owner, long long slot, int seconds) {
  char body[160];
  snprintf(body, sizeof(body), "{'owner':'%s','slot':%lld,'duration_seconds':%d}", owner, slot,
           seconds);
  return run((struct call){.kind = TT_LEDGER_SEM_REFRESH, .scope = "imports",
                           .subject = "acme/1", .body = body});
}

static struct answer sem_release(const char *owner, const char *slot) {
  return run((struct call){.kind = TT_LEDGER_SEM_RELEASE, .scope = "imports",
                           .subject = "acme/1", .owner = owner, .slot = slot});
}

static struct answer sem_inspect(void) {
  return run((struct call){.kind = TT_LEDGER_SEM_INSPECT, .scope = "imports",
                           .subject = "acme/1"});
}

/* The acquired slot of an answer (asserting success). */
static long long sem_slot(struct answer *a, const char *owner) {
  ck_assert_msg(a->status == 0, "acquire by %s failed: %s", owner, tt_error_code_name(a->code));
  ck_assert_uint_eq(a->http, 200);
  ck_assert_str_eq(str(a->body, "owner"), owner);
  long long slot = num(a->body, "slot");
  answer_free(a);
  return slot;
}

START_TEST(test_semaphore_limit_and_idempotent_acquire) {
  struct answer a = sem_acquire("w1", 2, 30);
  ck_assert_str_eq(str(a.body, "scope"), "imports");
  ck_assert_str_eq(str(a.body, "subject"), "acme/1");
  ck_assert_int_eq(num(a.body, "expires_at"), 1700000030);
  long long s1 = sem_slot(&a, "w1");
  ck_assert(s1 == 0 || s1 == 1);
  /* Again: the same slot, extended, never a second one. */
  F.now_ns += 10 * SEC;
  a = sem_acquire("w1", 2, 30);
  ck_assert_int_eq(num(a.body, "expires_at"), 1700000040);
  ck_assert_int_eq(sem_slot(&a, "w1"), s1);
  a = sem_acquire("w2", 2, 30);
  long long s2 = sem_slot(&a, "w2");
  ck_assert_int_eq(s2, 1 - s1);
  a = sem_acquire("w2", 2, 30);
  ck_assert_int_eq(sem_slot(&a, "w2"), s2);
  a = sem_acquire("w3", 2, 30);
  expect_error(a, TT_ERR_LEASE_HELD, "limit");
  ck_assert_int_eq(num(a.details, "limit"), 2);
  answer_free(&a);
  /* A bigger limit of another caller opens more slots. */
  a = sem_acquire("w3", 3, 30);
  ck_assert_int_eq(sem_slot(&a, "w3"), 2);
  /* Inspect: the holders in slot order. */
  a = sem_inspect();
  ck_assert_uint_eq(a.http, 200);
  ck_assert_int_eq(num(a.body, "count"), 3);
  json_t *h = json_object_get(a.body, "holders");
  ck_assert_uint_eq(json_array_size(h), 3);
  for (size_t i = 0; i < 3; i++) {
    json_t *x = json_array_get(h, i);
    ck_assert_int_eq(num(x, "slot"), (long long)i);
    ck_assert_str_eq(str(x, "owner"), i == 2 ? "w3" : (long long)i == s1 ? "w1" : "w2");
    ck_assert_int_eq(num(x, "expires_at"), 1700000040);
  }
  answer_free(&a);
  /* The stored layout: AppTheory's keys, the lease fields, version and ttl. */
  char sk[32];
  snprintf(sk, sizeof(sk), "SLOT#%09lld", s1);
  json_t *item = raw_item("SEM#imports#acme/1", sk);
  ck_assert_ptr_nonnull(item);
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(item, "owner"), "S")), "w1");
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(item, "scope"), "S")),
                   "imports");
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(item, "subject"), "S")),
                   "acme/1");
  ck_assert_int_eq(atoll(json_string_value(json_object_get(json_object_get(item, "slot"), "N"))),
                   s1);
  ck_assert_str_eq(
      json_string_value(json_object_get(json_object_get(item, "lease_expires_at"), "N")),
      "1700000040");
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(item, "version"), "N")),
                   "2"); /* written twice: acquire, acquire again */
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(item, "ttl"), "N")),
                   "1700086440"); /* a day after expiry, as a job lock */
  json_decref(item);
  /* An empty semaphore inspects as no holders. */
  a = run((struct call){.kind = TT_LEDGER_SEM_INSPECT, .scope = "imports", .subject = "none"});
  ck_assert_uint_eq(a.http, 200);
  ck_assert_int_eq(num(a.body, "count"), 0);
  ck_assert_uint_eq(json_array_size(json_object_get(a.body, "holders")), 0);
  answer_free(&a);
}
END_TEST

START_TEST(test_semaphore_expiry_refresh_release) {
  struct answer a = sem_acquire("w1", 1, 5);
  ck_assert_int_eq(sem_slot(&a, "w1"), 0);
  /* Exactly at the expiry second the slot still holds (expired means < now). */
  F.now_ns = T0 + 5 * SEC;
  a = sem_acquire("w2", 1, 30);
  expect_error(a, TT_ERR_LEASE_HELD, "limit");
  answer_free(&a);
  a = sem_refresh("w1", 0, 5);
  ck_assert_uint_eq(a.http, 200);
  ck_assert_int_eq(num(a.body, "expires_at"), 1700000010);
  ck_assert_int_eq(num(a.body, "slot"), 0);
  answer_free(&a);
  /* Expired: not listed, refused to its old owner's refresh, taken by w2. */
  F.now_ns = T0 + 11 * SEC;
  a = sem_inspect();
  ck_assert_int_eq(num(a.body, "count"), 0);
  answer_free(&a);
  a = sem_refresh("w1", 0, 30);
  expect_error(a, TT_ERR_LEASE_NOT_OWNED, "owner");
  answer_free(&a);
  a = sem_acquire("w2", 1, 30);
  ck_assert_int_eq(sem_slot(&a, "w2"), 0);
  a = sem_refresh("w1", 0, 30);
  expect_error(a, TT_ERR_LEASE_NOT_OWNED, "owner");
  answer_free(&a);
  a = sem_release("w1", "0");
  expect_error(a, TT_ERR_LEASE_NOT_OWNED, "owner");
  answer_free(&a);
  a = sem_refresh("w2", 0, 30);
  ck_assert_uint_eq(a.http, 200);
  answer_free(&a);
  a = sem_refresh("w2", 1, 30); /* a slot nobody holds */
  expect_error(a, TT_ERR_LEASE_NOT_OWNED, "owner");
  answer_free(&a);
  a = sem_release("w2", "0");
  ck_assert_int_eq(a.status, 0);
  ck_assert_uint_eq(a.http, 204);
  ck_assert_ptr_null(a.body);
  answer_free(&a);
  ck_assert_ptr_null(raw_item("SEM#imports#acme/1", "SLOT#000000000"));
  a = sem_release("w2", "0"); /* already gone */
  ck_assert_uint_eq(a.http, 204);
  answer_free(&a);
  a = sem_acquire("w1", 1, 30); /* free again */
  ck_assert_int_eq(sem_slot(&a, "w1"), 0);
}
END_TEST

START_TEST(test_semaphore_owners_spread_over_the_slots) {
  /* Eight owners, eight slots: all get one, all different; the ninth waits. */
  bool taken[8] = {false};
  char owner[16];
  for (int i = 0; i < 8; i++) {
    snprintf(owner, sizeof(owner), "w%d", i);
    struct answer a = sem_acquire(owner, 8, 30);
    long long s = sem_slot(&a, owner);
    ck_assert(s >= 0 && s < 8 && !taken[s]);
    taken[s] = true;
  }
  struct answer a = sem_acquire("w8", 8, 30);
  expect_error(a, TT_ERR_LEASE_HELD, "limit");
  answer_free(&a);
  /* The first attempt starts at a hash of the owner, not at slot 0. */
  a = run((struct call){.kind = TT_LEDGER_SEM_ACQUIRE, .scope = "s", .subject = "spread",
                        .body = "{'owner':'w1','limit':256,'duration_seconds':30}"});
  long long s1 = sem_slot(&a, "w1");
  a = run((struct call){.kind = TT_LEDGER_SEM_ACQUIRE, .scope = "s", .subject = "spread",
                        .body = "{'owner':'w2','limit':256,'duration_seconds':30}"});
  long long s2 = sem_slot(&a, "w2");
  ck_assert(s1 != s2 && (s1 != 0 || s2 != 1));
}
END_TEST

START_TEST(test_semaphore_validation_before_io) {
  /* Without the table every backend call fails: a ValidationError proves
   * that the input was refused before any I/O. */
  json_t *req = json_pack("{s:s}", "TableName", "tabletheory-jobs");
  struct tt_backend_call c;
  fx_call(&F.loop, F.b, TT_DDB_DELETE_TABLE, req, &c);
  ck_assert_int_eq(c.status, 0);
  json_decref(c.response);
  json_decref(req);
  struct answer a = sem_acquire("w1", 2, 30);
  ck_assert_int_eq(a.status, -1);
  ck_assert_int_ne(a.code, TT_ERR_VALIDATION);
  answer_free(&a);
  const char *bad[][2] = {{"{'limit':2,'duration_seconds':5}", "owner"},
                          {"{'owner':'','limit':2,'duration_seconds':5}", "owner"},
                          {"{'owner':'w','duration_seconds':5}", "limit"},
                          {"{'owner':'w','limit':0,'duration_seconds':5}", "limit"},
                          {"{'owner':'w','limit':257,'duration_seconds':5}", "limit"},
                          {"{'owner':'w','limit':'2','duration_seconds':5}", "limit"},
                          {"{'owner':'w','limit':2}", "duration_seconds"},
                          {"{'owner':'w','limit':2,'duration_seconds':0}", "duration_seconds"},
                          {"{'owner':'w','limit':2,'duration_seconds':86401}", "duration_seconds"},
                          {"{'owner':'w','limit':2,'duration_seconds':5,'slot':1}", "slot"}};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    a = run((struct call){.kind = TT_LEDGER_SEM_ACQUIRE, .scope = "s", .subject = "t",
                          .body = bad[i][0]});
    expect_error(a, TT_ERR_VALIDATION, bad[i][1]);
    answer_free(&a);
  }
  const char *bad_refresh[][2] = {{"{'owner':'w','duration_seconds':5}", "slot"},
                                  {"{'owner':'w','slot':-1,'duration_seconds':5}", "slot"},
                                  {"{'owner':'w','slot':256,'duration_seconds':5}", "slot"},
                                  {"{'owner':'w','slot':0,'limit':2,'duration_seconds':5}",
                                   "limit"}};
  for (size_t i = 0; i < sizeof(bad_refresh) / sizeof(bad_refresh[0]); i++) {
    a = run((struct call){.kind = TT_LEDGER_SEM_REFRESH, .scope = "s", .subject = "t",
                          .body = bad_refresh[i][0]});
    expect_error(a, TT_ERR_VALIDATION, bad_refresh[i][1]);
    answer_free(&a);
  }
  const char *bad_slot[] = {NULL, "", "-1", "+1", "1x", "256", "99999999999999999999"};
  for (size_t i = 0; i < sizeof(bad_slot) / sizeof(bad_slot[0]); i++) {
    a = run((struct call){.kind = TT_LEDGER_SEM_RELEASE, .scope = "s", .subject = "t",
                          .owner = "w", .slot = bad_slot[i]});
    expect_error(a, TT_ERR_VALIDATION, "slot");
    answer_free(&a);
  }
  a = run((struct call){.kind = TT_LEDGER_SEM_RELEASE, .scope = "s", .subject = "t",
                        .slot = "1"});
  expect_error(a, TT_ERR_VALIDATION, "owner");
  answer_free(&a);
  /* Identifiers: as job ids, and no '#' in the scope. */
  const char *keys[][3] = {{"", "t", "scope"},       {"s", "", "subject"},
                           {NULL, "t", "scope"},     {"s", NULL, "subject"},
                           {"a#b", "t", "scope"},    {"s", "\x01", "subject"},
                           {"s", "\xff", "subject"}};
  for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
    a = run((struct call){.kind = TT_LEDGER_SEM_INSPECT, .scope = keys[i][0],
                          .subject = keys[i][1]});
    expect_error(a, TT_ERR_VALIDATION, keys[i][2]);
    answer_free(&a);
  }
  char longid[TT_LEDGER_MAX_ID_BYTES + 2];
  memset(longid, 'x', sizeof(longid) - 1);
  longid[sizeof(longid) - 1] = '\0';
  a = run((struct call){.kind = TT_LEDGER_SEM_INSPECT, .scope = "s", .subject = longid});
  expect_error(a, TT_ERR_VALIDATION, "subject");
  answer_free(&a);
}
END_TEST

START_TEST(test_table_ensure_existing_is_200) {
  struct answer a = run((struct call){.kind = TT_LEDGER_TABLE_ENSURE});
  ck_assert_int_eq(a.status, 0);
  ck_assert_uint_eq(a.http, 200);
  ck_assert_str_eq(str(a.body, "table"), "tabletheory-jobs");
  ck_assert_uint_eq(json_array_size(json_object_get(a.body, "indexes")), 2);
  answer_free(&a);
}
END_TEST

static Suite *ledger_suite(void) {
  Suite *s = suite_create("ledger");
  TCase *tc = tcase_create("ledger");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_models_registered_on_the_table);
  tcase_add_test(tc, test_models_custom_and_bad_table);
  tcase_add_test(tc, test_models_reserved);
  tcase_add_test(tc, test_stored_layout);
  tcase_add_test(tc, test_stored_items_exactly);
  tcase_add_test(tc, test_uuid4_shape);
  tcase_add_test(tc, test_check_id);
  tcase_add_test(tc, test_job_create_and_get);
  tcase_add_test(tc, test_job_create_generates_uuid);
  tcase_add_test(tc, test_job_create_validation);
  tcase_add_test(tc, test_transition);
  tcase_add_test(tc, test_transition_terminal_from_refused_before_io);
  tcase_add_test(tc, test_record_upsert_and_sanitized_error);
  tcase_add_test(tc, test_lists);
  tcase_add_test(tc, test_lease_lifecycle);
  tcase_add_test(tc, test_lease_refusals);
  tcase_add_test(tc, test_idempotency);
  tcase_add_test(tc, test_idempotency_expired_record_counts_as_absent);
  tcase_add_test(tc, test_semaphore_limit_and_idempotent_acquire);
  tcase_add_test(tc, test_semaphore_expiry_refresh_release);
  tcase_add_test(tc, test_semaphore_owners_spread_over_the_slots);
  tcase_add_test(tc, test_semaphore_validation_before_io);
  tcase_add_test(tc, test_table_ensure_existing_is_200);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(ledger_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
