/* SPDX-License-Identifier: Apache-2.0 */
/* otlp.c -- the batch span processor and OTLP/HTTP exporter.
 *
 * Threads. Everything here runs on the exporter's loop (the daemon's event
 * loop) but the HTTP exchange itself: the queue, the batches' encoding,
 * the timers (periodic flush, retries, back-off), the tracer's pause, the
 * stats and the metrics. The POSTs go out from one sender thread that runs
 * a loop of its own with its own tt_http client. The two meet in the
 * fields under `lock`, one request and one outcome at a time:
 *   - send_batch (exporter's loop) stores the request (its body is the
 *     sealed batch `sending`, which nothing on the exporter's loop touches
 *     until the outcome is back) and wakes the sender (uv_async_send);
 *   - the sender starts it on its tt_http; when it completes, the sender
 *     stores the transport and status and wakes the exporter's loop;
 *   - that loop takes the outcome and goes on as the retries and back-off
 *     say (on_outcome).
 * The URL, the header lines and the encoder are written before the thread
 * starts and only read after. At shutdown (maybe_finish_close: nothing in
 * flight) the exporter's loop asks the sender to stop; the sender closes its
 * client and its wake-up handle, its loop ends, and the thread is joined
 * there and then: the wait is for a client with no request to close.
 * Spans are encoded on the exporter's loop, where they were recorded: their
 * memory never leaves that thread's cache, and the spare spans stay there
 * for the next requests. Only the sealed batch (~280 bytes a span) crosses
 * to the sender, once, when the kernel copies it out. */
#include "daemon/otlp.h"

#include <openssl/crypto.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dynamodb/http.h"
#include "obs/log.h"
#include "util/buf.h"

/* A batch of the queue: spans encoded as they end (obs/otlp.h), so the
 * queue holds bytes, not spans. */
struct batch_node {
  struct batch_node *next;
  struct tt_otlp_batch b;
};

struct tt_otlp_exporter {
  uv_loop_t *loop;
  /* The sender thread (see the file's head): its loop, its client and the
   * request it runs are its own. */
  uv_thread_t thread;
  bool thread_started;
  uv_loop_t sender_loop;
  bool sender_loop_made;
  struct tt_http *http; /* on sender_loop */
  struct tt_http_call call;
  uv_async_t wake; /* on sender_loop: a request to send, or stop */
  uv_async_t *done; /* on loop: an outcome to take; freed when closed */
  /* Shared by the two threads, under lock. */
  uv_mutex_t lock;
  bool lock_made;
  bool job_ready, stop;       /* for the sender */
  struct tt_http_request job; /* its strings and body stay put until the outcome is taken */
  bool outcome_ready, start_failed; /* for the exporter's loop */
  enum tt_http_transport outcome_transport;
  long outcome_status;
  char *url;
  char **header_lines; /* "Name: value", NULL-terminated */
  size_t n_header_lines;
  char *service_name, *service_version;
  struct tt_otlp_kvs attrs;
  struct tt_otlp_encoder enc; /* the resource and scope, encoded once */
  uint64_t timeout_ms, schedule_delay_ms, retry_base_ms;
  uint64_t pause_base_ms, pause_max_ms;
  uint64_t pause_ms; /* the current back-off; 0 after a success */
  enum tt_otlp_protocol protocol;
  size_t max_queue, max_batch;
  unsigned max_attempts;
  /* The queue: batches of at most max_batch spans, the last one filling;
   * queued counts their spans. Emptied batches are kept for reuse. */
  struct batch_node *head, *tail, *spare;
  size_t queued;
  /* Ended spans not encoded yet (counted in queued): encoded ENCODE_RUN at
   * a time, and before any export. */
  struct tt_span *pend_head, *pend_tail;
  size_t npend;
  /* The export in flight (at most one): its batch is the body, borrowed
   * by the sender until its outcome is taken. */
  struct batch_node *sending;
  size_t batch_n;
  unsigned attempt;
  bool in_flight;
  bool waiting_retry;
  uv_timer_t tick;  /* periodic flush */
  uv_timer_t retry; /* back-off between attempts */
  uv_timer_t pause; /* back-off after a failed batch */
  bool backing_off;  /* the pause timer runs: nothing is exported */
  bool paused;       /* the tracer is paused, until an export succeeds */
  bool probe;        /* the next export goes out even with nothing queued */
  /* Shutdown. */
  bool closing;
  uint64_t flush_deadline; /* loop time */
  int pending_closes;
  void (*closed)(void *arg);
  void *closed_arg;
  struct tt_otlp_exporter_stats stats;
  struct tt_metric_family *m_exported, *m_dropped, *m_exports;
  double *m_queue; /* the queue gauge's value (tt_metric_slot): set a span */
};

