/* SPDX-License-Identifier: Apache-2.0 */
/* test_alloc_torture.c -- allocation-failure torture in curl's manner: each
 * scenario (value JSON codecs, the DynamoDB JSON codec, expressions, DMS
 * loading, ORM requests on the memory backend) runs once to record its
 * answer, then again with the N-th allocation failing for N = 1, 2, ...
 * until a run no longer reaches N. Every run must end cleanly: the answer
 * of the failure-free run, or an error (out of memory reported as
 * Internal where a code is reported). Leaks are LeakSanitizer's (the
 * ASan build), crashes the sanitizers'. Allocation goes through malloc,
 * calloc, realloc, strdup and strndup (wrapped at link time with
 * -Wl,--wrap, so src/ needs no hook), jansson (json_set_alloc_funcs) and
 * libuv (uv_replace_allocator). */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "api/item_io.h"
#include "api/item_io.h"
#include "backend/memory/memdb.h"
#include "expr/build.h"
#include "expr/expr.h"
#include "model/registry.h"
#include "orm/batch.h"
#include "orm/cond.h"
#include "orm/items.h"
#include "orm/orm.h"
#include "orm/query.h"
#include "orm/txn.h"
#include "orm/unique.h"
#include "value/codec_ddb.h"
#include "value/codec_logical.h"
#include "value/json_exact.h"

/* ---- the failure hook ------------------------------------------------------ */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static long fail_at; /* 0: never */
static bool shielded; /* inside the memory backend's operations: never refuse */
static long allocs;  /* allocations counted since the run started */
static bool failed;  /* the fail_at-th allocation was refused */

static bool refuse(void) {
  if (fail_at == 0 || shielded)
    return false;
  if (++allocs != fail_at)
    return false;
  failed = true;
  errno = ENOMEM; /* as malloc does */
  return true;
}

void *__wrap_malloc(size_t n) { return refuse() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t size) { return refuse() ? NULL : __real_calloc(n, size); }
void *__wrap_realloc(void *p, size_t n) { return refuse() ? NULL : __real_realloc(p, n); }
char *__wrap_strdup(const char *s) { return refuse() ? NULL : __real_strdup(s); }
char *__wrap_strndup(const char *s, size_t n) { return refuse() ? NULL : __real_strndup(s, n); }

/* The memory backend stands in for DynamoDB, whose memory is not ours to
 * torture: its operations (wrapped at link time too) never see a refused
 * allocation, so every refusal lands in the ORM, the codecs, the client or
 * the backend port around them. */
struct memdb;
#define SHIELD(name)                                                                             \
  int __real_##name(struct memdb *m, const json_t *req, json_t **resp,                           \
                    struct tt_backend_error *e);                                                 \
  int __wrap_##name(struct memdb *m, const json_t *req, json_t **resp,                           \
                    struct tt_backend_error *e);                                                 \
  int __wrap_##name(struct memdb *m, const json_t *req, json_t **resp,                           \
                    struct tt_backend_error *e) {                                                \
    bool was = shielded;                                                                         \
    shielded = true;                                                                             \
    int rc = __real_##name(m, req, resp, e);                                                     \
    shielded = was;                                                                              \
    return rc;                                                                                   \
  }
/* The typed operations (backend.h) have their own signatures. */
#define SHIELD_TYPED(name, params, args)                                                        \
  int __real_##name params;                                                                      \
  int __wrap_##name params;                                                                      \
  int __wrap_##name params {                                                                     \
    bool was = shielded;                                                                         \
    shielded = true;                                                                             \
    int rc = __real_##name args;                                                                 \
    shielded = was;                                                                              \
    return rc;                                                                                   \
  }
SHIELD_TYPED(memdb_op_item,
             (struct memdb * m, enum tt_ddb_op op, const struct tt_ddb_item_request *r,
              struct tt_av *out, struct tt_backend_error *e),
             (m, op, r, out, e))
SHIELD_TYPED(memdb_op_read,
             (struct memdb * m, bool query, const struct tt_ddb_read_request *r,
              struct tt_ddb_read_result *out, struct tt_backend_error *e),
             (m, query, r, out, e))
SHIELD_TYPED(memdb_op_transact,
             (struct memdb * m, bool get, const struct tt_ddb_txn_request *r,
              struct tt_ddb_txn_result *out, struct tt_backend_error *e),
             (m, get, r, out, e))
SHIELD_TYPED(memdb_op_batch,
             (struct memdb * m, bool write, const struct tt_ddb_batch_request *r,
              struct tt_ddb_batch_result *out, struct tt_backend_error *e),
             (m, write, r, out, e))
SHIELD(memdb_op_create_table)
SHIELD(memdb_op_describe_table)
SHIELD(memdb_op_delete_table)
SHIELD(memdb_op_update_ttl)

