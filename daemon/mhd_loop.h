/* SPDX-License-Identifier: Apache-2.0 */
/* mhd_loop.h -- drives libmicrohttpd in external epoll mode from the libuv
 * loop: one uv_poll_t on MHD's epoll fd and one uv_timer_t for its timeouts. */
#ifndef TT_DAEMON_MHD_LOOP_H
#define TT_DAEMON_MHD_LOOP_H

#include <microhttpd.h>
#include <stdbool.h>
#include <uv.h>

struct tt_mhd_loop {
  struct MHD_Daemon *mhd; /* borrowed until tt_mhd_loop_close */
  uv_poll_t poll;
  uv_timer_t timer; /* MHD's own timeouts */
  uv_idle_t idle;   /* "run MHD soon": once per loop iteration */
  unsigned limit; /* MHD_OPTION_CONNECTION_LIMIT; 0 when unknown */
  bool running; /* inside MHD_run: a wake then only re-arms afterwards */
  bool timer_open, poll_open, idle_open;
};

/* Starts watching `mhd` (borrowed) on `loop`; `limit` is its connection
 * limit. Returns 0 or a negative libuv error. */
int tt_mhd_loop_start(struct tt_mhd_loop *ml, uv_loop_t *loop, struct MHD_Daemon *mhd,
                      unsigned limit);

/* Makes MHD run on the next loop iteration (after a resumed connection). */
void tt_mhd_loop_wake(struct tt_mhd_loop *ml);

/* Stops watching and closes both handles (MHD's epoll fd is closed by
 * MHD_stop_daemon afterwards, so the poll must go first). */
void tt_mhd_loop_close(struct tt_mhd_loop *ml);

#endif
