/* SPDX-License-Identifier: Apache-2.0 */
/* orm.h -- model operations over the backend port, as a typed library: what
 * the HTTP handlers and the ledger call. Every operation runs as operations
 * of the caller's join, writes its outcome into a struct tt_orm_result (a
 * typed item or page, a transaction's or a batch's typed answer in its op,
 * or the rendered body of tables; or an error), and calls back once. */
#ifndef TT_ORM_ORM_H
#define TT_ORM_ORM_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "client/client.h"
#include "client/join.h"
#include "expr/build.h"
#include "model/registry.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/error.h"
#include "value/av.h"

/* Shared by all requests; borrows the registry and the client. */
struct tt_orm {
  struct tt_model_registry *models;
  struct tt_client *client;
  /* Encrypted attributes (orm/crypt.h): the KMS client and the key that
   * GenerateDataKey uses, borrowed; NULL when none is configured, and then
   * every item operation on a model with an encrypted attribute is refused
   * (EncryptionNotConfigured: fail closed). */
  struct tt_client *kms;
  const char *kms_key_id;
  bool allow_table_delete;
  bool auto_create_tables; /* memory backend: a model's table exists once it loads */
  unsigned batch_concurrency; /* parallel chunks per batch call (--batch-concurrency) */
  /* Bytes of items one query or scan answer holds before it ends early with
   * a cursor (--max-response-bytes); 0 is the default, 4 MiB. */
  size_t max_response_bytes;
  /* Wall clock in nanoseconds since the epoch; injectable for tests. */
  int64_t (*now_ns)(void *arg);
  void *clock_arg;
  /* Client tokens of transactions (orm/tokens.h): owned, created on first
   * use, released by tt_orm_cleanup. token_limit 0 is the default bound. */
  struct tt_orm_tokens *tokens;
  size_t token_limit;
};

/* What a successful operation hands back (tt_orm_result.answer). */
enum tt_orm_answer {
  TT_ORM_ANSWER_NONE = 0, /* done, nothing to hand back (a delete; a transaction's
                           * answer is in its op, orm/txn.h) */
  TT_ORM_ANSWER_ITEM,     /* typed: `item` of `model`, `created` (items.h) */
  TT_ORM_ANSWER_PAGE,     /* typed: `page` of `model`'s items (query.h) */
  TT_ORM_ANSWER_BATCH,    /* typed: a batch's answer is in its op (batch.h); `model` is
                           * the batch's */
  TT_ORM_ANSWER_TABLE     /* typed: `table`, a table's description */
};

/* One index of a described table. */
struct tt_orm_table_index {
  const char *name;
  bool global;        /* a GSI (else an LSI) */
  const char *status; /* IndexStatus; "ACTIVE" when the backend gave none */
};

/* What GET and PUT .../table answer (TT_ORM_ANSWER_TABLE): the table as
 * DescribeTable gave it and, for an ensure, what that call changed. The
 * strings and arrays live in the operation's arena (none points into the
 * model, which the operation no longer holds once it finished). */
struct tt_orm_table_desc {
  const char *table;
  const char *status; /* TableStatus; "UNKNOWN" when the backend gave none */
  int64_t item_count;
  const struct tt_orm_table_index *indexes;
  size_t n_indexes;
  bool ensured;       /* an ensure: the members below are meaningful */
  bool created;       /* this call created the table */
  const char *const *gsis_created; /* GSIs this call created, in order */
  size_t n_gsis_created;
  bool ttl_enabled;            /* this call turned TTL on */
  const char *ttl_attribute;   /* TTL is on this attribute; NULL: not known to be */
};

/* A page of a query or scan: its items in answer order (parallel scan
 * segments one after another), the counts and where to go on. */
struct tt_orm_page {
  struct tt_av *items; /* n_items stored items (M), encrypted attributes opened;
                        * none when the query's sink took them (query.h) */
  size_t n_items;
  bool count_only;     /* a count: no items, `count` is what was counted */
  uint64_t count;      /* items counted (count_only) or n_items */
  uint64_t scanned;    /* items the backend read (DynamoDB's ScannedCount) */
  char *cursor;        /* the DMS cursor to read on from (malloc'd); NULL at the end */
};

/* What an operation produced: on failure (`status` -1) `err` and
 * `details` (owned, may be NULL); on success what `answer` says. */
