/* SPDX-License-Identifier: Apache-2.0 */
/* test_clock.h -- the daemon's clock under --test-clock (tests only): frozen
 * at start-up, moved forward only by POST /v1/_test/clock, so that tests of
 * expiry (leases, semaphores, idempotency records) neither sleep nor compare
 * the daemon's timestamps with their own wall clock. */
#ifndef TT_API_TEST_CLOCK_H
#define TT_API_TEST_CLOCK_H

#include <stdint.h>

struct tt_request;

struct tt_test_clock {
  int64_t now_ns; /* nanoseconds since the Unix epoch */
};

/* Freezes the clock at the second of `start_ns` plus 0.123456789 s: every
 * timestamp it gives then has nine fraction digits (RFC3339Nano drops
 * trailing zeros, and "...:05Z" sorts after "...:05.001Z" as text), and
 * moves of whole milliseconds keep it so. */
void tt_test_clock_init(struct tt_test_clock *c, int64_t start_ns);

/* The ORM's clock callback (struct tt_orm.now_ns); `arg` is the clock. */
int64_t tt_test_clock_now(void *arg);

/* GET /v1/_test/clock: {"now_ns", "now_s"}. POST {"advance_ms": N} moves
 * the clock N ms forward (0 <= N <= ten years) and answers the same. Served
 * only with --test-clock (the route is gated), on the clock the ORM reads. */
void tt_handle_test_clock_get(struct tt_request *req);
void tt_handle_test_clock_post(struct tt_request *req);

#endif
