/* SPDX-License-Identifier: Apache-2.0 */
/* creds_cache.c -- the credentials cache, refresh schedule, waiter queue
 * and provider ops shared by the default chain, the AssumeRole provider
 * and the static one. */
#include "backend/dynamodb/creds_cache.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void list_init(struct creds_waiter *s) {
  s->prev = s->next = s;
}

static bool list_empty(const struct creds_waiter *s) {
  return s->next == s;
}

static void list_unlink(struct creds_waiter *w) {
  w->prev->next = w->next;
  w->next->prev = w->prev;
  w->prev = w->next = w;
}

static void list_push(struct creds_waiter *s, struct creds_waiter *w) {
  w->prev = s->prev;
  w->next = s;
  s->prev->next = w;
  s->prev = w;
}

/* Moves every waiter of `from` to the end of `to`. */
static void list_splice(struct creds_waiter *to, struct creds_waiter *from) {
  if (list_empty(from))
    return;
  from->next->prev = to->prev;
  to->prev->next = from->next;
  from->prev->next = to;
  to->prev = from->prev;
  list_init(from);
}

void creds_cache_init(struct creds_cache *c, creds_fetch_fn fetch, void *owner,
                      void (*free)(void *owner)) {
  c->magic = CREDS_CACHE_MAGIC;
  c->fetch = fetch;
  c->owner = owner;
  c->free = free;
  list_init(&c->waiters);
  list_init(&c->posted);
  list_init(&c->dispatch);
}

/* Answers the gets in `dispatch`, one at a time: posted ones with their own
 * answers, the others with creds or err. A callback may cancel a later get
 * or close the provider (which answers the rest at once). */
static void dispatch(struct creds_cache *c, const struct tt_creds *creds,
                     const struct tt_error *err) {
  while (!list_empty(&c->dispatch)) {
    struct creds_waiter *w = c->dispatch.next;
    list_unlink(w);
    tt_creds_cb cb = w->cb;
    void *arg = w->arg;
    struct tt_error own;
    const struct tt_creds *wc = creds;
    const struct tt_error *we = err;
    if (w->posted) {
      own = w->err;
      wc = w->failed ? NULL : &c->cur;
      we = w->failed ? &own : NULL;
    }
    free(w);
    cb(arg, wc, we);
  }
}

static void on_timer(uv_timer_t *t) {
  struct creds_cache *c = t->data;
  /* Only what was posted before this callback: a callback that gets again
   * is answered on the next one. */
  list_splice(&c->dispatch, &c->posted);
  dispatch(c, NULL, NULL);
}

void creds_cache_open(struct creds_cache *c, uv_loop_t *loop, struct tt_creds_provider *pub) {
  uv_timer_init(loop, &c->timer); /* cannot fail */
  c->timer.data = c;
  pub->ops = &creds_cache_ops;
  pub->impl = c;
}

/* Reports a close once the timer closed and no fetch runs. */
static void maybe_closed(struct creds_cache *c) {
  if (c->closing && c->timer_closed && !c->fetching && c->closed) {
    void (*cb)(void *) = c->closed;
    c->closed = NULL;
    cb(c->closed_arg);
  }
}

static void on_timer_closed(uv_handle_t *h) {
  struct creds_cache *c = h->data;
  c->timer_closed = true;
  maybe_closed(c);
}

static void answer_all(struct creds_cache *c, const struct tt_error *err) {
  /* Gets being answered right now (a callback closes) get `err` too. */
  for (struct creds_waiter *w = c->dispatch.next; w != &c->dispatch; w = w->next)
    w->posted = false;
  for (struct creds_waiter *w = c->posted.next; w != &c->posted; w = w->next)
    w->posted = false;
  list_splice(&c->dispatch, &c->waiters);
  list_splice(&c->dispatch, &c->posted);
  dispatch(c, NULL, err);
}

