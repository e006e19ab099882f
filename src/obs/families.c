/* SPDX-License-Identifier: Apache-2.0 */
/* families.c -- declares tabletheoryd's metric families and process metrics. */
#include "obs/families.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const l_route_method_status[] = {"route", "method", "status"};
static const char *const l_route[] = {"route"};
static const char *const l_op_outcome[] = {"op", "outcome"};
static const char *const l_op[] = {"op"};
static const char *const l_op_reason[] = {"op", "reason"};
static const char *const l_table_kind[] = {"table", "kind"};

/* Appends process_* families read from /proc/self; a file that cannot be
 * read just leaves its family out. */
static void collect_process(struct tt_buf *out, bool openmetrics, void *arg) {
  (void)arg;
  long page = sysconf(_SC_PAGESIZE);
  long ticks = sysconf(_SC_CLK_TCK);
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    unsigned long size = 0, resident = 0;
    if (fscanf(f, "%lu %lu", &size, &resident) == 2)
      tt_buf_printf(out,
                    "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
                    "# TYPE process_resident_memory_bytes gauge\n"
                    "process_resident_memory_bytes %lu\n"
                    "# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n"
                    "# TYPE process_virtual_memory_bytes gauge\n"
                    "process_virtual_memory_bytes %lu\n",
                    resident * (unsigned long)page, size * (unsigned long)page);
    fclose(f);
  }
  f = fopen("/proc/self/stat", "r");
  if (f) {
    char line[1024];
    if (fgets(line, sizeof(line), f)) {
      /* Fields after the command name, which may contain spaces: skip to ')'. */
      char *p = strrchr(line, ')');
      unsigned long utime = 0, stime = 0;
      if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime,
                      &stime) == 2)
        tt_buf_printf(out,
                      "# HELP process_cpu_seconds%s Total user and system CPU time spent "
                      "in seconds.\n# TYPE process_cpu_seconds%s counter\n"
                      "process_cpu_seconds_total %.2f\n",
                      openmetrics ? "" : "_total", openmetrics ? "" : "_total",
                      (double)(utime + stime) / (double)ticks);
    }
    fclose(f);
  }
  DIR *d = opendir("/proc/self/fd");
  if (d) {
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
      if (e->d_name[0] != '.')
        n++;
    closedir(d);
    tt_buf_printf(out,
                  "# HELP process_open_fds Number of open file descriptors.\n"
                  "# TYPE process_open_fds gauge\nprocess_open_fds %ld\n",
                  n - 1 /* the directory stream itself */);
  }
}

int tt_families_init(struct tt_families *fams) {
  memset(fams, 0, sizeof(*fams));
  struct tt_metrics *m = tt_metrics_new();
  if (m == NULL)
    return -1;
  fams->registry = m;
  fams->http_requests =
      tt_metrics_family(m, TT_METRIC_COUNTER, "tabletheoryd_http_requests_total",
                        "HTTP requests answered.", l_route_method_status, 3);
  fams->http_duration =
      tt_metrics_family(m, TT_METRIC_HISTOGRAM, "tabletheoryd_http_request_duration_seconds",
                        "Time from request start to answer, by route pattern.", l_route, 1);
  fams->http_suspensions = tt_metrics_family(
      m, TT_METRIC_COUNTER, "tabletheoryd_http_suspensions_total",
      "Requests whose connection was suspended because work was still outstanding after "
      "the handler and the backend's ready calls ran.",
      NULL, 0);
  fams->backend_calls =
      tt_metrics_family(m, TT_METRIC_COUNTER, "tabletheoryd_backend_calls_total",
                        "Backend (DynamoDB) calls by operation and outcome.", l_op_outcome, 2);
  fams->backend_duration = tt_metrics_family(m, TT_METRIC_HISTOGRAM,
                                             "tabletheoryd_backend_call_duration_seconds",
                                             "Duration of backend calls.", l_op, 1);
  fams->backend_retries =
      tt_metrics_family(m, TT_METRIC_COUNTER, "tabletheoryd_backend_retries_total",
                        "Backend call retries by operation and reason.", l_op_reason, 2);
  fams->inflight_requests =
      tt_metrics_family(m, TT_METRIC_GAUGE, "tabletheoryd_inflight_requests",
                        "HTTP requests being processed.", NULL, 0);
  fams->inflight_operations = tt_metrics_family(
      m, TT_METRIC_GAUGE, "tabletheoryd_inflight_operations",
      "Asynchronous operations (backend calls, retry timers, fan-out workers) not yet joined.",
      NULL, 0);
  fams->consumed_capacity =
      tt_metrics_family(m, TT_METRIC_COUNTER, "tabletheoryd_consumed_capacity_total",
                        "Capacity units reported by the backend.", l_table_kind, 2);
  fams->background_ops = tt_metrics_family(
      m, TT_METRIC_GAUGE, "tabletheoryd_background_operations",
      "Work running outside any request: credential fetches (background refreshes, "
      "credential_process, metadata calls) and their file reads on the thread pool.",
      NULL, 0);
  if (!fams->http_requests || !fams->http_duration || !fams->http_suspensions ||
      !fams->backend_calls ||
      !fams->backend_duration || !fams->backend_retries || !fams->inflight_requests ||
      !fams->inflight_operations || !fams->consumed_capacity || !fams->background_ops) {
    tt_families_free(fams);
    return -1;
  }
  /* Gauges read 0 from the start rather than being absent. */
  tt_metric_set(fams->inflight_requests, NULL, 0);
  tt_metric_set(fams->inflight_operations, NULL, 0);
  tt_metric_set(fams->background_ops, NULL, 0);
  tt_metric_add(fams->http_suspensions, NULL, 0); /* a counter that reads 0, not absent */
  tt_metrics_set_collector(m, collect_process, NULL);
  return 0;
}

void tt_families_free(struct tt_families *fams) {
  tt_metrics_free(fams->registry);
  memset(fams, 0, sizeof(*fams));
}

void tt_families_inflight_ops(struct tt_families *fams, int delta) {
  if (fams)
    tt_metric_add(fams->inflight_operations, NULL, delta);
}
