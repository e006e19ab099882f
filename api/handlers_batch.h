/* SPDX-License-Identifier: Apache-2.0 */
/* handlers_batch.h -- handlers of this feature (included by handlers.h). */
#ifndef TT_API_HANDLERS_BATCH_H
#define TT_API_HANDLERS_BATCH_H

struct tt_request;

/* batch.c: POST /v1/models/{model}/batch-get and /batch-write. */
void tt_handle_batch_get(struct tt_request *req);
void tt_handle_batch_write(struct tt_request *req);

/* txn.c: POST /v1/transactions/write and /v1/transactions/get. */
void tt_handle_txn_write(struct tt_request *req);
void tt_handle_txn_get(struct tt_request *req);

#endif
