/* SPDX-License-Identifier: Apache-2.0 */
/* credentials.h -- AWS credentials for signing: the provider interface the
 * dynamodb backend signs with, and the default chain (environment, shared
 * files and credential_process, web identity, ECS/EKS container endpoint,
 * EC2 IMDSv2), cached and refreshed before expiry on the loop. Signers
 * peek at the cache synchronously and get (asynchronously) only on a
 * miss. */
#ifndef TT_BACKEND_DYNAMODB_CREDENTIALS_H
#define TT_BACKEND_DYNAMODB_CREDENTIALS_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "util/error.h"

struct tt_http;

/* One set of credentials. Secrets live only here and in the signer; wipe
 * with tt_creds_clear. */
struct tt_creds {
  char access_key_id[128];
  char secret_access_key[128];
  char session_token[4096]; /* "" when none */
  int64_t expires_at;       /* unix seconds; 0 = does not expire */
  char source[32];          /* "environment", "profile", "web-identity", ... (for logs) */
};

/* Wipes the secrets (OPENSSL_cleanse). */
void tt_creds_clear(struct tt_creds *c);

struct tt_creds_provider;

/* Completion of a credentials request: `creds` (borrowed for the callback)
 * on success, else `err` (never containing a secret). err->code is
 * TT_ERR_FORBIDDEN when the source refused for good (STS AccessDenied and
 * other 4xx refusals: retrying will not help), else
 * TT_ERR_BACKEND_UNAVAILABLE (or TT_ERR_INTERNAL). Credentials a source
 * answered already expired are refused, as DynamoDB would refuse them.
 * After a failed fetch the caching providers answer that failure again,
 * without fetching, for a back-off of 1 s doubling to 60 s
 * (creds_cache.h). Runs on the loop, never inside get. */
typedef void (*tt_creds_cb)(void *arg, const struct tt_creds *creds, const struct tt_error *err);

/* What peek answers besides 0 (the cached credentials). */
enum {
  TT_CREDS_PEEK_FAILED = -1, /* the last fetch failed and its back-off runs: *err */
  TT_CREDS_PEEK_MISS = 1,    /* nothing usable is cached: get() fetches */
};

/* The interface a provider implements: peek() is the synchronous fast path
 * (the cache), get() the asynchronous one (a fetch; concurrent gets share
 * one). cancel() withdraws a pending get (its callback then never runs). */
struct tt_creds_provider_ops {
  int (*peek)(struct tt_creds_provider *p, const struct tt_creds **creds, struct tt_error *err);
  int (*get)(struct tt_creds_provider *p, tt_creds_cb cb, void *arg, void **handle);
  void (*cancel)(struct tt_creds_provider *p, void *handle);
  void (*close)(struct tt_creds_provider *p, void (*closed)(void *arg), void *arg);
  void (*destroy)(struct tt_creds_provider *p);
};

struct tt_creds_provider {
  const struct tt_creds_provider_ops *ops;
  void *impl;
};

/* Calling convention of the ops, spelled out once. get keeps the one
 * completion contract of the daemon (docs/internals/completions.md);
 * peek is how a signer avoids a loop turn per request:
 *
 * peek: synchronous, never calls back. Returns 0 and *creds, the cached
 *   credentials when they may sign a request now (borrowed: valid until
 *   the caller returns to the loop or calls the provider again); or
 *   TT_CREDS_PEEK_FAILED and *err, the failure a get would answer during
 *   the back-off of the last failed fetch; or TT_CREDS_PEEK_MISS (also
 *   after close): then call get. A peek that finds the credentials due
 *   for refresh starts the background refresh, as a get would.
 * get: returns 0 and then calls `cb` exactly once, always later on the
 *   loop -- also when the cache or the back-off answers at once -- or
 *   returns a negative errno-style code (-ENOMEM, -ESHUTDOWN after close)
 *   and never calls `cb`. While the callback is pending, *handle
 *   identifies the get for cancel(). A caller may get again from inside
 *   the callback.
 * cancel: `handle` must be a pending get's handle (NULL is ignored); its
 *   callback never runs. The shared fetch itself goes on (its result is
 *   cached for the next get); only close() stops it.
 * close: fails pending gets (their callbacks run with an error, inside
 *   close), stops any fetch (HTTP transfer cancelled, credential_process
 *   killed) and runs `closed` (may be NULL) once every handle is closed,
 *   always later on the loop. close may be called from inside a get
 *   callback; destroy may not.
 * destroy: frees the provider once `closed` ran (every provider owns a
 *   loop handle, so it must always be closed first). Wipes every secret
 *   it held. */

