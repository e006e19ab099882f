/* SPDX-License-Identifier: Apache-2.0 */
/* otlp.h -- the span exporter: a batch processor on the loop (bounded
 * queue, periodic and size-triggered flush) whose sender thread POSTs
 * OTLP (protobuf or JSON) to a collector through a tt_http of its own,
 * with a deadline and bounded retries (daemon/otlp.c says what each
 * thread owns). Spans
 * that cannot be queued or delivered are dropped and counted
 * (tabletheoryd_trace_spans_dropped_total{reason}); nothing here ever
 * waits for the collector on a request's behalf. After a batch fails
 * every attempt, the exporter backs off (pause_base_ms, doubled at each
 * failure in a row up to pause_max_ms) and pauses the tracer meanwhile:
 * spans are counted (reason "paused") instead of recorded and encoded.
 * When the back-off ends, one export probes the collector (what is queued,
 * or a request without spans); the tracer records again once an export
 * succeeds. */
#ifndef TT_DAEMON_OTLP_H
#define TT_DAEMON_OTLP_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "obs/metrics.h"
#include "obs/otlp.h"
#include "obs/trace.h"
#include "util/error.h"

struct tt_otlp_exporter;

struct tt_otlp_exporter_options {
  const char *url; /* the traces URL, http:// or https:// (the configuration checks it) */
  const struct tt_otlp_kvs *headers; /* extra request headers; copied; may be NULL */
  struct tt_otlp_resource resource; /* strings and attrs copied */
  uint64_t timeout_ms;        /* one export attempt; 0 = 10000 */
  uint64_t schedule_delay_ms; /* periodic flush; 0 = 5000 */
  size_t max_queue;           /* spans waiting; 0 = 2048 */
  size_t max_batch;           /* spans per export; 0 = 512 */
  unsigned max_attempts;      /* per batch; 0 = 3 */
  uint64_t retry_base_ms;     /* first back-off; 0 = 100 */
  uint64_t pause_base_ms;     /* recording paused after a failed batch; 0 = 1000 */
  uint64_t pause_max_ms;      /* doubled at each failure in a row up to this; 0 = 30000 */
  enum tt_otlp_protocol protocol; /* the body's encoding (protobuf by default) */
  const char *ca_file;        /* https trust anchors; NULL = the system's */
  struct tt_metrics *metrics; /* the registry to count in; may be NULL */
};

struct tt_otlp_exporter_stats {
  uint64_t exported;         /* spans the collector accepted */
  uint64_t dropped_queue;    /* queue full */
  uint64_t dropped_export;   /* the batch failed every attempt */
  uint64_t dropped_shutdown; /* still queued when the flush time ran out */
  uint64_t dropped_paused;   /* not recorded while the exporter backed off */
  uint64_t exports_ok, exports_failed, retries;
  size_t queued;
  bool in_flight;
  bool paused; /* backing off: the tracer records nothing */
};

/* Makes an exporter on `loop`. Returns 0 and *out, or -1 with err (out of
 * memory, or the sender thread did not start). */
int tt_otlp_exporter_new(uv_loop_t *loop, const struct tt_otlp_exporter_options *o,
                         struct tt_otlp_exporter **out, struct tt_error *err);

/* The tracer's sink (tt_tracer_set(..., tt_otlp_exporter_sink, e)):
 * encodes the span into the batch being filled and releases it, or drops
 * it when the queue is full; starts an export when a batch is full and
 * none is running. */
void tt_otlp_exporter_sink(struct tt_span *span, void *arg);

/* Starts an export of what is queued now, unless one is running. */
void tt_otlp_exporter_flush(struct tt_otlp_exporter *e);

void tt_otlp_exporter_stats(const struct tt_otlp_exporter *e, struct tt_otlp_exporter_stats *out);

/* Exports what is queued within `flush_ms` (no retries; every attempt's
 * timeout ends by then), drops and counts the rest, joins the sender
 * thread (its HTTP client closed), closes the timers, then calls
 * closed(arg). Spans handed to the sink after
 * this are dropped. Then tt_otlp_exporter_destroy frees it. */
void tt_otlp_exporter_close(struct tt_otlp_exporter *e, uint64_t flush_ms,
                            void (*closed)(void *arg), void *arg);
void tt_otlp_exporter_destroy(struct tt_otlp_exporter *e);

#endif