static void count_dropped(struct tt_otlp_exporter *e, const char *reason, size_t n) {
  if (n == 0)
    return;
  *(strcmp(reason, "queue_full") == 0      ? &e->stats.dropped_queue
    : strcmp(reason, "export_failed") == 0 ? &e->stats.dropped_export
    : strcmp(reason, "paused") == 0        ? &e->stats.dropped_paused
                                           : &e->stats.dropped_shutdown) += n;
  if (e->m_dropped) {
    const char *l[1] = {reason};
    tt_metric_add(e->m_dropped, l, (double)n);
  }
}

static void queue_gauge(struct tt_otlp_exporter *e) {
  if (e->m_queue)
    *e->m_queue = (double)e->queued;
}

/* Counts the spans the paused tracer did not record. */
static void count_paused(struct tt_otlp_exporter *e) {
  count_dropped(e, "paused", (size_t)tt_tracer_take_paused());
}

static void maybe_finish_close(struct tt_otlp_exporter *e);

/* A new batch's buffer is taken at about a full batch's bytes at once
 * (past malloc's mmap threshold, a block of its own; its pages are touched
 * as spans fill it), not grown by doubling from 256 bytes: the smaller
 * buffers freed on the way would stay among the requests' allocations as
 * free chunks, which every request's malloc and free then sort through.
 * A batch that needs more (or whose room could not be taken) grows as any
 * buffer does. */
#define BATCH_SPAN_BYTES_PROTOBUF 384u /* ~280 a span of a GET */
#define BATCH_SPAN_BYTES_JSON 1024u
#define BATCH_ROOM_MAX ((size_t)4 << 20)

/* Spans encoded together (daemon's loop): a GET ends two. */
#define ENCODE_RUN 8

/* An empty batch: a kept one, or a new one (NULL: no memory). */
static struct batch_node *node_get(struct tt_otlp_exporter *e) {
  struct batch_node *n = e->spare;
  if (n) {
    e->spare = n->next;
  } else if ((n = malloc(sizeof(*n))) != NULL) {
    size_t per = e->protocol == TT_OTLP_JSON ? BATCH_SPAN_BYTES_JSON : BATCH_SPAN_BYTES_PROTOBUF;
    tt_otlp_batch_init(&n->b);
    (void)tt_buf_reserve(&n->b.buf, e->max_batch <= BATCH_ROOM_MAX / per ? e->max_batch * per
                                                                          : BATCH_ROOM_MAX);
  } else {
    return NULL;
  }
  n->next = NULL;
  return n;
}

/* Empties a batch and keeps it: there are at most max_queue / max_batch
 * + 2 of them, each grown to a batch's bytes once. */
static void node_put(struct tt_otlp_exporter *e, struct batch_node *n) {
  tt_otlp_batch_reset(&n->b);
  n->next = e->spare;
  e->spare = n;
}

static void nodes_free(struct batch_node *n) {
  while (n) {
    struct batch_node *next = n->next;
    tt_otlp_batch_free(&n->b);
    free(n);
    n = next;
  }
}

static void export_start(struct tt_otlp_exporter *e);
static void encode_pending(struct tt_otlp_exporter *e);
static void send_batch(struct tt_otlp_exporter *e);

/* An export succeeded: the tracer records again. */
static void resume(struct tt_otlp_exporter *e) {
  e->pause_ms = 0;
  if (!e->paused)
    return;
  e->paused = false;
  count_paused(e);
  if (!e->closing)
    tt_tracer_pause(false);
}

/* The back-off is over: one export tells whether the collector is back --
 * what is queued, or a request without spans -- and the tracer stays
 * paused until it succeeds. */