/* Convenience wrappers over the ops (borrow `p`). */
int tt_creds_peek(struct tt_creds_provider *p, const struct tt_creds **creds,
                  struct tt_error *err);
int tt_creds_get(struct tt_creds_provider *p, tt_creds_cb cb, void *arg, void **handle);
void tt_creds_cancel(struct tt_creds_provider *p, void *handle);
void tt_creds_close(struct tt_creds_provider *p, void (*closed)(void *arg), void *arg);
void tt_creds_destroy(struct tt_creds_provider *p);

/* Credentials for a signer: calls `cb` at once, inside this call, when
 * peek answers (the cached credentials, or the failure of the back-off),
 * else gets (*handle as for get). Returns 0, or get's error (`cb` never
 * called then). */
int tt_creds_acquire(struct tt_creds_provider *p, tt_creds_cb cb, void *arg, void **handle);

/* Severity of a provider log line. */
enum tt_creds_log_level { TT_CREDS_LOG_INFO, TT_CREDS_LOG_WARN };

/* Log hook: `msg` never contains a secret, a token or a credentials URL
 * path; it names the provider and the reason. */
typedef void (*tt_creds_log_fn)(void *arg, enum tt_creds_log_level level, const char *msg);

/* Wall clock in unix seconds (injectable for tests). */
typedef int64_t (*tt_creds_clock_fn)(void *arg);

struct tt_creds_chain_options {
  /* "NAME=value" strings, NULL-terminated, copied at construction; NULL =
   * the process environment (environ) at construction time. Also the
   * environment of credential_process. */
  char *const *envp;
  tt_creds_clock_fn now;      /* NULL = time(NULL) */
  void *now_arg;
  const char *region;         /* STS region; NULL = AWS_REGION, AWS_DEFAULT_REGION, profile, us-east-1 */
  /* Endpoint overrides (tests). NULL = AWS_ENDPOINT_URL_STS, else
   * https://sts.<region>.amazonaws.com */
  const char *sts_endpoint;
  /* Base of AWS_CONTAINER_CREDENTIALS_RELATIVE_URI; NULL = http://169.254.170.2 */
  const char *container_endpoint;
  uint32_t process_timeout_ms;/* credential_process; 0 = 30000 */
  tt_creds_log_fn log;        /* may be NULL */
  void *log_arg;
  /* Called with +1 when a fetch starts running outside the get that
   * started it (file reads on the thread pool, credential_process, HTTP:
   * a background refresh, or a fetch that outlives its waiters) and with
   * -1 when it ended; the daemon feeds tabletheoryd_background_operations.
   * May be NULL. */
  void (*busy)(void *arg, int delta);
  void *busy_arg;
};

/* Creates the default chain on `loop`. `http` (borrowed, may be NULL: then
 * the STS, container and IMDS providers fail with a clear error) must
 * outlive the provider. `opts` may be NULL; its strings are copied. No file
 * is read and no network call is made here: the first get() resolves.
 * Returns 0 and *out (new; close then destroy it), or -1 with *err
 * (TT_ERR_INTERNAL on allocation failure). */
int tt_creds_chain_new(uv_loop_t *loop, struct tt_http *http,
                       const struct tt_creds_chain_options *opts,
                       struct tt_creds_provider **out, struct tt_error *err);

/* A provider that always answers the given credentials (copied; the
 * caller may wipe its copies): peek always answers them; get on `loop`.
 * `session_token` may be NULL. Returns 0 and *out (new; close then
 * destroy it), or -1 with *err: TT_ERR_VALIDATION when a key is missing or
 * too long (the message names the field, never the value), TT_ERR_INTERNAL
 * on allocation failure. */
int tt_creds_static_new(uv_loop_t *loop, const char *access_key_id,
                        const char *secret_access_key, const char *session_token,
                        struct tt_creds_provider **out, struct tt_error *err);

#endif
