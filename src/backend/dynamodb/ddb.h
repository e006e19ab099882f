/* SPDX-License-Identifier: Apache-2.0 */
/* ddb.h -- the dynamodb backend: the backend port over DynamoDB's JSON
 * protocol (POST /, X-Amz-Target), SigV4-signed, on the shared HTTP client. */
#ifndef TT_BACKEND_DYNAMODB_DDB_H
#define TT_BACKEND_DYNAMODB_DDB_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "backend/backend.h"
#include "backend/dynamodb/credentials.h"
#include "backend/dynamodb/http.h"
#include "util/error.h"

/* A further account calls can run in (a partner's), selected by
 * tt_backend_call.account = its index + 1. Strings are copied; `creds` is
 * borrowed like tt_ddb_options.creds. */
struct tt_ddb_account {
  const char *region;   /* NULL = the backend's region */
  const char *endpoint; /* NULL or "" = the backend's --endpoint when set,
                           else https://dynamodb.<region>.amazonaws.com */
  struct tt_creds_provider *creds; /* required */
};

/* Wall clock in unix seconds, for signing (injectable for tests). */
typedef int64_t (*tt_ddb_clock_fn)(void *arg);

/* The AWS JSON service a backend speaks. */
enum tt_ddb_service {
  TT_DDB_SERVICE_DYNAMODB = 0, /* JSON 1.0, DynamoDB_20120810.<Op>, the TT_DDB_* ops */
  TT_DDB_SERVICE_KMS           /* JSON 1.1, TrentService.<Op>, the TT_KMS_* ops */
};

struct tt_ddb_options {
  /* Which service (signing name, target prefix, default endpoint, ops). */
  enum tt_ddb_service service;
  /* Signing region, required ("eu-west-1"). */
  const char *region;
  /* "http://127.0.0.1:8000" (DynamoDB Local, dynalite, moto, LocalStack)
   * or any http(s) URL with at most a "/" path; NULL or "" =
   * https://dynamodb.<region>.amazonaws.com. */
  const char *endpoint;
  /* Credentials to sign with. Borrowed: must outlive the backend; the
   * daemon closes it after the backend closed. Required. */
  struct tt_creds_provider *creds;
  /* Partner accounts (may be NULL when n_accounts is 0); copied. */
  const struct tt_ddb_account *accounts;
  size_t n_accounts;
  /* The HTTP client to use, borrowed (the daemon shares one with the
   * credentials chain); NULL = the backend makes and owns its own. */
  struct tt_http *http;
  /* Per attempt: the whole transfer's timeout; 0 = 10000 (connecting may
   * take 3000 of it). */
  uint64_t timeout_ms;
  /* Own client only: response body cap (0 = 64 MiB). */
  size_t max_response_bytes;
  /* NULL = time(NULL). */
  tt_ddb_clock_fn clock;
  void *clock_arg;
};

/* Creates the backend on `loop` (opts and its strings copied; creds and
 * http borrowed). Returns 0 and *out (new: ops->close, run the loop until
 * `closed` ran, then ops->destroy), or -1 with *err: TT_ERR_VALIDATION
 * naming the option (region, endpoint, creds) when one is missing or
 * malformed, TT_ERR_INTERNAL on allocation or handle failures. Every
 * operation of enum tt_ddb_op is supported; the endpoint decides which it
 * implements (dynalite has no transactions and no UpdateTimeToLive). */
int tt_ddb_backend_new(uv_loop_t *loop, const struct tt_ddb_options *opts,
                       struct tt_backend **out, struct tt_error *err);

/* Calls started and not yet completed (tests and the inflight gauge). */
size_t tt_ddb_backend_outstanding(const struct tt_backend *b);

/* Seconds the endpoint's clock is ahead of ours, as learned from a
 * signature-expired answer (0 until then); added to every signing time. */
int64_t tt_ddb_backend_clock_skew(const struct tt_backend *b);

#endif