struct tt_orm_result {
  int status; /* 0 or -1 */
  enum tt_orm_answer answer;
  struct tt_error err;
  json_t *details;
  uint32_t retry_after_s;
  /* The model of `item` or `page` (referenced). TT_ORM_ANSWER_ITEM: the
   * item as stored (an M, encrypted attributes opened unless the operation
   * asked for them sealed), and whether the write created it (false: it
   * existed -- replaced, updated or read); its version is
   * tt_orm_item_version's. TT_ORM_ANSWER_PAGE: `page`. */
  struct tt_model *model;
  struct tt_av item;
  bool created;
  struct tt_orm_page page;
  struct tt_orm_table_desc table;
};

/* Releases what a result owns. */
void tt_orm_result_free(struct tt_orm_result *r);

/* Maps a backend failure onto the API's error codes (the one place that
 * does): ConditionalCheckFailed -> ConditionFailed, ResourceNotFound ->
 * TableNotFound (with a hint naming `model`), throttling -> Throttled,
 * transient -> BackendUnavailable, cancellation -> BackendTimeout,
 * ValidationException -> ValidationError, ... Always returns -1. */
int tt_orm_fail_backend(struct tt_orm_result *r, const struct tt_backend_error *e,
                        const char *model);

/* Sets a failure from an error value. Returns -1. */
int tt_orm_fail(struct tt_orm_result *r, const struct tt_error *err);

/* Sets the VersionConflict of a write that expected version `expected`,
 * details naming it and the item's version `have` (NULL: none). Returns -1. */
int tt_orm_fail_version(struct tt_orm_result *r, int64_t expected, const int64_t *have);

/* Sets an INTERNAL "out of memory" error. Returns -1. */
int tt_orm_oom(struct tt_error *err);

/* Puts a copy of v as member (name, len) of the M *map. Returns 0, or -1
 * when out of memory (map unchanged). */
int tt_orm_map_put_copy(struct tt_av *map, const char *name, size_t len, const struct tt_av *v);

/* Current time from the injectable clock. */
int64_t tt_orm_now_ns(const struct tt_orm *orm);

struct tt_orm_ctx;

/* Completion of an operation: runs once, never inside the function that
 * started it, with ctx->result filled; ctx->arg is the caller's
 * (docs/internals/completions.md). */
typedef void (*tt_orm_done_cb)(struct tt_orm_ctx *ctx);

/* Common state of a running operation; embedded first in each op. */
struct tt_orm_ctx {
  struct tt_orm *orm;
  struct tt_join *join;
  struct tt_arena *arena;
  const char *request_id;
  struct tt_model *model; /* referenced for the operation's life */
  struct tt_orm_result *result;
  tt_orm_done_cb done;
  void *arg;
  /* The operation's one backend call: steps run one after another, and a
   * step's completion starts the next on the same struct
   * (docs/internals/completions.md). */
  struct tt_client_call call;
  unsigned step;
  void *state; /* per-operation use, in the arena */
  /* Inside the operation's start (a depth: a start may start a nested
   * one on the same ctx); finishing there only marks it `settled`. */
  unsigned starting;
  bool settled;
};

/* Every public start of an operation (tt_orm_item_start, query, batch,
 * transactions, tables) keeps the contract through this: it runs `run`
 * (the operation's work; its return value is not used) and returns 0
 * (done runs later, exactly once) or -1 (the operation finished inside its
 * start: the result is filled and done never runs). A start nested in
 * another on the same ctx returns 0: the outer one answers. */
int tt_orm_ctx_start(struct tt_orm_ctx *ctx, int (*run)(struct tt_orm_ctx *ctx));

/* Refuses an operation at its start: the result gets `err`, the model
 * reference is dropped and done never runs. Returns -1, what the start
 * returns then. */
int tt_orm_ctx_refuse(struct tt_orm_ctx *ctx, const struct tt_error *err);

/* Starts the next backend call of an operation, a typed table operation
 * (`table` borrowed until `cb` ran), on ctx->call (its arg is ctx), as
 * tt_client_start does: 0, and `cb` runs once, never inside
 * this function; or -1, and `cb` never runs -- ctx->call.bc.status is -1
 * and ctx->call.bc.error says why, for the caller to finish with. */
