/* SPDX-License-Identifier: Apache-2.0 */
/* harness.h -- what the ORM-level fuzz targets share: the example models
 * loaded once, a fresh backend per input (memory, or scripted responses),
 * and one ORM operation run on the loop to its answer with the invariants
 * every answer must keep. Aborts (so libFuzzer reports) on a violation. */
#ifndef TT_FUZZ_HARNESS_H
#define TT_FUZZ_HARNESS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "backend/backend.h"
#include "client/client.h"
#include "model/registry.h"
#include "ledger/ledger.h"
#include "orm/orm.h"

/* 2023-11-14T22:13:20Z: every clock of a fuzz run is fixed (deterministic). */
#define FZ_T0_NS (INT64_C(1700000000) * INT64_C(1000000000))

struct fz_env {
  uv_loop_t loop;
  struct tt_model_registry *models; /* examples/models, the ledger's, and Member */
  struct tt_backend *b;             /* the current input's backend */
  struct tt_client client;
  struct tt_orm orm;
};
extern struct fz_env FZ;

/* The models by index (stable order: name order of the registry), for
 * targets that pick one with an input byte. Borrowed. */
size_t fz_model_count(void);
const struct tt_model *fz_model(size_t i);

/* Loads the models and the loop once; later calls do nothing. */
void fz_init(void);

/* A fresh memory backend holding an empty table for every model (made
 * through the ORM's PUT .../table path). */
void fz_backend_memory(void);

/* The same with only the table called `only` (NULL: all of them). */
void fz_backend_memory_table(const char *only);

/* Makes `b` (a backend on FZ.loop; ownership passes) the current backend. */
void fz_backend_use(struct tt_backend *b);

/* Closes and frees the current backend (no call may be outstanding). */
void fz_backend_close(void);

/* One ORM operation in flight: its arena, join and result. */
struct fz_run {
  struct tt_arena arena;
  struct tt_join join;
  struct tt_orm_result res;
  struct tt_ledger_result lres; /* a ledger request's answer */
  bool ledger;
  struct tt_buf rendered;       /* a transaction's or a batch's body */
  int done;
  int joined;
  struct tt_orm_txn_op *txn; /* a transaction: its answer rendered at the end */
  struct tt_orm_batch_op *batch; /* a batch: the same */
};

/* Prepares r and initializes `ctx` (the first member of an ORM op) for
 * model `m` (may be NULL). */
void fz_run_begin(struct fz_run *r, struct tt_orm_ctx *ctx, const struct tt_model *m);

/* The same for a ledger request: prepares r and zeroes `op`, then sets what
 * ties op to r and FZ (orm, join, arena, request id, result, done). The
 * caller sets the request's own fields and calls fz_ledger_end. */
struct tt_ledger_op;
void fz_ledger_begin(struct fz_run *r, struct tt_ledger_op *op);

/* Starts the ledger request `op` and ends r as fz_run_end does. */
void fz_ledger_end(struct fz_run *r, struct tt_ledger_op *op);

/* Releases the join, runs the loop until everything is joined and checks
 * the answer: done ran exactly once, the join completed, a success carries
 * a 2xx status and a body that is JSON, a failure an error code, a message
 * and a 4xx/5xx status. Then frees the result and the arena. */
void fz_run_end(struct fz_run *r);

/* Parses `data` as a request body the way the server does
 * (tt_request_json_body with exact numbers). Returns a new object or NULL. */
json_t *fz_body(const char *data, size_t len);

/* Splits `data` at the first newline: the first line into line and line_len, the
 * rest into rest and rest_len. */
void fz_split_line(const char *data, size_t len, const char **line, size_t *line_len,
                   const char **rest, size_t *rest_len);

#endif

/* The request kinds fz_op runs, as the API's handlers start them. */
enum fz_op_kind {
  FZ_CREATE,
  FZ_PUT,
  FZ_GET,
  FZ_PATCH,
  FZ_DELETE,
  FZ_QUERY,
  FZ_SCAN,
  FZ_BATCH_GET,
  FZ_BATCH_WRITE,
  FZ_TXN_WRITE,
  FZ_TXN_GET,
  FZ_TABLE_ENSURE,
  FZ_TABLE_DESCRIBE,
  FZ__COUNT
};

/* Request options taken from one flags byte: 1 If-None-Match, 2 upsert,
 * 4 If-Match (version = flags >> 5), 8 consistent, 16 ?format=dynamodb. */
#define FZ_FLAG_IF_NONE_MATCH 1u
#define FZ_FLAG_UPSERT 2u
#define FZ_FLAG_IF_MATCH 4u
#define FZ_FLAG_CONSISTENT 8u
#define FZ_FLAG_RAW 16u

/* Runs one request of `kind` on model `m` to its checked answer, as the
 * handler does: `raw_key` is the still-encoded {key} path segment(s),
 * `body` the parsed body (borrowed; NULL for {}). `deadline_ns` bounds a
 * batch's retries of unprocessed work (CLOCK_MONOTONIC; 0 = none). */
void fz_op(enum fz_op_kind kind, const struct tt_model *m, unsigned flags, const char *raw_key,
           size_t raw_key_len, const json_t *body, uint64_t deadline_ns);

/* The op kind a seed byte names: c p g u d q s G W T t E D (create, put,
 * get, update, delete, query, scan, batch-get, batch-write, txn-write,
 * txn-get, table ensure, table describe), any other byte modulo the count. */
enum fz_op_kind fz_op_kind_of(uint8_t c);
