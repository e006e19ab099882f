/* SPDX-License-Identifier: Apache-2.0 */
/* tokens.h -- the client-token memo of POST /v1/transactions/write: the time
 * of the first request with each ClientRequestToken, so that a retry of the
 * same body builds a byte-identical TransactWriteItems. */
#ifndef TT_ORM_TOKENS_H
#define TT_ORM_TOKENS_H

#include <stddef.h>
#include <stdint.h>

#include "orm/orm.h"
#include "util/error.h"

/* Why it exists: the backend (DynamoDB, or the memory backend, which does
 * the same) decides idempotency by comparing a retried request with the
 * first one, but the daemon writes the current time into every request
 * (created_at, updated_at). Without the memo an identical client retry
 * would differ by its timestamps and be refused as a mismatch. The memo
 * decides nothing itself: a different body with a known token gets the
 * current time, and the backend answers IdempotentParameterMismatch. A
 * backend without token support (moto) applies retries again; the memo
 * does not pretend otherwise.
 *
 * Window: DynamoDB's 10 minutes, on the ORM's injectable clock. Bound: at
 * most orm->token_limit tokens (0: TT_ORM_TOKENS_DEFAULT_LIMIT) younger than
 * the window; a new token beyond it is refused with a retryable Throttled
 * (never by forgetting a younger token, which would break that token's
 * retry). Single-threaded: only the loop touches it. */
#define TT_ORM_TOKENS_WINDOW_NS (600ll * 1000000000ll)
/* 131072 tokens in 10 minutes: about 218 new tokens a second sustained,
 * roughly 12 MB at the bound (docs/batch.md, client_token). */
#define TT_ORM_TOKENS_DEFAULT_LIMIT 131072u

/* A stable hash of a transaction body (canonical JSON with sorted keys).
 * Returns 0, or -1 when out of memory. */
int tt_orm_tokens_hash(const json_t *body, uint64_t *out);

/* The time to write with for `token` and a body of hash `body_hash` at
 * `now`: the time of the first request when it had the same body and is
 * younger than the window, else `now`. Forgets expired tokens first. */
int64_t tt_orm_tokens_time(struct tt_orm *orm, const char *token, uint64_t body_hash,
                           int64_t now);

/* Remembers `token` (copied; 1 to 36 bytes) as first used at `at_ns` with
 * `body_hash`, unless it is already known (then nothing changes). Returns 0,
 * or -1: Throttled at the bound (*retry_after_s set to the seconds until the
 * oldest token expires, at least 1), or Internal when out of memory. */
int tt_orm_tokens_remember(struct tt_orm *orm, const char *token, uint64_t body_hash,
                           int64_t at_ns, int64_t now, uint32_t *retry_after_s,
                           struct tt_error *err);

/* How many tokens are remembered (expired ones included until the next
 * call forgets them). */
size_t tt_orm_tokens_count(const struct tt_orm *orm);

/* Releases what the ORM owns (today: the memo); the struct stays usable.
 * Call at shutdown. */
void tt_orm_cleanup(struct tt_orm *orm);

#endif
