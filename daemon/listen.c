/* SPDX-License-Identifier: Apache-2.0 */
/* listen.c -- opens the listening socket: TCP, Unix or systemd's. */
#include "daemon/listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/sdnotify.h"

#define SD_LISTEN_FDS_START 3

/* Splits "host:port" / "[v6]:port" into a sockaddr. */
static int parse_inet(const char *spec, struct sockaddr_storage *ss, socklen_t *len,
                      struct tt_error *err) {
  char host[128];
  const char *port_text;
  if (spec[0] == '[') {
    const char *close = strchr(spec, ']');
    if (close == NULL || close[1] != ':' || (size_t)(close - spec - 1) >= sizeof(host))
      goto bad;
    memcpy(host, spec + 1, (size_t)(close - spec - 1));
    host[close - spec - 1] = '\0';
    port_text = close + 2;
  } else {
    const char *colon = strrchr(spec, ':');
    if (colon == NULL || (size_t)(colon - spec) >= sizeof(host))
      goto bad;
    memcpy(host, spec, (size_t)(colon - spec));
    host[colon - spec] = '\0';
    port_text = colon + 1;
  }
  char *end;
  errno = 0;
  long port = strtol(port_text, &end, 10);
  if (port_text[0] == '\0' || *end || errno || port < 0 || port > 65535)
    goto bad;
  memset(ss, 0, sizeof(*ss));
  struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
  struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
  if (strcmp(host, "localhost") == 0)
    snprintf(host, sizeof(host), "127.0.0.1");
  if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons((uint16_t)port);
    *len = sizeof(*v4);
    return 0;
  }
  if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons((uint16_t)port);
    *len = sizeof(*v6);
    return 0;
  }
bad:
  return tt_error_set(err, TT_ERR_VALIDATION, "listen",
                      "listen: expected host:port, [ipv6]:port or unix:/path (numeric host)");
}

int tt_listener_check(const char *spec, struct tt_error *err) {
  if (strncmp(spec, "unix:", 5) == 0) {
    struct sockaddr_un un;
    if (spec[5] != '/' || strlen(spec + 5) >= sizeof(un.sun_path))
      return tt_error_set(err, TT_ERR_VALIDATION, "listen",
                          "listen: unix: needs an absolute path shorter than %zu bytes",
                          sizeof(un.sun_path));
    return 0;
  }
  struct sockaddr_storage ss;
  socklen_t len;
  return parse_inet(spec, &ss, &len, err);
}

static bool addr_is_local(const struct sockaddr_storage *ss) {
  if (ss->ss_family == AF_UNIX)
    return true;
  if (ss->ss_family == AF_INET) {
    const struct sockaddr_in *v4 = (const struct sockaddr_in *)ss;
    return (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
  }
  if (ss->ss_family == AF_INET6) {
    const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(a))
      return true;
    return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
  }
  return false;
}

bool tt_listener_spec_is_local(const char *spec) {
  if (strncmp(spec, "unix:", 5) == 0)
    return true;
  struct sockaddr_storage ss;
  socklen_t len;
  return parse_inet(spec, &ss, &len, NULL) == 0 && addr_is_local(&ss);
}

bool tt_listener_is_local(const struct tt_listener *l) {
  struct sockaddr_storage ss;
  socklen_t len = sizeof(ss);
  memset(&ss, 0, sizeof(ss));
  if (l->fd < 0 || getsockname(l->fd, (struct sockaddr *)&ss, &len) != 0)
    return false;
  return addr_is_local(&ss);
}

static void describe(struct tt_listener *l) {
  struct sockaddr_storage ss;
  socklen_t len = sizeof(ss);
  char host[INET6_ADDRSTRLEN] = "?";
  if (getsockname(l->fd, (struct sockaddr *)&ss, &len) != 0)
    return;
  if (ss.ss_family == AF_INET) {
    struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
    inet_ntop(AF_INET, &v4->sin_addr, host, sizeof(host));
    snprintf(l->address, sizeof(l->address), "%s:%u", host, ntohs(v4->sin_port));
  } else if (ss.ss_family == AF_INET6) {
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
    inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof(host));
    snprintf(l->address, sizeof(l->address), "[%s]:%u", host, ntohs(v6->sin6_port));
  } else if (ss.ss_family == AF_UNIX) {
    struct sockaddr_un *un = (struct sockaddr_un *)&ss;
    snprintf(l->address, sizeof(l->address), "unix:%s", un->sun_path);
  }
}

int tt_listener_open(struct tt_listener *l, const char *spec, struct tt_error *err) {
  if (tt_sdnotify_listen_fds() < 1)
    return tt_listener_bind(l, spec, err);
  memset(l, 0, sizeof(*l));
  l->fd = SD_LISTEN_FDS_START;
  fcntl(l->fd, F_SETFD, FD_CLOEXEC);
  fcntl(l->fd, F_SETFL, fcntl(l->fd, F_GETFL) | O_NONBLOCK);
  describe(l);
  return 0;
}

int tt_listener_bind(struct tt_listener *l, const char *spec, struct tt_error *err) {
  memset(l, 0, sizeof(*l));
  l->fd = -1;
  if (tt_listener_check(spec, err) != 0)
    return -1;
  struct sockaddr_storage ss;
  socklen_t len;
  int family;
  if (strncmp(spec, "unix:", 5) == 0) {
    struct sockaddr_un *un = (struct sockaddr_un *)&ss;
    memset(un, 0, sizeof(*un));
    un->sun_family = AF_UNIX;
    snprintf(un->sun_path, sizeof(un->sun_path), "%s", spec + 5);
    len = sizeof(*un);
    family = AF_UNIX;
    /* A stale socket from an earlier run would make bind fail. */
    struct stat st;
    if (stat(un->sun_path, &st) == 0 && S_ISSOCK(st.st_mode))
      unlink(un->sun_path);
  } else {
    if (parse_inet(spec, &ss, &len, err) != 0)
      return -1;
    family = ss.ss_family;
  }
  l->fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (l->fd < 0)
    goto fail;
  int one = 1;
  if (family != AF_UNIX)
    setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(l->fd, (struct sockaddr *)&ss, len) != 0 || listen(l->fd, 511) != 0)
    goto fail;
  if (family == AF_UNIX)
    snprintf(l->unix_path, sizeof(l->unix_path), "%s", spec + 5);
  describe(l);
  return 0;
fail:
  tt_error_set(err, TT_ERR_VALIDATION, "listen", "listen: cannot listen on %s: %s", spec,
               strerror(errno));
  tt_listener_close(l);
  return -1;
}

void tt_listener_close(struct tt_listener *l) {
  if (l->fd >= 0)
    close(l->fd);
  l->fd = -1;
  if (l->unix_path[0])
    unlink(l->unix_path);
  l->unix_path[0] = '\0';
}