static void pause_cb(uv_timer_t *t) {
  struct tt_otlp_exporter *e = t->data;
  e->backing_off = false;
  count_paused(e);
  e->probe = true;
  export_start(e);
}

static void batch_done(struct tt_otlp_exporter *e, bool ok) {
  if (ok) {
    e->stats.exported += e->batch_n;
    e->stats.exports_ok++;
    if (e->m_exported)
      tt_metric_add(e->m_exported, NULL, (double)e->batch_n);
    resume(e);
  } else {
    e->stats.exports_failed++;
    count_dropped(e, "export_failed", e->batch_n);
  }
  if (e->m_exports) {
    const char *l[1] = {ok ? "success" : "failure"};
    tt_metric_add(e->m_exports, l, 1);
  }
  e->batch_n = 0;
  e->in_flight = false;
  if (e->sending) {
    node_put(e, e->sending);
    e->sending = NULL;
  }
  if (!ok && !e->closing) {
    /* Nobody is listening, or not well: record nothing for a while. */
    e->pause_ms = e->pause_ms == 0 ? e->pause_base_ms
                  : e->pause_ms >= e->pause_max_ms / 2 ? e->pause_max_ms
                                                       : 2 * e->pause_ms;
    e->backing_off = true;
    e->paused = true;
    tt_tracer_pause(true);
    uv_timer_start(&e->pause, pause_cb, e->pause_ms, 0);
    return;
  }
  if (e->closing || e->queued >= e->max_batch)
    export_start(e);
  maybe_finish_close(e);
}

static void retry_cb(uv_timer_t *t) {
  struct tt_otlp_exporter *e = t->data;
  e->waiting_retry = false;
  send_batch(e);
}

/* An attempt's outcome, on the exporter's loop. */
static void on_outcome(struct tt_otlp_exporter *e, enum tt_http_transport transport,
                       long status) {
  bool ok = transport == TT_HTTP_OK && status >= 200 && status < 300;
  if (ok) {
    batch_done(e, true);
    return;
  }
  /* OTLP/HTTP: 429, 502, 503 and 504 and transport failures may be retried;
   * anything else is final. */
  bool retryable = transport != TT_HTTP_OK || status == 429 || status == 502 || status == 503 ||
                   status == 504;
  /* While the tracer is paused the export is a probe: one attempt, and
   * the next back-off if it fails. */
  if (retryable && !e->closing && !e->paused && e->attempt < e->max_attempts) {
    uint64_t wait = e->retry_base_ms << (e->attempt - 1);
    e->stats.retries++;
    e->waiting_retry = true;
    uv_timer_start(&e->retry, retry_cb, wait, 0);
    return;
  }
  struct tt_log_line l;
  tt_log_begin(&l, TT_LOG_DEBUG, "trace.export_failed");
  tt_log_int(&l, "status", transport == TT_HTTP_OK ? status : 0);
  tt_log_int(&l, "transport", (int64_t)transport);
  tt_log_int(&l, "spans", (int64_t)e->batch_n);
  tt_log_end(&l);
  batch_done(e, false);
}

/* ---- the sender thread ---- */

static void one_closed(struct tt_otlp_exporter *e);

/* The exporter's loop closed `done` (data: the exporter, or NULL when it
 * is gone already). */
static void done_closed(uv_handle_t *h) {
  struct tt_otlp_exporter *e = h->data;
  free(h);
  if (e)
    one_closed(e);
}

/* Sender: hands an outcome to the exporter's loop. */
static void post_outcome(struct tt_otlp_exporter *e, bool start_failed,
                         enum tt_http_transport transport, long status) {
  uv_mutex_lock(&e->lock);
  e->outcome_ready = true;
  e->start_failed = start_failed;
  e->outcome_transport = transport;
  e->outcome_status = status;
  uv_mutex_unlock(&e->lock);
  uv_async_send(e->done);
}

/* Sender: the POST completed (any status, or a transport failure). */
static void on_sent(struct tt_http_call *call, struct tt_http_response *resp, void *arg) {
  (void)call;
  post_outcome(arg, false, resp->transport, resp->transport == TT_HTTP_OK ? resp->status : 0);
}

