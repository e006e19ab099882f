/* SPDX-License-Identifier: Apache-2.0 */
/* otlp.c -- the batch span processor and OTLP/HTTP exporter.
 *
 * Processes. Everything here runs on the exporter's loop (the daemon's
 * event loop) but the HTTP exchange itself: the queue, the batches'
 * encoding, the timers (periodic flush, retries, back-off), the tracer's
 * pause, the stats and the metrics. The POSTs go out from a sender process
 * (this executable run with TT_OTLP_SENDER_ARG, tt_otlp_sender_main) with
 * a loop and a tt_http client of its own. A process rather than a thread:
 * a second thread would cost every request of the daemon, traced or not,
 * glibc's multi-threaded paths (malloc's atomic fastbins and arena locks,
 * the cancellation points around each socket call: ~1,200 instructions a
 * memory GET, bench/README.md). The two talk over a socket pair, one
 * request and one outcome at a time:
 *   - at start, the exporter sends the client's settings, the URL and the
 *     header lines (MSG_CONFIG);
 *   - send_batch sends one attempt: its timeouts and the sealed batch's
 *     bytes (MSG_JOB), which the kernel copies once;
 *   - the sender POSTs it and answers the transport and status
 *     (struct msg_outcome); the exporter goes on as the retries and
 *     back-off say (on_outcome).
 * At shutdown (maybe_finish_close: nothing in flight) the exporter closes
 * its end; the sender sees the end of its input, closes its client and
 * exits, and the exporter closes the process handle once it has exited.
 * A sender that dies is not restarted: every later export fails (counted
 * as export_failed) and the exporter backs off as from a collector that
 * is down. Spans are encoded on the exporter's loop, where they were
 * recorded: only the sealed batch (~280 bytes a span) leaves it. */
#include "daemon/otlp.h"

#include <openssl/crypto.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <unistd.h>

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
  struct sender *sender; /* the sender process (see the file's head); NULL: none */
  struct tt_buf config;  /* MSG_CONFIG's bytes, kept until written */
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
  if (strcmp(reason, "queue_full") == 0)
    e->stats.dropped_queue += n;
  else if (strcmp(reason, "export_failed") == 0)
    e->stats.dropped_export += n;
  else if (strcmp(reason, "paused") == 0)
    e->stats.dropped_paused += n;
  else
    e->stats.dropped_shutdown += n;
  if (e->m_dropped) {
    const char *l[1] = {reason};
    tt_metric_add(e->m_dropped, l, (double)n);
  }
}