static void op_close(struct tt_creds_provider *p, void (*closed)(void *arg), void *arg) {
  struct creds_cache *c = p->impl;
  assert(c->magic == CREDS_CACHE_MAGIC);
  if (c->closing)
    return;
  c->closing = true;
  c->closed = closed;
  c->closed_arg = arg;
  if (c->stop)
    c->stop(c->owner);
  struct tt_error err;
  tt_error_set(&err, TT_ERR_BACKEND_UNAVAILABLE, "credentials",
               "credentials: %s%sthe provider is closing", c->label ? c->label : "",
               c->label ? ": " : "");
  answer_all(c, &err);
  uv_close((uv_handle_t *)&c->timer, on_timer_closed);
}

void creds_cache_fetch_begin(struct creds_cache *c) {
  c->fetching = true;
  if (c->busy)
    c->busy(c->busy_arg, +1);
}

bool creds_cache_fetch_end(struct creds_cache *c) {
  c->fetching = false;
  if (c->busy)
    c->busy(c->busy_arg, -1);
  maybe_closed(c);
  return c->closing;
}

/* A new get queued at the end of `list`; NULL when out of memory. */
static struct creds_waiter *waiter_add(struct creds_waiter *list, tt_creds_cb cb, void *arg,
                                       void **handle) {
  struct creds_waiter *w = calloc(1, sizeof(*w));
  if (w == NULL)
    return NULL;
  w->cb = cb;
  w->arg = arg;
  list_push(list, w);
  if (handle)
    *handle = w;
  return w;
}

/* Queues a get whose answer is known now -- the cached credentials when
 * `err` is NULL, else `err` (copied) -- for the next timer callback, so
 * that it is never delivered inside the get. Returns 0 or -ENOMEM. */
static int post(struct creds_cache *c, tt_creds_cb cb, void *arg, const struct tt_error *err,
                void **handle) {
  struct creds_waiter *w = waiter_add(&c->posted, cb, arg, handle);
  if (w == NULL)
    return -ENOMEM;
  w->posted = true;
  if (err) {
    w->failed = true;
    w->err = *err;
  }
  uv_timer_start(&c->timer, on_timer, 0, 0);
  return 0;
}

void creds_cache_clear(struct creds_cache *c) {
  if (c->fetching || !list_empty(&c->waiters) || !list_empty(&c->posted))
    abort(); /* close() must have finished */
  c->magic = 0;
  tt_creds_clear(&c->cur);
}

int64_t creds_cache_now(const struct creds_cache *c) {
  return c->now ? c->now(c->now_arg) : (int64_t)time(NULL);
}

void creds_cache_log(const struct creds_cache *c, enum tt_creds_log_level level, const char *fmt,
                     ...) {
  if (c->log == NULL)
    return;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  c->log(c->log_arg, level, msg);
}

void creds_cache_vfail(struct tt_error *err, const char *label, const char *fmt, va_list ap) {
  char reason[200];
  vsnprintf(reason, sizeof(reason), fmt, ap);
  tt_error_set(err, TT_ERR_BACKEND_UNAVAILABLE, "credentials", "credentials: %s: %s", label,
               reason);
}

/* Whether the cached credentials may sign a request at `now` (credentials
 * with expires_at 0 never expire). */
static bool usable(const struct creds_cache *c, int64_t now) {
  return c->have &&
         (c->cur.expires_at == 0 || now < c->cur.expires_at - CREDS_USABLE_MARGIN_S);
}

int64_t creds_cache_install(struct creds_cache *c, struct tt_creds *fresh) {
  int64_t now = creds_cache_now(c);
  tt_creds_clear(&c->cur);
  c->cur = *fresh;
  tt_creds_clear(fresh);
  c->have = true;
  c->next_refresh_at = 0;
  if (c->failing)
    creds_cache_log(c, TT_CREDS_LOG_INFO, "%s: credentials are available again",
                    c->failure.message);
  c->failing = false;
  c->backoff_s = 0;
  c->failure.message[0] = '\0';
  if (c->cur.expires_at == 0)
    return 0;
  int64_t left = c->cur.expires_at - now;
  /* A short-lived answer would otherwise trigger a refresh on every get. */
  if (left <= CREDS_REFRESH_BEFORE_S)
    c->next_refresh_at = now + CREDS_RETRY_REFRESH_S;
  return left;
}