/* Sender's loop: closes its client and its wake-up handle, the last ones:
 * the loop then ends. */
static void sender_close(struct tt_otlp_exporter *e) {
  tt_http_close(e->http, NULL, NULL);
  uv_close((uv_handle_t *)&e->wake, NULL);
}

/* Sender: a request to start, or the order to stop (never both: the
 * exporter's loop stops the sender only with nothing in flight). */
static void on_wake(uv_async_t *a) {
  struct tt_otlp_exporter *e = a->data;
  uv_mutex_lock(&e->lock);
  bool job = e->job_ready, stop = e->stop;
  struct tt_http_request req = e->job;
  e->job_ready = false;
  uv_mutex_unlock(&e->lock);
  if (job && tt_http_start(e->http, &e->call, &req, on_sent, e) != 0)
    post_outcome(e, true, TT_HTTP_OTHER, 0);
  if (stop)
    sender_close(e);
}

static void sender_main(void *arg) {
  struct tt_otlp_exporter *e = arg;
  uv_run(&e->sender_loop, UV_RUN_DEFAULT); /* until on_wake closed the last handle */
}

/* Exporter's loop: the sender's outcome. The handle keeps the loop alive
 * only while a request is out. */
static void on_done(uv_async_t *a) {
  struct tt_otlp_exporter *e = a->data;
  uv_mutex_lock(&e->lock);
  bool ready = e->outcome_ready, start_failed = e->start_failed;
  enum tt_http_transport transport = e->outcome_transport;
  long status = e->outcome_status;
  e->outcome_ready = false;
  uv_mutex_unlock(&e->lock);
  if (!ready)
    return;
  uv_unref((uv_handle_t *)e->done);
  if (start_failed)
    batch_done(e, false);
  else
    on_outcome(e, transport, status);
}

/* Exporter's loop: stops the sender and waits for its thread, which has
 * nothing in flight -- it closes its client and ends. */
static void sender_join(struct tt_otlp_exporter *e) {
  if (!e->thread_started)
    return;
  uv_mutex_lock(&e->lock);
  e->stop = true;
  uv_mutex_unlock(&e->lock);
  uv_async_send(&e->wake);
  uv_thread_join(&e->thread);
  e->thread_started = false;
}

/* The sender's loop, client and thread. Signals stay with the daemon's
 * thread: the sender's blocks them all. Returns 0 or -1. */
static int sender_start(struct tt_otlp_exporter *e, const struct tt_http_options *ho) {
  if (uv_mutex_init(&e->lock) != 0)
    return -1;
  e->lock_made = true;
  if (uv_loop_init(&e->sender_loop) != 0)
    return -1;
  e->sender_loop_made = true;
  if (tt_http_new(&e->sender_loop, ho, &e->http) != 0)
    return -1;
  uv_async_init(&e->sender_loop, &e->wake, on_wake);
  e->wake.data = e;
  e->done = malloc(sizeof(*e->done));
  if (e->done == NULL || uv_async_init(e->loop, e->done, on_done) != 0) {
    free(e->done);
    e->done = NULL;
    sender_close(e);
    uv_run(&e->sender_loop, UV_RUN_DEFAULT);
    return -1;
  }
  e->done->data = e;
  uv_unref((uv_handle_t *)e->done);
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = uv_thread_create(&e->thread, sender_main, e);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) {
    sender_close(e);
    uv_run(&e->sender_loop, UV_RUN_DEFAULT);
    e->done->data = NULL; /* the exporter goes before the handle's close completes */
    uv_close((uv_handle_t *)e->done, done_closed);
    e->done = NULL;
    return -1;
  }
  e->thread_started = true;
  return 0;
}

static void send_batch(struct tt_otlp_exporter *e) {
  uint64_t timeout = e->timeout_ms;
  if (e->closing) {
    uint64_t now = uv_now(e->loop);
    if (now >= e->flush_deadline) {
      batch_done(e, false);
      return;
    }
    if (e->flush_deadline - now < timeout)
      timeout = e->flush_deadline - now;
  }
  e->attempt++;
  const struct tt_otlp_batch *b = &e->sending->b;
  struct tt_http_request req = {.method = "POST",
                                .url = e->url,
                                .headers = (const char *const *)e->header_lines,
                                .body = b->buf.data + b->body,
                                .body_len = b->buf.len - b->body,
                                .timeout_ms = timeout,
                                .connect_timeout_ms = timeout < 3000 ? timeout : 3000};
  uv_mutex_lock(&e->lock);
  e->job = req;
  e->job_ready = true;
  uv_mutex_unlock(&e->lock);
  uv_ref((uv_handle_t *)e->done); /* the loop waits for the outcome */
  uv_async_send(&e->wake);
}

