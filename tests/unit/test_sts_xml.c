/* SPDX-License-Identifier: Apache-2.0 */
/* test_sts_xml.c -- the STS XML reader: AssumeRole and web-identity
 * answers, entities, and every way a field can be missing or malformed. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dynamodb/sts_xml.h"

#define OK_BODY                                                                                   \
  "<AssumeRoleResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">\n"                    \
  "  <AssumeRoleResult>\n"                                                                        \
  "    <AssumedRoleUser><AssumedRoleId>AROA3XFRBF535PLBIFPI4:theorydb-acme</AssumedRoleId>\n"     \
  "      <Arn>arn:aws:sts::111111111111:assumed-role/r/theorydb-acme</Arn></AssumedRoleUser>\n"   \
  "    <Credentials>\n"                                                                           \
  "      <AccessKeyId>ASIAEXAMPLE</AccessKeyId>\n"                                                \
  "      <SecretAccessKey>wJal&amp;r/K7&#x41;&#66;</SecretAccessKey>\n"                            \
  "      <SessionToken>FQoGZXIvYXdzE+abc/def==</SessionToken>\n"                                  \
  "      <Expiration>2026-01-02T03:04:05Z</Expiration>\n"                                         \
  "    </Credentials>\n"                                                                          \
  "  </AssumeRoleResult>\n"                                                                       \
  "</AssumeRoleResponse>\n"

static int parse(const char *body, struct tt_creds *c, const char **why) {
  return tt_sts_parse_credentials(body, body ? strlen(body) : 0, "assume-role", c, why);
}

START_TEST(parses_assume_role) {
  struct tt_creds c;
  const char *why = NULL;
  ck_assert_int_eq(parse(OK_BODY, &c, &why), 0);
  ck_assert_str_eq(c.access_key_id, "ASIAEXAMPLE");
  ck_assert_str_eq(c.secret_access_key, "wJal&r/K7AB"); /* &amp; &#x41; &#66; */
  ck_assert_str_eq(c.session_token, "FQoGZXIvYXdzE+abc/def==");
  ck_assert_int_eq(c.expires_at, 1767323045);
  ck_assert_str_eq(c.source, "assume-role");
  tt_creds_clear(&c);
}
END_TEST

START_TEST(not_nul_terminated) {
  /* The body is a length-delimited buffer: nothing past it is read. */
  size_t n = strlen(OK_BODY);
  char *copy = malloc(n);
  memcpy(copy, OK_BODY, n);
  struct tt_creds c;
  const char *why = NULL;
  ck_assert_int_eq(tt_sts_parse_credentials(copy, n, "x", &c, &why), 0);
  /* Cut inside the Expiration: the field is then missing. */
  size_t cut = (size_t)(strstr(OK_BODY, "</Expiration>") - OK_BODY);
  ck_assert_int_eq(tt_sts_parse_credentials(copy, cut, "x", &c, &why), -1);
  ck_assert_str_eq(why, "the STS response has no Credentials element");
  ck_assert_str_eq(c.access_key_id, ""); /* wiped on failure */
  free(copy);
}
END_TEST

struct bad_case {
  const char *body;
  const char *why;
};

