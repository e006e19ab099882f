/* SPDX-License-Identifier: Apache-2.0 */
/* test_router.c -- route matching, parameters, 404 vs 405 and Allow. */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "api/router.h"

static const int H1 = 1, H2 = 2, H3 = 3, H4 = 4, H5 = 5;
static const struct tt_route routes[] = {
    {TT_METHOD_GET, "/healthz", &H1, 0},
    {TT_METHOD_GET, "/v1/models/{model}", &H2, 0},
    {TT_METHOD_PUT, "/v1/models/{model}", &H3, 0},
    {TT_METHOD_GET, "/v1/models/{model}/items/{key+}", &H4, 0},
    {TT_METHOD_POST, "/v1/_faults", &H5, TT_ROUTE_FAULTS},
};
#define N (sizeof(routes) / sizeof(routes[0]))

static struct tt_router small, api;

static void setup(void) {
  ck_assert_int_eq(tt_router_init(&small, routes, N), 0);
  ck_assert_int_eq(tt_router_init(&api, tt_api_routes, tt_api_nroutes), 0);
}

static int match(unsigned method, const char *path, unsigned flags, struct tt_route_match *m) {
  return tt_router_match(&small, method, path, strlen(path), flags, m);
}

START_TEST(literal_and_params) {
  struct tt_route_match m;
  ck_assert_int_eq(match(TT_METHOD_GET, "/healthz", 0, &m), TT_ROUTER_FOUND);
  ck_assert_ptr_eq(m.route->handler, &H1);
  ck_assert_int_eq(match(TT_METHOD_PUT, "/v1/models/User", 0, &m), TT_ROUTER_FOUND);
  ck_assert_ptr_eq(m.route->handler, &H3);
  const struct tt_route_param *p = tt_route_param(&m, "model");
  ck_assert_ptr_nonnull(p);
  ck_assert_uint_eq(p->len, 4);
  ck_assert_int_eq(memcmp(p->value, "User", 4), 0);
}
END_TEST

START_TEST(rest_parameter_takes_composite_keys) {
  struct tt_route_match m;
  ck_assert_int_eq(match(TT_METHOD_GET, "/v1/models/User/items/USER%231/PROFILE", 0, &m),
                   TT_ROUTER_FOUND);
  const struct tt_route_param *k = tt_route_param(&m, "key");
  ck_assert_uint_eq(k->len, strlen("USER%231/PROFILE"));
  ck_assert_int_eq(memcmp(k->value, "USER%231/PROFILE", k->len), 0);
  ck_assert_int_eq(match(TT_METHOD_GET, "/v1/models/User/items/", 0, &m), TT_ROUTER_NO_PATH);
}
END_TEST

START_TEST(unknown_path_and_wrong_method) {
  struct tt_route_match m;
  ck_assert_int_eq(match(TT_METHOD_GET, "/nope", 0, &m), TT_ROUTER_NO_PATH);
  ck_assert_int_eq(match(TT_METHOD_GET, "/healthz/", 0, &m), TT_ROUTER_NO_PATH);
  ck_assert_int_eq(match(TT_METHOD_GET, "/v1/models//x", 0, &m), TT_ROUTER_NO_PATH);
  ck_assert_int_eq(match(TT_METHOD_DELETE, "/v1/models/User", 0, &m), TT_ROUTER_NO_METHOD);
  char allow[64];
  tt_method_allow_header(m.allow, allow, sizeof(allow));
  ck_assert_str_eq(allow, "GET, HEAD, PUT");
}
END_TEST

START_TEST(head_matches_get) {
  struct tt_route_match m;
  ck_assert_int_eq(match(TT_METHOD_HEAD, "/healthz", 0, &m), TT_ROUTER_FOUND);
  ck_assert_uint_eq(tt_method_parse("PATCH"), TT_METHOD_PATCH);
  ck_assert_uint_eq(tt_method_parse("BREW"), 0);
}
END_TEST

