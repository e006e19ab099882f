/* SPDX-License-Identifier: Apache-2.0 */
/* metrics.c -- metrics registry and Prometheus text exposition (0.0.4). */
#include "obs/metrics.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "obs/trace.h"
#include "util/hash.h"

#define MAX_LABELS 4

static const double latency_buckets[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                         0.01,   0.025,   0.05,   0.1,   0.25,   0.5,
                                         1,      2.5,     5,      10,    30};
#define NBUCKETS (sizeof(latency_buckets) / sizeof(latency_buckets[0]))

struct series {
  struct series *next; /* hash chain */
  struct series *order; /* creation order, for stable output */
  uint64_t hash;
  char *labels[MAX_LABELS];
  double value;         /* counter/gauge value; histogram sum */
  uint64_t count;       /* histogram count */
  uint64_t *buckets;    /* histogram, cumulative at render time only */
  struct exemplar *exemplars; /* histogram, per bucket and +Inf; NULL until the first */
};

struct exemplar {
  uint8_t trace_id[16], span_id[8]; /* hex only when rendered */
  bool set;
  double value;
  double unix_s;
};

struct tt_metric_family {
  struct tt_metric_family *next;
  enum tt_metric_kind kind;
  const char *name;
  const char *help;
  const char *const *label_names;
  size_t nlabels;
  struct series **table;
  size_t table_size;
  size_t nseries;
  struct series *first, *last;
};

struct tt_metrics {
  struct tt_metric_family *first, *last;
  tt_metrics_collect_cb collect;
  void *collect_arg;
};

struct tt_metrics *tt_metrics_new(void) { return calloc(1, sizeof(struct tt_metrics)); }

static void series_free(struct series *s, size_t nlabels) {
  for (size_t i = 0; i < nlabels; i++)
    free(s->labels[i]);
  free(s->buckets);
  free(s->exemplars);
  free(s);
}

void tt_metrics_free(struct tt_metrics *m) {
  if (m == NULL)
    return;
  struct tt_metric_family *f = m->first;
  while (f) {
    struct tt_metric_family *next = f->next;
    struct series *s = f->first;
    while (s) {
      struct series *n = s->order;
      series_free(s, f->nlabels);
      s = n;
    }
    free(f->table);
    free(f);
    f = next;
  }
  free(m);
}

struct tt_metric_family *tt_metrics_family(struct tt_metrics *m, enum tt_metric_kind kind,
                                           const char *name, const char *help,
                                           const char *const *label_names, size_t nlabels) {
  if (nlabels > MAX_LABELS)
    return NULL;
  struct tt_metric_family *f = calloc(1, sizeof(*f));
  if (f == NULL)
    return NULL;
  f->kind = kind;
  f->name = name;
  f->help = help;
  f->label_names = label_names;
  f->nlabels = nlabels;
  if (m->last)
    m->last->next = f;
  else
    m->first = f;
  m->last = f;
  return f;
}

static uint64_t labels_hash(const char *const *labels, size_t n) {
  uint64_t h = TT_FNV1A_BASIS;
  for (size_t i = 0; i < n; i++) {
    for (const unsigned char *p = (const unsigned char *)labels[i]; *p; p++)
      h = (h ^ *p) * TT_FNV1A_PRIME;
    h = (h ^ 0x1f) * TT_FNV1A_PRIME; /* between labels */
  }
  return h;
}

static bool labels_equal(const struct series *s, const char *const *labels, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(s->labels[i], labels[i]) != 0)
      return false;
  return true;
}

static int grow(struct tt_metric_family *f) {
  size_t n = f->table_size ? f->table_size * 2 : 16;
  struct series **t = calloc(n, sizeof(*t));
  if (t == NULL)
    return -1;
  for (struct series *s = f->first; s; s = s->order) {
    size_t i = s->hash & (n - 1);
    s->next = t[i];
    t[i] = s;
  }
  free(f->table);
  f->table = t;
  f->table_size = n;
  return 0;
}

/* The series of `labels` (hashed to h); NULL when there is none. */
static struct series *find(const struct tt_metric_family *f, const char *const *labels,
                           uint64_t h) {
  for (struct series *s = f->table_size ? f->table[h & (f->table_size - 1)] : NULL; s;
       s = s->next)
    if (s->hash == h && labels_equal(s, labels, f->nlabels))
      return s;
  return NULL;
}

