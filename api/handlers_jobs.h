/* SPDX-License-Identifier: Apache-2.0 */
/* handlers_jobs.h -- handlers of this feature (included by handlers.h). */
#ifndef TT_API_HANDLERS_JOBS_H
#define TT_API_HANDLERS_JOBS_H

struct tt_request;

#endif