int tt_orm_call_table(struct tt_orm_ctx *ctx, enum tt_ddb_op op,
                      const struct tt_ddb_table_request *table, tt_client_done_cb cb);

/* The same for a typed operation; `item` is borrowed until `cb` ran. */
int tt_orm_call_item(struct tt_orm_ctx *ctx, enum tt_ddb_op op,
                     const struct tt_ddb_item_request *item, tt_client_done_cb cb);

/* ---- expressions (result.c) ------------------------------------------------ */

/* Moves an expression builder's ExpressionAttributeNames/Values into a
 * typed request: the maps move into *names and *values
 * (the caller's, freed by it) and *names_ref / *values_ref point at them,
 * or are NULL when a map is empty. Returns 0 or -1. */
int tt_orm_take_placeholders(struct tt_expr_builder *b, struct tt_av *names, struct tt_av *values,
                             const struct tt_av **names_ref, const struct tt_av **values_ref,
                             struct tt_error *err);

/* Checks that every path of a typed `select` starts with a declared
 * attribute, unless the model takes additional attributes. Returns 0 or -1
 * with a ValidationError naming `field` and the attribute ("select.x"). */
int tt_orm_check_select(const struct tt_model *m, const struct tt_select *select,
                        const char *field, struct tt_error *err);

/* A request body's `select` member v (NULL or null: none, out->n 0) typed:
 * a non-empty list of strings that tt_orm_check_select accepts, element by
 * element. The list of paths is allocated in `a`; the paths are borrowed
 * from v. Returns 0 or -1 with a ValidationError naming `field` ("select",
 * "select[2]", "select.x"). */
int tt_orm_select_from_json(const struct tt_model *m, const json_t *v, const char *field,
                            struct tt_arena *a, struct tt_select *out, struct tt_error *err);

/* ---- tables (table.c) ---------------------------------------------------- */

/* Each returns 0 (done runs later) or -1 (it finished inside the call:
 * result filled, done never runs), as every operation start does. */

/* Builds the CreateTable request for a model's table (keys, every index of
 * every model that shares the table, pay-per-request). `m` need not be
 * registered: it then stands in for the registered model of its name (PUT
 * /v1/models ensures a table before it registers). Everything it points to
 * is allocated in `a`. Returns 0, or -1 (out of memory). */
int tt_orm_create_table_request(struct tt_arena *a, const struct tt_model_registry *models,
                                const struct tt_model *m, struct tt_ddb_table_request *out);

/* PUT /v1/models/{m}/table: DescribeTable, CreateTable when absent, wait
 * for ACTIVE; when the model has a ttl attribute, DescribeTimeToLive and
 * UpdateTimeToLive unless TTL is already on that attribute (also on a
 * table that existed: TableTheory creates tables without TTL). 201 when
 * created, 200 when it existed; the body describes the table plus
 * "changes" (what this call did) and "ttl_attribute". TTL on another
 * attribute is 409 AlreadyExists (details.ttl_attribute); a peer without
 * the TTL operations is logged and answered without "ttl_attribute". */
int tt_orm_table_ensure(struct tt_orm_ctx *ctx);

/* A table's description as JSON: {"table","status","item_count","indexes":
 * [{"name","kind","status"}]} and, for an ensure, "changes" (what the call
 * did: "table_created", "gsi_created:<name>", "ttl_enabled", so a caller can
 * tell a table made ready from one that already was) and "ttl_attribute".
 * New reference; NULL when memory ran out. */
json_t *tt_orm_table_to_json(const struct tt_orm_table_desc *d);

/* GET /v1/models/{m}/table: {"table","status","item_count","indexes"}. */
int tt_orm_table_describe(struct tt_orm_ctx *ctx);

/* DELETE /v1/models/{m}/table (204); 403 unless allowed. */
int tt_orm_table_delete(struct tt_orm_ctx *ctx);

/* Prepares a context (takes a model reference). */
void tt_orm_ctx_init(struct tt_orm_ctx *ctx, struct tt_orm *orm, struct tt_join *join,
                     struct tt_arena *arena, const char *request_id,
                     const struct tt_model *model, struct tt_orm_result *result,
                     tt_orm_done_cb done, void *arg);

/* Finishes: drops the model reference and calls done (unless inside the
 * start: see tt_orm_ctx_start). */
void tt_orm_ctx_finish(struct tt_orm_ctx *ctx);

#endif
