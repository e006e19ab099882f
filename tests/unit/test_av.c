/* SPDX-License-Identifier: Apache-2.0 */
/* test_av.c -- AttributeValue ownership, equality, ordering, maps, sets and
 * DynamoDB item sizes. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "value/av.h"

static struct tt_av S(const char *s) {
  struct tt_av v;
  ck_assert_int_eq(tt_av_string(&v, s, strlen(s)), 0);
  return v;
}

static struct tt_av N(const char *s) {
  struct tt_av v;
  struct tt_error err;
  ck_assert_int_eq(tt_av_number_text(&v, s, strlen(s), "n", &err), 0);
  return v;
}

static void put(struct tt_av *map, const char *name, struct tt_av v) {
  ck_assert_int_eq(tt_av_map_put(map, name, strlen(name), &v), 0);
}

START_TEST(constructors_and_free) {
  struct tt_av v = N("001.500");
  ck_assert_int_eq(v.type, TT_AV_N);
  ck_assert_str_eq(v.u.bytes, "1.5");
  ck_assert_uint_eq(v.len, 3);
  tt_av_free(&v);
  ck_assert_int_eq(v.type, TT_AV_NULL);
  tt_av_free(&v); /* freeing twice is harmless */

  struct tt_error err;
  ck_assert_int_eq(tt_av_number_text(&v, "1e200", 5, "score", &err), -1);
  ck_assert_str_eq(err.field, "score");
  ck_assert_int_eq(v.type, TT_AV_NULL);

  struct tt_av z;
  memset(&z, 0, sizeof(z));
  tt_av_free(&z); /* zeroed values are safe */

  ck_assert_int_eq(tt_av_binary(&v, "\0\1\2", 3), 0);
  ck_assert_uint_eq(v.len, 3);
  ck_assert_int_eq(memcmp(v.u.bytes, "\0\1\2", 3), 0);
  tt_av_free(&v);
  ck_assert_int_eq(tt_av_number_int(&v, -42), 0);
  ck_assert_str_eq(v.u.bytes, "-42");
  tt_av_free(&v);
  ck_assert_str_eq(tt_av_type_name(TT_AV_BS), "BS");
  ck_assert_int_eq(tt_av_type_parse("BOOL", 4), TT_AV_BOOL);
  ck_assert_int_eq(tt_av_type_parse("X", 1), 0);
}
END_TEST

START_TEST(map_operations) {
  struct tt_av m, c;
  ck_assert_int_eq(tt_av_map(&m, 0), 0);
  put(&m, "zeta", S("z"));
  put(&m, "Alpha", S("a"));
  put(&m, "mid", N("3"));
  ck_assert_uint_eq(m.len, 3);
  /* Sorted by bytes: uppercase first. */
  ck_assert_str_eq(m.u.members[0].name, "Alpha");
  ck_assert_str_eq(m.u.members[1].name, "mid");
  ck_assert_str_eq(m.u.members[2].name, "zeta");
  put(&m, "mid", N("4")); /* replace */
  ck_assert_uint_eq(m.len, 3);
  ck_assert_str_eq(tt_av_map_get(&m, "mid")->u.bytes, "4");
  ck_assert_ptr_null(tt_av_map_get(&m, "nope"));
  ck_assert_int_eq(tt_av_clone(&c, &m), 0);
  ck_assert(tt_av_equal(&m, &c));
  ck_assert_int_eq(tt_av_map_remove(&c, "zeta"), 1);
  ck_assert_int_eq(tt_av_map_remove(&c, "zeta"), 0);
  ck_assert(!tt_av_equal(&m, &c));
  tt_av_free(&m);
  tt_av_free(&c);

  /* Filled by hand, then sorted; duplicates rejected. */
  struct tt_error err;
  ck_assert_int_eq(tt_av_map(&m, 2), 0);
  m.u.members[0].name = strdup("b");
  m.u.members[0].name_len = 1;
  m.u.members[1].name = strdup("b");
  m.u.members[1].name_len = 1;
  ck_assert_int_eq(tt_av_map_finish(&m, "attrs", &err), -1);
  ck_assert_str_eq(err.message, "attrs: duplicate map key");
  tt_av_free(&m);
}
END_TEST

