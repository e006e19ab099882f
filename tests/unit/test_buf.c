/* SPDX-License-Identifier: Apache-2.0 */
/* test_buf.c -- the capped buffer and the arena. */
#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/arena.h"
#include "util/buf.h"

START_TEST(buf_appends_and_caps) {
  struct tt_buf b;
  tt_buf_init(&b, 8);
  ck_assert_int_eq(tt_buf_puts(&b, "abcd"), 0);
  ck_assert_int_eq(tt_buf_printf(&b, "%d", 123), 0);
  ck_assert_str_eq(b.data, "abcd123");
  ck_assert_int_eq(tt_buf_puts(&b, "xy"), -1); /* 9 > cap */
  ck_assert_str_eq(b.data, "abcd123");
  ck_assert_int_eq(tt_buf_puts(&b, "x"), 0);
  ck_assert_uint_eq(b.len, 8);
  size_t len;
  char *s = tt_buf_steal(&b, &len);
  ck_assert_uint_eq(len, 8);
  ck_assert_ptr_null(b.data);
  free(s);
}
END_TEST

START_TEST(buf_json_escape) {
  struct tt_buf b;
  tt_buf_init(&b, 0);
  ck_assert_int_eq(tt_buf_json_escape(&b, "a\"b\\c\n\x01", 7), 0);
  ck_assert_str_eq(b.data, "a\\\"b\\\\c\\n\\u0001");
  tt_buf_free(&b);
}
END_TEST

/* The inline append path never writes past the cap: the buffer's storage
 * stops at cap + 1 bytes, and reserve keeps the contents. */
START_TEST(buf_inline_path_keeps_cap) {
  struct tt_buf b;
  tt_buf_init(&b, 300);
  for (int i = 0; i < 300; i++)
    ck_assert_int_eq(tt_buf_append(&b, "x", 1), 0);
  ck_assert_uint_le(b.alloc, 301);
  ck_assert_int_eq(tt_buf_append(&b, "y", 1), -1);
  ck_assert_uint_eq(b.len, 300);
  ck_assert_int_eq(b.data[300], '\0');
  tt_buf_reset(&b);
  ck_assert_int_eq(tt_buf_reserve(&b, 301), -1); /* over the cap: unchanged */
  ck_assert_int_eq(tt_buf_puts(&b, "ab"), 0);
  ck_assert_int_eq(tt_buf_reserve(&b, 298), 0);
  ck_assert_str_eq(b.data, "ab");
  ck_assert_int_eq(tt_buf_reserve(&b, 299), -1);
  tt_buf_free(&b);
  tt_buf_init(&b, 0);
  ck_assert_int_eq(tt_buf_reserve(&b, 1000), 0);
  ck_assert_uint_ge(b.alloc, 1001);
  ck_assert_uint_eq(b.len, 0);
  ck_assert_int_eq(tt_buf_append(&b, NULL, 0), 0);
  ck_assert_str_eq(b.data, "");
  tt_buf_free(&b);
}
END_TEST

START_TEST(arena_aligns_and_zeroes) {
  struct tt_arena a;
  tt_arena_init(&a);
  char *p = tt_arena_alloc(&a, 3);
  double *d = tt_arena_alloc(&a, sizeof(double));
  ck_assert_ptr_nonnull(p);
  ck_assert_uint_eq((uintptr_t)d % _Alignof(double), 0);
  char *big = tt_arena_alloc(&a, 100000);
  ck_assert_ptr_nonnull(big);
  ck_assert_int_eq(big[99999], 0);
  char *s = tt_arena_strndup(&a, "hello world", 5);
  ck_assert_str_eq(s, "hello");
  tt_arena_free(&a);
  ck_assert_ptr_null(a.chunks);
}
END_TEST

START_TEST(arena_marks_release_later_blocks) {
  struct tt_arena a;
  tt_arena_init(&a);
  /* Text blocks on an empty arena, even of 0 bytes, are real blocks. */
  ck_assert_ptr_nonnull(tt_arena_bytes(&a, 0));
  char *t = tt_arena_bytes(&a, 3);
  memcpy(t, "abc", 3);
  /* An aligned block after an odd-sized text block is aligned again. */
  double *d = tt_arena_alloc(&a, sizeof(double));
  ck_assert_uint_eq((uintptr_t)d % _Alignof(max_align_t), 0);
  *d = 1.5;
  struct tt_arena_mark m = tt_arena_mark(&a);
  struct tt_arena_chunk *before = a.chunks;
  /* Enough after the mark to take several new chunks (they grow). */
  for (int i = 0; i < 64; i++)
    ck_assert_ptr_nonnull(tt_arena_bytes(&a, 1000));
  ck_assert_ptr_ne(a.chunks, before);
  tt_arena_release(&a, m);
  /* Back where it stood: the old blocks intact, the chunks taken since freed
   * (ASan reports a leak otherwise), the next block where the mark was. */
  ck_assert_ptr_eq(a.chunks, before);
  ck_assert_int_eq(memcmp(t, "abc", 3), 0);
  ck_assert(*d == 1.5);
  ck_assert_ptr_eq(tt_arena_bytes(&a, 1), m.cur);
  /* A mark on an empty arena releases everything. */
  struct tt_arena b;
  tt_arena_init(&b);
  struct tt_arena_mark m0 = tt_arena_mark(&b);
  ck_assert_ptr_nonnull(tt_arena_alloc(&b, 10000));
  tt_arena_release(&b, m0);
  ck_assert_ptr_null(b.chunks);
  tt_arena_free(&b);
  tt_arena_free(&a);
}
END_TEST

START_TEST(arena_reset_keeps_the_first_page) {
  struct tt_arena a;
  tt_arena_init(&a);
  char *first = tt_arena_bytes(&a, 10);
  for (int i = 0; i < 64; i++) /* several more chunks, freed by the reset */
    ck_assert_ptr_nonnull(tt_arena_alloc(&a, 1000));
  tt_arena_reset(&a);
  /* The first 4 KiB chunk stays, empty: the next block is its start. */
  ck_assert_ptr_nonnull(a.chunks);
  ck_assert_uint_eq(a.left, 4096);
  ck_assert_ptr_eq(tt_arena_bytes(&a, 10), first);
  /* Its blocks are zeroed again (tt_arena_alloc's promise). */
  memset(first, 0xff, 10);
  tt_arena_reset(&a);
  char *z = tt_arena_alloc(&a, 10);
  ck_assert_ptr_eq(z, first);
  for (int i = 0; i < 10; i++)
    ck_assert_int_eq(z[i], 0);
  /* An arena whose first chunk was larger keeps nothing. */
  struct tt_arena b;
  tt_arena_init(&b);
  ck_assert_ptr_nonnull(tt_arena_alloc(&b, 10000));
  tt_arena_reset(&b);
  ck_assert_ptr_null(b.chunks);
  ck_assert_uint_eq(b.left, 0);
  /* An empty arena stays empty. */
  tt_arena_reset(&b);
  ck_assert_ptr_null(b.chunks);
  tt_arena_free(&b);
  tt_arena_free(&a);
}
END_TEST

int main(void) {
  Suite *s = suite_create("buf");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, buf_appends_and_caps);
  tcase_add_test(tc, buf_json_escape);
  tcase_add_test(tc, buf_inline_path_keeps_cap);
  tcase_add_test(tc, arena_aligns_and_zeroes);
  tcase_add_test(tc, arena_marks_release_later_blocks);
  tcase_add_test(tc, arena_reset_keeps_the_first_page);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
