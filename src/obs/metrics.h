/* SPDX-License-Identifier: Apache-2.0 */
/* metrics.h -- metrics registry and Prometheus text exposition (0.0.4). */
#ifndef TT_OBS_METRICS_H
#define TT_OBS_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

enum tt_metric_kind { TT_METRIC_COUNTER, TT_METRIC_GAUGE, TT_METRIC_HISTOGRAM };

struct tt_metrics;
struct tt_metric_family;

/* A new empty registry; NULL when out of memory. Free with tt_metrics_free. */
struct tt_metrics *tt_metrics_new(void);

/* Frees the registry and every family and series in it. */
void tt_metrics_free(struct tt_metrics *m);

/* Declares a family. `name`, `help` and `label_names` must be string
 * literals (borrowed for the registry's life). Histograms use the fixed
 * latency buckets in seconds. Returns the family (owned by the registry) or
 * NULL when out of memory. */
struct tt_metric_family *tt_metrics_family(struct tt_metrics *m, enum tt_metric_kind kind,
                                           const char *name, const char *help,
                                           const char *const *label_names, size_t nlabels);

/* Adds v to the series with these label values (copied on first use;
 * `labels` has the family's label count). Counters must only grow. */
void tt_metric_add(struct tt_metric_family *f, const char *const *labels, double v);

/* Sets a gauge series. */
void tt_metric_set(struct tt_metric_family *f, const char *const *labels, double v);

/* The value of a counter or gauge series, for a caller that updates it
 * often: the pointer lives as long as the family. NULL when out of memory. */
double *tt_metric_slot(struct tt_metric_family *f, const char *const *labels);

/* Records one observation in a histogram series. */
void tt_metric_observe(struct tt_metric_family *f, const char *const *labels, double v);

/* The same, remembering (trace_id, span_id) -- 16 and 8 bytes, NULL for
 * none -- as the exemplar of the bucket the value falls in (the latest one
 * wins), for the OpenMetrics exposition, which writes them in hex, with
 * its Unix time `unix_ns` (0: the clock's now). */
void tt_metric_observe_exemplar(struct tt_metric_family *f, const char *const *labels, double v,
                                const uint8_t trace_id[16], const uint8_t span_id[8],
                                uint64_t unix_ns);

/* Current value of a counter or gauge series (0 when it does not exist). */
double tt_metric_value(struct tt_metric_family *f, const char *const *labels);

/* Called at render time to append families computed on demand (process
 * metrics). Writes text in exposition format to `out`: with `openmetrics`,
 * counter families named without their _total suffix. */
typedef void (*tt_metrics_collect_cb)(struct tt_buf *out, bool openmetrics, void *arg);
void tt_metrics_set_collector(struct tt_metrics *m, tt_metrics_collect_cb cb, void *arg);

/* Renders every family (HELP, TYPE, samples; families without samples
 * still show HELP and TYPE) into out. Returns 0 or -1 (buffer cap). */
int tt_metrics_render(struct tt_metrics *m, struct tt_buf *out);

/* The same in the OpenMetrics 1.0 text format (application/openmetrics-text):
 * counter families named without their _total suffix, histogram buckets
 * with their exemplars ({trace_id, span_id} value timestamp), and the
 * closing "# EOF". Returns 0 or -1 (buffer cap). */
int tt_metrics_render_openmetrics(struct tt_metrics *m, struct tt_buf *out);

#endif