/* check's own calls allocate (and check is linked statically, so they are
 * wrapped too): inside a scenario, assert only through this, which stops
 * refusing allocations before it reports. */
#define CHECK(cond, ...)                                                                         \
  do {                                                                                           \
    if (!(cond)) {                                                                               \
      fprintf(stderr, "with allocation %ld failed:\n", fail_at);                                 \
      fail_at = 0;                                                                               \
      ck_abort_msg(__VA_ARGS__);                                                                 \
    }                                                                                            \
  } while (0)

/* A scenario writes its answer into out (no allocation) and returns 0, or
 * returns -1 after an error it checked was clean. */
typedef int (*scenario_fn)(char *out, size_t cap);

#define OUT_CAP 65536
static char ref_out[OUT_CAP], run_out[OUT_CAP];

static void torture(const char *name, scenario_fn fn) {
  fail_at = 0;
  ck_assert_msg(fn(ref_out, OUT_CAP) == 0, "%s: the failure-free run failed", name);
  long n;
  for (n = 1;; n++) {
    allocs = 0;
    failed = false;
    fail_at = n;
    run_out[0] = '\0';
    if (getenv("TORTURE_TRACE"))
      fprintf(stderr, "torture %s: failing allocation %ld\n", name, n);
    int rc = fn(run_out, OUT_CAP);
    fail_at = 0;
    if (!failed) {
      ck_assert_msg(rc == 0 && strcmp(run_out, ref_out) == 0,
                    "%s: the run past the last allocation (%ld) differs", name, n - 1);
      break;
    }
    if (rc == 0 && strcmp(run_out, ref_out) != 0) {
      size_t at = 0;
      while (run_out[at] == ref_out[at])
        at++;
      while (at > 0 && ref_out[at - 1] != '\n')
        at--; /* show from the start of the first line that differs */
      ck_abort_msg("%s: allocation %ld failed, yet the run succeeded with another answer:\n"
                   "%.300s\ninstead of\n%.300s",
                   name, n, run_out + at, ref_out + at);
    }
  }
  ck_assert_int_gt(n, 1); /* the scenario allocates at all */
}

/* An error after an injected failure must carry a code and a message; when
 * `oom_only`, nothing but the failure can go wrong, so it must say Internal. */
static int clean(const struct tt_error *err, bool oom_only) {
  CHECK(err->code != TT_OK && err->code < TT_ERR__COUNT, "an error without a code");
  CHECK(err->message[0] != '\0', "an error without a message");
  if (oom_only)
    CHECK(err->code == TT_ERR_INTERNAL, "out of memory reported as %s: %s",
          tt_error_code_name(err->code), err->message);
  return -1;
}

/* ---- value codecs ------------------------------------------------------------ */

static const char LOGICAL[] =
    "{\"s\":\"text\",\"n\":123456789012345678901234567890.5,\"b\":true,\"z\":null,"
    "\"l\":[1,\"two\",[3.0],{\"k\":\"v\"}],\"m\":{\"a\":{\"b\":[]}},\"e\":\"\\u00e9\\n\"}";

static int s_value(char *out, size_t cap) {
  struct tt_error err;
  json_t *j = NULL;
  struct tt_av v;
  struct tt_buf a, b;
  int rc = -1;
  tt_buf_init(&a, 0);
  tt_buf_init(&b, 0);
  if (tt_json_parse(LOGICAL, sizeof(LOGICAL) - 1, NULL, &j, &err) != 0)
    return clean(&err, true);
  if (tt_json_dump(j, 0, &a) != 0)
    goto done;
  if (tt_logical_to_av(j, TT_LOGICAL_INFER, 0, "body", &v, &err) != 0) {
    clean(&err, true);
    goto done;
  }
  int w = tt_logical_write(&b, &v, TT_LOGICAL_INFER, 0);
  json_t *back = w == 0 ? tt_logical_from_av(&v, TT_LOGICAL_INFER, 0) : NULL;
  tt_av_free(&v);
  if (back == NULL)
    goto done;
  struct tt_buf c;
  tt_buf_init(&c, 0);
  int d = tt_json_dump(back, 0, &c);
  json_decref(back);
  if (d == 0) {
    snprintf(out, cap, "%.*s\n%.*s\n%.*s", (int)a.len, a.data, (int)b.len, b.data, (int)c.len,
             c.data);
    rc = 0;
  }
  tt_buf_free(&c);
done:
  json_decref(j);
  tt_buf_free(&a);
  tt_buf_free(&b);
  return rc;
}

START_TEST(value_codecs) { torture("value codecs", s_value); }
END_TEST

