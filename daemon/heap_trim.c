/* SPDX-License-Identifier: Apache-2.0 */
/* heap_trim.c -- gives the C heap's free memory back to the kernel once the
 * server has been idle for a moment after a burst of requests. */

/* Why: glibc returns freed memory to the kernel only from the top of its
 * heap. A burst of large requests (bench/load.py: four clients sending
 * 10,000-item batch-writes) frees ~200 MB in regions that small chunks
 * still in use (or held by its per-thread caches) pin in place, and the
 * process keeps them resident for good: as much again as the 1,000,000
 * items loaded. malloc_trim(0) gives back the free pages inside the heap
 * too (MADV_DONTNEED). It costs a walk of the free chunks and, later, page
 * faults when the memory is used again, so it runs only once the server
 * has been idle for TT_HEAP_TRIM_DELAY_MS (never under load) and only when
 * there is enough free memory to matter. */
#include "daemon/heap_trim.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

static void trim_cb(uv_timer_t *t) {
  struct tt_heap_trim *h = t->data;
  if (*h->active == 0)
    (void)tt_heap_trim_run(TT_HEAP_TRIM_MIN_FREE);
}

int tt_heap_trim_init(struct tt_heap_trim *h, uv_loop_t *loop, const size_t *active) {
  int rc = uv_timer_init(loop, &h->timer);
  if (rc != 0)
    return rc;
  h->timer.data = h;
  h->active = active;
  h->open = true;
  /* Background work must not keep the loop (or shutdown) waiting. */
  uv_unref((uv_handle_t *)&h->timer);
  return 0;
}

void tt_heap_trim_soon(struct tt_heap_trim *h) {
  if (h->open)
    uv_timer_start(&h->timer, trim_cb, TT_HEAP_TRIM_DELAY_MS, 0);
}

int tt_heap_trim_run(size_t min_free) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  struct mallinfo2 mi = mallinfo2();
  if (mi.fordblks < min_free)
    return 0;
  return malloc_trim(0);
#else
  (void)min_free;
  return 0;
#endif
}

void tt_heap_trim_close(struct tt_heap_trim *h) {
  if (h->open)
    uv_close((uv_handle_t *)&h->timer, NULL);
  h->open = false;
}
