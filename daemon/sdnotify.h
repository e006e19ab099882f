/* SPDX-License-Identifier: Apache-2.0 */
/* sdnotify.h -- systemd's notify protocol (READY=1, STOPPING=1, WATCHDOG=1)
 * and socket activation, without libsystemd. */
#ifndef TT_DAEMON_SDNOTIFY_H
#define TT_DAEMON_SDNOTIFY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

/* Builds the socket address for a $NOTIFY_SOCKET value: a path, or an
 * abstract name when it starts with '@'. Returns 0 with *len set, or -1
 * when the value is empty, too long, or not a path or abstract name. */
int tt_sdnotify_address(const char *value, struct sockaddr_un *addr, socklen_t *len);

/* Builds a notify message "READY=1\nSTATUS=<status>" (status may be NULL)
 * into out. Returns 0 or -1 when it does not fit. */
int tt_sdnotify_message(char *out, size_t cap, const char *state, const char *status);

/* Sends `message` as one datagram to $NOTIFY_SOCKET. Returns 0 when sent,
 * 1 when $NOTIFY_SOCKET is unset (nothing to do), -1 on error. */
int tt_sdnotify_send(const char *message);

/* The watchdog interval from $WATCHDOG_USEC (honouring $WATCHDOG_PID):
 * half of it, in milliseconds, or 0 when no watchdog is requested. */
uint64_t tt_sdnotify_watchdog_ms(void);

/* Socket activation: the number of sockets passed from fd 3 when
 * $LISTEN_PID is this process, else 0. */
int tt_sdnotify_listen_fds(void);

#endif
