/* SPDX-License-Identifier: Apache-2.0 */
/* otlp_sink.c -- the drop receiver of bench/tracing.py: an OTLP/HTTP
 * endpoint that reads every export and keeps nothing.
 *
 * A POST to /v1/traces is read to its end (Content-Length) and discarded,
 * and answered 200 with an empty ExportTraceServiceResponse: an empty body
 * for protobuf, "{}" for JSON (a request whose Content-Type is
 * application/json). Anything else is read the same way and answered 404;
 * a body without a Content-Length (chunked) is answered 411 and the
 * connection closed. Connections are kept alive. One thread, epoll, no
 * library: a receiver that costs the machine as little as it can, so that a
 * benchmark of the sender measures the sender.
 *
 * Usage: otlp_sink PORT   (binds 127.0.0.1:PORT; PORT 0 picks a free port)
 * It prints "listening <port>" on stdout once it accepts connections, and
 * on SIGTERM or SIGINT "requests N bytes B errors E" (N exports answered
 * 200, B body bytes read, E requests answered otherwise) and exits 0.
 * Build:
 *   gcc -O2 -std=gnu11 bench/otlp_sink.c -o /tmp/otlp_sink */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>

#include "bench_port.h"

#define HEAD_MAX 16384

struct conn {
  int fd;
  char head[HEAD_MAX]; /* the request head being read, and what follows it */
  size_t head_len;
  uint64_t body_left; /* body bytes still to read and drop */
  bool in_body;
  bool json;      /* the request's Content-Type is application/json */
  bool traces;    /* POST /v1/traces */
  bool close_after;
};

static uint64_t n_requests, n_bytes, n_errors;

static const char resp_proto[] = "HTTP/1.1 200 OK\r\n"
                                 "Content-Type: application/x-protobuf\r\n"
                                 "Content-Length: 0\r\n\r\n";
static const char resp_json[] = "HTTP/1.1 200 OK\r\n"
                                "Content-Type: application/json\r\n"
                                "Content-Length: 2\r\n\r\n{}";
static const char resp_404[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
static const char resp_411[] = "HTTP/1.1 411 Length Required\r\n"
                               "Connection: close\r\nContent-Length: 0\r\n\r\n";
static const char resp_431[] = "HTTP/1.1 431 Request Header Fields Too Large\r\n"
                               "Connection: close\r\nContent-Length: 0\r\n\r\n";
static const char resp_continue[] = "HTTP/1.1 100 Continue\r\n\r\n";

/* Small answers on loopback: a blocking write of the rest is good enough. */
static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
        continue;
      }
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* The value of header NAME in the head [p, end), or NULL; *len is set. */
static const char *header(const char *p, const char *end, const char *name, size_t *len) {
  size_t nl = strlen(name);
  while (p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (eol == NULL)
      eol = end;
    if ((size_t)(eol - p) > nl && p[nl] == ':' && strncasecmp(p, name, nl) == 0) {
      const char *v = p + nl + 1;
      const char *ve = eol;
      while (v < ve && (*v == ' ' || *v == '\t'))
        v++;
      while (ve > v && (ve[-1] == '\r' || ve[-1] == ' ' || ve[-1] == '\t'))
        ve--;
      *len = (size_t)(ve - v);
      return v;
    }
    p = eol + 1;
  }
  return NULL;
}

static bool value_has(const char *v, size_t len, const char *word) {
  size_t wl = strlen(word);
  for (size_t i = 0; i + wl <= len; i++)
    if (strncasecmp(v + i, word, wl) == 0)
      return true;
  return false;
}

/* Parses the head of c->head[0, head_end); returns -1 to close after an
 * error answer has been written, 0 otherwise. */
static int parse_head(struct conn *c, size_t head_end) {
  const char *p = c->head, *end = c->head + head_end;
  const char *line_end = memchr(p, '\n', head_end);
  const char *v;
  size_t vl;

  if (line_end == NULL)
    line_end = end;
  c->traces = (size_t)(line_end - p) > 16 && memcmp(p, "POST /v1/traces", 15) == 0 &&
              (p[15] == ' ' || p[15] == '?');
  c->json = (v = header(line_end + 1, end, "Content-Type", &vl)) != NULL &&
            value_has(v, vl, "json");
  c->close_after = (v = header(line_end + 1, end, "Connection", &vl)) != NULL &&
                   value_has(v, vl, "close");
  c->body_left = 0;
  if ((v = header(line_end + 1, end, "Transfer-Encoding", &vl)) != NULL) {
    n_errors++;
    write_all(c->fd, resp_411, sizeof(resp_411) - 1);
    return -1;
  }
  if ((v = header(line_end + 1, end, "Content-Length", &vl)) != NULL) {
    char num[24];
    char *e = NULL;
    if (vl == 0 || vl >= sizeof(num))
      goto bad_length;
    memcpy(num, v, vl);
    num[vl] = '\0';
    errno = 0;
    c->body_left = strtoull(num, &e, 10);
    if (errno != 0 || *e != '\0')
      goto bad_length;
  }
  if ((v = header(line_end + 1, end, "Expect", &vl)) != NULL && value_has(v, vl, "100-continue") &&
      c->body_left > 0)
    write_all(c->fd, resp_continue, sizeof(resp_continue) - 1);
  c->in_body = true;
  return 0;
bad_length:
  n_errors++;
  write_all(c->fd, resp_411, sizeof(resp_411) - 1);
  return -1;
}