START_TEST(fault_routes_need_the_flag) {
  struct tt_route_match m;
  ck_assert_int_eq(match(TT_METHOD_POST, "/v1/_faults", 0, &m), TT_ROUTER_NO_PATH);
  ck_assert_int_eq(match(TT_METHOD_POST, "/v1/_faults", TT_ROUTE_FAULTS, &m), TT_ROUTER_FOUND);
}
END_TEST

START_TEST(test_clock_route_needs_its_own_flag) {
  /* Each gate is separate: fault injection does not serve the clock. */
  struct tt_route_match m;
  unsigned both = TT_ROUTE_FAULTS | TT_ROUTE_TEST_CLOCK;
  size_t len = strlen("/v1/_test/clock");
  ck_assert_int_eq(tt_router_match(&api, TT_METHOD_POST, "/v1/_test/clock", len, 0, &m),
                   TT_ROUTER_NO_PATH);
  ck_assert_int_eq(
      tt_router_match(&api, TT_METHOD_POST, "/v1/_test/clock", len, TT_ROUTE_FAULTS, &m),
      TT_ROUTER_NO_PATH);
  ck_assert_int_eq(
      tt_router_match(&api, TT_METHOD_POST, "/v1/_test/clock", len, TT_ROUTE_TEST_CLOCK, &m),
      TT_ROUTER_FOUND);
  ck_assert_int_eq(tt_router_match(&api, TT_METHOD_POST, "/v1/_test/sleep",
                                   strlen("/v1/_test/sleep"), TT_ROUTE_TEST_CLOCK, &m),
                   TT_ROUTER_NO_PATH);
  ck_assert_int_eq(tt_router_match(&api, TT_METHOD_GET, "/v1/_test/clock", len, both, &m),
                   TT_ROUTER_FOUND);
}
END_TEST

START_TEST(api_table_is_well_formed) {
  /* Every pattern of the real table starts with '/', has balanced braces
   * and at most one rest parameter, placed last. */
  for (size_t i = 0; i < tt_api_nroutes; i++) {
    const char *p = tt_api_routes[i].pattern;
    ck_assert_int_eq(p[0], '/');
    const char *rest = strstr(p, "+}");
    if (rest)
      ck_assert_int_eq(rest[2], '\0');
    int depth = 0;
    for (; *p; p++) {
      depth += *p == '{';
      depth -= *p == '}';
      ck_assert(depth == 0 || depth == 1);
    }
    ck_assert_int_eq(depth, 0);
    ck_assert_ptr_nonnull(tt_api_routes[i].handler);
  }
}
END_TEST

START_TEST(literal_beats_parameter_for_every_method) {
  /* PUT and DELETE /v1/jobs/table exist; a GET must not fall through to
   * the job "table", it is a 405 naming PUT and DELETE. */
  struct tt_route_match m;
  const char *path = "/v1/jobs/table";
  unsigned enabled = TT_ROUTE_FAULTS;
  ck_assert_int_eq(tt_router_match(&api, TT_METHOD_PUT, path,
                                   strlen(path), enabled, &m),
                   TT_ROUTER_FOUND);
  ck_assert_str_eq(m.route->pattern, "/v1/jobs/table");
  ck_assert_uint_eq(m.nparams, 0);
  ck_assert_int_eq(tt_router_match(&api, TT_METHOD_DELETE, path,
                                   strlen(path), enabled, &m),
                   TT_ROUTER_FOUND);
  ck_assert_str_eq(m.route->pattern, "/v1/jobs/table");
  const unsigned others[] = {TT_METHOD_GET, TT_METHOD_HEAD, TT_METHOD_POST, TT_METHOD_PATCH,
                             TT_METHOD_OPTIONS};
  for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
    ck_assert_int_eq(tt_router_match(&api, others[i], path,
                                     strlen(path), enabled, &m),
                     TT_ROUTER_NO_METHOD);
    char allow[64];
    tt_method_allow_header(m.allow, allow, sizeof(allow));
    ck_assert_str_eq(allow, "PUT, DELETE");
  }
}
END_TEST

/* ---- an independent model of "the most specific pattern wins" ---------- */

