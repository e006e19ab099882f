/* SPDX-License-Identifier: Apache-2.0 */
/* handlers_faults.h -- handlers of this feature (included by handlers.h). */
#ifndef TT_API_HANDLERS_FAULTS_H
#define TT_API_HANDLERS_FAULTS_H

struct tt_request;
struct tt_fault_backend;

/* faults.c (routes only with --enable-fault-injection) */
void tt_handle_faults_add(struct tt_request *req);
void tt_handle_faults_list(struct tt_request *req);
void tt_handle_faults_clear(struct tt_request *req);

/* Gives the fault handlers the decorator the daemon wrapped its backend
 * with (borrowed: it must outlive the server; NULL detaches). The daemon
 * calls it once at start when --enable-fault-injection is set; until then
 * the routes answer 500 Internal. */
void tt_api_faults_attach(struct tt_fault_backend *fb);

#endif
