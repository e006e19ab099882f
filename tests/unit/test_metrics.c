/* SPDX-License-Identifier: Apache-2.0 */
/* test_metrics.c -- registry and Prometheus text exposition format. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "obs/families.h"
#include "obs/metrics.h"

static const char *const lbl[] = {"route", "method"};

START_TEST(counter_exposition) {
  struct tt_metrics *m = tt_metrics_new();
  struct tt_metric_family *f =
      tt_metrics_family(m, TT_METRIC_COUNTER, "x_total", "Things.", lbl, 2);
  const char *a[] = {"/v1/models/{model}", "GET"};
  const char *b[] = {"/healthz", "GET"};
  tt_metric_add(f, a, 1);
  tt_metric_add(f, a, 2);
  tt_metric_add(f, b, 1);
  ck_assert_double_eq(tt_metric_value(f, a), 3);
  struct tt_buf out;
  tt_buf_init(&out, 0);
  ck_assert_int_eq(tt_metrics_render(m, &out), 0);
  ck_assert_str_eq(out.data, "# HELP x_total Things.\n# TYPE x_total counter\n"
                             "x_total{route=\"/v1/models/{model}\",method=\"GET\"} 3\n"
                             "x_total{route=\"/healthz\",method=\"GET\"} 1\n");
  tt_buf_free(&out);
  tt_metrics_free(m);
}
END_TEST

START_TEST(label_values_are_escaped) {
  struct tt_metrics *m = tt_metrics_new();
  struct tt_metric_family *f = tt_metrics_family(m, TT_METRIC_GAUGE, "g", "G.", lbl, 2);
  const char *a[] = {"a\"b\\c\nd", "X"};
  tt_metric_set(f, a, 1.5);
  struct tt_buf out;
  tt_buf_init(&out, 0);
  tt_metrics_render(m, &out);
  ck_assert_ptr_nonnull(strstr(out.data, "g{route=\"a\\\"b\\\\c\\nd\",method=\"X\"} 1.5\n"));
  tt_buf_free(&out);
  tt_metrics_free(m);
}
END_TEST

START_TEST(histogram_buckets_are_cumulative) {
  struct tt_metrics *m = tt_metrics_new();
  static const char *const l1[] = {"route"};
  struct tt_metric_family *f = tt_metrics_family(m, TT_METRIC_HISTOGRAM, "h_seconds", "H.", l1, 1);
  const char *r[] = {"/healthz"};
  tt_metric_observe(f, r, 0.0003);
  tt_metric_observe(f, r, 0.002);
  tt_metric_observe(f, r, 100);
  struct tt_buf out;
  tt_buf_init(&out, 0);
  tt_metrics_render(m, &out);
  ck_assert_ptr_nonnull(strstr(out.data, "# TYPE h_seconds histogram\n"));
  ck_assert_ptr_nonnull(strstr(out.data, "h_seconds_bucket{route=\"/healthz\",le=\"0.00025\"} 0\n"));
  ck_assert_ptr_nonnull(strstr(out.data, "h_seconds_bucket{route=\"/healthz\",le=\"0.0005\"} 1\n"));
  ck_assert_ptr_nonnull(strstr(out.data, "h_seconds_bucket{route=\"/healthz\",le=\"0.0025\"} 2\n"));
  ck_assert_ptr_nonnull(strstr(out.data, "h_seconds_bucket{route=\"/healthz\",le=\"30\"} 2\n"));
  ck_assert_ptr_nonnull(strstr(out.data, "h_seconds_bucket{route=\"/healthz\",le=\"+Inf\"} 3\n"));
  ck_assert_ptr_nonnull(strstr(out.data, "h_seconds_count{route=\"/healthz\"} 3\n"));
  ck_assert_ptr_nonnull(strstr(out.data, "h_seconds_sum{route=\"/healthz\"} 100.0023\n"));
  tt_buf_free(&out);
  tt_metrics_free(m);
}
END_TEST

START_TEST(many_series_survive_rehash) {
  struct tt_metrics *m = tt_metrics_new();
  static const char *const l1[] = {"k"};
  struct tt_metric_family *f = tt_metrics_family(m, TT_METRIC_COUNTER, "c_total", "C.", l1, 1);
  char name[16];
  /* A series' value slot stays its own through every rehash below. */
  const char *first[] = {"s0"};
  double *slot = tt_metric_slot(f, first);
  ck_assert_ptr_nonnull(slot);
  for (int i = 0; i < 500; i++) {
    snprintf(name, sizeof(name), "s%d", i);
    const char *l[] = {name};
    tt_metric_add(f, l, i);
  }
  *slot += 7;
  ck_assert_double_eq(tt_metric_value(f, first), 7);
  *slot -= 7;
  for (int i = 0; i < 500; i++) {
    snprintf(name, sizeof(name), "s%d", i);
    const char *l[] = {name};
    ck_assert_double_eq(tt_metric_value(f, l), i);
  }
  tt_metrics_free(m);
}
END_TEST

