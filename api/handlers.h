/* SPDX-License-Identifier: Apache-2.0 */
/* handlers.h -- the route table and the handlers it points to. */
#ifndef TT_API_HANDLERS_H
#define TT_API_HANDLERS_H

#include <stddef.h>

#include "api/request.h"
#include "api/router.h"
#include "orm/orm.h"

/* The API's route table, in match order. */
extern const struct tt_route tt_api_routes[];
extern const size_t tt_api_nroutes;

/* system.c */
void tt_handle_healthz(struct tt_request *req);
void tt_handle_readyz(struct tt_request *req);
void tt_handle_metrics(struct tt_request *req);
void tt_handle_openapi(struct tt_request *req);

/* models.c */
void tt_handle_models_list(struct tt_request *req);
void tt_handle_model_get(struct tt_request *req);
void tt_handle_model_put(struct tt_request *req);
void tt_handle_table_put(struct tt_request *req);
void tt_handle_table_get(struct tt_request *req);
void tt_handle_table_delete(struct tt_request *req);

/* items.c */
void tt_handle_item_create(struct tt_request *req);
void tt_handle_item_put(struct tt_request *req);
void tt_handle_item_get(struct tt_request *req);
void tt_handle_item_patch(struct tt_request *req);
void tt_handle_item_delete(struct tt_request *req);

/* query.c */
void tt_handle_query(struct tt_request *req);
void tt_handle_scan(struct tt_request *req);

/* batch.c: POST /v1/models/{model}/batch-get and /batch-write. */
void tt_handle_batch_get(struct tt_request *req);
void tt_handle_batch_write(struct tt_request *req);

/* txn.c: POST /v1/transactions/write and /v1/transactions/get. */
void tt_handle_txn_write(struct tt_request *req);
void tt_handle_txn_get(struct tt_request *req);

/* jobs.c: the job ledger and its leased semaphores (docs/ledger.md); the
 * route's argument (TT_ROUTE_ARG) is the ledger operation (enum tt_ledger_kind). */
void tt_handle_ledger(struct tt_request *req);

#include "api/handlers_faults.h"
#include "api/test_clock.h"

/* orm_job.c: the plumbing every ORM-backed handler shares: the model named
 * by the path, and a job that runs one ORM operation for the request and
 * answers from its result once everything is joined. */
/* The model the path's {model} names; NULL after answering 404
 * ModelNotFound (or 400 for a malformed escape). Borrowed from the
 * registry: an operation takes its own reference (tt_orm_ctx_init). */
const struct tt_model *tt_api_path_model(struct tt_request *req);

/* How a job answers once joined: from the operation's result `r`; `op` is
 * what tt_api_orm_job returned. The job frees `r` afterwards. */
typedef void (*tt_api_orm_answer_fn)(struct tt_request *req, struct tt_orm_result *r, void *op);

/* Allocates, in the request arena, an ORM operation of `op_size` bytes whose
 * first member is a struct tt_orm_ctx, initializes that ctx for `model`
 * (may be NULL), and makes the request answer through `answer` from the
 * operation's result when joined. Steals `body` (may be NULL; released with
 * the job). Returns the operation, or NULL after answering 500 (body
 * released). The caller fills the operation's own fields and starts it. */
void *tt_api_orm_job(struct tt_request *req, size_t op_size, const struct tt_model *model,
                     json_t *body, tt_api_orm_answer_fn answer);

/* test_ops.c (only with --enable-fault-injection) */
void tt_handle_test_sleep(struct tt_request *req);

#endif
