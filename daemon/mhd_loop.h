/* SPDX-License-Identifier: Apache-2.0 */
/* mhd_loop.h -- drives libmicrohttpd in external epoll mode from the libuv
 * loop: one uv_poll_t on MHD's epoll fd, one uv_timer_t for its timeouts and
 * an idle and a check handle to run it soon. */
#ifndef TT_DAEMON_MHD_LOOP_H
#define TT_DAEMON_MHD_LOOP_H

#include <microhttpd.h>
#include <stdbool.h>
#include <uv.h>

struct tt_mhd_loop {
  struct MHD_Daemon *mhd; /* borrowed until tt_mhd_loop_close */
  uv_poll_t poll;
  uv_timer_t timer; /* MHD's own timeouts */
  uv_idle_t idle;   /* "run MHD soon": once per loop iteration, */
  uv_check_t check; /* in this iteration's check phase or the next idle phase */
  unsigned limit; /* MHD_OPTION_CONNECTION_LIMIT; 0 when unknown */
  bool running; /* inside MHD_run: a wake then only re-arms afterwards */
  /* Called after every MHD_run (may be NULL; set after tt_mhd_loop_start):
   * work that must see the state MHD_run left, outside its callbacks. */
  void (*after_run)(void *arg);
  void *after_run_arg;
  bool timer_open, poll_open, idle_open, check_open;
};

/* Starts watching `mhd` (borrowed) on `loop`; `limit` is its connection
 * limit. Returns 0 or a negative libuv error. */
int tt_mhd_loop_start(struct tt_mhd_loop *ml, uv_loop_t *loop, struct MHD_Daemon *mhd,
                      unsigned limit);

/* Makes MHD run soon (after a resumed connection): in this loop iteration's
 * check phase when called from an I/O callback, else the next iteration's. */
void tt_mhd_loop_wake(struct tt_mhd_loop *ml);

/* Stops watching and closes both handles (MHD's epoll fd is closed by
 * MHD_stop_daemon afterwards, so the poll must go first). */
void tt_mhd_loop_close(struct tt_mhd_loop *ml);

#endif