static void queue_gauge(struct tt_otlp_exporter *e) {
  e->stats.queued = e->queued;
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
 * A batch that needs more grows as any buffer does. */
#define BATCH_SPAN_BYTES_PROTOBUF 384u /* ~280 a span of a GET */
#define BATCH_SPAN_BYTES_JSON 1024u
#define BATCH_ROOM_MAX ((size_t)4 << 20)

static void batch_room(const struct tt_otlp_exporter *e, struct tt_otlp_batch *b) {
  size_t per = e->protocol == TT_OTLP_JSON ? BATCH_SPAN_BYTES_JSON : BATCH_SPAN_BYTES_PROTOBUF;
  size_t room = e->max_batch <= BATCH_ROOM_MAX / per ? e->max_batch * per : BATCH_ROOM_MAX;
  (void)tt_buf_reserve(&b->buf, room); /* on failure it grows as spans come */
}

/* Spans encoded together (daemon's loop): a GET ends two. */
#define ENCODE_RUN 8

/* An empty batch: a kept one, or a new one (NULL: no memory). */
static struct batch_node *node_get(struct tt_otlp_exporter *e) {
  struct batch_node *n = e->spare;
  if (n) {
    e->spare = n->next;
  } else if ((n = malloc(sizeof(*n))) != NULL) {
    tt_otlp_batch_init(&n->b);
    batch_room(e, &n->b);
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
  e->stats.paused = false;
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
  e->stats.in_flight = false;
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
    e->stats.paused = true;
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

/* ---- the sender process ---- */

static void one_closed(struct tt_otlp_exporter *e);

/* The byte the sender writes first, and how long it may take to. */
#define SENDER_READY 'R'
#define SENDER_START_MS 10000

/* Messages on the socket pair: a head, then `len` bytes. */
enum { MSG_CONFIG = 1, MSG_JOB = 2 };
struct msg_head {
  uint32_t type, len;
};
/* MSG_JOB: these, then the body. MSG_CONFIG: the default timeout (a
 * uint64_t), then NUL-terminated strings: the CA file ("" for none), the
 * URL and the header lines. */
struct msg_job {
  uint64_t timeout_ms, connect_timeout_ms;
};
struct msg_outcome {
  int32_t start_failed, transport, status;
};

/* The exporter's side of the sender: the process and its socket. It
 * frees itself once both handles are closed, and then tells the exporter
 * (when it still has one) that one of its handles closed. */
struct sender {
  uv_process_t proc;
  uv_pipe_t pipe;
  struct tt_otlp_exporter *e; /* NULL once the exporter let it go */
  int open;                   /* handles not closed yet */
  bool pipe_open, lost, exited;
  bool counted; /* the exporter's close waits for it (pending_closes) */
  char rbuf[4 * sizeof(struct msg_outcome)];
  size_t rlen;
};

struct sender_write {
  uv_write_t w;
  struct msg_head head;
  struct msg_job job;
};

static void sender_handle_closed(uv_handle_t *h) {
  struct sender *snd = h->data;
  if (--snd->open > 0)
    return;
  struct tt_otlp_exporter *e = snd->e;
  bool counted = snd->counted;
  free(snd);
  if (e) {
    e->sender = NULL;
    if (counted)
      one_closed(e);
  }
}

static void sender_close_pipe(struct sender *snd) {
  if (!snd->pipe_open)
    return;
  snd->pipe_open = false;
  uv_close((uv_handle_t *)&snd->pipe, sender_handle_closed);
}

static void sender_exited(uv_process_t *p, int64_t status, int signal) {
  (void)status;
  (void)signal;
  ((struct sender *)p->data)->exited = true;
  uv_close((uv_handle_t *)p, sender_handle_closed);
}

static void written(uv_write_t *w, int status) {
  (void)status; /* a failed write shows as the socket's end on the read side */
  free(w);
}

/* Sends a message (its bytes stay put until the write completed: the
 * config is the exporter's, a job's body the batch in flight). */
static int sender_send(struct sender *snd, uint32_t type, const struct msg_job *job,
                       const void *data, size_t len) {
  struct sender_write *w = malloc(sizeof(*w));
  if (w == NULL)
    return -1;
  w->head.type = type;
  w->head.len = (uint32_t)((job ? sizeof(*job) : 0) + len);
  uv_buf_t bufs[3];
  unsigned n = 0;
  bufs[n++] = uv_buf_init((char *)&w->head, sizeof(w->head));
  if (job) {
    w->job = *job;
    bufs[n++] = uv_buf_init((char *)&w->job, sizeof(w->job));
  }
  if (len)
    bufs[n++] = uv_buf_init((char *)data, (unsigned)len);
  if (uv_write(&w->w, (uv_stream_t *)&snd->pipe, bufs, n, written) != 0) {
    free(w);
    return -1;
  }
  return 0;
}

/* The attempt in flight failed before an answer (the sender is gone). */
static void sender_lost(struct sender *snd) {
  snd->lost = true;
  sender_close_pipe(snd);
  if (!snd->exited)
    uv_process_kill(&snd->proc, SIGKILL); /* a sender that stopped answering */
  struct tt_otlp_exporter *e = snd->e;
  if (e && e->in_flight && !e->waiting_retry) {
    tt_log_event(TT_LOG_ERROR, "trace.sender_lost", NULL);
    on_outcome(e, TT_HTTP_OTHER, 0);
  }
}

static void outcome_alloc(uv_handle_t *h, size_t size, uv_buf_t *buf) {
  (void)size;
  struct sender *snd = h->data;
  *buf = uv_buf_init(snd->rbuf + snd->rlen, (unsigned)(sizeof(snd->rbuf) - snd->rlen));
}

static void outcome_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf) {
  (void)buf;
  struct sender *snd = st->data;
  if (n < 0) {
    sender_lost(snd);
    return;
  }
  snd->rlen += (size_t)n;
  while (snd->rlen >= sizeof(struct msg_outcome)) {
    struct msg_outcome o;
    memcpy(&o, snd->rbuf, sizeof(o));
    snd->rlen -= sizeof(o);
    memmove(snd->rbuf, snd->rbuf + sizeof(o), snd->rlen);
    struct tt_otlp_exporter *e = snd->e;
    if (e == NULL || !e->in_flight || e->waiting_retry)
      continue; /* nothing asked: not a sender of ours */
    uv_unref((uv_handle_t *)&snd->pipe);
    if (o.start_failed)
      batch_done(e, false);
    else
      on_outcome(e, (enum tt_http_transport)o.transport, o.status);
  }
}

/* The path of this executable (the sender runs it again), or NULL. */
static char *self_exe(void) {
  char path[4096];
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0)
    return NULL;
  path[n] = '\0';
  return strdup(path);
}

/* Waits (blocking: the daemon is starting) for the sender's first byte. */
static bool sender_ready(struct sender *snd) {
  uv_os_fd_t fd;
  if (uv_fileno((uv_handle_t *)&snd->pipe, &fd) != 0)
    return false;
  struct pollfd pfd = {.fd = fd, .events = POLLIN};
  char ready = 0;
  return poll(&pfd, 1, SENDER_START_MS) == 1 && read(fd, &ready, 1) == 1 &&
         ready == SENDER_READY;
}

/* Starts the sender process and sends it the configuration. Returns 0,
 * or -1 (no process; a handle made on the way closes by itself). */
static int sender_start(struct tt_otlp_exporter *e) {
  char *exe = self_exe();
  struct sender *snd = exe ? calloc(1, sizeof(*snd)) : NULL;
  if (snd == NULL) {
    free(exe);
    return -1;
  }
  snd->proc.data = snd->pipe.data = snd;
  if (uv_pipe_init(e->loop, &snd->pipe, 0) != 0) {
    free(snd);
    free(exe);
    return -1;
  }
  snd->open = 1;
  snd->pipe_open = true;
  char *args[] = {exe, TT_OTLP_SENDER_ARG, NULL};
  uv_stdio_container_t stdio[4] = {
      {.flags = UV_IGNORE},
      {.flags = UV_IGNORE},
      {.flags = UV_INHERIT_FD, .data.fd = 2},
      {.flags = UV_CREATE_PIPE | UV_READABLE_PIPE | UV_WRITABLE_PIPE,
       .data.stream = (uv_stream_t *)&snd->pipe},
  };
  uv_process_options_t po = {.exit_cb = sender_exited,
                              .file = exe,
                              .args = args,
                              .stdio_count = 4,
                              .stdio = stdio};
  int rc = uv_spawn(e->loop, &snd->proc, &po);
  free(exe);
  snd->open++; /* the process handle is made even when the spawn fails */
  if (rc != 0) {
    uv_close((uv_handle_t *)&snd->proc, sender_handle_closed);
    sender_close_pipe(snd);
    return -1;
  }
  snd->e = e;
  e->sender = snd;
  uv_unref((uv_handle_t *)&snd->proc);
  /* The sender says it is ready once it ignores the stop signals (a stop
   * signal sent to the whole group right after the start must not end
   * it). Waited for here, before the daemon serves. */
  if (!sender_ready(snd)) {
    tt_log_event(TT_LOG_ERROR, "trace.sender_not_started", NULL);
    sender_lost(snd);
    return 0; /* exports fail */
  }
  if (uv_read_start((uv_stream_t *)&snd->pipe, outcome_alloc, outcome_read) != 0 ||
      sender_send(snd, MSG_CONFIG, NULL, e->config.data, e->config.len) != 0) {
    sender_lost(snd);
    return 0; /* the process ends on its own; exports fail */
  }
  uv_unref((uv_handle_t *)&snd->pipe);
  return 0;
}

/* Lets the sender go: its input ends, it exits, its handles close. */
static void sender_stop(struct tt_otlp_exporter *e) {
  struct sender *snd = e->sender;
  if (snd == NULL)
    return;
  sender_close_pipe(snd);
  if (!uv_is_closing((uv_handle_t *)&snd->proc))
    uv_ref((uv_handle_t *)&snd->proc); /* the loop waits for its exit */
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
  struct sender *snd = e->sender;
  struct msg_job job = {timeout, timeout < 3000 ? timeout : 3000};
  if (snd == NULL || snd->lost ||
      sender_send(snd, MSG_JOB, &job, b->buf.data + b->body, b->buf.len - b->body) != 0) {
    batch_done(e, false);
    return;
  }
  uv_ref((uv_handle_t *)&snd->pipe); /* the loop waits for the outcome */
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
  e->stats.in_flight = true;
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
  e->pending_closes = 3;
  if (e->sender) { /* once its handles closed */
    e->sender->counted = true;
    e->pending_closes++;
  }
  sender_stop(e);
  uv_close((uv_handle_t *)&e->tick, handle_closed);
  uv_close((uv_handle_t *)&e->retry, handle_closed);
  uv_close((uv_handle_t *)&e->pause, handle_closed);
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
  if (e->sender) { /* never closed: the sender ends and its handles close by themselves */
    e->sender->e = NULL;
    sender_stop(e);
  }
  OPENSSL_cleanse(e->config.data, e->config.len);
  tt_buf_free(&e->config);
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
  if (o->url == NULL ||
      (strncmp(o->url, "http://", 7) != 0 && strncmp(o->url, "https://", 8) != 0))
    return tt_error_set(err, TT_ERR_VALIDATION, "otlp-endpoint",
                        "the OTLP endpoint must be an http:// or https:// URL");
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
  if (ok && o->resource.attrs) {
    for (size_t i = 0; i < o->resource.attrs->n && ok; i++) {
      struct tt_otlp_kv *items = realloc(e->attrs.items, (e->attrs.n + 1) * sizeof(*items));
      if (items == NULL) {
        ok = false;
        break;
      }
      e->attrs.items = items;
      items[e->attrs.n].key = strdup(o->resource.attrs->items[i].key);
      items[e->attrs.n].value = strdup(o->resource.attrs->items[i].value);
      e->attrs.n++;
      ok = items[e->attrs.n - 1].key && items[e->attrs.n - 1].value;
      if (ok) {
        tt_utf8_scrub(items[e->attrs.n - 1].key);
        tt_utf8_scrub(items[e->attrs.n - 1].value);
      }
    }
  }
  if (ok) {
    struct tt_otlp_resource res = {e->service_name, e->service_version, &e->attrs};
    ok = tt_otlp_encoder_init(&e->enc, &res, e->protocol) == 0;
  }
  /* The sender's configuration (MSG_CONFIG). */
  tt_buf_init(&e->config, 0);
  if (ok) {
    ok = tt_buf_append(&e->config, &e->timeout_ms, sizeof(e->timeout_ms)) == 0 &&
         tt_buf_append(&e->config, o->ca_file ? o->ca_file : "",
                       strlen(o->ca_file ? o->ca_file : "") + 1) == 0 &&
         tt_buf_append(&e->config, e->url, strlen(e->url) + 1) == 0;
    for (size_t i = 0; ok && i < e->n_header_lines; i++)
      ok = tt_buf_append(&e->config, e->header_lines[i], strlen(e->header_lines[i]) + 1) == 0;
  }
  if (!ok || sender_start(e) != 0) {
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

/* ---- the sender process's side ---- */

struct sender_main {
  uv_loop_t loop;
  uv_pipe_t pipe;
  struct tt_http *http;
  struct tt_http_call call;
  struct tt_buf in;     /* what arrived and is not taken yet */
  struct tt_buf config; /* MSG_CONFIG's bytes: the strings below point into it */
  const char *url;
  const char **headers; /* NULL-terminated */
  char *body;           /* the job being sent */
  bool busy, ended, closing;
};

static void sm_answer(struct sender_main *m, bool start_failed, enum tt_http_transport t,
                      long status) {
  struct msg_outcome o = {start_failed, (int32_t)t, (int32_t)status};
  uv_buf_t b = uv_buf_init((char *)&o, sizeof(o));
  /* 12 bytes into an empty socket buffer: the exporter reads each answer
   * before it sends the next job. A failure ends the exchange. */
  if (uv_try_write((uv_stream_t *)&m->pipe, &b, 1) != (int)sizeof(o))
    m->ended = true;
}

static void sm_close(struct sender_main *m) {
  if (m->closing)
    return;
  m->closing = true;
  if (m->http)
    tt_http_close(m->http, NULL, NULL);
  uv_close((uv_handle_t *)&m->pipe, NULL);
}

static void sm_sent(struct tt_http_call *call, struct tt_http_response *resp, void *arg) {
  (void)call;
  struct sender_main *m = arg;
  m->busy = false;
  free(m->body);
  m->body = NULL;
  sm_answer(m, false, resp->transport, resp->transport == TT_HTTP_OK ? resp->status : 0);
  if (m->ended)
    sm_close(m);
}

/* Reads the configuration: the client, the URL and the header lines.
 * Returns 0 or -1. */
static int sm_configure(struct sender_main *m, const char *p, size_t n) {
  if (tt_buf_append(&m->config, p, n) != 0 || n < sizeof(uint64_t) + 2 ||
      m->config.data[n - 1] != '\0')
    return -1;
  uint64_t timeout;
  memcpy(&timeout, m->config.data, sizeof(timeout));
  const char *s = m->config.data + sizeof(timeout), *end = m->config.data + n;
  const char *ca = s;
  s += strlen(s) + 1;
  if (s >= end)
    return -1;
  m->url = s;
  s += strlen(s) + 1;
  size_t nh = 0;
  for (const char *h = s; h < end; h += strlen(h) + 1)
    nh++;
  m->headers = calloc(nh + 1, sizeof(*m->headers));
  if (m->headers == NULL)
    return -1;
  for (size_t i = 0; i < nh; i++, s += strlen(s) + 1)
    m->headers[i] = s;
  struct tt_http_options ho = {.default_timeout_ms = timeout,
                               .max_body_bytes = 1u << 20,
                               .ca_file = ca[0] ? ca : NULL};
  return tt_http_new(&m->loop, &ho, &m->http) == 0 ? 0 : -1;
}

/* Takes the messages that arrived whole: the configuration, then jobs. */
static void sm_take(struct sender_main *m) {
  while (!m->ended && !m->busy && m->in.len >= sizeof(struct msg_head)) {
    struct msg_head h;
    memcpy(&h, m->in.data, sizeof(h));
    if (m->in.len - sizeof(h) < h.len)
      return; /* the rest is on its way */
    const char *p = m->in.data + sizeof(h);
    if (h.type == MSG_CONFIG && m->http == NULL) {
      if (sm_configure(m, p, h.len) != 0)
        m->ended = true;
    } else if (h.type == MSG_JOB && m->http && h.len >= sizeof(struct msg_job)) {
      struct msg_job job;
      memcpy(&job, p, sizeof(job));
      size_t n = h.len - sizeof(job);
      m->body = malloc(n ? n : 1);
      if (m->body)
        memcpy(m->body, p + sizeof(job), n);
      struct tt_http_request req = {.method = "POST",
                                    .url = m->url,
                                    .headers = m->headers,
                                    .body = m->body,
                                    .body_len = n,
                                    .timeout_ms = job.timeout_ms,
                                    .connect_timeout_ms = job.connect_timeout_ms};
      if (m->body && tt_http_start(m->http, &m->call, &req, sm_sent, m) == 0) {
        m->busy = true;
      } else {
        free(m->body);
        m->body = NULL;
        sm_answer(m, true, TT_HTTP_OTHER, 0);
      }
    } else {
      m->ended = true; /* not a message of the exporter's */
    }
    size_t used = sizeof(h) + h.len;
    memmove(m->in.data, m->in.data + used, m->in.len - used);
    m->in.len -= used;
  }
  if (m->ended && !m->busy)
    sm_close(m);
}

static void sm_alloc(uv_handle_t *h, size_t size, uv_buf_t *buf) {
  struct sender_main *m = h->data;
  if (size < 65536)
    size = 65536;
  if (tt_buf_reserve(&m->in, m->in.len + size) != 0) {
    *buf = uv_buf_init(NULL, 0); /* UV_ENOBUFS to sm_read */
    return;
  }
  *buf = uv_buf_init(m->in.data + m->in.len, (unsigned)size);
}

static void sm_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf) {
  (void)buf;
  struct sender_main *m = st->data;
  if (n < 0) {
    /* The exporter closed its end (or is gone): the export in flight, if
     * any, is nobody's any more. */
    m->ended = true;
    if (m->busy)
      tt_http_cancel(m->http, &m->call);
    else
      sm_close(m);
    uv_read_stop(st);
    return;
  }
  m->in.len += (size_t)n;
  sm_take(m);
}

int tt_otlp_sender_main(void) {
  /* A stop signal is the daemon's (systemd sends it to the whole unit, a
   * terminal to the whole group): the sender ends when the daemon closes
   * its end, after the drain's last export. Then it is ready. */
  signal(SIGPIPE, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  signal(SIGINT, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  char ready = SENDER_READY;
  if (write(3, &ready, 1) != 1)
    return 1;
  /* Ends with the daemon, and holds none of its other descriptors (a
   * listening socket, the data directory's lock). */
  (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1)
    return 1;
  (void)close_range(4, ~0u, 0);
  static struct sender_main m;
  tt_buf_init(&m.in, 0);
  tt_buf_init(&m.config, 0);
  if (uv_loop_init(&m.loop) != 0)
    return 1;
  int rc = 1;
  if (uv_pipe_init(&m.loop, &m.pipe, 0) == 0) {
    m.pipe.data = &m;
    if (uv_pipe_open(&m.pipe, 3) == 0 &&
        uv_read_start((uv_stream_t *)&m.pipe, sm_alloc, sm_read) == 0)
      rc = 0;
    else
      uv_close((uv_handle_t *)&m.pipe, NULL);
  }
  uv_run(&m.loop, UV_RUN_DEFAULT);
  if (m.http)
    tt_http_destroy(m.http);
  if (uv_loop_close(&m.loop) != 0)
    rc = 1;
  OPENSSL_cleanse(m.config.data, m.config.len);
  tt_buf_free(&m.config);
  tt_buf_free(&m.in);
  free(m.headers);
  free(m.body);
  return rc;
}