void creds_cache_note_failure(struct creds_cache *c, bool background, const struct tt_error *err) {
  int64_t now = creds_cache_now(c);
  bool repeated = strcmp(c->failure.message, err->message) == 0;
  c->failure = *err;
  if (background) {
    c->next_refresh_at = now + CREDS_RETRY_REFRESH_S;
    if (!repeated)
      creds_cache_log(c, TT_CREDS_LOG_WARN, "%s (keeping the current credentials)",
                      err->message);
    return;
  }
  c->backoff_s = c->backoff_s ? c->backoff_s : CREDS_BACKOFF_MIN_S;
  c->failing = true;
  c->retry_at = now + c->backoff_s;
  if (!repeated)
    creds_cache_log(c, TT_CREDS_LOG_WARN, "%s (fetching again in %u s at the earliest)",
                    err->message, (unsigned)c->backoff_s);
  c->backoff_s = c->backoff_s * 2 > CREDS_BACKOFF_MAX_S ? CREDS_BACKOFF_MAX_S : c->backoff_s * 2;
}

/* Whether the back-off of the last failure still runs at `now`: then *err
 * is that failure. */
static bool backing_off(const struct creds_cache *c, int64_t now, struct tt_error *err) {
  if (!c->failing || now >= c->retry_at)
    return false;
  *err = c->failure;
  return true;
}

/* Starts the background refresh usable credentials are due for. */
static void refresh_if_due(struct creds_cache *c, int64_t now) {
  if (!c->fetching && c->cur.expires_at != 0 &&
      now >= c->cur.expires_at - CREDS_REFRESH_BEFORE_S && now >= c->next_refresh_at) {
    struct tt_error ignored; /* logged by creds_cache_note_failure */
    c->fetch(c->owner, true, &ignored);
  }
}

static int op_peek(struct tt_creds_provider *p, const struct tt_creds **creds,
                   struct tt_error *err) {
  struct creds_cache *c = p->impl;
  int64_t now = creds_cache_now(c);
  assert(c->magic == CREDS_CACHE_MAGIC);
  if (c->closing)
    return TT_CREDS_PEEK_MISS; /* get says -ESHUTDOWN */
  if (usable(c, now)) {
    refresh_if_due(c, now);
    *creds = &c->cur;
    return 0;
  }
  return !c->fetching && backing_off(c, now, err) ? TT_CREDS_PEEK_FAILED : TT_CREDS_PEEK_MISS;
}

static int op_get(struct tt_creds_provider *p, tt_creds_cb cb, void *arg, void **handle) {
  struct creds_cache *c = p->impl;
  int64_t now = creds_cache_now(c);
  assert(c->magic == CREDS_CACHE_MAGIC);
  if (handle)
    *handle = NULL;
  if (c->closing)
    return -ESHUTDOWN;
  if (usable(c, now)) {
    refresh_if_due(c, now);
    return post(c, cb, arg, NULL, handle);
  }
  if (c->fetching && c->promote)
    c->promote(c->owner);
  if (!c->fetching) {
    struct tt_error err;
    int rc;
    if (backing_off(c, now, &err))
      return post(c, cb, arg, &err, handle);
    if ((rc = c->fetch(c->owner, false, &err)) != 0)
      return post(c, cb, arg, rc > 0 ? NULL : &err, handle);
  }
  /* On -ENOMEM the fetch runs on without waiters: its result is cached. */
  return waiter_add(&c->waiters, cb, arg, handle) ? 0 : -ENOMEM;
}

static void op_cancel(struct tt_creds_provider *p, void *handle) {
  (void)p;
  if (handle == NULL)
    return;
  struct creds_waiter *w = handle;
  list_unlink(w);
  free(w);
}

void creds_cache_answer(struct creds_cache *c, const struct tt_creds *creds,
                        const struct tt_error *err) {
  list_splice(&c->dispatch, &c->waiters);
  dispatch(c, creds, err);
}

static void op_destroy(struct tt_creds_provider *p) {
  struct creds_cache *c = p->impl;
  assert(c->magic == CREDS_CACHE_MAGIC);
  c->free(c->owner); /* creds_cache_clear aborts unless close() finished */
}

const struct tt_creds_provider_ops creds_cache_ops = {op_peek, op_get, op_cancel, op_close,
                                                      op_destroy};