static const char DDB_ITEM[] =
    "{\"pk\":{\"S\":\"a\"},\"n\":{\"N\":\"-0012.500\"},\"b\":{\"B\":\"AAEC\"},"
    "\"ss\":{\"SS\":[\"x\",\"y\"]},\"ns\":{\"NS\":[\"1\",\"2.5\"]},\"bs\":{\"BS\":[\"AA==\"]},"
    "\"l\":{\"L\":[{\"NULL\":true},{\"BOOL\":false},{\"M\":{\"q\":{\"S\":\"r\"}}}]}}";

static int s_ddb(char *out, size_t cap) {
  struct tt_error err;
  struct tt_av v;
  struct tt_buf a;
  int rc = -1;
  json_t *j = NULL;
  tt_buf_init(&a, 0);
  if (tt_json_parse(DDB_ITEM, sizeof(DDB_ITEM) - 1, NULL, &j, &err) != 0)
    return clean(&err, true);
  if (tt_ddb_item_from_json(j, "Item", &v, &err) != 0) {
    clean(&err, true);
    goto done;
  }
  json_t *back = tt_ddb_item_write(&a, &v, 0) == 0 ? tt_ddb_item_to_json(&v) : NULL;
  size_t size = tt_av_item_size(&v);
  tt_av_free(&v);
  if (back == NULL)
    goto done;
  struct tt_buf c;
  tt_buf_init(&c, 0);
  int d = tt_json_dump(back, 0, &c);
  json_decref(back);
  if (d == 0) {
    snprintf(out, cap, "%.*s\n%.*s\n%zu", (int)a.len, a.data, (int)c.len, c.data, size);
    rc = 0;
  }
  tt_buf_free(&c);
done:
  json_decref(j);
  tt_buf_free(&a);
  return rc;
}

START_TEST(ddb_codec) { torture("DynamoDB JSON codec", s_ddb); }
END_TEST

/* ---- expressions ------------------------------------------------------------- */

static int load_item(const char *wire, struct tt_av *out, struct tt_error *err) {
  json_t *j = NULL;
  if (tt_json_parse(wire, strlen(wire), NULL, &j, err) != 0)
    return -1;
  int rc = tt_ddb_item_from_json(j, "", out, err);
  json_decref(j);
  return rc;
}

/* A model that declares only its key and infers every other attribute. */
static const char open_dms[] =
    "{\"dms_version\":\"0.2\",\"models\":[{\"name\":\"Open\",\"table\":{\"name\":"
    "\"open\"},\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"S\"}},"
    "\"attributes\":[{\"attribute\":\"id\",\"type\":\"S\",\"required\":true,"
    "\"roles\":[\"pk\"]}],\"tags\":{\"additional_attributes\":true}}]}";
static struct tt_model_registry *open_reg; /* loaded before the torture */

static int s_expr(char *out, size_t cap) {
  struct tt_error err;
  struct tt_av names = {0}, values = {0}, item = {0}, updated = {0}, proj = {0};
  struct tt_av bn = {0}, bv = {0};
  struct tt_expr *cond = NULL, *upd = NULL, *pr = NULL;
  struct tt_expr_builder *b = NULL;
  struct tt_cond *typed = NULL;
  struct tt_buf w1, w2;
  char *built = NULL;
  json_t *rest = NULL;
  int rc = -1;
  tt_buf_init(&w1, 0);
  tt_buf_init(&w2, 0);
  if (load_item("{\"#a\":{\"S\":\"a\"},\"#l\":{\"S\":\"l\"}}", &names, &err) != 0 ||
      load_item("{\":s\":{\"S\":\"ab\"},\":n\":{\"N\":\"2\"},\":l\":{\"L\":[{\"S\":\"x\"}]}}",
                &values, &err) != 0 ||
      load_item("{\"a\":{\"S\":\"abc\"},\"n\":{\"N\":\"5\"},\"l\":{\"L\":[{\"N\":\"1\"}]},"
                "\"m\":{\"M\":{\"k\":{\"SS\":[\"p\"]}}}}",
                &item, &err) != 0)
    goto fail;
  if (tt_expr_parse(TT_EXPR_CONDITION,
                    "begins_with(#a, :s) AND n > :n AND size(#l) < :n OR attribute_exists(m.k)",
                    &names, &values, &cond, &err) != 0 ||
      tt_expr_parse(TT_EXPR_UPDATE,
                    "SET n = n + :n, #l = list_append(#l, :l), m.x = :s REMOVE m.k ADD z :n",
                    &names, &values, &upd, &err) != 0 ||
      tt_expr_parse(TT_EXPR_PROJECTION, "#a, l[0], m.k", &names, NULL, &pr, &err) != 0)
    goto fail;
  bool match = tt_expr_eval_condition(cond, &item);
  if (tt_expr_apply_update(upd, &item, &updated, &err) != 0 ||
      tt_expr_apply_projection(pr, &updated, &proj, &err) != 0)
    goto fail;
  if (tt_ddb_item_write(&w1, &updated, 0) != 0 || tt_ddb_item_write(&w2, &proj, 0) != 0)
    goto done;
  /* The REST condition, typed by a model, then built. */
  b = tt_expr_builder_new();
  if (b == NULL)
    goto done;
  static const char cond_json[] =
      "[{\"attr\":\"a\",\"op\":\"begins_with\",\"value\":\"x\"},{\"or\":[{\"attr\":\"b.c[1]\","
      "\"op\":\"between\",\"value\":[1,9]},{\"attr\":\"d\",\"op\":\"in\",\"value\":[1,2,3]}]}]";
  if (tt_json_parse(cond_json, sizeof(cond_json) - 1, NULL, &rest, &err) != 0)
    goto fail;
  if (tt_orm_cond_from_json(tt_model_registry_get(open_reg, "Open"), rest, "condition", &typed,
                            &err) != 0 ||
      tt_expr_build_condition(b, typed, "condition", &built, &err) != 0 ||
      tt_expr_builder_take(b, &bn, &bv, &err) != 0)
    goto fail;
  snprintf(out, cap, "%d\n%.*s\n%.*s\n%s\n%zu %zu", match, (int)w1.len, w1.data, (int)w2.len,
           w2.data, built, bn.len, bv.len);
  rc = 0;
  goto done;
fail:
  clean(&err, true);
done:
  tt_av_free(&names);
  tt_av_free(&values);
  tt_av_free(&item);
  tt_av_free(&updated);
  tt_av_free(&proj);
  tt_av_free(&bn);
  tt_av_free(&bv);
  tt_expr_free(cond);
  tt_expr_free(upd);
  tt_expr_free(pr);
  tt_expr_builder_free(b);
  tt_cond_free(typed);
  free(built);
  json_decref(rest);
  tt_buf_free(&w1);
  tt_buf_free(&w2);
  return rc;
}

