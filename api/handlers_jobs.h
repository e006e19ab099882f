/* SPDX-License-Identifier: Apache-2.0 */
/* handlers_jobs.h -- handlers of this feature (included by handlers.h). */
#ifndef TT_API_HANDLERS_JOBS_H
#define TT_API_HANDLERS_JOBS_H

struct tt_request;

/* jobs.c: the job ledger (docs/ledger.md). */
void tt_handle_jobs_table_put(struct tt_request *req);
void tt_handle_jobs_table_delete(struct tt_request *req);
void tt_handle_job_create(struct tt_request *req);
void tt_handle_jobs_list(struct tt_request *req);
void tt_handle_job_get(struct tt_request *req);
void tt_handle_job_transition(struct tt_request *req);
void tt_handle_record_put(struct tt_request *req);
void tt_handle_record_get(struct tt_request *req);
void tt_handle_records_list(struct tt_request *req);
void tt_handle_lease_acquire(struct tt_request *req);
void tt_handle_lease_refresh(struct tt_request *req);
void tt_handle_lease_release(struct tt_request *req);
void tt_handle_request_create(struct tt_request *req);
void tt_handle_request_complete(struct tt_request *req);
/* jobs.c: leased semaphores (docs/ledger.md "Semaphores"). */
void tt_handle_semaphore_get(struct tt_request *req);
void tt_handle_semaphore_acquire(struct tt_request *req);
void tt_handle_semaphore_refresh(struct tt_request *req);
void tt_handle_semaphore_release(struct tt_request *req);

#endif