START_TEST(openmetrics_with_exemplars) {
  struct tt_metrics *m = tt_metrics_new();
  static const char *const names[] = {"route"};
  struct tt_metric_family *c =
      tt_metrics_family(m, TT_METRIC_COUNTER, "x_requests_total", "Requests.", names, 1);
  struct tt_metric_family *h =
      tt_metrics_family(m, TT_METRIC_HISTOGRAM, "x_seconds", "Latency.", names, 1);
  const char *l[1] = {"/a"};
  tt_metric_add(c, l, 2);
  static const uint8_t tid[16] = {0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6,
                                  0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36};
  static const uint8_t sid[8] = {0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7};
  tt_metric_observe_exemplar(h, l, 0.003, tid, sid, 0);
  tt_metric_observe_exemplar(h, l, 0.004, NULL, sid, 0); /* ignored as exemplar */
  tt_metric_observe(h, l, 100);
  /* An exemplar with the time its caller gives (the span's end). */
  tt_metric_observe_exemplar(h, l, 0.3, tid, sid, 1700000000250000000ull);
  struct tt_buf out;
  tt_buf_init(&out, 0);
  ck_assert_int_eq(tt_metrics_render_openmetrics(m, &out), 0);
  const char *t = out.data;
  ck_assert_ptr_nonnull(strstr(t, "# TYPE x_requests counter\n"));
  ck_assert_ptr_nonnull(strstr(t, "x_requests_total{route=\"/a\"} 2\n"));
  ck_assert_ptr_nonnull(strstr(t, "x_seconds_bucket{route=\"/a\",le=\"0.005\"} 2 # "
                                  "{trace_id=\"4bf92f3577b34da6a3ce929d0e0e4736\","
                                  "span_id=\"00f067aa0ba902b7\"} 0.003 "));
  ck_assert_ptr_nonnull(strstr(t, "span_id=\"00f067aa0ba902b7\"} 0.3 1700000000.250\n"));
  ck_assert_ptr_nonnull(strstr(t, "x_seconds_bucket{route=\"/a\",le=\"+Inf\"} 4\n"));
  ck_assert_str_eq(t + out.len - 6, "# EOF\n");
  tt_buf_reset(&out);
  ck_assert_int_eq(tt_metrics_render(m, &out), 0);
  ck_assert_ptr_null(strstr(out.data, "# {"));
  ck_assert_ptr_nonnull(strstr(out.data, "# TYPE x_requests_total counter\n"));
  tt_buf_free(&out);
  tt_metrics_free(m);
}
END_TEST

START_TEST(daemon_families_render) {
  struct tt_families fams;
  ck_assert_int_eq(tt_families_init(&fams), 0);
  tt_families_inflight_ops(&fams, 2);
  tt_families_inflight_ops(&fams, -1);
  struct tt_buf out;
  tt_buf_init(&out, 0);
  tt_metrics_render(fams.registry, &out);
  static const char *const names[] = {
      "# TYPE tabletheoryd_http_requests_total counter",
      "# TYPE tabletheoryd_http_request_duration_seconds histogram",
      "# TYPE tabletheoryd_backend_calls_total counter",
      "# TYPE tabletheoryd_backend_call_duration_seconds histogram",
      "# TYPE tabletheoryd_backend_retries_total counter",
      "tabletheoryd_inflight_requests 0\n",
      "tabletheoryd_inflight_operations 1\n",
      "# TYPE tabletheoryd_consumed_capacity_total counter",
      "process_resident_memory_bytes ",
      "process_cpu_seconds_total ",
      "process_open_fds ",
  };
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    ck_assert_msg(strstr(out.data, names[i]) != NULL, "missing %s", names[i]);
  tt_buf_free(&out);
  tt_families_free(&fams);
}
END_TEST

int main(void) {
  Suite *s = suite_create("metrics");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, counter_exposition);
  tcase_add_test(tc, label_values_are_escaped);
  tcase_add_test(tc, histogram_buckets_are_cumulative);
  tcase_add_test(tc, many_series_survive_rehash);
  tcase_add_test(tc, daemon_families_render);
  tcase_add_test(tc, openmetrics_with_exemplars);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