START_TEST(expressions) {
  struct tt_error err;
  open_reg = tt_model_registry_new();
  ck_assert_int_eq(
      tt_model_registry_load_text(open_reg, open_dms, sizeof(open_dms) - 1, "open.json", &err), 0);
  torture("expressions", s_expr);
  tt_model_registry_free(open_reg);
}
END_TEST

/* ---- DMS loading ------------------------------------------------------------- */

static char *dms_text;
static size_t dms_len;

static void read_dms(void) {
  if (dms_text)
    return;
  const char *top = getenv("TT_SRCDIR");
  char path[4096];
  snprintf(path, sizeof(path), "%s/examples/models/user.yml", top ? top : "..");
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  dms_text = malloc(1 << 16);
  dms_len = fread(dms_text, 1, (1 << 16) - 1, f);
  fclose(f);
  dms_text[dms_len] = '\0';
}

static int s_dms(char *out, size_t cap) {
  struct tt_error err;
  struct tt_model_registry *r = tt_model_registry_new();
  if (r == NULL)
    return -1;
  int rc = -1;
  if (tt_model_registry_load_text(r, dms_text, dms_len, "user.yml", &err) != 0) {
    clean(&err, true);
    goto done;
  }
  CHECK(tt_model_registry_count(r) == 1, "one model");
  json_t *j = tt_model_to_json(tt_model_registry_at(r, 0));
  struct tt_buf c;
  tt_buf_init(&c, 0);
  if (j && tt_json_dump(j, 0, &c) == 0) {
    snprintf(out, cap, "%.*s", (int)c.len, c.data);
    rc = 0;
  }
  tt_buf_free(&c);
  json_decref(j);
done:
  tt_model_registry_free(r);
  return rc;
}

START_TEST(dms_loading) {
  read_dms();
  torture("DMS loading", s_dms);
}
END_TEST

/* ---- model registration: replaces ------------------------------------------- */

static const char SECRET_V1[] =
    "{\"name\":\"Secret\",\"table\":{\"name\":\"secrets\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"S\"}},"
    "\"attributes\":[{\"attribute\":\"id\",\"type\":\"S\",\"required\":true},"
    "{\"attribute\":\"secret\",\"type\":\"S\",\"optional\":true,\"encryption\":{\"v\":1}}]}";
static const char SECRET_V2[] = /* the encryption removed */
    "{\"name\":\"Secret\",\"table\":{\"name\":\"secrets\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"S\"}},"
    "\"attributes\":[{\"attribute\":\"id\",\"type\":\"S\",\"required\":true},"
    "{\"attribute\":\"secret\",\"type\":\"S\",\"optional\":true}]}";
