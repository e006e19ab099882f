/* SPDX-License-Identifier: Apache-2.0 */
/* test_framing.c -- api/framing.c: the header section checks, on fields as
 * libmicrohttpd 0.9.75 leaves them (tests/unit/mhd_fields.h) and alone. */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/framing.h"
#include "mhd_fields.h"

/* Parses `text` as MHD would and runs the checks; -1 when MHD itself
 * refuses, else whether tt_framing accepts. Also requires the reference to
 * agree. field gets the refused header's name (or NULL). */
static int verdict(const char *text, const char **field) {
  size_t len = strlen(text);
  char *buf = malloc(len + 1);
  memcpy(buf, text, len + 1);
  static struct mhd_fields m;
  int rc = -1;
  if (mhd_fields_parse(buf, len, &m) == 0) {
    struct tt_framing f;
    bool ok = mhd_fields_framing(&m, &f);
    ck_assert_msg(ok == ref_accepts(text, len), "reference disagrees on: %s", text);
    if (field)
      *field = ok ? NULL : f.field;
    rc = ok;
  }
  free(buf);
  return rc;
}

#define REQ "GET / HTTP/1.1\r\nHost: x\r\n"
#define POST "POST / HTTP/1.1\r\nHost: x\r\n"

START_TEST(clean_sections_pass) {
  ck_assert_int_eq(verdict(REQ "\r\n", NULL), 1);
  ck_assert_int_eq(verdict(REQ "Accept: a\r\nAccept: b\r\nX-Empty:\r\nX-Sp:   v \r\n\r\n", NULL),
                   1);
  ck_assert_int_eq(verdict(POST "Content-Length: 0000000000000000000000012\r\n\r\n{}", NULL), 1);
  ck_assert_int_eq(verdict(POST "Transfer-Encoding: CHUNKED\r\n\r\n0\r\n\r\n", NULL), 1);
  ck_assert_int_eq(verdict("GET / HTTP/1.0\r\n\r\n", NULL), 1);
  ck_assert_int_eq(verdict(REQ "X: tab\there \xe9\xff\r\n\r\n", NULL), 1);
  ck_assert_int_eq(verdict(REQ "Content-Length: 18446744073709551614\r\n\r\n", NULL), 1);
}
END_TEST

START_TEST(repeats_of_single_headers_are_refused) {
  static const char *const names[] = {"Authorization", "X-TableTheory-Partner", "If-Match",
                                      "If-None-Match", "Content-Length", "Content-Type",
                                      "Transfer-Encoding"};
  char text[256];
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    const char *v = strcmp(names[i], "Transfer-Encoding") == 0 ? "chunked"
                    : strcmp(names[i], "Content-Length") == 0  ? "1"
                                                               : "a";
    snprintf(text, sizeof(text), REQ "%s: %s\r\nX: 1\r\n%s: %s\r\n\r\n", names[i], v, names[i], v);
    /* lower case for the repeat: names are case-insensitive */
    char *second = strstr(text, "X: 1\r\n") + 6;
    for (char *p = second; *p != ':'; p++)
      *p = (char)(*p | 0x20);
    const char *field = NULL;
    ck_assert_int_eq(verdict(text, &field), 0);
    ck_assert_str_eq(field, names[i]);
  }
  const char *field = NULL;
  ck_assert_int_eq(verdict("GET / HTTP/1.1\r\nHost: x\r\nhost: y\r\n\r\n", &field), 0);
  ck_assert_str_eq(field, "Host");
}
END_TEST

