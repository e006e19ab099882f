/* SPDX-License-Identifier: Apache-2.0 */
/* orm_job.h -- the plumbing every ORM-backed handler shares: the model named
 * by the path, and a job that runs one ORM operation for the request and
 * answers from its result once everything is joined. */
#ifndef TT_API_ORM_JOB_H
#define TT_API_ORM_JOB_H

#include <jansson.h>
#include <stddef.h>

#include "api/request.h"
#include "orm/orm.h"

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

#endif