#define MAXSEG 12

static size_t split(const char *s, char segs[MAXSEG][64]) {
  size_t n = 0;
  while (*s == '/' && n < MAXSEG) {
    s++;
    size_t len = strcspn(s, "/");
    ck_assert_uint_lt(len, 64);
    memcpy(segs[n], s, len);
    segs[n][len] = '\0';
    n++;
    s += len;
  }
  return n;
}

static int seg_kind(const char *seg) {
  size_t n = strlen(seg);
  if (n >= 2 && seg[0] == '{' && seg[n - 1] == '}')
    return seg[n - 2] == '+' ? 0 : 1;
  return 2;
}

/* Fills kinds[] with the pattern's segment kinds when it matches path. */
static bool model_match(const char *pattern, const char *path, int kinds[MAXSEG], size_t *nk) {
  char ps[MAXSEG][64], xs[MAXSEG][64];
  size_t np = split(pattern, ps), nx = split(path, xs);
  *nk = np;
  for (size_t i = 0; i < np; i++) {
    kinds[i] = seg_kind(ps[i]);
    if (kinds[i] == 0)
      return nx >= np; /* the rest takes one or more segments */
    if (i >= nx || xs[i][0] == '\0')
      return false;
    if (kinds[i] == 2 && strcmp(ps[i], xs[i]) != 0)
      return false;
  }
  return np == nx;
}

/* The methods (with HEAD for GET) of the most specific patterns matching
 * path; 0 when none matches. */
static unsigned model_allow(const char *path, int best[MAXSEG], size_t *nbest_out) {
  int k[MAXSEG];
  size_t nbest = 0, nk;
  bool have = false;
  unsigned allow = 0;
  for (size_t r = 0; r < tt_api_nroutes; r++) {
    if (!model_match(tt_api_routes[r].pattern, path, k, &nk))
      continue;
    int cmp = 0;
    for (size_t i = 0; have && cmp == 0 && (i < nk || i < nbest); i++)
      cmp = (i < nk ? k[i] + 1 : 0) - (i < nbest ? best[i] + 1 : 0);
    if (have && cmp < 0)
      continue;
    if (!have || cmp > 0) {
      memcpy(best, k, sizeof(k));
      nbest = nk;
      allow = 0;
      have = true;
    }
    unsigned mm = tt_api_routes[r].methods;
    allow |= mm | (mm & TT_METHOD_GET ? TT_METHOD_HEAD : 0);
  }
  *nbest_out = nbest;
  return allow;
}

