/* SPDX-License-Identifier: Apache-2.0 */
/* mhd_loop.c -- drives libmicrohttpd in external epoll mode from libuv. */
#include "daemon/mhd_loop.h"

#include <string.h>

static void run_mhd(struct tt_mhd_loop *ml);

static void timer_cb(uv_timer_t *t) { run_mhd(t->data); }

static void ran_soon(struct tt_mhd_loop *ml) {
  uv_idle_stop(&ml->idle);
  uv_check_stop(&ml->check);
  run_mhd(ml);
}

static void idle_cb(uv_idle_t *i) { ran_soon(i->data); }
static void check_cb(uv_check_t *c) { ran_soon(c->data); }

/* Runs MHD soon, and at most once per loop iteration: in the check phase
 * of this iteration when asked from an I/O callback (a backend's answer
 * resumed a connection: answering it then saves an iteration, one
 * epoll_wait and its latency), else in the next idle phase. The active idle
 * handle also keeps the poll phase from blocking in between. Not a zero
 * timer: a timer re-armed at 0 inside a timer callback runs again in the
 * same timer phase (libuv 1.44), so under load the loop would never reach
 * its close phase and closed handles would pile up; idle and check handles
 * started inside their own phase wait for the next iteration. */
static void run_soon(struct tt_mhd_loop *ml) {
  uv_idle_start(&ml->idle, idle_cb);
  uv_check_start(&ml->check, check_cb);
}

static void poll_cb(uv_poll_t *p, int status, int events) {
  (void)status;
  (void)events;
  run_mhd(p->data);
}

static unsigned connections(struct MHD_Daemon *mhd) {
  const union MHD_DaemonInfo *i = MHD_get_daemon_info(mhd, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
  return i ? i->num_connections : 0;
}

/* Runs MHD once, then arms the timer from MHD_get_timeout so connection
 * timeouts and resumed connections are served even without socket events. */
static void run_mhd(struct tt_mhd_loop *ml) {
  if (ml->mhd == NULL)
    return;
  unsigned before = ml->limit ? connections(ml->mhd) : 0;
  ml->running = true;
  MHD_run(ml->mhd);
  ml->running = false;
  if (ml->mhd == NULL)
    return;
  if (ml->after_run)
    ml->after_run(ml->after_run_arg);
  /* At the connection limit MHD takes its listen socket out of its epoll
   * set and puts it back only at the start of a later run: when this run
   * freed a slot, run again, or clients waiting in the backlog would wait
   * until some unrelated event. */
  if (ml->limit && before >= ml->limit && connections(ml->mhd) < ml->limit) {
    uv_timer_stop(&ml->timer);
    run_soon(ml);
    return;
  }
  MHD_UNSIGNED_LONG_LONG timeout;
  if (MHD_get_timeout(ml->mhd, &timeout) != MHD_YES) {
    uv_timer_stop(&ml->timer);
  } else if (timeout == 0) {
    uv_timer_stop(&ml->timer);
    run_soon(ml);
  } else {
    uv_timer_start(&ml->timer, timer_cb, (uint64_t)timeout, 0);
  }
}

int tt_mhd_loop_start(struct tt_mhd_loop *ml, uv_loop_t *loop, struct MHD_Daemon *mhd,
                      unsigned limit) {
  memset(ml, 0, sizeof(*ml));
  ml->mhd = mhd;
  ml->limit = limit;
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(mhd, MHD_DAEMON_INFO_EPOLL_FD);
  if (info == NULL)
    return UV_EINVAL;
  int rc = uv_timer_init(loop, &ml->timer);
  if (rc != 0)
    return rc;
  ml->timer.data = ml;
  ml->timer_open = true;
  uv_idle_init(loop, &ml->idle);
  ml->idle.data = ml;
  ml->idle_open = true;
  uv_check_init(loop, &ml->check);
  ml->check.data = ml;
  ml->check_open = true;
  rc = uv_poll_init(loop, &ml->poll, info->epoll_fd);
  if (rc != 0)
    return rc;
  ml->poll.data = ml;
  ml->poll_open = true;
  rc = uv_poll_start(&ml->poll, UV_READABLE, poll_cb);
  if (rc != 0)
    return rc;
  run_soon(ml);
  return 0;
}

void tt_mhd_loop_wake(struct tt_mhd_loop *ml) {
  /* Inside MHD_run the re-arm that follows picks up the resumed connection
   * (MHD_get_timeout answers 0); outside, run on the next iteration. */
  if (ml->mhd && !ml->running)
    run_soon(ml);
}

void tt_mhd_loop_close(struct tt_mhd_loop *ml) {
  ml->mhd = NULL;
  if (ml->poll_open)
    uv_close((uv_handle_t *)&ml->poll, NULL);
  if (ml->timer_open)
    uv_close((uv_handle_t *)&ml->timer, NULL);
  if (ml->idle_open)
    uv_close((uv_handle_t *)&ml->idle, NULL);
  if (ml->check_open)
    uv_close((uv_handle_t *)&ml->check, NULL);
  ml->poll_open = ml->timer_open = ml->idle_open = ml->check_open = false;
}
