/* SPDX-License-Identifier: Apache-2.0 */
/* bare_mhd.c -- the baseline of bench/run.py: a bare libmicrohttpd server that
 * answers every request with a fixed {"status":"ok"} body and nothing else.
 *
 * It runs the way tabletheoryd's budget is stated against: one internal
 * polling thread with epoll, keep-alive connections, a response built once.
 * Usage: bare_mhd PORT   (binds 127.0.0.1:PORT; PORT 0 picks a free port)
 * It prints "listening <port>" on stdout once it accepts connections and
 * exits 0 on SIGTERM or SIGINT. Build:
 *   gcc -O2 -std=gnu11 bench/bare_mhd.c \
 *       $(pkg-config --cflags --libs libmicrohttpd) -o /tmp/bare_mhd */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "bench_port.h"

#if MHD_VERSION >= 0x00097002
typedef enum MHD_Result bare_result;
#else
typedef int bare_result;
#endif

static const char body[] = "{\"status\":\"ok\"}";

/* The address of this byte marks "headers seen" in *req_cls; any non-NULL
 * value would do, this one needs no allocation. */
static char seen_marker;

/* MHD 0.9.75 closes the connection when the answer is queued on the first
 * call for a request (the one that only carries the headers), so the first
 * call only marks the request and the second one answers: that keeps the
 * connection alive, which is what a real client and the daemon do. */
static bare_result answer_cb(void *cls, struct MHD_Connection *conn, const char *url,
                             const char *method, const char *version,
                             const char *upload_data, size_t *upload_data_size,
                             void **req_cls) {
  struct MHD_Response *resp = cls;

  if (*req_cls == NULL) {
    *req_cls = &seen_marker;
    return MHD_YES;
  }
  if (*upload_data_size != 0) {
    *upload_data_size = 0; /* discard any body: the answer is fixed */
    return MHD_YES;
  }
  return MHD_queue_response(conn, MHD_HTTP_OK, resp);
}

int main(int argc, char **argv) {
  struct MHD_Daemon *d = NULL;
  struct MHD_Response *resp = NULL;
  const union MHD_DaemonInfo *info;
  sigset_t set;
  uint16_t port = 0;
  int sig = 0;
  int rc = 1;

  if (bench_port_arg(argc, argv, &port) != 0)
    return 2;

  /* Block the stop signals before MHD starts its thread so that only
   * sigwait() below receives them. */
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0)
    goto fail;

  resp = MHD_create_response_from_buffer(sizeof(body) - 1, (void *)body,
                                         MHD_RESPMEM_PERSISTENT);
  if (resp == NULL ||
      MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json") != MHD_YES)
    goto fail;

  {
    struct sockaddr_in sin;

    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, port, NULL, NULL,
                         answer_cb, resp, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sin,
                         MHD_OPTION_CONNECTION_LIMIT, (unsigned int)1024,
                         MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)30, MHD_OPTION_END);
  }
  if (d == NULL) {
    fprintf(stderr, "bare_mhd: cannot listen on 127.0.0.1:%u\n", (unsigned)port);
    goto fail;
  }
  info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
  if (info != NULL && info->port != 0)
    port = info->port;
  printf("listening %u\n", (unsigned)port);
  fflush(stdout);

  if (sigwait(&set, &sig) != 0)
    goto fail;
  rc = 0;

fail:
  if (d != NULL)
    MHD_stop_daemon(d);
  if (resp != NULL)
    MHD_destroy_response(resp);
  return rc;
}
