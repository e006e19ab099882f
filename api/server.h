/* SPDX-License-Identifier: Apache-2.0 */
/* server.h -- the HTTP API server: libmicrohttpd callbacks, request
 * lifecycle (suspend until joined, resume, answer), drain. */
#ifndef TT_API_SERVER_H
#define TT_API_SERVER_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "api/router.h"
#include "obs/families.h"
#include "orm/orm.h"

struct tt_request;
struct tt_conn;
struct tt_linger;

/* What the API layer needs from the configuration; the daemon fills it. */
struct tt_api_options {
  uint64_t request_timeout_ms; /* counted from the request line's arrival */
  uint64_t header_timeout_ms;  /* from accept (or the request line) to complete headers */
  uint64_t max_body_bytes;
  bool enable_fault_injection;
  bool enable_test_clock; /* serve /v1/_test/clock (--test-clock) */
  const char *auth_token; /* NULL when /v1 is open; borrowed */
  const char *openapi_text; /* borrowed, `openapi_len` bytes */
  size_t openapi_len;
  /* Partner ids, borrowed: X-TableTheory-Partner: partners[i] runs the
   * request's backend calls in account i + 1 (tt_join.account); any other
   * value is refused with UnknownPartner. */
  const char *const *partners;
  size_t n_partners;
};

/* The request header that selects a partner account. */
#define TT_API_PARTNER_HEADER "X-TableTheory-Partner"

/* The server state shared by every request. Lives as long as the daemon;
 * borrows the loop and the metric families. */
#define TT_SERVER_SPARE_REQUESTS 16

struct tt_server {
  struct tt_api_options opts;
  uv_loop_t *loop;
  struct tt_families *fams;
  struct tt_orm *orm; /* borrowed; NULL only in tests of the system routes */
  struct tt_router router; /* tt_api_routes, compiled once */
  bool ready;    /* models loaded */
  bool draining; /* SIGTERM seen: readyz 503, new requests refused */
  size_t active; /* request contexts alive */
  uint64_t id_state; /* request id generator (splitmix64) */
  struct tt_request *suspended; /* requests waiting on operations */
  struct tt_conn *conns;        /* every open client connection */
  struct tt_conn *answered;     /* answered since the last tt_server_after_run */
  uv_timer_t sweep;             /* closes connections past their deadline */
  bool sweep_open;
  struct tt_linger *lingering;  /* closed connections whose input is still drained */
  size_t nlingering;
  bool closed;                  /* tt_server_close ran */
  /* Request contexts kept for the next requests: a context (~1.8 KB) is
   * a large request for glibc's malloc, whose calloc then sorts bins and
   * consolidates (~3,000 instructions a request); reusing one costs its
   * memset. Freed by tt_server_close. */
  struct tt_request *spare;
  size_t nspare; /* at most TT_SERVER_SPARE_REQUESTS */
  /* The daemon's hooks: `wake` makes the loop run MHD soon (after a resume);
   * `idle` is called when draining and the last request is gone; `quiet`
   * (may be NULL) whenever the last request in flight is gone. */
  void (*wake)(void *arg);
  void (*idle)(void *arg);
  void (*quiet)(void *arg);
  void *hook_arg;
};

/* Initializes the server; borrows loop, fams and the option strings.
 * Returns 0, or a negative error when the route table does not compile
 * (a programming error that test_router catches). */
int tt_server_init(struct tt_server *s, uv_loop_t *loop, struct tt_families *fams,
                   const struct tt_api_options *opts);

/* libmicrohttpd callbacks; pass `s` as their closure. */
enum MHD_Result tt_server_access_cb(void *cls, struct MHD_Connection *conn, const char *url,
                                    const char *method, const char *version,
                                    const char *upload_data, size_t *upload_data_size,
                                    void **con_cls);
void tt_server_completed_cb(void *cls, struct MHD_Connection *conn, void **con_cls,
                            enum MHD_RequestTerminationCode toe);
/* MHD_OPTION_URI_LOG_CALLBACK: the request line arrived; the request (and
 * its deadline) starts here. */
void *tt_server_uri_cb(void *cls, const char *uri, struct MHD_Connection *conn);
/* MHD_OPTION_NOTIFY_CONNECTION: tracks each connection for its deadlines. */
void tt_server_connection_cb(void *cls, struct MHD_Connection *conn, void **socket_context,
                             enum MHD_ConnectionNotificationCode toe);
/* Keeps raw paths and query strings: the API decodes each segment itself,
 * so "%2F" inside a key is not taken for a separator. */
size_t tt_server_unescape_cb(void *cls, struct MHD_Connection *conn, char *s);

/* Starts draining: readyz answers 503 and new requests get 503 Draining.
 * Calls `idle` at once if nothing is active. */
void tt_server_drain(struct tt_server *s);

/* Drain timeout: cancels every suspended request's operations (they answer
 * 503 Draining once joined unless their work finished) and closes every
 * connection still sending a request or receiving an answer. */
void tt_server_cancel_all(struct tt_server *s);

/* After every MHD_run: closes each connection whose first request was
 * answered in that run and that now waits for its next request while the
 * client has half-closed it (a FIN after the request, shutdown(SHUT_WR)).
 * libmicrohttpd 0.9.75 reads a request and the FIN behind it with one recv
 * and, its epoll set being edge-triggered, never reads the FIN; the
 * connection would wait for its idle timeout. One recv(MSG_PEEK) per
 * connection; after later requests the deadline sweep makes the same check
 * on idle connections (at most a second later). */
void tt_server_after_run(struct tt_server *s);

/* Before MHD_stop_daemon: stops the deadline sweep and ends every lingering
 * close at once, so the loop can finish. */
void tt_server_close(struct tt_server *s);

/* What the REST server and the DynamoDB listener share: CLOCK_MONOTONIC in
 * ns; the next id of a splitmix64 sequence at *state (cheap: ids need to be
 * unique, not secret); v in decimal ("%u", without printf's cost on every
 * request) into out. */
uint64_t tt_server_now_ns(void);
uint64_t tt_server_next_id(uint64_t *state);
void tt_server_uint_text(char out[static 11], uint32_t v);

/* After a handler returned (nothing of it on the stack): runs the client's
 * ready calls (tt_client_run_ready) for at most a slice of a few ms, and
 * not past the request's deadline. */
struct tt_client;
void tt_server_run_ready(uv_loop_t *loop, struct tt_client *client, uint64_t deadline_ms);

/* The intrusive doubly linked lists of both listeners (requests,
 * connections, lingering sockets): x joins the front of the list at `head`
 * through its members `prev` and `next`, or leaves it. */
#define LIST_PUSH(head, x, prev, next) \
  do {                                 \
    (x)->prev = NULL;                  \
    (x)->next = (head);                \
    if (head)                          \
      (head)->prev = (x);              \
    (head) = (x);                      \
  } while (0)
#define LIST_UNLINK(head, x, prev, next) \
  do {                                   \
    if ((x)->prev)                       \
      (x)->prev->next = (x)->next;       \
    else if ((head) == (x))              \
      (head) = (x)->next;                \
    if ((x)->next)                       \
      (x)->next->prev = (x)->prev;       \
    (x)->prev = (x)->next = NULL;        \
  } while (0)

#endif
