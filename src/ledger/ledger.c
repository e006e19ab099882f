/* SPDX-License-Identifier: Apache-2.0 */
/* ledger.c -- the job ledger's core: the step runner over ORM operations,
 * answers and logs, input checks, sanitization of stored envelopes, and the
 * job, record and list operations (leases: lease.c; idempotency:
 * idempotency.c; semaphores: semaphore.c). */
#include <errno.h>
#include <inttypes.h>
#include <openssl/rand.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/internal.h"
#include "orm/cond.h"
#include "ledger/sanitize.h"
#include "obs/log.h"
#include "orm/item.h"
#include "util/utf8.h"
#include "value/json_exact.h"
#include "value/number.h"

/* ---- statuses and identifiers ---------------------------------------------- */

static bool in_list(const char *s, const char *const *list) {
  for (; s && *list; list++)
    if (strcmp(s, *list) == 0)
      return true;
  return false;
}

static const char *const job_statuses[] = {"PENDING", "RUNNING", "SUCCEEDED", "FAILED",
                                           "CANCELED", NULL};
static const char *const terminal_statuses[] = {"SUCCEEDED", "FAILED", "CANCELED", NULL};
static const char *const record_statuses[] = {"PENDING", "PROCESSING", "SUCCEEDED", "FAILED",
                                              "SKIPPED", NULL};

bool tt_ledger_job_status_valid(const char *s) { return in_list(s, job_statuses); }

bool tt_ledger_job_status_terminal(const char *s) { return in_list(s, terminal_statuses); }

bool tt_ledger_record_status_valid(const char *s) { return in_list(s, record_statuses); }

int tt_ledger_uuid4(char out[37]) {
  unsigned char b[16];
  if (RAND_bytes(b, sizeof(b)) != 1)
    return -1;
  b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
  b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
  static const char hex[] = "0123456789abcdef";
  size_t o = 0;
  for (size_t i = 0; i < 16; i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10)
      out[o++] = '-';
    out[o++] = hex[b[i] >> 4];
    out[o++] = hex[b[i] & 15];
  }
  out[o] = '\0';
  return 0;
}

int tt_ledger_check_id(const char *s, size_t len, const char *field, struct tt_error *err) {
  if (s == NULL || len == 0)
    return tt_error_set(err, TT_ERR_VALIDATION, field, "%s must not be empty", field);
  if (len > TT_LEDGER_MAX_ID_BYTES)
    return tt_error_set(err, TT_ERR_VALIDATION, field, "%s must be at most %d bytes", field,
                        TT_LEDGER_MAX_ID_BYTES);
  const unsigned char *p = (const unsigned char *)s;
  for (size_t i = 0; i < len;) {
    if (p[i] < 0x20 || p[i] == 0x7f)
      return tt_error_set(err, TT_ERR_VALIDATION, field,
                          "%s must not contain control characters", field);
    size_t n = tt_utf8_seq(p + i, len - i, NULL);
    if (n == 0)
      return tt_error_set(err, TT_ERR_VALIDATION, field, "%s must be valid UTF-8", field);
    i += n;
  }
  return 0;
}

/* ---- answers, logs ------------------------------------------------------- */

/* The name of a kind for logs ("job.create"); never NULL. */
static const char *kind_name(enum tt_ledger_kind kind);

/* One debug line per operation: names and codes only. The error message is
 * left out because it may quote what the client sent (an unknown member's
 * name, say); the client has it in the answer. */
static void ledger_log(const struct tt_ledger_op *op) {
  if (!tt_log_enabled(TT_LOG_DEBUG))
    return;
  struct tt_log_line l;
  tt_log_begin(&l, TT_LOG_DEBUG, "ledger.op");
  tt_log_str(&l, "request_id", op->request_id);
  tt_log_str(&l, "op", kind_name(op->kind));
  const struct tt_ledger_result *r = op->result;
  if (r->status == 0) {
    tt_log_int(&l, "status", r->http_status);
  } else {
    tt_log_str(&l, "error_code", tt_error_code_name(r->err.code));
  }
  tt_log_end(&l);
}

static void finish(struct tt_ledger_op *op) {
  if (op->w.finished)
    return; /* a bug would answer twice; the first answer stands */
  op->w.finished = true;
  tt_av_free(&op->w.error);
  tt_av_free(&op->w.value);
  ledger_log(op);
  if (op->done && !op->w.starting)
    op->done(op);
}

void tt_ledger_result_free(struct tt_ledger_result *r) {
  tt_buf_free(&r->body);
  json_decref(r->details);
  r->details = NULL;
}

void ledger_answer(struct tt_ledger_op *op, unsigned http_status, json_t *value) {
  struct tt_ledger_result *r = op->result;
  tt_buf_reset(&r->body);
  if (value == NULL && http_status != 204) {
    ledger_failf(op, TT_ERR_INTERNAL, NULL, "out of memory");
    return;
  }
  if (value && tt_json_dump(value, 0, &r->body) != 0) {
    json_decref(value);
    ledger_failf(op, TT_ERR_INTERNAL, NULL, "could not encode the answer");
    return;
  }
  json_decref(value);
  r->status = 0;
  r->http_status = http_status;
  finish(op);
}

void ledger_fail(struct tt_ledger_op *op, const struct tt_error *err, json_t *details) {
  struct tt_ledger_result *r = op->result;
  r->status = -1;
  r->err = *err;
  json_decref(r->details);
  r->details = details;
  finish(op);
}