/* Finds or creates a series; NULL only when out of memory (the sample is
 * then dropped: metrics never fail a request). */
static struct series *lookup(struct tt_metric_family *f, const char *const *labels) {
  uint64_t h = labels_hash(labels, f->nlabels);
  struct series *s = find(f, labels, h);
  if (s)
    return s;
  if ((f->nseries + 1) * 2 > f->table_size && grow(f) != 0)
    return NULL;
  if ((s = calloc(1, sizeof(*s))) == NULL)
    return NULL;
  s->hash = h;
  for (size_t i = 0; i < f->nlabels; i++) {
    s->labels[i] = strdup(labels[i]);
    if (s->labels[i] == NULL)
      goto fail;
  }
  if (f->kind == TT_METRIC_HISTOGRAM) {
    s->buckets = calloc(NBUCKETS, sizeof(uint64_t));
    if (s->buckets == NULL)
      goto fail;
  }
  size_t i = h & (f->table_size - 1);
  s->next = f->table[i];
  f->table[i] = s;
  if (f->last)
    f->last->order = s;
  else
    f->first = s;
  f->last = s;
  f->nseries++;
  return s;
fail:
  series_free(s, f->nlabels);
  return NULL;
}

void tt_metric_add(struct tt_metric_family *f, const char *const *labels, double v) {
  struct series *s = lookup(f, labels);
  if (s)
    s->value += v;
}

void tt_metric_set(struct tt_metric_family *f, const char *const *labels, double v) {
  struct series *s = lookup(f, labels);
  if (s)
    s->value = v;
}

double *tt_metric_slot(struct tt_metric_family *f, const char *const *labels) {
  struct series *s = lookup(f, labels);
  return s ? &s->value : NULL;
}

static struct series *observe(struct tt_metric_family *f, const char *const *labels,
                              double v, size_t *bucket) {
  struct series *s = lookup(f, labels);
  if (s == NULL)
    return NULL;
  s->value += v;
  s->count++;
  size_t i = 0;
  while (i < NBUCKETS && !(v <= latency_buckets[i]))
    i++;
  if (i < NBUCKETS)
    s->buckets[i]++;
  *bucket = i; /* NBUCKETS: +Inf */
  return s;
}

void tt_metric_observe(struct tt_metric_family *f, const char *const *labels, double v) {
  size_t bucket;
  observe(f, labels, v, &bucket);
}

void tt_metric_observe_exemplar(struct tt_metric_family *f, const char *const *labels, double v,
                                const uint8_t trace_id[16], const uint8_t span_id[8],
                                uint64_t unix_ns) {
  size_t i;
  struct series *s = observe(f, labels, v, &i);
  if (s == NULL || trace_id == NULL || span_id == NULL)
    return;
  if (s->exemplars == NULL && (s->exemplars = calloc(NBUCKETS + 1, sizeof(*s->exemplars))) == NULL)
    return;
  struct exemplar *e = &s->exemplars[i];
  memcpy(e->trace_id, trace_id, 16);
  memcpy(e->span_id, span_id, 8);
  e->set = true;
  e->value = v;
  if (unix_ns == 0) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unix_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  }
  e->unix_s = (double)(unix_ns / 1000000000u) + (double)(unix_ns % 1000000000u) / 1e9;
}

double tt_metric_value(struct tt_metric_family *f, const char *const *labels) {
  const struct series *s = find(f, labels, labels_hash(labels, f->nlabels));
  return s ? s->value : 0;
}

void tt_metrics_set_collector(struct tt_metrics *m, tt_metrics_collect_cb cb, void *arg) {
  m->collect = cb;
  m->collect_arg = arg;
}

static int put_label_value(struct tt_buf *out, const char *v) {
  for (const char *p = v; *p; p++) {
    int rc;
    if (*p == '\\')
      rc = tt_buf_puts(out, "\\\\");
    else if (*p == '"')
      rc = tt_buf_puts(out, "\\\"");
    else if (*p == '\n')
      rc = tt_buf_puts(out, "\\n");
    else
      rc = tt_buf_append(out, p, 1);
    if (rc != 0)
      return -1;
  }
  return 0;
}

/* Writes `{a="x",b="y"` plus an optional extra label, and the closing
 * brace; nothing at all when there are no labels. */
