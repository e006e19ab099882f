/* SPDX-License-Identifier: Apache-2.0 */
/* sdnotify.c -- systemd's notify protocol and socket activation. */
#include "daemon/sdnotify.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int tt_sdnotify_address(const char *value, struct sockaddr_un *addr, socklen_t *len) {
  size_t n = value ? strlen(value) : 0;
  if (n < 2 || n >= sizeof(addr->sun_path) || (value[0] != '/' && value[0] != '@'))
    return -1;
  memset(addr, 0, sizeof(*addr));
  addr->sun_family = AF_UNIX;
  memcpy(addr->sun_path, value, n);
  if (value[0] == '@')
    addr->sun_path[0] = '\0'; /* abstract namespace: no NUL terminator counted */
  *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (value[0] == '/' ? 1 : 0));
  return 0;
}

int tt_sdnotify_message(char *out, size_t cap, const char *state, const char *status) {
  int n = status ? snprintf(out, cap, "%s\nSTATUS=%s", state, status)
                 : snprintf(out, cap, "%s", state);
  return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int tt_sdnotify_send(const char *message) {
  const char *value = getenv("NOTIFY_SOCKET");
  if (value == NULL || value[0] == '\0')
    return 1;
  struct sockaddr_un addr;
  socklen_t len;
  if (tt_sdnotify_address(value, &addr, &len) != 0)
    return -1;
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  ssize_t sent = sendto(fd, message, strlen(message), MSG_NOSIGNAL, (struct sockaddr *)&addr, len);
  close(fd);
  return sent == (ssize_t)strlen(message) ? 0 : -1;
}

static int env_is_our_pid(const char *name) {
  const char *v = getenv(name);
  if (v == NULL)
    return 1; /* unset means "for us" for WATCHDOG_PID */
  char *end;
  long pid = strtol(v, &end, 10);
  return *end == '\0' && pid == (long)getpid();
}

uint64_t tt_sdnotify_watchdog_ms(void) {
  const char *v = getenv("WATCHDOG_USEC");
  if (v == NULL || !env_is_our_pid("WATCHDOG_PID"))
    return 0;
  char *end;
  errno = 0;
  unsigned long long usec = strtoull(v, &end, 10);
  if (errno || *end || usec == 0)
    return 0;
  uint64_t ms = usec / 2000;
  return ms ? ms : 1;
}

int tt_sdnotify_listen_fds(void) {
  const char *pid = getenv("LISTEN_PID");
  const char *fds = getenv("LISTEN_FDS");
  if (pid == NULL || fds == NULL || !env_is_our_pid("LISTEN_PID"))
    return 0;
  char *end;
  long n = strtol(fds, &end, 10);
  if (*end || n <= 0 || n > 64)
    return 0;
  return (int)n;
}
