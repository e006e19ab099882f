/* SPDX-License-Identifier: Apache-2.0 */
/* handlers_jobs.h -- handlers of this feature (included by handlers.h). */
#ifndef TT_API_HANDLERS_JOBS_H
#define TT_API_HANDLERS_JOBS_H

struct tt_request;

/* jobs.c: the job ledger and its leased semaphores (docs/ledger.md); the
 * route's argument (TT_ROUTE_ARG) is the ledger operation (enum tt_ledger_kind). */
void tt_handle_ledger(struct tt_request *req);

#endif