static int put_labels(struct tt_buf *out, const struct tt_metric_family *f,
                      const struct series *s, const char *extra_name, const char *extra_value) {
  if (f->nlabels == 0 && extra_name == NULL)
    return 0;
  if (tt_buf_puts(out, "{") != 0)
    return -1;
  for (size_t i = 0; i < f->nlabels; i++) {
    if (tt_buf_printf(out, "%s%s=\"", i ? "," : "", f->label_names[i]) != 0 ||
        put_label_value(out, s->labels[i]) != 0 || tt_buf_puts(out, "\"") != 0)
      return -1;
  }
  if (extra_name &&
      tt_buf_printf(out, "%s%s=\"%s\"", f->nlabels ? "," : "", extra_name, extra_value) != 0)
    return -1;
  return tt_buf_puts(out, "}");
}

static int put_number(struct tt_buf *out, double v) {
  if (v == floor(v) && fabs(v) < 1e15)
    return tt_buf_printf(out, " %.0f\n", v);
  return tt_buf_printf(out, " %.9g\n", v);
}

/* A bucket's exemplar, OpenMetrics style, before the line's newline. */
static int put_exemplar(struct tt_buf *out, const struct exemplar *e) {
  if (out->len == 0 || out->data[out->len - 1] != '\n')
    return -1;
  out->len--; /* put_number ended the line */
  char tid[33], sid[17];
  tt_trace_hex(e->trace_id, 16, tid);
  tt_trace_hex(e->span_id, 8, sid);
  tid[32] = sid[16] = '\0';
  return tt_buf_printf(out, " # {trace_id=\"%s\",span_id=\"%s\"} %.9g %.3f\n", tid, sid,
                       e->value, e->unix_s);
}

static int render_family(struct tt_buf *out, const struct tt_metric_family *f, bool om) {
  static const char *const kinds[] = {"counter", "gauge", "histogram"};
  /* OpenMetrics names a counter family without the _total its samples carry. */
  int namelen = (int)strlen(f->name);
  if (om && f->kind == TT_METRIC_COUNTER && namelen > 6 &&
      strcmp(f->name + namelen - 6, "_total") == 0)
    namelen -= 6;
  if (tt_buf_printf(out, "# HELP %.*s %s\n# TYPE %.*s %s\n", namelen, f->name, f->help, namelen,
                    f->name, kinds[f->kind]) != 0)
    return -1;
  for (const struct series *s = f->first; s; s = s->order) {
    if (f->kind != TT_METRIC_HISTOGRAM) {
      if (tt_buf_puts(out, f->name) != 0 || put_labels(out, f, s, NULL, NULL) != 0 ||
          put_number(out, s->value) != 0)
        return -1;
      continue;
    }
    uint64_t cumulative = 0;
    for (size_t i = 0; i <= NBUCKETS; i++) {
      char le[32];
      if (i < NBUCKETS) {
        cumulative += s->buckets[i];
        snprintf(le, sizeof(le), "%g", latency_buckets[i]);
      } else {
        cumulative = s->count;
        snprintf(le, sizeof(le), "+Inf");
      }
      if (tt_buf_printf(out, "%s_bucket", f->name) != 0 ||
          put_labels(out, f, s, "le", le) != 0 || put_number(out, (double)cumulative) != 0)
        return -1;
      if (om && s->exemplars && s->exemplars[i].set &&
          put_exemplar(out, &s->exemplars[i]) != 0)
        return -1;
    }
    if (tt_buf_printf(out, "%s_sum", f->name) != 0 || put_labels(out, f, s, NULL, NULL) != 0 ||
        put_number(out, s->value) != 0 || tt_buf_printf(out, "%s_count", f->name) != 0 ||
        put_labels(out, f, s, NULL, NULL) != 0 || put_number(out, (double)s->count) != 0)
      return -1;
  }
  return 0;
}

static int render(struct tt_metrics *m, struct tt_buf *out, bool om) {
  for (const struct tt_metric_family *f = m->first; f; f = f->next)
    if (render_family(out, f, om) != 0)
      return -1;
  if (m->collect)
    m->collect(out, om, m->collect_arg);
  return om ? tt_buf_puts(out, "# EOF\n") : 0;
}

int tt_metrics_render(struct tt_metrics *m, struct tt_buf *out) { return render(m, out, false); }

int tt_metrics_render_openmetrics(struct tt_metrics *m, struct tt_buf *out) {
  return render(m, out, true);
}