static const char OTHER[] =
    "{\"name\":\"Other\",\"table\":{\"name\":\"secrets\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"S\"}},"
    "\"attributes\":[{\"attribute\":\"id\",\"type\":\"S\",\"required\":true}]}";

/* Puts one model (JSON text) and writes "<result> " or "<code> " to out.
 * A refusal must leave the registry as it was. Returns 0, or -1 after an
 * out-of-memory failure it checked. */
static int reg_put(struct tt_model_registry *r, const char *text, unsigned flags, char *out,
                   size_t cap) {
  struct tt_error err;
  json_t *obj = json_loads(text, 0, NULL);
  if (obj == NULL)
    return -1;
  struct tt_model *m = NULL;
  int rc = tt_model_from_json(obj, NULL, &m, &err);
  json_decref(obj);
  if (rc != 0)
    return clean(&err, true);
  size_t n = tt_model_registry_count(r);
  const struct tt_model *first = n ? tt_model_registry_at(r, 0) : NULL;
  enum tt_model_put_result res;
  if (tt_model_registry_put(r, m, flags, &res, &err) != 0) {
    CHECK(tt_model_registry_count(r) == n && (n == 0 || tt_model_registry_at(r, 0) == first),
          "a refused put changed the registry");
    if (err.code == TT_ERR_INTERNAL)
      return clean(&err, true);
    snprintf(out + strlen(out), cap - strlen(out), "%s ", tt_error_code_name(err.code));
    return 0;
  }
  snprintf(out + strlen(out), cap - strlen(out), "%d ", (int)res);
  return 0;
}

static int s_registry(char *out, size_t cap) {
  struct tt_model_registry *r = tt_model_registry_new();
  if (r == NULL)
    return -1;
  int rc = -1;
  out[0] = '\0';
  if (reg_put(r, SECRET_V1, 0, out, cap) != 0 ||
      reg_put(r, SECRET_V1, TT_MODEL_PUT_REPLACE, out, cap) != 0 ||
      reg_put(r, SECRET_V2, TT_MODEL_PUT_REPLACE, out, cap) != 0 ||
      reg_put(r, OTHER, 0, out, cap) != 0 ||
      reg_put(r, SECRET_V2, TT_MODEL_PUT_REPLACE | TT_MODEL_PUT_ALLOW_UNSAFE, out, cap) != 0)
    goto done;
  CHECK(tt_model_registry_count(r) == 2, "two models");
  CHECK(!tt_model_registry_get(r, "Secret")->attrs[1].encrypted, "the unsafe replace happened");
  rc = 0;
done:
  tt_model_registry_free(r);
  return rc;
}

START_TEST(registry_replaces) { torture("registry replaces", s_registry); }
END_TEST

/* ---- ORM requests on the memory backend -------------------------------------- */

static const char MEMBER[] =
    "{\"dms_version\":\"0.2\",\"models\":[{\"name\":\"Member\",\"table\":{\"name\":\"members\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"S\"}},"
    "\"attributes\":[{\"attribute\":\"id\",\"type\":\"S\",\"required\":true},"
    "{\"attribute\":\"email\",\"type\":\"S\",\"optional\":true,\"tags\":{\"unique\":true}},"
    "{\"attribute\":\"v\",\"type\":\"N\",\"format\":\"int\",\"roles\":[\"version\"]}]}]}";

static uv_loop_t loop;
static struct tt_model_registry *models;

static int64_t fixed_ns(void *arg) {
  (void)arg;
  return INT64_C(1700000000) * 1000000000;
}

static int64_t fixed_s(void *arg) {
  (void)arg;
  return INT64_C(1700000000);
}

static void done_cb(struct tt_orm_ctx *ctx) { ++*(int *)ctx->arg; }
static void joined_cb(struct tt_join *j, void *arg) {
  (void)j;
  ++*(int *)arg;
}
static void closed_cb(void *arg) { *(int *)arg = 1; }

enum req_kind { R_ENSURE, R_CREATE, R_PUT, R_GET, R_PATCH, R_QUERY, R_SCAN, R_BGET, R_BWRITE,
                R_TXN, R_DELETE };

struct req {
  enum req_kind kind;
  const char *model;
  const char *key;
  const char *body;
};

/* A typed page as text: its items' logical JSON, the counts, the cursor. */
static int page_text(struct tt_buf *b, const struct tt_orm_result *r,
                     const struct tt_select *select, struct tt_error *err) {
  for (size_t i = 0; i < r->page.n_items; i++)
    if (tt_orm_item_write(b, r->model, &r->page.items[i], select, err) != 0)
      return -1;
  if (tt_buf_printf(b, " %" PRIu64 " %" PRIu64 " %s", r->page.count, r->page.scanned,
                    r->page.cursor ? r->page.cursor : "null") != 0)
    return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
  return 0;
}