static void export_start(struct tt_otlp_exporter *e) {
  encode_pending(e);
  if (e->in_flight || (e->queued == 0 && !e->probe) || (e->backing_off && !e->closing))
    return;
  e->probe = false;
  /* The oldest batch: full, or the one filling when it is the only one. */
  struct batch_node *n = e->head;
  if (n) {
    e->head = n->next;
    if (e->head == NULL)
      e->tail = NULL;
    n->next = NULL;
    e->queued -= n->b.n;
    queue_gauge(e);
  } else {
    n = node_get(e); /* a probe without spans */
  }
  e->sending = n;
  e->batch_n = n ? n->b.n : 0;
  e->attempt = 0;
  e->in_flight = true;
  if (n == NULL || tt_otlp_batch_seal(&e->enc, &n->b) != 0) {
    batch_done(e, false);
    return;
  }
  send_batch(e);
}

static void tick_cb(uv_timer_t *t) {
  count_paused(t->data);
  export_start(t->data);
}

void tt_otlp_exporter_flush(struct tt_otlp_exporter *e) { export_start(e); }

/* Encodes one pending span (already counted in queued) into the filling
 * batch or a new one, and releases it. */
static void encode_one(struct tt_otlp_exporter *e, struct tt_span *span) {
  struct batch_node *t = e->tail;
  bool fresh = t == NULL || t->b.n >= e->max_batch;
  if (fresh)
    t = node_get(e);
  int rc = t ? tt_otlp_batch_add(&e->enc, &t->b, span) : -1;
  tt_span_release(span);
  if (rc != 0) {
    if (t && fresh)
      node_put(e, t);
    e->queued--;
    count_dropped(e, "export_failed", 1); /* no memory to encode it */
    return;
  }
  if (fresh) {
    if (e->tail)
      e->tail->next = t;
    else
      e->head = t;
    e->tail = t;
  }
}

static void encode_pending(struct tt_otlp_exporter *e) {
  struct tt_span *s = e->pend_head;
  e->pend_head = e->pend_tail = NULL;
  e->npend = 0;
  while (s) {
    struct tt_span *next = s->next;
    encode_one(e, s);
    s = next;
  }
}

void tt_otlp_exporter_sink(struct tt_span *span, void *arg) {
  struct tt_otlp_exporter *e = arg;
  if (e->closing || e->queued >= e->max_queue) {
    tt_span_release(span);
    count_dropped(e, e->closing ? "shutdown" : "queue_full", 1);
    return;
  }
  /* Encoded with the next few, when the encoder's code is still in the
   * instruction cache: one span a time, it is fetched afresh each time. */
  span->next = NULL;
  if (e->pend_tail)
    e->pend_tail->next = span;
  else
    e->pend_head = span;
  e->pend_tail = span;
  e->npend++;
  e->queued++;
  if (e->npend >= ENCODE_RUN)
    encode_pending(e);
  queue_gauge(e);
  if (e->queued >= e->max_batch)
    export_start(e);
}

void tt_otlp_exporter_stats(const struct tt_otlp_exporter *e, struct tt_otlp_exporter_stats *out) {
  *out = e->stats;
  out->dropped_paused += tt_tracer_paused_count();
  out->queued = e->queued;
  out->in_flight = e->in_flight;
  out->paused = e->paused;
}

/* ---- shutdown ---- */

static void one_closed(struct tt_otlp_exporter *e) {
  if (--e->pending_closes == 0 && e->closed)
    e->closed(e->closed_arg);
}

static void handle_closed(uv_handle_t *h) { one_closed(h->data); }