START_TEST(smuggling_shapes_are_refused) {
  const char *field = NULL;
  ck_assert_int_eq(verdict(POST "Content-Length: 0\r\nContent-Length: 9\r\n\r\n", &field), 0);
  ck_assert_str_eq(field, "Content-Length");
  ck_assert_int_eq(verdict(POST "Content-Length : 9\r\n\r\n", NULL), 0);
  ck_assert_int_eq(verdict(POST "Content-Length\t: 9\r\n\r\n", NULL), 0);
  ck_assert_int_eq(verdict(POST "X-Pad: a\r\n Content-Length: 9\r\n\r\n", NULL), 0);
  ck_assert_int_eq(verdict(POST "X-Pad: a\r\n\tb\r\n\r\n", NULL), 0);
  ck_assert_int_eq(verdict(POST "Transfer-Encoding: chunked\r\nContent-Length: 9\r\n\r\n", &field),
                   0);
  ck_assert_str_eq(field, "Transfer-Encoding");
  ck_assert_int_eq(verdict(POST "Transfer-Encoding: gzip, chunked\r\n\r\n", NULL), 0);
  ck_assert_int_eq(verdict("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", NULL), 0);
  ck_assert_int_eq(verdict(REQ "X: a\nContent-Length: 9\r\n\r\n", NULL), 0);
  ck_assert_int_eq(verdict("GET / HTTP/1.1\nHost: x\r\n\r\n", NULL), 0);
  ck_assert_int_eq(verdict(REQ "\nGET", NULL), 0);
  ck_assert_int_eq(verdict(REQ "X: a\rb\r\n\r\n", &field), 0);
  ck_assert_int_eq(verdict(REQ "X@Y: 1\r\n\r\n", NULL), 0);
  ck_assert_int_eq(verdict(REQ ": 1\r\n\r\n", NULL), 0);
  ck_assert_int_eq(verdict("GET / HTTP/1.1\r\n\r\n", &field), 0);
  ck_assert_str_eq(field, "Host");
  static const char *const bad_cl[] = {"+5", "5,5", "-1", "5 5", "", "0x5",
                                       "18446744073709551615", "18446744073709551616"};
  char text[128];
  for (size_t i = 0; i < sizeof(bad_cl) / sizeof(bad_cl[0]); i++) {
    snprintf(text, sizeof(text), POST "Content-Length: %s\r\n\r\n", bad_cl[i]);
    ck_assert_int_eq(verdict(text, &field), 0);
  }
}
END_TEST

/* A NUL cuts a value short (MHD measures it with strlen): the layout
 * check sees the line does not end there, the last field included. */
START_TEST(nul_bytes_are_refused) {
  static const char a[] = REQ "Authorization: Bearer t\0junk\r\n\r\n";
  static const char b[] = REQ "X-TableTheory-Partner: acme\0\0\r\n\r\n";
  static const char c[] = REQ "X-TableTheory-Partner: acme\0\0\r\nX: 1\r\n\r\n";
  const char *texts[] = {a, b, c};
  size_t lens[] = {sizeof(a) - 1, sizeof(b) - 1, sizeof(c) - 1};
  for (size_t i = 0; i < 3; i++) {
    char *buf = malloc(lens[i]);
    memcpy(buf, texts[i], lens[i]);
    static struct mhd_fields m;
    ck_assert_int_eq(mhd_fields_parse(buf, lens[i], &m), 0);
    struct tt_framing f;
    ck_assert(!mhd_fields_framing(&m, &f));
    ck_assert(!ref_accepts(texts[i], lens[i]));
    free(buf);
  }
}
END_TEST

/* Without the layout checks (another HTTP layer): the field checks alone. */
START_TEST(field_checks_without_layout) {
  struct tt_framing f;
  ck_assert(tt_framing_begin(&f, NULL));
  ck_assert(tt_framing_field(&f, "Host", 4, "x", 1));
  ck_assert(tt_framing_field(&f, "Content-Length", 14, "12", 2));
  ck_assert(tt_framing_end(&f, false, NULL));
  ck_assert(tt_framing_has(&f, TT_FRAMING_CONTENT_LENGTH));
  ck_assert_uint_eq(f.content_length, 12);
  ck_assert(tt_framing_begin(&f, NULL));
  ck_assert(!tt_framing_field(&f, "X-Pad", 5, "a\x01", 2));
  ck_assert_ptr_null(f.field);
  ck_assert_uint_eq(f.name_len, 5);
  ck_assert(!tt_framing_end(&f, false, NULL));
  ck_assert(tt_framing_begin(&f, NULL));
  ck_assert(!tt_framing_field(&f, "Content-Length ", 15, "1", 1));
  ck_assert(tt_framing_begin(&f, NULL));
  ck_assert(tt_framing_field(&f, "Content-Typo", 12, "a", 1)); /* same length, other name */
  ck_assert(tt_framing_field(&f, "Authorizatio_", 13, "a", 1));
  ck_assert(tt_framing_field(&f, "Authorizatio_", 13, "a", 1));
  ck_assert(!tt_framing_end(&f, false, NULL)); /* no Host */
  ck_assert_str_eq(f.field, "Host");
}
END_TEST

int main(void) {
  Suite *s = suite_create("framing");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, clean_sections_pass);
  tcase_add_test(tc, repeats_of_single_headers_are_refused);
  tcase_add_test(tc, smuggling_shapes_are_refused);
  tcase_add_test(tc, nul_bytes_are_refused);
  tcase_add_test(tc, field_checks_without_layout);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
