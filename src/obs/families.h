/* SPDX-License-Identifier: Apache-2.0 */
/* families.h -- the metric families tabletheoryd exports (docs/metrics.md). */
#ifndef TT_OBS_FAMILIES_H
#define TT_OBS_FAMILIES_H

#include "obs/metrics.h"

/* Every family the daemon exports, declared once. The registry owns the
 * families; this struct only borrows pointers into it. */
struct tt_families {
  struct tt_metrics *registry;
  struct tt_metric_family *http_requests;         /* {route,method,status} */
  struct tt_metric_family *http_duration;         /* histogram {route} */
  struct tt_metric_family *http_suspensions;      /* connections parked until joined */
  struct tt_metric_family *backend_calls;         /* {op,outcome} */
  struct tt_metric_family *backend_duration;      /* histogram {op} */
  struct tt_metric_family *backend_retries;       /* {op,reason} */
  struct tt_metric_family *inflight_requests;     /* gauge */
  struct tt_metric_family *inflight_operations;   /* gauge */
  struct tt_metric_family *consumed_capacity;     /* {table,kind} */
  struct tt_metric_family *background_ops;        /* gauge: work outside any request */
};

/* Creates a registry with every family declared, plus the process
 * collector (RSS, CPU seconds, open fds from /proc/self). Returns 0 or -1
 * (out of memory; nothing to free). */
int tt_families_init(struct tt_families *fams);

/* Frees the registry. */
void tt_families_free(struct tt_families *fams);

/* Adds delta to the in-flight operation gauge; `fams` may be NULL (tests). */
void tt_families_inflight_ops(struct tt_families *fams, int delta);

#endif
