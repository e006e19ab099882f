/* SPDX-License-Identifier: Apache-2.0 */
/* ddb_listener.h -- DynamoDB's own wire protocol (JSON 1.0 over POST /,
 * X-Amz-Target, SigV4) on a second libmicrohttpd daemon of the same loop,
 * serving the backend the REST API serves (docs/local-dynamodb.md). An edge
 * like api/server.c: it calls the client layer, never the ORM. */
#ifndef TT_API_DDB_LISTENER_H
#define TT_API_DDB_LISTENER_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "backend/dynamodb/sigv4.h"
#include "client/client.h"
#include "obs/families.h"

struct tt_ddb_listener_options {
  uint64_t request_timeout_ms; /* from the request line to the answer */
  uint64_t max_body_bytes;
  /* SigV4: false accepts any well-formed signature (DynamoDB Local's and
   * dynalite's behaviour); true verifies it against these credentials
   * (borrowed), refusing others. */
  bool verify;
  const char *access_key_id;
  const char *secret_access_key;
};

struct tt_ddb_req;

struct tt_ddb_listener {
  uv_loop_t *loop;
  struct tt_families *fams;
  struct tt_client *client; /* borrowed: the daemon's, shared with the REST API */
  struct tt_ddb_listener_options opts;
  struct tt_metric_family *requests; /* tabletheoryd_dynamodb_requests_total{operation,status} */
  struct tt_metric_family *duration; /* tabletheoryd_dynamodb_request_duration_seconds{operation} */
  struct tt_ddb_req *running;        /* requests waiting for their backend call */
  struct tt_ddb_req *all;            /* every request context alive */
  size_t active;                     /* request contexts alive */
  bool draining;
  uint64_t id_state;
  struct tt_sigv4_cache sigv4;
  /* The daemon's hooks (as tt_server's): `wake` runs MHD soon after a
   * resume; `idle` when draining and the last request is gone. */
  void (*wake)(void *arg);
  void (*idle)(void *arg);
  void *hook_arg;
};

/* Initializes the listener and declares its metric families in `fams`.
 * Borrows everything. Returns 0 or -1 (out of memory). */
int tt_ddb_listener_init(struct tt_ddb_listener *l, uv_loop_t *loop, struct tt_families *fams,
                         struct tt_client *client, const struct tt_ddb_listener_options *opts);

/* libmicrohttpd callbacks; pass `l` as their closure. */
enum MHD_Result tt_ddb_listener_access_cb(void *cls, struct MHD_Connection *conn,
                                          const char *url, const char *method,
                                          const char *version, const char *upload_data,
                                          size_t *upload_data_size, void **con_cls);
void tt_ddb_listener_completed_cb(void *cls, struct MHD_Connection *conn, void **con_cls,
                                  enum MHD_RequestTerminationCode toe);

/* Starts draining: new requests are refused (503), `idle` runs once the
 * last request is gone (at once when none is). */
void tt_ddb_listener_drain(struct tt_ddb_listener *l);

/* Drain timeout: cancels every running request's backend call (each still
 * answers once its call completed) and gives connections still sending a
 * request one second before they are closed. */
void tt_ddb_listener_cancel_all(struct tt_ddb_listener *l);

/* Releases what init made (the SigV4 cache); after the MHD daemon stopped. */
void tt_ddb_listener_close(struct tt_ddb_listener *l);

#endif