static void release_pending(struct tt_otlp_exporter *e) {
  while (e->pend_head) {
    struct tt_span *s = e->pend_head;
    e->pend_head = s->next;
    tt_span_release(s);
  }
  e->pend_tail = NULL;
  e->npend = 0;
}

static void maybe_finish_close(struct tt_otlp_exporter *e) {
  if (!e->closing || e->in_flight || e->pending_closes != 0)
    return;
  /* What is still queued could not be sent in time. */
  size_t left = e->queued;
  release_pending(e);
  while (e->head) {
    struct batch_node *n = e->head;
    e->head = n->next;
    node_put(e, n);
  }
  e->tail = NULL;
  e->queued = 0;
  queue_gauge(e);
  count_dropped(e, "shutdown", left);
  count_paused(e);
  sender_join(e);
  e->pending_closes = 4;
  uv_close((uv_handle_t *)&e->tick, handle_closed);
  uv_close((uv_handle_t *)&e->retry, handle_closed);
  uv_close((uv_handle_t *)&e->pause, handle_closed);
  uv_close((uv_handle_t *)e->done, done_closed);
  e->done = NULL;
}

void tt_otlp_exporter_close(struct tt_otlp_exporter *e, uint64_t flush_ms,
                            void (*closed)(void *arg), void *arg) {
  e->closing = true;
  e->closed = closed;
  e->closed_arg = arg;
  e->flush_deadline = uv_now(e->loop) + flush_ms;
  uv_timer_stop(&e->tick);
  uv_timer_stop(&e->pause);
  e->backing_off = false;
  count_paused(e);
  if (e->waiting_retry) {
    uv_timer_stop(&e->retry);
    e->waiting_retry = false;
    send_batch(e); /* one last attempt within the flush time */
  } else {
    export_start(e);
  }
  maybe_finish_close(e);
}

void tt_otlp_exporter_destroy(struct tt_otlp_exporter *e) {
  if (e == NULL)
    return;
  sender_join(e); /* when it was never closed */
  if (e->http)
    tt_http_destroy(e->http);
  if (e->sender_loop_made) {
    int rc = uv_loop_close(&e->sender_loop);
    (void)rc; /* every handle of the sender's loop is closed: 0 */
  }
  if (e->lock_made)
    uv_mutex_destroy(&e->lock);
  for (size_t i = 0; i < e->n_header_lines; i++) {
    OPENSSL_cleanse(e->header_lines[i], strlen(e->header_lines[i]));
    free(e->header_lines[i]);
  }
  free(e->header_lines);
  free(e->url);
  free(e->service_name);
  free(e->service_version);
  tt_otlp_kvs_free(&e->attrs);
  tt_otlp_encoder_free(&e->enc);
  release_pending(e);
  nodes_free(e->head);
  nodes_free(e->sending);
  nodes_free(e->spare);
  free(e);
}

/* ---- construction ---- */

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