void ledger_failf(struct tt_ledger_op *op, enum tt_err_code code, const char *field,
                  const char *fmt, ...) {
  struct tt_error e;
  va_list ap;
  va_start(ap, fmt);
  tt_error_vset(&e, code, field, fmt, ap);
  va_end(ap);
  ledger_fail(op, &e, NULL);
}

void ledger_fail_result(struct tt_ledger_op *op, struct tt_orm_result *r) {
  op->result->retry_after_s = r->retry_after_s;
  ledger_fail(op, &r->err, r->details ? json_incref(r->details) : NULL);
}

bool ledger_ok_or(struct tt_ledger_op *op, struct tt_orm_result *r, enum tt_err_code when,
                  enum tt_err_code code, const char *field, const char *msg) {
  if (r->status == 0)
    return true;
  if (when != TT_OK && r->err.code == when)
    ledger_failf(op, code, field, "%s", msg);
  else
    ledger_fail_result(op, r);
  return false;
}

const struct tt_orm_page *ledger_page(struct tt_ledger_op *op, struct tt_orm_result *r) {
  if (!ledger_ok(op, r))
    return NULL;
  if (r->answer == TT_ORM_ANSWER_PAGE)
    return &r->page;
  ledger_failf(op, TT_ERR_INTERNAL, NULL, "the query answered without items");
  return NULL;
}

/* ---- JSON helpers ------------------------------------------------------- */

/* The item of a typed item answer, or NULL. */
static const struct tt_av *result_item(const struct tt_orm_result *r) {
  return r->status == 0 && r->answer == TT_ORM_ANSWER_ITEM ? &r->item : NULL;
}

const char *ledger_result_str(const struct tt_orm_result *r, const char *name) {
  return ledger_item_str(result_item(r), name);
}

int ledger_result_int(const struct tt_orm_result *r, const char *name, int64_t *out) {
  return ledger_item_int(result_item(r), name, out);
}

/* The logical JSON object of a stored item of r's model without its storage
 * keys (pk, sk), or NULL when out of memory. */
static json_t *ledger_public(const struct tt_orm_result *r, const struct tt_av *item) {
  struct tt_error err;
  json_t *out = tt_orm_item_to_json(r->model, item, NULL, &err);
  json_object_del(out, "pk");
  json_object_del(out, "sk");
  return out;
}

/* The items of a successful query step as logical JSON objects without
 * their storage keys (a new array), or NULL when out of memory. */
static json_t *ledger_page_json(const struct tt_orm_result *r) {
  json_t *items = json_array();
  for (size_t i = 0; items && i < r->page.n_items; i++) {
    json_t *it = ledger_public(r, &r->page.items[i]);
    if (it == NULL || json_array_append_new(items, it) != 0) {
      json_decref(items);
      return NULL;
    }
  }
  return items;
}

json_t *ledger_str(const char *s) { return tt_json_string_new(s, strlen(s)); }

const char *ledger_item_str(const struct tt_av *item, const char *name) {
  const struct tt_av *v = item ? tt_av_map_get(item, name) : NULL;
  return v && v->type == TT_AV_S ? v->u.bytes : NULL;
}

int ledger_item_int(const struct tt_av *item, const char *name, int64_t *out) {
  const struct tt_av *v = item ? tt_av_map_get(item, name) : NULL;
  return v && v->type == TT_AV_N ? tt_number_to_int64(v->u.bytes, out) : -1;
}

void ledger_now_text(const struct tt_ledger_op *op, char *out, size_t cap) {
  if (tt_orm_format_rfc3339nano(op->w.now_ns, out, cap) < 0 && cap)
    out[0] = '\0';
}

/* An absent member: 0, or -1 with a ValidationError when it is required. */
static int absent(const char *name, const char *required, struct tt_error *err) {
  return required ? tt_error_set(err, TT_ERR_VALIDATION, name, "%s is required: %s", name,
                                 required)
                  : 0;
}

int ledger_body_int(const json_t *body, const char *name, int64_t min, int64_t max,
                    const char *required, int64_t *out, struct tt_error *err) {
  const json_t *v = json_object_get(body, name);
  if (v == NULL || json_is_null(v))
    return absent(name, required, err);
  int64_t x;
  if (tt_json_integer(v, &x) != 0 || x < min || x > max)
    return tt_error_set(err, TT_ERR_VALIDATION, name,
                        "%s must be a whole number from %" PRId64 " to %" PRId64, name, min, max);
  *out = x;
  return 1;
}

int ledger_body_str(const json_t *body, const char *name, const char *required,
                    const char **out, size_t *len, struct tt_error *err) {
  const json_t *v = json_object_get(body, name);
  if (v == NULL || json_is_null(v))
    return absent(name, required, err);
  if (!tt_json_is_string(v))
    return tt_error_set(err, TT_ERR_VALIDATION, name, "%s must be a string", name);
  *out = tt_json_string_text(v, len);
  return 1;
}

int ledger_body_members(const json_t *body, const char *const *names, struct tt_error *err) {
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)body, k, v) {
    if (!in_list(k, names))
      return tt_error_set(err, TT_ERR_VALIDATION, k, "%s is not a member of this body", k);
  }
  return 0;
}

/* A copy of an exact tree in which marked integers that fit in 64 bits
 * become jansson integers, so the sanitizer can mask them as digit text.
 * Other nodes are shared (the sanitizer never modifies its input). */
