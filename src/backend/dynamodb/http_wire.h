/* SPDX-License-Identifier: Apache-2.0 */
/* http_wire.h -- private to http.c and http_wire.c: our HTTP/1.1 engine for
 * http:// and https:// URLs, and the two functions of http.c it finishes
 * calls with. */
#ifndef TT_BACKEND_DYNAMODB_HTTP_WIRE_H
#define TT_BACKEND_DYNAMODB_HTTP_WIRE_H

#include <stdbool.h>
#include <uv.h>

#include "backend/dynamodb/http.h"

/* Idle keep-alive connections kept, by either engine. */
#define TT_HTTP_MAX_IDLE 64

struct tt_http_wire;

/* An engine on `loop` finishing calls of `h`, with one TLS context whose
 * trust anchors come from `ca_file` (borrowed for the engine's life; NULL =
 * OpenSSL's default paths), loaded at the first https call. A CA file that
 * does not load is not an error here: each https call then fails with
 * TT_HTTP_TLS. Returns 0 and *out or UV_ENOMEM. */
int tt_http_wire_new(uv_loop_t *loop, struct tt_http *h, const char *ca_file,
                     struct tt_http_wire **out);

/* Starts `c` (already on h's active list, resp buffers initialized).
 * Returns 0: the call completes through tt_http_finish, never inside this
 * function; UV_ENOTSUP: the URL is not one this engine takes (user info,
 * IPv6 zones, unusual forms), nothing changed, use libcurl; another negative
 * error: nothing started. Header strings and the request line are copied;
 * the body is borrowed until completion. */
int tt_http_wire_start(struct tt_http_wire *w, struct tt_http_call *c,
                       const struct tt_http_request *req, uint64_t timeout_ms,
                       uint64_t connect_timeout_ms);

/* Takes a started call off its connection, which is closed (its write may
 * still reference the body; after uv_close nothing reads it). The caller
 * finishes the call. Does nothing for a call not on a connection. */
void tt_http_wire_detach(struct tt_http_wire *w, struct tt_http_call *c);

/* Closes every connection (no call may be on one); `closed(arg)` runs
 * once every handle is closed and every getaddrinfo ended, possibly inside
 * this call when there is nothing to close. */
void tt_http_wire_close(struct tt_http_wire *w, void (*closed)(void *arg), void *arg);

/* Frees the engine (after tt_http_wire_close's callback, or when the loop
 * is gone anyway). NULL is fine. */
void tt_http_wire_destroy(struct tt_http_wire *w);

/* Implemented by http.c. Records the outcome of `c` and moves it to the
 * finished list (on failure its body and headers are dropped). */
void tt_http_finish(struct tt_http_call *c, enum tt_http_transport t, long status);

/* Runs `done` of finished calls: at once when `now` (from a loop callback,
 * as the last thing it does), else from a 0 ms timer (inside tt_http_start
 * or tt_http_cancel). */
void tt_http_deliver(struct tt_http *h, bool now);

#endif