START_TEST(no_literal_segment_is_shadowed) {
  /* Every pattern of the table, with each of its parameters replaced in
   * turn by every literal segment the table uses: for every method the
   * router must pick one of the most specific patterns, or answer 405
   * with exactly their methods. */
  char literals[64][64];
  size_t nlit = 0;
  for (size_t r = 0; r < tt_api_nroutes; r++) {
    char segs[MAXSEG][64];
    size_t n = split(tt_api_routes[r].pattern, segs);
    for (size_t i = 0; i < n; i++) {
      bool seen = seg_kind(segs[i]) != 2;
      for (size_t j = 0; !seen && j < nlit; j++)
        seen = strcmp(literals[j], segs[i]) == 0;
      if (!seen && nlit < 64)
        memcpy(literals[nlit++], segs[i], sizeof(segs[i]));
    }
  }
  ck_assert_uint_gt(nlit, 10);
  const unsigned methods[] = {TT_METHOD_GET, TT_METHOD_HEAD, TT_METHOD_POST, TT_METHOD_PUT,
                              TT_METHOD_PATCH, TT_METHOD_DELETE, TT_METHOD_OPTIONS};
  size_t checked = 0;
  for (size_t r = 0; r < tt_api_nroutes; r++) {
    char segs[MAXSEG][64];
    size_t n = split(tt_api_routes[r].pattern, segs);
    for (size_t at = 0; at < n; at++) {
      if (seg_kind(segs[at]) == 2)
        continue;
      for (size_t l = 0; l < nlit; l++) {
        char path[512] = "";
        size_t len = 0;
        for (size_t i = 0; i < n; i++) {
          const char *v = i == at ? literals[l] : seg_kind(segs[i]) == 2 ? segs[i] : "x";
          len += (size_t)snprintf(path + len, sizeof(path) - len, "/%s", v);
        }
        int best[MAXSEG];
        size_t nbest;
        unsigned want_allow = model_allow(path, best, &nbest);
        ck_assert_uint_ne(want_allow, 0);
        for (size_t mi = 0; mi < sizeof(methods) / sizeof(methods[0]); mi++) {
          struct tt_route_match m;
          int rc = tt_router_match(&api, methods[mi], path, len,
                                   TT_ROUTE_FAULTS, &m);
          unsigned want = methods[mi] == TT_METHOD_HEAD ? TT_METHOD_GET : methods[mi];
          checked++;
          if (want_allow & methods[mi]) {
            ck_assert_msg(rc == TT_ROUTER_FOUND, "%s %s", tt_api_routes[r].pattern, path);
            ck_assert_msg(m.route->methods & want, "%s", path);
            /* The route found has the most specific shape. */
            int k[MAXSEG];
            size_t nk;
            ck_assert(model_match(m.route->pattern, path, k, &nk));
            ck_assert_msg(nk == nbest && memcmp(k, best, nk * sizeof(k[0])) == 0,
                          "%s answered by %s", path, m.route->pattern);
          } else {
            ck_assert_msg(rc == TT_ROUTER_NO_METHOD, "%s %s: rc %d (%s)", tt_api_routes[r].pattern,
                          path, rc, rc == TT_ROUTER_FOUND ? m.route->pattern : "-");
            ck_assert_uint_eq(m.allow, want_allow);
          }
        }
      }
    }
  }
  ck_assert_uint_gt(checked, 100);
}
END_TEST

START_TEST(parameters_share_a_position) {
  /* Parameters of different names at one position must not hide each
   * other: /x/{b}/lit is more specific than /x/{a}/{y} for /x/1/lit, and the
   * literal branch /x/lit/... backtracks to the parameter when it ends in
   * no route. Names come from the route found. */
  static const int A = 1, B = 2, C = 3, D = 4;
  static const struct tt_route t[] = {
      {TT_METHOD_GET, "/x/{a}/{y}", &A, 0},
      {TT_METHOD_POST, "/x/{b}/lit", &B, 0},
      {TT_METHOD_GET, "/x/lit/deep/{z}", &C, 0},
      {TT_METHOD_GET, "/x/{c+}", &D, 0},
  };
  struct tt_router r;
  struct tt_route_match m;
  ck_assert_int_eq(tt_router_init(&r, t, 4), 0);
  ck_assert_int_eq(tt_router_match(&r, TT_METHOD_GET, "/x/1/lit", 8, 0, &m), TT_ROUTER_NO_METHOD);
  ck_assert_uint_eq(m.allow, TT_METHOD_POST);
  ck_assert_uint_eq(m.nparams, 0);
  ck_assert_int_eq(tt_router_match(&r, TT_METHOD_POST, "/x/1/lit", 8, 0, &m), TT_ROUTER_FOUND);
  ck_assert_ptr_eq(m.route->handler, &B);
  ck_assert_uint_eq(m.nparams, 1);
  ck_assert_int_eq(memcmp(m.params[0].name, "b", m.params[0].name_len), 0);
  ck_assert_int_eq(tt_router_match(&r, TT_METHOD_GET, "/x/lit/2", 8, 0, &m), TT_ROUTER_FOUND);
  ck_assert_ptr_eq(m.route->handler, &A);
  ck_assert_ptr_nonnull(tt_route_param(&m, "a"));
  ck_assert_int_eq(memcmp(tt_route_param(&m, "a")->value, "lit", 3), 0);
  ck_assert_int_eq(memcmp(tt_route_param(&m, "y")->value, "2", 1), 0);
  ck_assert_int_eq(tt_router_match(&r, TT_METHOD_GET, "/x/lit/deep/q", 13, 0, &m),
                   TT_ROUTER_FOUND);
  ck_assert_ptr_eq(m.route->handler, &C);
  ck_assert_int_eq(tt_router_match(&r, TT_METHOD_GET, "/x/lit/deep/q/r", 15, 0, &m),
                   TT_ROUTER_FOUND);
  ck_assert_ptr_eq(m.route->handler, &D);
  ck_assert_uint_eq(tt_route_param(&m, "c")->len, strlen("lit/deep/q/r"));
}
END_TEST