static int answer(struct conn *c) {
  if (c->traces) {
    n_requests++;
    if (c->json)
      return write_all(c->fd, resp_json, sizeof(resp_json) - 1);
    return write_all(c->fd, resp_proto, sizeof(resp_proto) - 1);
  }
  n_errors++;
  return write_all(c->fd, resp_404, sizeof(resp_404) - 1);
}

/* Consumes what is in c->head: the end of a body, whole requests. Returns
 * -1 when the connection is to be closed. */
static int process(struct conn *c) {
  for (;;) {
    if (c->in_body) {
      size_t take = c->head_len < c->body_left ? c->head_len : (size_t)c->body_left;
      n_bytes += take;
      c->body_left -= take;
      memmove(c->head, c->head + take, c->head_len - take);
      c->head_len -= take;
      if (c->body_left > 0)
        return 0;
      c->in_body = false;
      if (answer(c) != 0 || c->close_after)
        return -1;
      continue;
    }
    char *hend = c->head_len >= 4 ? memmem(c->head, c->head_len, "\r\n\r\n", 4) : NULL;
    if (hend == NULL) {
      if (c->head_len == HEAD_MAX) {
        n_errors++;
        write_all(c->fd, resp_431, sizeof(resp_431) - 1);
        return -1;
      }
      return 0;
    }
    size_t head_end = (size_t)(hend - c->head) + 4;
    if (parse_head(c, head_end) != 0)
      return -1;
    memmove(c->head, c->head + head_end, c->head_len - head_end);
    c->head_len -= head_end;
  }
}

/* Reads what the socket has; returns -1 at EOF or on an error. */
static int on_readable(struct conn *c) {
  static char scratch[1 << 16];
  for (;;) {
    ssize_t r;
    if (c->in_body && c->head_len == 0) {
      /* The bulk of a body goes straight to the scratch buffer. */
      size_t want = c->body_left < sizeof(scratch) ? (size_t)c->body_left : sizeof(scratch);
      r = read(c->fd, scratch, want);
      if (r > 0) {
        n_bytes += (uint64_t)r;
        c->body_left -= (uint64_t)r;
        if (c->body_left == 0) {
          c->in_body = false;
          if (answer(c) != 0 || c->close_after)
            return -1;
        }
        continue;
      }
    } else {
      r = read(c->fd, c->head + c->head_len, HEAD_MAX - c->head_len);
      if (r > 0) {
        c->head_len += (size_t)r;
        if (process(c) != 0)
          return -1;
        continue;
      }
    }
    if (r == 0)
      return -1;
    if (errno == EINTR)
      continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK)
      return 0;
    return -1;
  }
}

int main(int argc, char **argv) {
  uint16_t port = 0;
  sigset_t set;
  int lfd, ep, sfd, one = 1;
  struct sockaddr_in sin;
  socklen_t slen = sizeof(sin);
  struct epoll_event ev;

  if (bench_port_arg(argc, argv, &port) != 0)
    return 2;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  if (sigprocmask(SIG_BLOCK, &set, NULL) != 0)
    return 1;
  signal(SIGPIPE, SIG_IGN);
  sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  ep = epoll_create1(EPOLL_CLOEXEC);
  if (sfd < 0 || lfd < 0 || ep < 0)
    return 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  memset(&sin, 0, sizeof(sin));
  sin.sin_family = AF_INET;
  sin.sin_port = htons(port);
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) != 0 || listen(lfd, 128) != 0 ||
      getsockname(lfd, (struct sockaddr *)&sin, &slen) != 0) {
    fprintf(stderr, "otlp_sink: cannot listen on 127.0.0.1:%u\n", (unsigned)port);
    return 1;
  }
  ev.events = EPOLLIN;
  ev.data.ptr = NULL; /* the listening socket */
  epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
  ev.events = EPOLLIN;
  ev.data.ptr = &sfd; /* the signals */
  epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
  printf("listening %u\n", (unsigned)ntohs(sin.sin_port));
  fflush(stdout);

  for (;;) {
    struct epoll_event evs[64];
    int n = epoll_wait(ep, evs, 64, -1);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return 1;
    }
    for (int i = 0; i < n; i++) {
      void *ptr = evs[i].data.ptr;
      if (ptr == &sfd) {
        printf("requests %llu bytes %llu errors %llu\n", (unsigned long long)n_requests,
               (unsigned long long)n_bytes, (unsigned long long)n_errors);
        fflush(stdout);
        return 0;
      }
      if (ptr == NULL) {
        int cfd;
        while ((cfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
          struct conn *c = calloc(1, sizeof(*c));
          if (c == NULL) {
            close(cfd);
            continue;
          }
          c->fd = cfd;
          setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
          ev.events = EPOLLIN | EPOLLRDHUP;
          ev.data.ptr = c;
          if (epoll_ctl(ep, EPOLL_CTL_ADD, cfd, &ev) != 0) {
            close(cfd);
            free(c);
          }
        }
        continue;
      }
      struct conn *c = ptr;
      if (on_readable(c) != 0) {
        epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
        free(c);
      }
    }
  }
}