/* One request to its answer, appended to out as "<status> <body>" or
 * "<status> <code>". Returns 0, or -1 when it failed (checked clean). */
static int run_req(struct tt_orm *orm, const struct req *q, char *out, size_t cap) {
  struct tt_arena arena;
  struct tt_join join;
  struct tt_orm_result res;
  struct tt_error err;
  struct tt_av key = {0};
  int done = 0, joined = 0;
  json_t *body = NULL;
  tt_arena_init(&arena);
  tt_join_init(&join, NULL, joined_cb, &joined);
  memset(&res, 0, sizeof(res));
  if (q->body && tt_json_parse(q->body, strlen(q->body), NULL, &body, &err) != 0) {
    tt_join_release(&join);
    tt_arena_free(&arena);
    tt_orm_result_free(&res);
    return clean(&err, true);
  }
  const struct tt_model *m = q->model ? tt_model_registry_get(models, q->model) : NULL;
  union {
    struct tt_orm_ctx ctx;
    struct tt_orm_item_op item;
    struct tt_orm_query_op query;
    struct tt_orm_batch_op batch;
    struct tt_orm_txn_op txn;
  } op;
  memset(&op, 0, sizeof(op));
  tt_orm_ctx_init(&op.ctx, orm, &join, &arena, "torture", m, &res, done_cb, &done);
  int settled = 0; /* -1: it finished inside its start */
  switch (q->kind) {
  case R_ENSURE:
    settled = tt_orm_table_ensure(&op.ctx);
    break;
  case R_CREATE:
  case R_PUT:
  case R_GET:
  case R_PATCH:
  case R_DELETE:
    op.item.kind = q->kind == R_CREATE  ? TT_ORM_OP_CREATE
                   : q->kind == R_PUT   ? TT_ORM_OP_PUT
                   : q->kind == R_GET   ? TT_ORM_OP_GET
                   : q->kind == R_PATCH ? TT_ORM_OP_UPDATE
                                        : TT_ORM_OP_DELETE;
    if (q->key && tt_api_item_key(m, q->key, strlen(q->key), &key, &err) == 0)
      op.item.item_key = &key;
    settled = tt_api_item_start(&op.item, body);
    break;
  case R_QUERY:
  case R_SCAN:
    op.query.scan = q->kind == R_SCAN;
    settled = tt_api_query_start(&op.query, body);
    break;
  case R_BGET:
  case R_BWRITE:
    op.batch.write = q->kind == R_BWRITE;
    settled = tt_api_batch_start(&op.batch, body);
    break;
  case R_TXN:
    settled = tt_api_txn_start(&op.txn, body);
    break;
  }
  CHECK(done == 0, "%s: done ran inside the start", q->model ? q->model : "transaction");
  if (settled != 0)
    done++; /* done never runs for it: the result is filled */
  tt_join_release(&join);
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(done == 1 && joined == 1, "%s: done ran %d times, the join completed %d times",
        q->model ? q->model : "transaction", done, joined);
  struct tt_buf rendered; /* a transaction's or a batch's body */
  tt_buf_init(&rendered, 0);
  if (q->kind == R_TXN)
    tt_api_txn_answer(&op.txn, &res, &rendered); /* as the transaction routes answer */
  if (q->kind == R_BGET || q->kind == R_BWRITE)
    tt_api_batch_answer(&op.batch, &res, &rendered); /* as the batch routes answer */
  int rc = 0;
  size_t used = strlen(out);
  char etag[TT_API_ETAG_MAX];
  if (res.status == 0 &&
      (res.answer == TT_ORM_ANSWER_ITEM || res.answer == TT_ORM_ANSWER_PAGE)) {
    /* Rendered as the item and query routes do. */
    struct tt_buf b;
    tt_buf_init(&b, 0);
    if ((res.answer == TT_ORM_ANSWER_ITEM ? tt_api_item_write(&b, &res, NULL, false, etag, &err)
                                          : page_text(&b, &res, &op.query.rq.select, &err)) == 0)
      snprintf(out + used, cap - used, "%u %.*s\n", res.created ? 201u : 200u, (int)b.len,
               b.data ? b.data : "");
    else
      rc = clean(&err, false);
    tt_buf_free(&b);
  } else if (res.status == 0 && res.answer == TT_ORM_ANSWER_TABLE) {
    /* Rendered as the table routes do. */
    json_t *t = tt_orm_table_to_json(&res.table);
    struct tt_buf b;
    tt_buf_init(&b, 0);
    if (t && tt_json_dump(t, 0, &b) == 0)
      snprintf(out + used, cap - used, "%u %.*s\n", res.table.created ? 201u : 200u,
               (int)b.len, b.data);
    else
      rc = clean(&(struct tt_error){.code = TT_ERR_INTERNAL, .message = "out of memory"}, true);
    tt_buf_free(&b);
    json_decref(t);
  } else if (res.status == 0) {
    snprintf(out + used, cap - used, "%u %.*s\n", rendered.len ? 200u : 204u, (int)rendered.len,
             rendered.data ? rendered.data : "");
  } else {
    snprintf(out + used, cap - used, "%s\n", tt_error_code_name(res.err.code));
    rc = clean(&res.err, false);
  }
  tt_buf_free(&rendered);
  tt_orm_result_free(&res);
  tt_av_free(&key);
  tt_arena_free(&arena);
  json_decref(body);
  return rc;
}

