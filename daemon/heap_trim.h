/* SPDX-License-Identifier: Apache-2.0 */
/* heap_trim.h -- gives the C heap's free memory back to the kernel once the
 * server has been idle for a moment after a burst of requests. */
#ifndef TT_DAEMON_HEAP_TRIM_H
#define TT_DAEMON_HEAP_TRIM_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

/* Idle this long (no request in flight since) before trimming. */
#define TT_HEAP_TRIM_DELAY_MS 200
/* Trim only when the heap holds at least this much free memory. */
#define TT_HEAP_TRIM_MIN_FREE ((size_t)16 << 20)

struct tt_heap_trim {
  uv_timer_t timer;
  const size_t *active; /* requests in flight, borrowed: trim only at 0 */
  bool open;            /* the timer was initialized and not closed */
};

/* Initializes the (unreferenced) timer on loop; `active` is read when it
 * fires. Returns 0 or a libuv error. */
int tt_heap_trim_init(struct tt_heap_trim *h, uv_loop_t *loop, const size_t *active);

/* The last request in flight is gone: trim TT_HEAP_TRIM_DELAY_MS from now
 * if none is in flight then. Called again before that, it starts over, so a
 * busy server never trims. */
void tt_heap_trim_soon(struct tt_heap_trim *h);

/* Trims now when the heap holds at least min_free free bytes. Returns 1
 * when memory was given back, else 0 (also where the C library cannot). */
int tt_heap_trim_run(size_t min_free);

/* Closes the timer, if it was initialized (the caller lets the loop run
 * its close). */
void tt_heap_trim_close(struct tt_heap_trim *h);

#endif
