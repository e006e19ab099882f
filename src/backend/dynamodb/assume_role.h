/* SPDX-License-Identifier: Apache-2.0 */
/* assume_role.h -- a credentials provider that answers STS AssumeRole
 * credentials for one role (a partner account), signed with a base
 * provider's credentials, cached and refreshed before expiry on the loop.
 * It follows the calling convention of credentials.h (peek, then get on a
 * miss). */
#ifndef TT_BACKEND_DYNAMODB_ASSUME_ROLE_H
#define TT_BACKEND_DYNAMODB_ASSUME_ROLE_H

#include <stdint.h>
#include <uv.h>

#include "backend/dynamodb/credentials.h"
#include "util/error.h"

struct tt_http;

struct tt_creds_assume_role_options {
  const char *role_arn;     /* required: "arn:aws:iam::111122223333:role/x" */
  const char *session_name; /* required: RoleSessionName ("theorydb-acme") */
  const char *external_id;  /* ExternalId; NULL or "" = none */
  uint32_t duration_s;      /* DurationSeconds; 0 = 3600 */
  const char *region;       /* required: the STS region it calls and signs for */
  /* NULL or "" = https://sts.<region>.amazonaws.com (".com.cn" in China);
   * else an http(s) URL with at most a "/" path (tests: moto). */
  const char *sts_endpoint;
  const char *label;        /* names the provider in messages ("partner acme") */
  tt_creds_clock_fn now;    /* NULL = time(NULL) */
  void *now_arg;
  tt_creds_log_fn log;       /* may be NULL; never given a secret */
  void *log_arg;
  /* The background-operations gauge, as in tt_creds_chain_options. */
  void (*busy)(void *arg, int delta);
  void *busy_arg;
};

/* Creates the provider. `http` and `base` are borrowed and must outlive it
 * (close it before closing `base`); `opts` strings are copied. No call is
 * made here: the first get() (or a peek that finds nothing cached followed
 * by a get) assumes the role, signed with the base provider's cached
 * credentials when it has some (peek), else once its get answered.
 * close() runs `closed` later on the loop, once the provider's timer closed
 * and the AssumeRole in flight, if any, ended. Returns 0 and *out (new; close then destroy), or -1
 * with *err: TT_ERR_VALIDATION naming the option (role_arn, session_name,
 * region, sts_endpoint, duration_s), TT_ERR_INTERNAL on allocation
 * failure. */
int tt_creds_assume_role_new(uv_loop_t *loop, struct tt_http *http,
                             struct tt_creds_provider *base,
                             const struct tt_creds_assume_role_options *opts,
                             struct tt_creds_provider **out, struct tt_error *err);

/* AssumeRole calls made so far, successful or not (tests, logs). */
uint64_t tt_creds_assume_role_calls(const struct tt_creds_provider *p);

#endif
