/* SPDX-License-Identifier: Apache-2.0 */
/* listen.h -- opens the listening socket: TCP, Unix or systemd's. */
#ifndef TT_DAEMON_LISTEN_H
#define TT_DAEMON_LISTEN_H

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

struct tt_listener {
  int fd;
  char address[300];   /* what was bound, for logs ("127.0.0.1:8737") */
  char unix_path[256]; /* removed at exit; "" unless we created it */
};

/* Opens a non-blocking listening socket for `spec` ("host:port",
 * "[v6addr]:port" or "unix:/path"), or adopts fd 3 when systemd passed
 * sockets (LISTEN_FDS). Port 0 picks a free port; `address` then shows it.
 * Returns 0, or -1 with err naming the "listen" setting. */
int tt_listener_open(struct tt_listener *l, const char *spec, struct tt_error *err);

/* The same without adopting systemd's socket: always binds `spec` (a
 * second listener, such as --dynamodb-listen). */
int tt_listener_bind(struct tt_listener *l, const char *spec, struct tt_error *err);

/* Checks the syntax of `spec` without opening anything. */
int tt_listener_check(const char *spec, struct tt_error *err);

/* Whether the --listen spec (syntax already checked) reaches only this
 * host: a Unix socket or a loopback address (127.0.0.0/8, ::1,
 * ::ffff:127.0.0.0/104; "localhost" is 127.0.0.1). */
bool tt_listener_spec_is_local(const char *spec);

/* The same judgement on the open socket (getsockname), so it also covers a
 * socket systemd passed. False when it cannot be told. */
bool tt_listener_is_local(const struct tt_listener *l);

/* Closes the socket (if still open) and removes a Unix socket we created. */
void tt_listener_close(struct tt_listener *l);

#endif