static json_t *plain_numbers(const json_t *v, int depth) {
  if (depth > TT_SANITIZE_MAX_DEPTH + 2)
    return json_incref((json_t *)v); /* the sanitizer truncates it anyway */
  if (json_is_object(v)) {
    json_t *out = json_object();
    const char *k;
    json_t *m;
    json_object_foreach((json_t *)v, k, m) {
      if (out && json_object_set_new(out, k, plain_numbers(m, depth + 1)) != 0) {
        json_decref(out);
        out = NULL;
      }
    }
    return out;
  }
  if (json_is_array(v)) {
    json_t *out = json_array();
    for (size_t i = 0; out && i < json_array_size(v); i++)
      if (json_array_append_new(out, plain_numbers(json_array_get(v, i), depth + 1)) != 0) {
        json_decref(out);
        out = NULL;
      }
    return out;
  }
  int64_t x;
  if (json_is_string(v) && tt_json_is_number(v) && tt_json_integer(v, &x) == 0)
    return json_integer((json_int_t)x);
  return json_incref((json_t *)v);
}

int ledger_sanitize_envelope(const json_t *in, json_t **out, struct tt_error *err) {
  *out = NULL;
  if (in == NULL || json_is_null(in))
    return 0;
  static const char *const text_members[] = {"type", "code", "message"};
  for (size_t i = 0; json_is_object(in) && i < 3; i++) {
    const json_t *v = json_object_get(in, text_members[i]);
    size_t len = 0;
    const char *s = v && tt_json_is_string(v) ? tt_json_string_text(v, &len) : NULL;
    if (v && !json_is_null(v) && (s == NULL || memchr(s, '\0', len) != NULL)) {
      char f[32];
      snprintf(f, sizeof(f), "error.%s", text_members[i]);
      return tt_error_set(err, TT_ERR_VALIDATION, f, "%s must be a string without NUL bytes", f);
    }
  }
  json_t *plain = plain_numbers(in, 0);
  if (plain == NULL)
    return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
  int rc = tt_sanitize_error_envelope(plain, out, err);
  json_decref(plain);
  if (rc == 0 && json_object_size(*out) == 0) { /* omit_empty: never stored */
    json_decref(*out);
    *out = NULL;
  }
  return rc;
}

int ledger_sanitize_value(const json_t *in, json_t **out, struct tt_error *err) {
  json_t *plain = plain_numbers(in, 0);
  *out = plain ? tt_sanitize_json(plain) : NULL;
  json_decref(plain);
  return *out ? 0 : tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
}

/* ---- steps: ORM operations run one after another ------------------------ */

struct ledger_step {
  union {
    struct tt_orm_ctx ctx; /* first member of each op */
    struct tt_orm_item_op item;
    struct tt_orm_query_op query;
  } u;
  struct tt_orm_result result;
  struct tt_av key; /* an item step's key, borrowed by the op */
  struct tt_ledger_op *op;
  ledger_next_fn next;
  /* The step's span: the join's calls nest in it while it runs (steps run
   * one after another), then the join's position is restored. */
  struct tt_span *span;
  struct tt_trace_ctx outer;
};

static void step_done(struct tt_orm_ctx *ctx) {
  struct ledger_step *s = ctx->arg;
  if (s->span) {
    s->op->join->trace = s->outer;
    /* The status the step's route would answer: on success only (a
     * failure's status is the error's code). */
    const struct tt_orm_result *r = &s->result;
    if (r->status == 0)
      tt_span_int(s->span, "http.response.status_code",
                  r->answer == TT_ORM_ANSWER_ITEM    ? (r->created ? 201 : 200)
                  : r->answer == TT_ORM_ANSWER_TABLE ? (r->table.created ? 201 : 200)
                  : r->answer == TT_ORM_ANSWER_NONE  ? 204
                                                     : 200);
    else
      tt_span_status(s->span, TT_SPAN_ERROR, tt_error_code_name(r->err.code));
    tt_span_end(s->span);
    s->span = NULL;
  }
  s->next(s->op, &s->result);
  tt_orm_result_free(&s->result);
  tt_av_free(&s->key);
}

/* Allocates a step bound to `model`; NULL after answering. */
static struct ledger_step *step_new(struct tt_ledger_op *op, const char *model,
                                    ledger_next_fn next) {
  /* Reserved models: only the ledger itself reaches them. */
  const struct tt_model *m = tt_model_registry_get_internal(op->orm->models, model);
  struct ledger_step *s = m ? tt_arena_alloc(op->arena, sizeof(*s)) : NULL;
  if (s == NULL) {
    if (m == NULL)
      ledger_failf(op, TT_ERR_INTERNAL, NULL,
                   "the built-in ledger model %s is not registered", model);
    else
      ledger_failf(op, TT_ERR_INTERNAL, NULL, "out of memory");
    return NULL;
  }
  s->op = op;
  s->next = next;
  s->span = tt_span_start(&op->join->trace, "ledger step", TT_SPAN_INTERNAL);
  if (s->span) {
    tt_span_str(s->span, "tabletheoryd.model", model);
    s->outer = op->join->trace;
    op->join->trace = s->span->ctx;
  }
  tt_orm_ctx_init(&s->u.ctx, op->orm, op->join, op->arena, op->request_id, m, &s->result,
                  step_done, s);
  return s;
}

/* The key (op->w.pk, sk) of an item step's model into s->key. Returns 0,
 * or -1 when out of memory. */