static const struct req script[] = {
    {R_ENSURE, "Order", NULL, NULL},
    {R_CREATE, "Order", NULL, "{\"PK\":\"O#1\",\"SK\":\"a\",\"status\":\"NEW\",\"amount\":5}"},
    {R_PUT, "Order", "O%231/b", "{\"PK\":\"O#1\",\"SK\":\"b\",\"status\":\"OLD\",\"amount\":\"7.5\"}"},
    {R_GET, "Order", "O%231/a", NULL},
    {R_PATCH, "Order", "O%231/a", "{\"set\":{\"status\":\"PAID\"},\"add\":{\"amount\":2}}"},
    {R_QUERY, "Order", NULL,
     "{\"key\":[{\"attr\":\"PK\",\"op\":\"=\",\"value\":\"O#1\"}],\"limit\":1,"
     "\"filter\":{\"attr\":\"amount\",\"op\":\">\",\"value\":1}}"},
    {R_SCAN, "Order", NULL, "{\"segments\":2}"},
    /* The 40-byte budget (s_orm) ends these inside a page: the cursor is
     * the last answered item's key, projected though `select` leaves it out. */
    {R_QUERY, "Order", NULL,
     "{\"key\":[{\"attr\":\"PK\",\"op\":\"=\",\"value\":\"O#1\"}],"
     "\"select\":[\"status\",\"amount\"]}"},
    {R_SCAN, "Order", NULL, "{\"segments\":2,\"limit\":5,\"select\":[\"`status`\"]}"},
    {R_BWRITE, "Order", NULL,
     "{\"put\":[{\"PK\":\"O#2\",\"SK\":\"c\"}],\"delete\":[{\"PK\":\"O#1\",\"SK\":\"b\"}]}"},
    {R_BGET, "Order", NULL, "{\"keys\":[{\"PK\":\"O#1\",\"SK\":\"a\"},{\"PK\":\"O#2\",\"SK\":\"c\"}]}"},
    {R_DELETE, "Order", "O%232/c", NULL},
    {R_ENSURE, "Member", NULL, NULL},
    {R_CREATE, "Member", NULL, "{\"id\":\"m1\",\"email\":\"a@b.c\"}"},
    {R_PATCH, "Member", "m1", "{\"set\":{\"email\":\"d@e.f\"}}"},
    {R_TXN, NULL, NULL,
     "{\"items\":[{\"op\":\"put\",\"model\":\"Order\",\"item\":{\"PK\":\"O#3\",\"SK\":\"d\"}},"
     "{\"op\":\"check\",\"model\":\"Member\",\"key\":{\"id\":\"m1\"},"
     "\"condition\":{\"attr\":\"email\",\"op\":\"=\",\"value\":\"d@e.f\"}}]}"},
    {R_DELETE, "Member", "m1", NULL},
};

static int s_orm(char *out, size_t cap) {
  struct tt_memdb_options o = {.clock = fixed_s};
  struct tt_backend *b = NULL;
  struct tt_client client;
  struct tt_orm orm;
  out[0] = '\0';
  if (tt_memdb_new(&loop, &o, &b) != 0)
    return -1;
  tt_client_init(&client, b, &loop, NULL);
  client.retry.max_attempts = 1; /* a retry would sleep for real */
  memset(&orm, 0, sizeof(orm));
  orm.models = models;
  orm.client = &client;
  orm.now_ns = fixed_ns;
  orm.max_response_bytes = 40; /* an item or two: answers end early */
  int rc = 0;
  for (size_t i = 0; i < sizeof(script) / sizeof(script[0]); i++)
    if (run_req(&orm, &script[i], out, cap) != 0)
      rc = -1; /* go on: later requests meet the state an error left */
  int closed = 0;
  b->ops->close(b, closed_cb, &closed);
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(closed == 1, "the backend closed");
  b->ops->destroy(b);
  return rc;
}

/* The same requests on a backend with a data dir (fsync no: nothing waits
 * for a disk), then a restart on it and a scan: an allocation refused
 * while a write is logged fails that write and every later call cleanly
 * (the backend cannot keep memory and log in step), and the restart loads
 * exactly what was logged. */