START_TEST(rest_keeps_the_raw_remainder) {
  /* Empty segments and a trailing slash belong to a rest parameter; a
   * {param} never matches an empty segment; a path need not be
   * NUL-terminated. */
  struct tt_route_match m;
  ck_assert_int_eq(match(TT_METHOD_GET, "/v1/models/U/items/a//b/", 0, &m), TT_ROUTER_FOUND);
  ck_assert_uint_eq(tt_route_param(&m, "key")->len, strlen("a//b/"));
  ck_assert_int_eq(match(TT_METHOD_GET, "/v1/models/U/items//", 0, &m), TT_ROUTER_FOUND);
  ck_assert_uint_eq(tt_route_param(&m, "key")->len, 1);
  ck_assert_int_eq(match(TT_METHOD_GET, "/v1/models/", 0, &m), TT_ROUTER_NO_PATH);
  ck_assert_int_eq(match(TT_METHOD_GET, "healthz", 0, &m), TT_ROUTER_NO_PATH);
  ck_assert_int_eq(match(TT_METHOD_GET, "", 0, &m), TT_ROUTER_NO_PATH);
  ck_assert_int_eq(tt_router_match(&small, TT_METHOD_GET, "/healthzXYZ", 8, 0, &m),
                   TT_ROUTER_FOUND);
}
END_TEST

START_TEST(malformed_tables_are_refused) {
  static const int H = 1;
  struct tt_router r;
  const struct tt_route no_slash[] = {{TT_METHOD_GET, "healthz", &H, 0}};
  const struct tt_route rest_inside[] = {{TT_METHOD_GET, "/a/{b+}/c", &H, 0}};
  const struct tt_route five[] = {{TT_METHOD_GET, "/{a}/{b}/{c}/{d}/{e}", &H, 0}};
  ck_assert_int_eq(tt_router_init(&r, no_slash, 1), -EINVAL);
  ck_assert_int_eq(tt_router_init(&r, rest_inside, 1), -EINVAL);
  ck_assert_int_eq(tt_router_init(&r, five, 1), -EINVAL);
  ck_assert_int_eq(tt_router_init(&r, routes, TT_ROUTER_MAX_ROUTES + 1), -ENOSPC);
}
END_TEST

int main(void) {
  Suite *s = suite_create("router");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, NULL);
  tcase_add_test(tc, literal_and_params);
  tcase_add_test(tc, rest_parameter_takes_composite_keys);
  tcase_add_test(tc, unknown_path_and_wrong_method);
  tcase_add_test(tc, head_matches_get);
  tcase_add_test(tc, fault_routes_need_the_flag);
  tcase_add_test(tc, test_clock_route_needs_its_own_flag);
  tcase_add_test(tc, api_table_is_well_formed);
  tcase_add_test(tc, literal_beats_parameter_for_every_method);
  tcase_add_test(tc, parameters_share_a_position);
  tcase_add_test(tc, rest_keeps_the_raw_remainder);
  tcase_add_test(tc, malformed_tables_are_refused);
  suite_add_tcase(s, tc);
  /* Exhaustive (every pattern x every literal x every method): seconds
   * under ASan on a busy machine, past check's default 4 s limit. */
  TCase *wide = tcase_create("exhaustive");
  tcase_add_checked_fixture(wide, setup, NULL);
  tcase_set_timeout(wide, 120);
  tcase_add_test(wide, no_literal_segment_is_shadowed);
  suite_add_tcase(s, wide);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
