/* SPDX-License-Identifier: Apache-2.0 */
/* handlers_batch.h -- handlers of this feature (included by handlers.h). */
#ifndef TT_API_HANDLERS_BATCH_H
#define TT_API_HANDLERS_BATCH_H

struct tt_request;

#endif