static char data_dir[256];

static void empty_data_dir(void) {
  DIR *d = opendir(data_dir);
  if (d == NULL)
    return;
  struct dirent *de;
  while ((de = readdir(d)) != NULL)
    if (de->d_name[0] != '.')
      unlinkat(dirfd(d), de->d_name, 0);
  closedir(d);
}

static int open_durable(struct tt_backend **b, struct tt_client *client, struct tt_orm *orm) {
  struct tt_memdb_options o = {.clock = fixed_s, .data_dir = data_dir,
                               .fsync_mode = TT_MEMDB_FSYNC_NO};
  char msg[512];
  if (tt_memdb_open(&loop, &o, b, msg, sizeof(msg)) != 0) {
    CHECK(msg[0] != '\0', "a data dir refused without a message");
    return -1;
  }
  tt_client_init(client, *b, &loop, NULL);
  client->retry.max_attempts = 1;
  memset(orm, 0, sizeof(*orm));
  orm->models = models;
  orm->client = client;
  orm->now_ns = fixed_ns;
  return 0;
}

static void close_durable(struct tt_backend *b) {
  int closed = 0;
  b->ops->close(b, closed_cb, &closed);
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(closed == 1, "the backend closed");
  b->ops->destroy(b);
}

static int s_orm_durable(char *out, size_t cap) {
  struct tt_backend *b = NULL;
  struct tt_client client;
  struct tt_orm orm;
  out[0] = '\0';
  empty_data_dir();
  if (open_durable(&b, &client, &orm) != 0)
    return -1;
  int rc = 0;
  for (size_t i = 0; i < sizeof(script) / sizeof(script[0]); i++)
    if (run_req(&orm, &script[i], out, cap) != 0)
      rc = -1;
  close_durable(b);
  if (open_durable(&b, &client, &orm) != 0)
    return -1;
  static const struct req again = {R_SCAN, "Order", NULL, "{}"};
  if (run_req(&orm, &again, out, cap) != 0)
    rc = -1;
  close_durable(b);
  return rc;
}

START_TEST(orm_durable) {
  struct tt_error err;
  const char *top = getenv("TT_SRCDIR");
  char path[4096];
  snprintf(path, sizeof(path), "%s/examples/models/order.yml", top ? top : "..");
  snprintf(data_dir, sizeof(data_dir), "%s/ttd-torture-XXXXXX",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(data_dir));
  ck_assert_int_eq(uv_loop_init(&loop), 0);
  models = tt_model_registry_new();
  ck_assert_msg(tt_model_registry_load_path(models, path, &err) == 0, "%s", err.message);
  ck_assert_msg(tt_model_registry_load_text(models, MEMBER, sizeof(MEMBER) - 1, "member.json",
                                            &err) == 0,
                "%s", err.message);
  torture("ORM requests on a data dir", s_orm_durable);
  tt_model_registry_free(models);
  ck_assert_int_eq(uv_loop_close(&loop), 0);
  empty_data_dir();
  rmdir(data_dir);
}
END_TEST

START_TEST(orm_requests) {
  struct tt_error err;
  const char *top = getenv("TT_SRCDIR");
  char path[4096];
  snprintf(path, sizeof(path), "%s/examples/models/order.yml", top ? top : "..");
  ck_assert_int_eq(uv_loop_init(&loop), 0);
  models = tt_model_registry_new();
  ck_assert_msg(tt_model_registry_load_path(models, path, &err) == 0, "%s", err.message);
  ck_assert_msg(tt_model_registry_load_text(models, MEMBER, sizeof(MEMBER) - 1, "member.json",
                                            &err) == 0,
                "%s", err.message);
  torture("ORM requests", s_orm);
  tt_model_registry_free(models);
  ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

int main(void) {
  /* Before anything allocates through them. */
  json_set_alloc_funcs(__wrap_malloc, free);
  uv_replace_allocator(__wrap_malloc, __wrap_realloc, __wrap_calloc, free);
  Suite *s = suite_create("alloc_torture");
  /* One case each, so CK_RUN_CASE=orm runs one scenario. */
  const struct {
    const char *name;
    const TTest *test;
  } cases[] = {{"value", value_codecs}, {"ddb", ddb_codec}, {"expr", expressions},
               {"dms", dms_loading},    {"registry", registry_replaces},
               {"orm", orm_requests}, {"durable", orm_durable}};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    TCase *tc = tcase_create(cases[i].name);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, cases[i].test);
    suite_add_tcase(s, tc);
  }
  SRunner *sr = srunner_create(s);
  /* In-process: LeakSanitizer checks the whole run at exit. */
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_NORMAL);
  int failed_n = srunner_ntests_failed(sr);
  srunner_free(sr);
  free(dms_text);
  return failed_n == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
