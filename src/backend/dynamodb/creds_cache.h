/* SPDX-License-Identifier: Apache-2.0 */
/* creds_cache.h -- what the caching credentials providers (the default
 * chain, AssumeRole and the static one) share: the cached credentials and
 * their refresh schedule, the gets waiting for the one fetch in flight, the
 * clock and log hooks, and the provider ops. Not for use outside
 * src/backend/dynamodb. Loop thread only. */
#ifndef TT_BACKEND_DYNAMODB_CREDS_CACHE_H
#define TT_BACKEND_DYNAMODB_CREDS_CACHE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "backend/dynamodb/credentials.h"
#include "util/error.h"

/* A request signed now must not arrive with expired credentials. */
#define CREDS_USABLE_MARGIN_S 15

/* After a failed fetch that a request waited for, gets answer that
 * failure without fetching again for a while: 1 s after the first, then
 * doubling up to CREDS_BACKOFF_MAX_S, until a fetch succeeds. */
#define CREDS_BACKOFF_MIN_S 1
#define CREDS_BACKOFF_MAX_S 60

/* A background refresh starts this long before the credentials expire; a
 * failed refresh, or one that again answered credentials inside that
 * window, is retried after CREDS_RETRY_REFRESH_S. */
#define CREDS_REFRESH_BEFORE_S 300
#define CREDS_RETRY_REFRESH_S 60

/* How a caching provider starts a fetch: a refresh in the background, or
 * one a get waits for. Returns 0 (it runs), 1 (it ended at once: the cache
 * holds its credentials) or -1 with *err. */
typedef int (*creds_fetch_fn)(void *owner, bool background, struct tt_error *err);

struct creds_waiter {
  struct creds_waiter *prev, *next; /* circular list with a sentinel */
  tt_creds_cb cb;
  void *arg;
  /* A get answered from what the cache knew when it was asked
   * (posted): the cached credentials, or `err` when `failed`. */
  bool posted, failed;
  struct tt_error err;
};

struct creds_cache {
  struct tt_creds cur; /* cached credentials when `have` */
  bool have;
  int64_t next_refresh_at; /* no background refresh before this */
  tt_creds_clock_fn now;
  void *now_arg;
  tt_creds_log_fn log;
  void *log_arg;
  /* The last fetch failed: gets before retry_at answer `failure`. */
  bool failing;
  int64_t retry_at;
  uint32_t backoff_s; /* the wait after the next failure: doubles to the max */
  struct tt_error failure;
  struct creds_waiter waiters;  /* gets waiting for the current fetch */
  struct creds_waiter posted;   /* gets answered on the next timer callback */
  struct creds_waiter dispatch; /* gets being answered right now */
  /* Delivers the posted gets, so that get never calls back inside itself;
   * the one handle of a provider. Open from creds_cache_open to
   * creds_cache_close. */
  uv_timer_t timer;
  bool timer_closed;
  bool closing;   /* the provider's close() was called */
  uint32_t magic; /* CREDS_CACHE_MAGIC while the provider lives; asserted by the ops */
  /* The provider (`owner`): its fetch, whether one runs (from
   * creds_cache_fetch_begin to creds_cache_fetch_end), and its hooks:
   * `stop` (may be NULL) stops the running fetch on close, `promote` (may
   * be NULL) is told when a get waits for that fetch, `free` frees the
   * provider on destroy. `label` names it in the closing message (NULL:
   * nothing). */
  creds_fetch_fn fetch;
  void *owner;
  bool fetching;
  void (*stop)(void *owner);
  void (*promote)(void *owner);
  void (*free)(void *owner);
  const char *label;
  /* The background-operations gauge (tt_creds_chain_options.busy). */
  void (*busy)(void *arg, int delta);
  void *busy_arg;
  /* The provider's close callback: runs once the timer closed and no fetch
   * runs. */
  void (*closed)(void *arg);
  void *closed_arg;
};

#define CREDS_CACHE_MAGIC 0x63726564u /* "cred" */

/* Sets up an empty cache (no credentials, no waiters) of provider `owner`
 * whose fetches are fetch(owner, ...) and which `free` frees; the caller
 * then sets the other hooks. */
void creds_cache_init(struct creds_cache *c, creds_fetch_fn fetch, void *owner,
                      void (*free)(void *owner));

/* Opens the timer that delivers posted gets, on `loop`, and makes `pub`
 * the provider (ops creds_cache_ops, impl the cache): the provider's last
 * construction step (a provider with an open timer must be closed before
 * it is freed). */
void creds_cache_open(struct creds_cache *c, uv_loop_t *loop, struct tt_creds_provider *pub);

/* The ops of a caching provider (credentials.h), at the cache's clock.
 * Once closing, peek misses and get returns -ESHUTDOWN (*handle NULL).
 * Usable credentials answer (and start a refresh in the background when
 * one is due); else the failure whose back-off still runs answers, without
 * fetching again; else peek misses and get waits for a fetch, started
 * unless one runs. cancel drops a queued or posted get. close answers
 * every get, queued or posted, with "credentials: <label>: the provider is
 * closing", stops the fetch and closes the timer, then runs `closed` once
 * the timer closed and no fetch runs; destroy frees the provider. */
extern const struct tt_creds_provider_ops creds_cache_ops;

/* Counts a fetch that runs on after the call that started it: `fetching`
 * for peek and get, +1 on the busy gauge. */
void creds_cache_fetch_begin(struct creds_cache *c);

/* Ends what creds_cache_fetch_begin counted. Returns true when the
 * provider is closing: the fetch's outcome is to be dropped (a close that
 * waited for it is reported). */
bool creds_cache_fetch_end(struct creds_cache *c);

/* Wipes then frees n bytes at p (p may be NULL); the same for the C
 * string s (NULL or not). */
void creds_free_secret(void *p, size_t n);
void creds_free_str(char *s);

/* Wipes the cached credentials. Aborts when a fetch or a get is still
 * pending: a provider is destroyed only after its close finished. */
void creds_cache_clear(struct creds_cache *c);

/* The current time (the injected clock, else time(NULL)). */
int64_t creds_cache_now(const struct creds_cache *c);

/* Sends one line to the log hook, printf-style. Callers never pass a
 * secret. */
void creds_cache_log(const struct creds_cache *c, enum tt_creds_log_level level, const char *fmt,
                     ...) __attribute__((format(printf, 3, 4)));

/* Fills *err with "credentials: <label>: <reason>" (code
 * TT_ERR_BACKEND_UNAVAILABLE, field "credentials"). */
void creds_cache_vfail(struct tt_error *err, const char *label, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* Takes `fresh` into the cache (steals it: *fresh is wiped) and schedules
 * the next refresh. Returns the seconds left until expiry (0 when the
 * credentials do not expire). */
int64_t creds_cache_install(struct creds_cache *c, struct tt_creds *fresh);

/* Notes a failed fetch. A failed background refresh keeps the cached
 * credentials and waits CREDS_RETRY_REFRESH_S. Any other failure starts or
 * lengthens the back-off (see CREDS_BACKOFF_MIN_S) and is kept for the
 * gets until it ends. A failure is logged when its message differs from
 * the last one's: once per run of equal failures, not once per request. */
void creds_cache_note_failure(struct creds_cache *c, bool background, const struct tt_error *err);

/* Answers every queued get with creds (borrowed) or err, one at a time, so
 * that a callback may cancel a later one or close the provider. Posted gets
 * keep their own answers. */
void creds_cache_answer(struct creds_cache *c, const struct tt_creds *creds,
                        const struct tt_error *err);

#endif