static int step_key(struct ledger_step *s, const char *sk) {
  const struct tt_model_attr *keys[2] = {tt_model_pk(s->u.ctx.model), tt_model_sk(s->u.ctx.model)};
  const char *texts[2] = {s->op->w.pk, sk};
  if (sk == NULL || tt_av_map(&s->key, 0) != 0)
    return -1;
  for (int i = 0; i < 2 && keys[i] != NULL; i++) {
    struct tt_av v;
    if (tt_av_string(&v, texts[i], strlen(texts[i])) != 0)
      return -1;
    if (tt_av_map_put(&s->key, keys[i]->name, keys[i]->name_len, &v) != 0) {
      tt_av_free(&v);
      return -1;
    }
  }
  return 0;
}

/* Item members a CREATE step has room for, besides the lifecycle ones. */
#define LEDGER_ITEM_MEMBERS 8

void ledger_set_av(struct ledger_item_args *a, enum tt_expr_update_op act, const char *name,
                   struct tt_av *v) {
  struct tt_error e;
  struct tt_av_member *mb = NULL;
  if (!a->oom && a->kind == TT_ORM_OP_UPDATE)
    a->oom = tt_orm_update_push(&a->upd, act, name, act == TT_EXPR_UPD_REMOVE ? NULL : v, &e);
  else if (!a->oom)
    a->oom = (a->item.type != TT_AV_M &&
              tt_av_map(&a->item, LEDGER_ITEM_MEMBERS + TT_ORM_LIFECYCLE_SLOTS) != 0) ||
             a->n == LEDGER_ITEM_MEMBERS ||
             tt_av_member_name(mb = &a->item.u.members[a->n], name, strlen(name)) != 0;
  if (mb && !a->oom) {
    mb->value = *v;
    a->n++;
    tt_av_null(v);
  }
  tt_av_free(v); /* what was not taken */
}

void ledger_set(struct ledger_item_args *a, enum tt_expr_update_op act, const char *name,
                const char *s, int64_t x) {
  struct tt_av v;
  a->oom |= (s ? tt_av_string(&v, s, strlen(s)) : tt_av_number_int(&v, x)) != 0;
  ledger_set_av(a, act, name, &v);
}

/* Frees what the args of a step that did not start hold. */
static void args_free(struct ledger_item_args *a) {
  tt_av_free(&a->item);
  tt_orm_update_free(&a->upd);
  tt_cond_free(a->cond);
}

/* The typed inputs of a create or update step, moved from `a`, with the
 * model's lifecycle attributes added at the step's time. */
static int step_input(struct tt_orm_item_op *it, struct ledger_item_args *a,
                      struct tt_error *err) {
  it->now = tt_orm_now_ns(it->ctx.orm);
  it->upd = a->upd;
  it->item = a->item;
  tt_orm_update_init(&a->upd);
  tt_av_null(&a->item);
  if (it->kind == TT_ORM_OP_UPDATE)
    return tt_orm_update_lifecycle(it->ctx.model, it->now, &it->upd, err);
  return tt_orm_item_finish(it->ctx.model, &it->item, a->n, it->now, 0, NULL, err);
}

void ledger_item(struct tt_ledger_op *op, struct ledger_item_args *a, ledger_next_fn next) {
  struct ledger_step *s = a->oom ? NULL : step_new(op, a->model, next);
  if (s == NULL) {
    if (a->oom)
      ledger_failf(op, TT_ERR_INTERNAL, NULL, "out of memory");
    args_free(a);
    return;
  }
  struct tt_orm_item_op *it = &s->u.item;
  it->condition = a->cond; /* the op's from here on */
  a->cond = NULL;
  it->kind = a->kind;
  it->upsert = a->upsert;
  it->consistent = a->consistent;
  it->expected.present = a->has_expected;
  it->expected.version = a->expected;
  if (a->kind != TT_ORM_OP_CREATE) {
    if (step_key(s, a->sk) != 0) {
      /* Nothing started: finish the ORM context so the model ref drops. */
      struct tt_error e;
      tt_error_set(&e, TT_ERR_INTERNAL, NULL, "out of memory");
      tt_orm_fail(&s->result, &e);
      tt_cond_free(it->condition);
      it->condition = NULL;
      args_free(a);
      tt_orm_ctx_finish(&s->u.ctx);
      return;
    }
    it->item_key = &s->key;
  }
  struct tt_error e;
  bool typed = a->kind == TT_ORM_OP_CREATE || a->kind == TT_ORM_OP_UPDATE;
  if (typed && step_input(it, a, &e) != 0) {
    if (tt_orm_item_fail_input(it, &e) != 0)
      step_done(&s->u.ctx);
    return;
  }
  args_free(a); /* a GET or DELETE has no input */
  if (tt_orm_item_start(it) != 0)
    step_done(&s->u.ctx); /* it finished inside its start: go on now */
}

void ledger_get(struct tt_ledger_op *op, const char *model, const char *sk, ledger_next_fn next) {
  struct ledger_item_args a = {.kind = TT_ORM_OP_GET, .model = model, .sk = sk,
                               .consistent = true, .oom = !sk};
  ledger_item(op, &a, next);
}

void ledger_query(struct tt_ledger_op *op, const char *model, struct tt_orm_query_request *rq,
                  ledger_next_fn next) {
  struct ledger_step *s = step_new(op, model, next);
  if (s == NULL) {
    tt_orm_query_request_clear(rq);
    return;
  }
  s->u.query.rq = *rq;
  if (tt_orm_query_start(&s->u.query) != 0)
    step_done(&s->u.ctx);
}

