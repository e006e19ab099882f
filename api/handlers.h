/* SPDX-License-Identifier: Apache-2.0 */
/* handlers.h -- the route table and the handlers it points to. */
#ifndef TT_API_HANDLERS_H
#define TT_API_HANDLERS_H

#include <stddef.h>

#include "api/request.h"
#include "api/router.h"

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

/* test_ops.c (only with --enable-fault-injection) */
void tt_handle_test_sleep(struct tt_request *req);

#endif