static const struct bad_case bad[] = {
    {"", "the STS response has no Credentials element"},
    {"<Credentials></Credentials>", "the STS response has no valid AccessKeyId"},
    {"<Credentials><AccessKeyId></AccessKeyId></Credentials>",
     "the STS response has no valid AccessKeyId"},
    {"<Credentials><AccessKeyId>A</AccessKeyId><SecretAccessKey>s<b/>x</SecretAccessKey>"
     "</Credentials>",
     "the STS response has no valid SecretAccessKey"},
    {"<Credentials><AccessKeyId>A</AccessKeyId><SecretAccessKey>s&bogus;</SecretAccessKey>"
     "</Credentials>",
     "the STS response has no valid SecretAccessKey"},
    {"<Credentials><AccessKeyId>A</AccessKeyId><SecretAccessKey>s&#x100;</SecretAccessKey>"
     "</Credentials>",
     "the STS response has no valid SecretAccessKey"},
    {"<Credentials><AccessKeyId>A</AccessKeyId><SecretAccessKey>s&#;</SecretAccessKey>"
     "</Credentials>",
     "the STS response has no valid SecretAccessKey"},
    {"<Credentials><AccessKeyId>A</AccessKeyId><SecretAccessKey>s&amp</SecretAccessKey>"
     "</Credentials>",
     "the STS response has no valid SecretAccessKey"},
    {"<Credentials><AccessKeyId>A</AccessKeyId><SecretAccessKey>s</SecretAccessKey>"
     "</Credentials>",
     "the STS response has no valid SessionToken"},
    {"<Credentials><AccessKeyId>A</AccessKeyId><SecretAccessKey>s</SecretAccessKey>"
     "<SessionToken>t</SessionToken><Expiration>tomorrow</Expiration></Credentials>",
     "the STS response has no valid Expiration"},
    {"<Credentials><AccessKeyId>A</AccessKeyId><SecretAccessKey>s</SecretAccessKey>"
     "<SessionToken>t</SessionToken></Credentials><Expiration>2026-01-02T03:04:05Z</Expiration>",
     "the STS response has no valid Expiration"}, /* outside Credentials */
    {"<Credentials><AccessKeyId>A B</AccessKeyId><SecretAccessKey>s</SecretAccessKey>"
     "<SessionToken>t</SessionToken><Expiration>2026-01-02T03:04:05Z</Expiration></Credentials>",
     "the STS response holds credentials too long or with invalid characters"},
    {"<Credentials><AccessKeyId>A&#10;</AccessKeyId><SecretAccessKey>s</SecretAccessKey>"
     "<SessionToken>t</SessionToken><Expiration>2026-01-02T03:04:05Z</Expiration></Credentials>",
     "the STS response holds credentials too long or with invalid characters"},
};

START_TEST(refuses_bad_fields) {
  struct tt_creds c;
  const char *why = NULL;
  ck_assert_msg(parse(bad[_i].body, &c, &why) == -1, "case %d", _i);
  ck_assert_str_eq(why, bad[_i].why);
  ck_assert_str_eq(c.access_key_id, "");
  ck_assert_str_eq(c.secret_access_key, "");
}
END_TEST

START_TEST(too_long_value) {
  /* A 200-character key id does not fit its 128-byte field. */
  char body[1024];
  char id[201];
  memset(id, 'A', 200);
  id[200] = '\0';
  snprintf(body, sizeof(body), "<Credentials><AccessKeyId>%s</AccessKeyId></Credentials>", id);
  struct tt_creds c;
  const char *why = NULL;
  ck_assert_int_eq(parse(body, &c, &why), -1);
  ck_assert_str_eq(why, "the STS response has no valid AccessKeyId");
}
END_TEST

START_TEST(null_body) {
  struct tt_creds c;
  const char *why = NULL;
  ck_assert_int_eq(tt_sts_parse_credentials(NULL, 0, "x", &c, &why), -1);
  char code[64];
  tt_sts_error_code(NULL, 0, code, sizeof(code));
  ck_assert_str_eq(code, "");
}
END_TEST

START_TEST(error_code) {
  char code[16];
  const char *e = "<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code>"
                  "<Message>no</Message></Error></ErrorResponse>";
  tt_sts_error_code(e, strlen(e), code, sizeof(code));
  ck_assert_str_eq(code, "AccessDenied");
  /* Stops at the first character outside the identifier set, and at the cap. */
  const char *inj = "<Code>Bad\"Code</Code>";
  tt_sts_error_code(inj, strlen(inj), code, sizeof(code));
  ck_assert_str_eq(code, "Bad");
  const char *lng = "<Code>ExpiredTokenExceptionAndMore</Code>";
  tt_sts_error_code(lng, strlen(lng), code, sizeof(code));
  ck_assert_str_eq(code, "ExpiredTokenExc");
  tt_sts_error_code("<Code>x", 7, code, sizeof(code));
  ck_assert_str_eq(code, "");
}
END_TEST

int main(void) {
  Suite *s = suite_create("sts_xml");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, parses_assume_role);
  tcase_add_test(tc, not_nul_terminated);
  tcase_add_loop_test(tc, refuses_bad_fields, 0, (int)(sizeof(bad) / sizeof(bad[0])));
  tcase_add_test(tc, too_long_value);
  tcase_add_test(tc, null_body);
  tcase_add_test(tc, error_code);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