/* Answers the table (201 when created), or 204 after a delete. */
static void table_done(struct tt_ledger_op *op, struct tt_orm_result *r) {
  if (!ledger_ok(op, r))
    return;
  if (r->answer != TT_ORM_ANSWER_TABLE)
    ledger_answer(op, 204, NULL);
  else
    ledger_answer(op, r->table.created ? 201 : 200, tt_orm_table_to_json(&r->table));
}

/* Starts PUT or DELETE .../table for the jobs table (the JobMeta model's).
 * The model routes refuse the reserved table, so the ledger deletes its own
 * (still only with --allow-table-delete: the ORM checks). */
static void ledger_table(struct tt_ledger_op *op) {
  int (*start)(struct tt_orm_ctx *ctx) =
      op->kind == TT_LEDGER_TABLE_ENSURE ? tt_orm_table_ensure : tt_orm_table_delete;
  struct ledger_step *s = step_new(op, TT_LEDGER_MODEL_META, table_done);
  if (s && start(&s->u.ctx) != 0)
    step_done(&s->u.ctx);
}

/* ---- jobs ---------------------------------------------------------------- */

const char *ledger_fmt(struct tt_ledger_op *op, const char *fmt, ...) {
  va_list ap, aq;
  va_start(ap, fmt);
  va_copy(aq, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  char *out = n < 0 ? NULL : tt_arena_alloc(op->arena, (size_t)n + 1);
  if (out)
    vsnprintf(out, (size_t)n + 1, fmt, aq);
  va_end(aq);
  va_end(ap);
  return out;
}

/* Whether s (len bytes; NULL: absent) names a job status (a record's when
 * `record`). Returns 0, or -1 with a ValidationError naming `field`. */
static int status_check(const char *s, size_t len, const char *field, bool record,
                        struct tt_error *err) {
  if (s && strlen(s) == len &&
      (record ? tt_ledger_record_status_valid(s) : tt_ledger_job_status_valid(s)))
    return 0;
  return tt_error_set(err, TT_ERR_VALIDATION, field, "%s must be one of %s", field,
                      record ? "PENDING, PROCESSING, SUCCEEDED, FAILED, SKIPPED"
                             : "PENDING, RUNNING, SUCCEEDED, FAILED, CANCELED");
}

/* Answers with the item of a successful result, without its storage keys. */
static void answer_item(struct tt_ledger_op *op, struct tt_orm_result *r, unsigned status) {
  json_t *item = r->answer == TT_ORM_ANSWER_ITEM ? ledger_public(r, &r->item) : NULL;
  if (item == NULL) {
    ledger_failf(op, TT_ERR_INTERNAL, NULL, "the stored item could not be read back");
    return;
  }
  ledger_answer(op, status, item);
}

static void job_created(struct tt_ledger_op *op, struct tt_orm_result *r) {
  if (ledger_ok_or(op, r, TT_ERR_CONDITION_FAILED, TT_ERR_ALREADY_EXISTS, "job_id",
                   "a job with this job_id already exists"))
    answer_item(op, r, 201);
}

static void job_create(struct tt_ledger_op *op) {
  static const char *const members[] = {"job_id", "tenant_id", "status", "ttl_seconds", NULL};
  struct tt_error err;
  const char *job_id = NULL, *tenant = NULL, *status = "PENDING";
  size_t id_len = 0, tenant_len = 0, status_len = strlen(status);
  int64_t ttl_seconds = 0;
  int has_id, has_ttl;
  if (ledger_body_members(op->body, members, &err) != 0 ||
      (has_id = ledger_body_str(op->body, "job_id", NULL, &job_id, &id_len, &err)) < 0 ||
      (has_id && tt_ledger_check_id(job_id, id_len, "job_id", &err) != 0) ||
      ledger_body_str(op->body, "tenant_id", "the tenant the job belongs to", &tenant,
                      &tenant_len, &err) < 0 ||
      tt_ledger_check_id(tenant, tenant_len, "tenant_id", &err) != 0 ||
      ledger_body_str(op->body, "status", NULL, &status, &status_len, &err) < 0 ||
      (has_ttl = ledger_body_int(op->body, "ttl_seconds", 1, TT_LEDGER_MAX_TTL_SECONDS, NULL,
                                 &ttl_seconds, &err)) < 0 ||
      status_check(status, status_len, "status", false, &err) != 0) {
    ledger_fail(op, &err, NULL);
    return;
  }
  char uuid[37];
  if (!has_id) {
    if (tt_ledger_uuid4(uuid) != 0) {
      ledger_failf(op, TT_ERR_INTERNAL, NULL, "the random number generator failed");
      return;
    }
    job_id = uuid;
  }
  op->w.pk = ledger_fmt(op, "JOB#%s", job_id);
  struct ledger_item_args a = {.kind = TT_ORM_OP_CREATE, .model = TT_LEDGER_MODEL_META,
                               .oom = !op->w.pk};
  enum tt_expr_update_op set = TT_EXPR_UPD_SET;
  ledger_set(&a, set, "pk", op->w.pk ? op->w.pk : "", 0);
  ledger_set(&a, set, "sk", "META", 0);
  ledger_set(&a, set, "job_id", job_id, 0);
  ledger_set(&a, set, "tenant_id", tenant, 0);
  ledger_set(&a, set, "status", status, 0);
  ledger_set(&a, set, "version", NULL, 1);
  if (has_ttl)
    ledger_set(&a, set, "ttl", NULL, op->w.now_s + ttl_seconds);
  ledger_item(op, &a, job_created);
}

static void job_got(struct tt_ledger_op *op, struct tt_orm_result *r) {
  if (ledger_ok_or(op, r, TT_ERR_ITEM_NOT_FOUND, TT_ERR_JOB_NOT_FOUND, "job_id",
                   "no job has this job_id"))
    answer_item(op, r, 200);
}

/* A failed transition condition: read the job and say which rule failed. */
static void transition_classify(struct tt_ledger_op *op, struct tt_orm_result *r) {
  if (r->status != 0) {
    job_got(op, r);
    return;
  }
  const char *status = ledger_result_str(r, "status");
  int64_t version = -1;
  ledger_result_int(r, "version", &version);
  struct tt_error e;
  json_t *d;
  if (status && tt_ledger_job_status_terminal(status)) {
    d = json_pack("{s:s}", "status", status);
    tt_error_set(&e, TT_ERR_INVALID_TRANSITION, "to",
                 "the job is in a terminal status (SUCCEEDED, FAILED or CANCELED) and cannot "
                 "move; see details.status");
  } else if (version != op->w.expected || !op->w.from || !status ||
             strcmp(status, op->w.from) == 0) {
    d = json_pack("{s:I,s:I}", "version", (json_int_t)version, "expected_version",
                  (json_int_t)op->w.expected);
    tt_error_set(&e, TT_ERR_VERSION_CONFLICT, "expected_version",
                 "the job's version is not the expected one; read it again and retry");
  } else {
    d = json_pack("{s:s}", "status", status);
    tt_error_set(&e, TT_ERR_INVALID_TRANSITION, "from",
                 "the job is not in the status named by from; see details.status");
  }
  ledger_fail(op, &e, d);
}

static void transitioned(struct tt_ledger_op *op, struct tt_orm_result *r) {
  if (ledger_failed_with(r, TT_ERR_CONDITION_FAILED))
    ledger_get(op, TT_LEDGER_MODEL_META, "META", transition_classify);
  else
    job_got(op, r);
}

static void job_transition(struct tt_ledger_op *op) {
  static const char *const members[] = {"expected_version", "to", "from", NULL};
  struct tt_error err;
  const char *to = NULL, *from = NULL;
  size_t to_len = 0, from_len = 0;
  int has_from;
  int has_exp;
  if (ledger_body_members(op->body, members, &err) != 0 ||
      (has_exp = ledger_body_int(op->body, "expected_version", 0, INT64_C(9007199254740991),
                                 NULL, &op->w.expected, &err)) < 0 ||
      ledger_body_str(op->body, "to", NULL, &to, &to_len, &err) < 0 ||
      (has_from = ledger_body_str(op->body, "from", NULL, &from, &from_len, &err)) < 0 ||
      (!has_exp && tt_error_set(&err, TT_ERR_VALIDATION, "expected_version",
                                "expected_version is required: the version of the job you "
                                "read")) ||
      status_check(to, to_len, "to", false, &err) != 0 ||
      (has_from && status_check(from, from_len, "from", false, &err) != 0)) {
    ledger_fail(op, &err, NULL);
    return;
  }
  /* Known without reading: nothing leaves a terminal status. */
  if (has_from && tt_ledger_job_status_terminal(from)) {
    ledger_failf(op, TT_ERR_INVALID_TRANSITION, "from",
                 "a job in a terminal status (SUCCEEDED, FAILED or CANCELED) cannot move");
    return;
  }
  op->w.to = to;
  op->w.from = has_from ? from : NULL;
  /* Otherwise the condition says it: version, from, and not terminal. */
  static const char *const live[] = {"PENDING", "RUNNING"};
  struct tt_cond *cond = ledger_join(
      TT_COND_AND, has_from ? 3 : 2,
      (struct tt_cond *[]){ledger_cmp_int("version", TT_COND_EQ, op->w.expected),
                           ledger_cmp("status", TT_COND_IN, 2, live),
                           has_from ? ledger_cmp("status", TT_COND_EQ, 1, &op->w.from) : NULL});
  struct ledger_item_args a = {.kind = TT_ORM_OP_UPDATE, .model = TT_LEDGER_MODEL_META,
                               .sk = "META", .cond = cond, .oom = !cond};
  ledger_set(&a, TT_EXPR_UPD_SET, "status", to, 0);
  ledger_set(&a, TT_EXPR_UPD_ADD, "version", NULL, 1);
  ledger_item(op, &a, transitioned);
}

/* ---- records --------------------------------------------------------------- */

static void record_written(struct tt_ledger_op *op, struct tt_orm_result *r) {
  if (ledger_ok(op, r))
    answer_item(op, r, 200);
}

static void record_got(struct tt_ledger_op *op, struct tt_orm_result *r) {
  if (ledger_ok_or(op, r, TT_ERR_ITEM_NOT_FOUND, TT_ERR_ITEM_NOT_FOUND, "record_id",
                   "no record has this record_id in this job"))
    answer_item(op, r, 200);
}

static void record_put(struct tt_ledger_op *op) {
  static const char *const members[] = {"status", "error", "ttl_seconds", NULL};
  struct tt_error err;
  const char *status = NULL;
  size_t status_len = 0;
  int64_t ttl_seconds = 0;
  int has_ttl;
  json_t *error = NULL;
  if (ledger_body_members(op->body, members, &err) != 0 ||
      ledger_body_str(op->body, "status", NULL, &status, &status_len, &err) < 0 ||
      (has_ttl = ledger_body_int(op->body, "ttl_seconds", 1, TT_LEDGER_MAX_TTL_SECONDS, NULL,
                                 &ttl_seconds, &err)) < 0 ||
      ledger_sanitize_envelope(json_object_get(op->body, "error"), &error, &err) != 0 ||
      status_check(status, status_len, "status", true, &err) != 0 ||
      /* the stored error's typed value, as the update's "set.error" */
      (error && tt_logical_to_av(error, TT_AV_M, 0, "set.error", &op->w.error, &err) != 0)) {
    json_decref(error);
    ledger_fail(op, &err, NULL);
    return;
  }
  json_decref(error);
  /* Unconditional upsert: the identity is written once, the status and the
   * (sanitized) error every time; no error removes a stored one. */
  struct ledger_item_args a = {.kind = TT_ORM_OP_UPDATE, .model = TT_LEDGER_MODEL_RECORD,
                               .sk = op->w.sk, .upsert = true};
  ledger_set(&a, TT_EXPR_UPD_SET, "status", status, 0);
  ledger_set_av(&a, op->w.error.type == TT_AV_M ? TT_EXPR_UPD_SET : TT_EXPR_UPD_REMOVE,
                "error", &op->w.error);
  if (has_ttl)
    ledger_set(&a, TT_EXPR_UPD_SET, "ttl", NULL, op->w.now_s + ttl_seconds);
  ledger_set(&a, TT_EXPR_UPD_SET_IF_NOT_EXISTS, "job_id", op->job_id, 0);
  ledger_set(&a, TT_EXPR_UPD_SET_IF_NOT_EXISTS, "record_id", op->record_id, 0);
  ledger_item(op, &a, record_written);
}

/* ---- lists --------------------------------------------------------------- */

/* Answers a query step's page as {"jobs"|"records": [items], "cursor"}. */
static void answer_list(struct tt_ledger_op *op, struct tt_orm_result *r) {
  const char *name = op->kind == TT_LEDGER_JOB_LIST ? "jobs" : "records";
  if (ledger_page(op, r) == NULL)
    return;
  json_t *items = ledger_page_json(r);
  json_t *cursor = r->page.cursor ? ledger_str(r->page.cursor) : json_null();
  json_t *out = items && cursor ? json_pack("{s:O,s:O}", name, items, "cursor", cursor) : NULL;
  json_decref(items);
  json_decref(cursor);
  ledger_answer(op, 200, out);
}

/* The common members of a list query: limit, order, cursor. Returns 0, or
 * -1 after answering. */
static int list_request(struct tt_ledger_op *op, struct tt_orm_query_request *rq) {
  const struct tt_ledger_list_args *l = &op->list;
  long long limit = TT_LEDGER_DEFAULT_LIMIT;
  if (l->limit) {
    char *end = NULL;
    errno = 0;
    limit = strtoll(l->limit, &end, 10);
    if (errno || end == l->limit || *end || l->limit[0] == '-' || l->limit[0] == '+' ||
        limit < 1 || limit > TT_LEDGER_MAX_LIMIT) {
      ledger_failf(op, TT_ERR_VALIDATION, "limit", "limit must be a whole number from 1 to %d",
                   TT_LEDGER_MAX_LIMIT);
      return -1;
    }
  }
  if (l->order && strcmp(l->order, "asc") != 0 && strcmp(l->order, "desc") != 0) {
    ledger_failf(op, TT_ERR_VALIDATION, "order", "order must be asc or desc");
    return -1;
  }
  /* A cursor that is not UTF-8 text is no cursor: the list starts over. */
  size_t n = l->cursor ? strlen(l->cursor) : 0;
  *rq = (struct tt_orm_query_request){
      .has_limit = true,
      .limit = (size_t)limit,
      .order = l->order == NULL ? TT_ORDER_NONE : l->order[0] == 'a' ? TT_ORDER_ASC : TT_ORDER_DESC,
      .cursor = n > 0 && tt_utf8_valid(l->cursor, n) ? l->cursor : NULL,
      .cursor_len = n};
  return 0;
}

static struct tt_cond *eq(const char *attr, const char *value) {
  return ledger_cmp(attr, TT_COND_EQ, 1, &value);
}

/* Lists jobs through an index (by tenant_id, else by status) or the
 * records of a job. */
static void list(struct tt_ledger_op *op) {
  const struct tt_ledger_list_args *l = &op->list;
  bool jobs = op->kind == TT_LEDGER_JOB_LIST;
  const char *tenant = jobs ? l->tenant_id : NULL;
  struct tt_error err;
  if ((tenant && tt_ledger_check_id(tenant, strlen(tenant), "tenant_id", &err) != 0) ||
      (l->status && status_check(l->status, strlen(l->status), "status", !jobs, &err) != 0)) {
    ledger_fail(op, &err, NULL);
    return;
  }
  if (jobs && !tenant && !l->status) {
    ledger_failf(op, TT_ERR_VALIDATION, "status",
                 "give status or tenant_id: jobs are listed through their indexes");
    return;
  }
  struct tt_orm_query_request rq;
  if (list_request(op, &rq) != 0)
    return;
  int oom;
  if (jobs) {
    /* Records and idempotency requests carry status and created_at too, so
     * they share the status index: keep only the job items. */
    rq.index = tenant ? "tenant-created-index" : "status-created-index";
    bool both = tenant && l->status;
    rq.filter = ledger_join(TT_COND_AND, both ? 2 : 1,
                            (struct tt_cond *[]){eq("sk", "META"),
                                                 both ? eq("status", l->status) : NULL});
    oom = rq.filter == NULL || ledger_key(&rq.key, tenant ? "tenant_id" : "status",
                                          tenant ? tenant : l->status, NULL, 0, NULL) != 0;
  } else {
    oom = (l->status && (rq.filter = eq("status", l->status)) == NULL) ||
          ledger_key(&rq.key, "pk", op->w.pk, "sk", TT_COND_BEGINS_WITH, "REC#") != 0;
  }
  if (oom) {
    tt_orm_query_request_clear(&rq);
    ledger_failf(op, TT_ERR_INTERNAL, NULL, "out of memory");
    return;
  }
  ledger_query(op, jobs ? TT_LEDGER_MODEL_META : TT_LEDGER_MODEL_RECORD, &rq, answer_list);
}

/* ---- dispatch ------------------------------------------------------------ */

static void job_get(struct tt_ledger_op *op) {
  ledger_get(op, TT_LEDGER_MODEL_META, "META", job_got);
}

static void record_get(struct tt_ledger_op *op) {
  ledger_get(op, TT_LEDGER_MODEL_RECORD, op->w.sk, record_got);
}

/* Each kind's name in logs, its start, and whether its path names a job
 * (op->w.pk is JOB#<job_id>). */
static const struct {
  const char *name;
  void (*start)(struct tt_ledger_op *op);
  bool job;
} kinds[] = {
    [TT_LEDGER_TABLE_ENSURE] = {"table.ensure", ledger_table, false},
    [TT_LEDGER_TABLE_DELETE] = {"table.delete", ledger_table, false},
    [TT_LEDGER_JOB_CREATE] = {"job.create", job_create, false},
    [TT_LEDGER_JOB_GET] = {"job.get", job_get, true},
    [TT_LEDGER_JOB_LIST] = {"job.list", list, false},
    [TT_LEDGER_JOB_TRANSITION] = {"job.transition", job_transition, true},
    [TT_LEDGER_RECORD_PUT] = {"record.put", record_put, true},
    [TT_LEDGER_RECORD_GET] = {"record.get", record_get, true},
    [TT_LEDGER_RECORD_LIST] = {"record.list", list, true},
    [TT_LEDGER_LEASE_ACQUIRE] = {"lease.acquire", ledger_lease_start, true},
    [TT_LEDGER_LEASE_REFRESH] = {"lease.refresh", ledger_lease_start, true},
    [TT_LEDGER_LEASE_RELEASE] = {"lease.release", ledger_lease_start, true},
    [TT_LEDGER_REQUEST_CREATE] = {"request.create", ledger_request_start, true},
    [TT_LEDGER_REQUEST_COMPLETE] = {"request.complete", ledger_request_start, true},
    [TT_LEDGER_SEM_ACQUIRE] = {"semaphore.acquire", ledger_semaphore_start, false},
    [TT_LEDGER_SEM_REFRESH] = {"semaphore.refresh", ledger_semaphore_start, false},
    [TT_LEDGER_SEM_RELEASE] = {"semaphore.release", ledger_semaphore_start, false},
    [TT_LEDGER_SEM_INSPECT] = {"semaphore.inspect", ledger_semaphore_start, false},
};

static bool known(enum tt_ledger_kind kind) {
  return (size_t)kind < sizeof(kinds) / sizeof(kinds[0]) && kinds[kind].start;
}

static const char *kind_name(enum tt_ledger_kind kind) {
  return known(kind) ? kinds[kind].name : "unknown";
}

static void start_kind(struct tt_ledger_op *op);

/* prefix + the path's id (checked, named `field`) in the op's arena; NULL
 * after answering. */
static const char *path_key(struct tt_ledger_op *op, const char *prefix, const char *id,
                            const char *field) {
  struct tt_error err;
  const char *out = NULL;
  if (tt_ledger_check_id(id, id ? strlen(id) : 0, field, &err) != 0)
    ledger_fail(op, &err, NULL);
  else if ((out = ledger_fmt(op, "%s%s", prefix, id)) == NULL)
    ledger_failf(op, TT_ERR_INTERNAL, NULL, "out of memory");
  return out;
}

int tt_ledger_start(struct tt_ledger_op *op) {
  memset(&op->w, 0, sizeof(op->w));
  op->w.starting = true;
  start_kind(op);
  op->w.starting = false;
  return op->w.finished ? -1 : 0;
}

static void start_kind(struct tt_ledger_op *op) {
  op->w.now_ns = tt_orm_now_ns(op->orm);
  op->w.now_s = op->w.now_ns / 1000000000;
  if ((!known(op->kind) || kinds[op->kind].job) &&
      (op->w.pk = path_key(op, "JOB#", op->job_id, "job_id")) == NULL)
    return;
  bool record = op->kind == TT_LEDGER_RECORD_PUT || op->kind == TT_LEDGER_RECORD_GET;
  bool request = op->kind == TT_LEDGER_REQUEST_CREATE || op->kind == TT_LEDGER_REQUEST_COMPLETE;
  if ((record && (op->w.sk = path_key(op, "REC#", op->record_id, "record_id")) == NULL) ||
      (request && (op->w.sk = path_key(op, "REQ#", op->key, "key")) == NULL))
    return;
  if (known(op->kind))
    kinds[op->kind].start(op);
  else
    ledger_failf(op, TT_ERR_INTERNAL, NULL, "unknown ledger operation");
}
