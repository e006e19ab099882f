/* SPDX-License-Identifier: Apache-2.0 */
/* test_router.c -- route matching, parameters, 404 vs 405 and Allow. */
#include <check.h>
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

static int match(unsigned method, const char *path, unsigned flags, struct tt_route_match *m) {
  return tt_router_match(routes, N, method, path, strlen(path), flags, m);
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

int main(void) {
  Suite *s = suite_create("router");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, literal_and_params);
  tcase_add_test(tc, rest_parameter_takes_composite_keys);
  tcase_add_test(tc, unknown_path_and_wrong_method);
  tcase_add_test(tc, head_matches_get);
  tcase_add_test(tc, fault_routes_need_the_flag);
  tcase_add_test(tc, api_table_is_well_formed);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
