/* SPDX-License-Identifier: Apache-2.0 */
/* test_heap_trim.c -- the daemon gives freed heap memory back once idle:
 * not below the threshold, not while a request is in flight, and only
 * after the delay. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "daemon/heap_trim.h"

#if defined(__SANITIZE_ADDRESS__)
#define NATIVE_MALLOC 0 /* ASan's allocator: glibc's heap is not in use */
#elif defined(__GLIBC__)
#define NATIVE_MALLOC 1
#else
#define NATIVE_MALLOC 0
#endif

static long rss_kb(void) {
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(fscanf(f, "%ld %ld", &pages, &resident), 2);
  fclose(f);
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* 64 MiB of 4 KiB blocks, every 64th kept so that glibc cannot give the
 * rest back from the top of its heap; returns the kept ones. */
static void **fragment(void) {
  enum { N = 16384 };
  void **keep = calloc(N / 64 + 1, sizeof(*keep));
  void **all = calloc(N, sizeof(*all));
  for (size_t i = 0; i < N; i++) {
    all[i] = malloc(4000);
    ck_assert_ptr_nonnull(all[i]);
    memset(all[i], 1, 4000);
  }
  for (size_t i = 0; i < N; i++) {
    if (i % 64 == 0)
      keep[i / 64] = all[i];
    else
      free(all[i]);
  }
  free(all);
  return keep;
}

static void unfragment(void **keep) {
  for (size_t i = 0; keep[i]; i++)
    free(keep[i]);
  free(keep);
}

START_TEST(run_trims_only_above_the_threshold) {
  void **keep = fragment();
  ck_assert_int_eq(tt_heap_trim_run((size_t)1 << 40), 0);
  long before = rss_kb();
  int trimmed = tt_heap_trim_run((size_t)1 << 20);
  long after = rss_kb();
  if (NATIVE_MALLOC) {
    ck_assert_int_eq(trimmed, 1);
    ck_assert_int_gt(before - after, 32 * 1024);
  }
  unfragment(keep);
}
END_TEST

static void stop_cb(uv_timer_t *t) { (void)t; }

/* Runs the loop for 400 ms (the trim is due after 200). */
static void run_400ms(uv_loop_t *loop) {
  uv_timer_t keep;
  uv_timer_init(loop, &keep);
  uv_timer_start(&keep, stop_cb, 400, 0);
  uv_run(loop, UV_RUN_DEFAULT);
  uv_close((uv_handle_t *)&keep, NULL);
  uv_run(loop, UV_RUN_DEFAULT);
}

START_TEST(trims_once_idle_never_while_busy) {
  uv_loop_t loop;
  ck_assert_int_eq(uv_loop_init(&loop), 0);
  size_t active = 1;
  struct tt_heap_trim h;
  ck_assert_int_eq(tt_heap_trim_init(&h, &loop, &active), 0);
  /* A request is in flight when the timer fires: nothing happens. */
  void **keep = fragment();
  long before = rss_kb();
  tt_heap_trim_soon(&h);
  run_400ms(&loop);
  if (NATIVE_MALLOC)
    ck_assert_int_lt(before - rss_kb(), 8 * 1024);
  /* Idle: the memory goes back. */
  active = 0;
  tt_heap_trim_soon(&h);
  run_400ms(&loop);
  if (NATIVE_MALLOC)
    ck_assert_int_gt(before - rss_kb(), 32 * 1024);
  unfragment(keep);
  /* The timer is unreferenced: it never keeps the loop running. */
  tt_heap_trim_soon(&h);
  ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
  tt_heap_trim_close(&h);
  tt_heap_trim_close(&h); /* once only */
  tt_heap_trim_soon(&h);  /* closed: nothing */
  uv_run(&loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("heap_trim");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, run_trims_only_above_the_threshold);
  tcase_add_test(tc, trims_once_idle_never_while_busy);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_FORK);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