int tt_otlp_exporter_new(uv_loop_t *loop, const struct tt_otlp_exporter_options *o,
                         struct tt_otlp_exporter **out, struct tt_error *err) {
  *out = NULL;
  struct tt_otlp_exporter *e = calloc(1, sizeof(*e));
  if (e == NULL)
    return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
  e->loop = loop;
  e->timeout_ms = o->timeout_ms ? o->timeout_ms : 10000;
  e->schedule_delay_ms = o->schedule_delay_ms ? o->schedule_delay_ms : 5000;
  e->max_queue = o->max_queue ? o->max_queue : 2048;
  e->max_batch = o->max_batch ? o->max_batch : 512;
  if (e->max_batch > 512)
    e->max_batch = 512;
  e->max_attempts = o->max_attempts ? o->max_attempts : 3;
  e->retry_base_ms = o->retry_base_ms ? o->retry_base_ms : 100;
  e->pause_base_ms = o->pause_base_ms ? o->pause_base_ms : 1000;
  e->pause_max_ms = o->pause_max_ms ? o->pause_max_ms : 30000;
  if (e->pause_max_ms < e->pause_base_ms)
    e->pause_max_ms = e->pause_base_ms;
  e->protocol = o->protocol;
  size_t nh = o->headers ? o->headers->n : 0;
  e->header_lines = calloc(nh + 2, sizeof(char *));
  e->url = strdup(o->url);
  e->service_name = dup_or_null(o->resource.service_name);
  e->service_version = dup_or_null(o->resource.service_version);
  bool ok = e->header_lines && e->url && (e->service_name || !o->resource.service_name) &&
            (e->service_version || !o->resource.service_version);
  /* Protobuf strings and JSON text are UTF-8 only. */
  if (e->service_name)
    tt_utf8_scrub(e->service_name);
  if (e->service_version)
    tt_utf8_scrub(e->service_version);
  if (ok) {
    e->header_lines[e->n_header_lines++] = strdup(e->protocol == TT_OTLP_JSON
                                                      ? "Content-Type: application/json"
                                                      : "Content-Type: application/x-protobuf");
    for (size_t i = 0; i < nh && ok; i++) {
      const struct tt_otlp_kv *kv = &o->headers->items[i];
      size_t len = strlen(kv->key) + strlen(kv->value) + 3;
      char *line = malloc(len);
      if (line)
        snprintf(line, len, "%s: %s", kv->key, kv->value);
      e->header_lines[e->n_header_lines++] = line;
    }
    for (size_t i = 0; i < e->n_header_lines; i++)
      ok = ok && e->header_lines[i] != NULL;
  }
  size_t na = ok && o->resource.attrs ? o->resource.attrs->n : 0;
  if (na && (e->attrs.items = calloc(na, sizeof(*e->attrs.items))) == NULL)
    ok = false;
  for (size_t i = 0; i < na && ok; i++) {
    struct tt_otlp_kv *kv = &e->attrs.items[e->attrs.n++];
    kv->key = strdup(o->resource.attrs->items[i].key);
    kv->value = strdup(o->resource.attrs->items[i].value);
    ok = kv->key && kv->value;
    if (ok) {
      tt_utf8_scrub(kv->key);
      tt_utf8_scrub(kv->value);
    }
  }
  if (ok) {
    struct tt_otlp_resource res = {e->service_name, e->service_version, &e->attrs};
    ok = tt_otlp_encoder_init(&e->enc, &res, e->protocol) == 0;
  }
  struct tt_http_options ho = {.default_timeout_ms = e->timeout_ms,
                               .max_body_bytes = 1u << 20,
                               .ca_file = o->ca_file};
  if (!ok || sender_start(e, &ho) != 0) {
    tt_otlp_exporter_destroy(e);
    return tt_error_set(err, TT_ERR_INTERNAL, NULL, "the OTLP exporter could not be created");
  }
  if (o->metrics) {
    static const char *const reason[] = {"reason"};
    static const char *const outcome[] = {"outcome"};
    e->m_exported = tt_metrics_family(o->metrics, TT_METRIC_COUNTER,
                                      "tabletheoryd_trace_spans_exported_total",
                                      "Spans the OTLP collector accepted.", NULL, 0);
    e->m_dropped = tt_metrics_family(
        o->metrics, TT_METRIC_COUNTER, "tabletheoryd_trace_spans_dropped_total",
        "Spans dropped: queue_full, export_failed (every attempt failed), paused (not "
        "recorded while backing off from a failed collector), shutdown.",
        reason, 1);
    e->m_exports = tt_metrics_family(o->metrics, TT_METRIC_COUNTER,
                                     "tabletheoryd_trace_exports_total",
                                     "OTLP export requests by outcome (success, failure).",
                                     outcome, 1);
    struct tt_metric_family *queue = tt_metrics_family(
        o->metrics, TT_METRIC_GAUGE, "tabletheoryd_trace_queue_spans",
        "Ended spans waiting for export.", NULL, 0);
    e->m_queue = queue ? tt_metric_slot(queue, NULL) : NULL;
  }
  uv_timer_init(loop, &e->tick);
  uv_timer_init(loop, &e->retry);
  uv_timer_init(loop, &e->pause);
  e->tick.data = e->retry.data = e->pause.data = e;
  uv_unref((uv_handle_t *)&e->pause);
  uv_timer_start(&e->tick, tick_cb, e->schedule_delay_ms, e->schedule_delay_ms);
  /* The periodic flush alone must not keep the loop alive. */
  uv_unref((uv_handle_t *)&e->tick);
  *out = e;
  return 0;
}