START_TEST(equality_rules) {
  struct tt_av a = N("1.0"), b = N("1"), s = S("1");
  ck_assert(tt_av_equal(&a, &b));
  ck_assert(!tt_av_equal(&a, &s)); /* different types never equal */
  tt_av_free(&a);
  tt_av_free(&b);
  tt_av_free(&s);

  /* Sets compare as sets, in any order. */
  struct tt_av x, y;
  struct tt_error err;
  ck_assert_int_eq(tt_av_list(&x, TT_AV_NS, 3), 0);
  x.u.elems[0] = N("10");
  x.u.elems[1] = N("9");
  x.u.elems[2] = N("-1");
  ck_assert_int_eq(tt_av_list(&y, TT_AV_NS, 3), 0);
  y.u.elems[0] = N("9");
  y.u.elems[1] = N("-1");
  y.u.elems[2] = N("10");
  ck_assert(tt_av_equal(&x, &y)); /* unsorted path */
  ck_assert_int_eq(tt_av_set_finish(&x, "ns", &err), 0);
  /* NS sorts numerically, not by text. */
  ck_assert_str_eq(x.u.elems[0].u.bytes, "-1");
  ck_assert_str_eq(x.u.elems[1].u.bytes, "9");
  ck_assert_str_eq(x.u.elems[2].u.bytes, "10");
  ck_assert_int_eq(tt_av_set_finish(&y, "ns", &err), 0);
  ck_assert(tt_av_equal(&x, &y)); /* sorted path */
  tt_av_free(&x);
  tt_av_free(&y);

  /* Lists are ordered. */
  ck_assert_int_eq(tt_av_list(&x, TT_AV_L, 2), 0);
  x.u.elems[0] = S("a");
  tt_av_bool(&x.u.elems[1], true);
  ck_assert_int_eq(tt_av_clone(&y, &x), 0);
  ck_assert(tt_av_equal(&x, &y));
  struct tt_av t = y.u.elems[0];
  y.u.elems[0] = y.u.elems[1];
  y.u.elems[1] = t;
  ck_assert(!tt_av_equal(&x, &y));
  tt_av_free(&x);
  tt_av_free(&y);
}
END_TEST

START_TEST(set_rules) {
  struct tt_av s;
  struct tt_error err;
  ck_assert_int_eq(tt_av_list(&s, TT_AV_SS, 0), 0);
  ck_assert_int_eq(tt_av_set_finish(&s, "tags", &err), -1);
  ck_assert_str_eq(err.message, "tags: a set cannot be empty");
  tt_av_free(&s);
  ck_assert_int_eq(tt_av_list(&s, TT_AV_SS, 3), 0);
  s.u.elems[0] = S("b");
  s.u.elems[1] = S("a");
  s.u.elems[2] = S("b");
  ck_assert_int_eq(tt_av_set_finish(&s, "tags", &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
  ck_assert_str_eq(err.field, "tags");
  ck_assert_str_eq(err.message, "tags: a set cannot contain duplicate members");
  tt_av_free(&s);
  /* Numerically equal spellings are the same member. */
  ck_assert_int_eq(tt_av_list(&s, TT_AV_NS, 2), 0);
  s.u.elems[0] = N("1.0");
  s.u.elems[1] = N("1");
  ck_assert_int_eq(tt_av_set_finish(&s, "ns", &err), -1);
  tt_av_free(&s);
}
END_TEST

START_TEST(ordering) {
  struct tt_av a = S("a"), b = S("b"), ab = S("ab"), n1 = N("9"), n2 = N("10");
  ck_assert_int_lt(tt_av_compare(&a, &b), 0);
  ck_assert_int_lt(tt_av_compare(&a, &ab), 0);
  ck_assert_int_lt(tt_av_compare(&n1, &n2), 0); /* numeric, not "10" < "9" */
  struct tt_av x, y;
  ck_assert_int_eq(tt_av_binary(&x, "\x01", 1), 0);
  ck_assert_int_eq(tt_av_binary(&y, "\xff", 1), 0);
  ck_assert_int_lt(tt_av_compare(&x, &y), 0); /* unsigned bytes */
  tt_av_free(&a);
  tt_av_free(&b);
  tt_av_free(&ab);
  tt_av_free(&n1);
  tt_av_free(&n2);
  tt_av_free(&x);
  tt_av_free(&y);
}
END_TEST

/* Known answers from the rules in the DynamoDB Developer Guide, "Item
 * sizes and formats". */
START_TEST(item_sizes) {
  struct tt_av item, v;
  ck_assert_int_eq(tt_av_map(&item, 0), 0);

  v = S("abc"); /* name (4) + UTF-8 bytes (3) */
  ck_assert_uint_eq(tt_av_attr_size("name", 4, &v), 7);
  put(&item, "name", v);
  v = S("\xc3\xa9t\xc3\xa9"); /* "été": 5 UTF-8 bytes, 3 characters */
  ck_assert_uint_eq(tt_av_attr_size("s", 1, &v), 6);
  put(&item, "s", v);
  v = N("12345"); /* 3 + ceil(5/2) + 1 */
  ck_assert_uint_eq(tt_av_attr_size("age", 3, &v), 7);
  put(&item, "age", v);
  v = N("0.00120"); /* zeros trimmed: digits "12" -> 1 + 1 */
  ck_assert_uint_eq(tt_av_attr_size("p", 1, &v), 3);
  put(&item, "p", v);
  ck_assert_int_eq(tt_av_binary(&v, "\x01\x02\x03", 3), 0); /* raw bytes, not base64 */
  ck_assert_uint_eq(tt_av_attr_size("blob", 4, &v), 7);
  put(&item, "blob", v);
  tt_av_bool(&v, true);
  ck_assert_uint_eq(tt_av_attr_size("flag", 4, &v), 5);
  put(&item, "flag", v);
  tt_av_null(&v);
  ck_assert_uint_eq(tt_av_attr_size("none", 4, &v), 5);
  put(&item, "none", v);
  ck_assert_int_eq(tt_av_list(&v, TT_AV_L, 0), 0); /* empty list: name + 3 */
  ck_assert_uint_eq(tt_av_attr_size("list", 4, &v), 7);
  tt_av_free(&v);
  ck_assert_int_eq(tt_av_list(&v, TT_AV_L, 2), 0);
  v.u.elems[0] = S("ab");
  v.u.elems[1] = S("c"); /* 4 + 3 + (1 + 2) + (1 + 1) */
  ck_assert_uint_eq(tt_av_attr_size("list", 4, &v), 12);
  put(&item, "list", v);
  ck_assert_int_eq(tt_av_map(&v, 0), 0);
  ck_assert_uint_eq(tt_av_attr_size("map", 3, &v), 6);
  put(&v, "k", S("v")); /* 3 + 3 + (1 + 1 + 1) */
  ck_assert_uint_eq(tt_av_attr_size("map", 3, &v), 9);
  put(&item, "map", v);
  ck_assert_int_eq(tt_av_list(&v, TT_AV_SS, 2), 0);
  v.u.elems[0] = S("a");
  v.u.elems[1] = S("bc"); /* sets: sum of members */
  ck_assert_uint_eq(tt_av_attr_size("ss", 2, &v), 5);
  put(&item, "ss", v);

  ck_assert_uint_eq(tt_av_item_size(&item), 7 + 6 + 7 + 3 + 7 + 5 + 5 + 12 + 9 + 5);
  tt_av_free(&item);
}
END_TEST

static Suite *av_suite(void) {
  Suite *s = suite_create("av");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, constructors_and_free);
  tcase_add_test(tc, map_operations);
  tcase_add_test(tc, equality_rules);
  tcase_add_test(tc, set_rules);
  tcase_add_test(tc, ordering);
  tcase_add_test(tc, item_sizes);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(av_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
