/* SPDX-License-Identifier: Apache-2.0 */
/* test_config.c -- precedence (flags > env > file > defaults) and errors
 * that name the setting. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/config.h"
#include "daemon/listen.h"

static char file_path[64];

static void write_file(const char *text) {
  snprintf(file_path, sizeof(file_path), "/tmp/tt-config-XXXXXX");
  int fd = mkstemp(file_path);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
}

static int load(struct tt_config *cfg, int argc, char **argv, char **envp, struct tt_error *err) {
  enum tt_config_action action;
  return tt_config_load(cfg, argc, argv, envp, &action, err);
}

START_TEST(defaults) {
  struct tt_config cfg;
  struct tt_error err;
  char *argv[] = {"tabletheoryd", NULL};
  char *envp[] = {NULL};
  ck_assert_int_eq(load(&cfg, 1, argv, envp, &err), 0);
  ck_assert_str_eq(cfg.listen, "127.0.0.1:8737");
  ck_assert_str_eq(cfg.backend, "memory");
  ck_assert_str_eq(cfg.jobs_table, "tabletheory-jobs");
  ck_assert_uint_eq(cfg.max_body_bytes, 1048576);
  ck_assert_uint_eq(cfg.request_timeout_ms, 10000);
  ck_assert_int_eq(cfg.log_level, TT_LOG_INFO);
  ck_assert(!cfg.allow_table_delete);
}
END_TEST

START_TEST(flags_beat_env_beat_file) {
  write_file("{\"listen\": \"127.0.0.1:1\", \"request-timeout-ms\": 111,"
             " \"max-body-bytes\": 222, \"models\": [\"/a\", \"/b\"], \"log-level\": \"warn\"}");
  char cfgarg[80];
  snprintf(cfgarg, sizeof(cfgarg), "--config=%s", file_path);
  char *argv[] = {"tabletheoryd", cfgarg, "--listen", "127.0.0.1:3", "--allow-table-delete",
                  NULL};
  char *envp[] = {"TABLETHEORYD_LISTEN=127.0.0.1:2", "TABLETHEORYD_REQUEST_TIMEOUT_MS=333",
                  "TABLETHEORYD_MODELS=/x:/y:/z", "PATH=/bin", NULL};
  struct tt_config cfg;
  struct tt_error err;
  ck_assert_int_eq(load(&cfg, 5, argv, envp, &err), 0);
  ck_assert_str_eq(cfg.listen, "127.0.0.1:3");     /* flag */
  ck_assert_uint_eq(cfg.request_timeout_ms, 333); /* env over file */
  ck_assert_uint_eq(cfg.max_body_bytes, 222);     /* file over default */
  ck_assert_int_eq(cfg.log_level, TT_LOG_WARN);
  ck_assert_uint_eq(cfg.nmodels, 3); /* env list replaces the file's */
  ck_assert_str_eq(cfg.models[2], "/z");
  ck_assert(cfg.allow_table_delete);
  unlink(file_path);
}
END_TEST

START_TEST(max_response_bytes_from_each_source) {
  struct tt_config cfg;
  struct tt_error err;
  char *argv0[] = {"tabletheoryd", NULL};
  char *none[] = {NULL};
  ck_assert_int_eq(load(&cfg, 1, argv0, none, &err), 0);
  ck_assert_uint_eq(cfg.max_response_bytes, 4194304);
  write_file("{\"max-response-bytes\": 65536}");
  char cfgarg[80];
  snprintf(cfgarg, sizeof(cfgarg), "--config=%s", file_path);
  char *argv1[] = {"tabletheoryd", cfgarg, NULL};
  ck_assert_int_eq(load(&cfg, 2, argv1, none, &err), 0);
  ck_assert_uint_eq(cfg.max_response_bytes, 65536);
  char *env[] = {"TABLETHEORYD_MAX_RESPONSE_BYTES=131072", NULL};
  ck_assert_int_eq(load(&cfg, 2, argv1, env, &err), 0);
  ck_assert_uint_eq(cfg.max_response_bytes, 131072);
  char *argv2[] = {"tabletheoryd", cfgarg, "--max-response-bytes", "2048", NULL};
  ck_assert_int_eq(load(&cfg, 4, argv2, env, &err), 0);
  ck_assert_uint_eq(cfg.max_response_bytes, 2048);
  unlink(file_path);
  char *small[] = {"tabletheoryd", "--max-response-bytes=1023", NULL};
  ck_assert_int_eq(load(&cfg, 2, small, none, &err), -1);
  ck_assert_str_eq(err.field, "max-response-bytes");
  ck_assert_ptr_nonnull(strstr(err.message, "1024 to 1073741824"));
}
END_TEST

START_TEST(repeated_flags_append_models) {
  char *argv[] = {"tabletheoryd", "--models", "/m1", "--models=/m2", NULL};
  char *envp[] = {"TABLETHEORYD_MODELS=/env", NULL};
  struct tt_config cfg;
  struct tt_error err;
  ck_assert_int_eq(load(&cfg, 4, argv, envp, &err), 0);
  ck_assert_uint_eq(cfg.nmodels, 2);
  ck_assert_str_eq(cfg.models[0], "/m1");
  ck_assert_str_eq(cfg.models[1], "/m2");
}
END_TEST

START_TEST(errors_name_the_setting) {
  struct tt_config cfg;
  struct tt_error err;
  char *envp[] = {NULL};
  char *a1[] = {"tabletheoryd", "--backend", "oracle", NULL};
  ck_assert_int_eq(load(&cfg, 3, a1, envp, &err), -1);
  ck_assert_str_eq(err.field, "backend");
  ck_assert_ptr_nonnull(strstr(err.message, "--backend"));
  char *a2[] = {"tabletheoryd", "--request-timeout-ms", "-5", NULL};
  ck_assert_int_eq(load(&cfg, 3, a2, envp, &err), -1);
  ck_assert_str_eq(err.field, "request-timeout-ms");
  char *a3[] = {"tabletheoryd", "--bogus", NULL};
  ck_assert_int_eq(load(&cfg, 2, a3, envp, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.message, "--bogus"));
  char *a4[] = {"tabletheoryd", "--listen", NULL};
  ck_assert_int_eq(load(&cfg, 2, a4, envp, &err), -1);
  ck_assert_str_eq(err.field, "listen");
  char *a5[] = {"tabletheoryd", NULL};
  char *e5[] = {"TABLETHEORYD_MAX_BODY_BYTES=lots", NULL};
  ck_assert_int_eq(load(&cfg, 1, a5, e5, &err), -1);
  ck_assert_str_eq(err.field, "max-body-bytes");
  ck_assert_ptr_nonnull(strstr(err.message, "TABLETHEORYD_MAX_BODY_BYTES"));
  char *e6[] = {"TABLETHEORYD_LOG_LEVEL=chatty", NULL};
  ck_assert_int_eq(load(&cfg, 1, a5, e6, &err), -1);
  ck_assert_str_eq(err.field, "log-level");
}
END_TEST

START_TEST(file_errors) {
  struct tt_config cfg;
  struct tt_error err;
  char *envp[] = {NULL};
  write_file("{\"listen\": \"x\", \"colour\": \"blue\"}");
  char arg[80];
  snprintf(arg, sizeof(arg), "--config=%s", file_path);
  char *argv[] = {"tabletheoryd", arg, NULL};
  ck_assert_int_eq(load(&cfg, 2, argv, envp, &err), -1);
  ck_assert_str_eq(err.field, "colour");
  unlink(file_path);
  write_file("{not json");
  snprintf(arg, sizeof(arg), "--config=%s", file_path);
  ck_assert_int_eq(load(&cfg, 2, argv, envp, &err), -1);
  ck_assert_str_eq(err.field, "config");
  unlink(file_path);
  char *a2[] = {"tabletheoryd", "--config=/nonexistent/tt.json", NULL};
  ck_assert_int_eq(load(&cfg, 2, a2, envp, &err), -1);
  ck_assert_str_eq(err.field, "config");
}
END_TEST

START_TEST(help_and_version) {
  struct tt_config cfg;
  struct tt_error err;
  char *envp[] = {NULL};
  enum tt_config_action action;
  char *a1[] = {"tabletheoryd", "--help", NULL};
  ck_assert_int_eq(tt_config_load(&cfg, 2, a1, envp, &action, &err), 0);
  ck_assert_int_eq(action, TT_CONFIG_HELP);
  char *a2[] = {"tabletheoryd", "--version", NULL};
  ck_assert_int_eq(tt_config_load(&cfg, 2, a2, envp, &action, &err), 0);
  ck_assert_int_eq(action, TT_CONFIG_VERSION);
  ck_assert_ptr_nonnull(strstr(tt_config_usage(), "--request-timeout-ms N"));
  ck_assert_ptr_nonnull(strstr(tt_config_usage(), "--allow-table-delete"));
}
END_TEST

START_TEST(ca_file_flag_env_and_key) {
  struct tt_config cfg;
  struct tt_error err;
  char *argv0[] = {"tabletheoryd", NULL};
  char *none[] = {NULL};
  ck_assert_int_eq(load(&cfg, 1, argv0, none, &err), 0);
  ck_assert_str_eq(cfg.ca_file, ""); /* default: SSL_CERT_FILE or the system bundle */
  write_file("{\"ca-file\": \"/from/file.pem\"}");
  char cfgarg[80];
  snprintf(cfgarg, sizeof(cfgarg), "--config=%s", file_path);
  char *a1[] = {"tabletheoryd", cfgarg, NULL};
  ck_assert_int_eq(load(&cfg, 2, a1, none, &err), 0);
  ck_assert_str_eq(cfg.ca_file, "/from/file.pem");
  char *env[] = {"TABLETHEORYD_CA_FILE=/from/env.pem", NULL};
  ck_assert_int_eq(load(&cfg, 2, a1, env, &err), 0);
  ck_assert_str_eq(cfg.ca_file, "/from/env.pem");
  char *a2[] = {"tabletheoryd", cfgarg, "--ca-file", "/from/flag.pem", NULL};
  ck_assert_int_eq(load(&cfg, 4, a2, env, &err), 0);
  ck_assert_str_eq(cfg.ca_file, "/from/flag.pem");
  unlink(file_path);
  ck_assert_ptr_nonnull(strstr(tt_config_usage(), "--ca-file FILE"));
}
END_TEST

/* ---- the token file ------------------------------------------------------ */

static void write_bytes(const char *data, size_t n) {
  snprintf(file_path, sizeof(file_path), "/tmp/tt-token-XXXXXX");
  int fd = mkstemp(file_path);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, data, n), (ssize_t)n);
  close(fd);
}

/* Reads data as a token file; returns the token (malloc'd) or NULL with
 * err filled. */
static char *token_of(const char *data, size_t n, struct tt_error *err) {
  write_bytes(data, n);
  char *tok = (char *)1;
  int rc = tt_config_read_token(file_path, &tok, err);
  unlink(file_path);
  ck_assert(rc == 0 ? tok != NULL : tok == NULL);
  return tok;
}

START_TEST(token_trims_trailing_whitespace_only) {
  struct tt_error err;
  char *t = token_of("  0123456789abcdef \t\r\n", 22, &err);
  ck_assert_ptr_nonnull(t);
  ck_assert_str_eq(t, "  0123456789abcdef"); /* leading spaces are the operator's */
  free(t);
  t = token_of("0123456789abcdef\t", 17, &err); /* a trailing tab used to stay */
  ck_assert_ptr_nonnull(t);
  ck_assert_str_eq(t, "0123456789abcdef");
  free(t);
}
END_TEST

START_TEST(token_with_nul_or_control_bytes_is_refused) {
  struct tt_error err;
  /* NUL first: strdup used to make the token "" (any empty Bearer passed). */
  static const char nul_first[] = "\0" "0123456789abcdef0123456789abcdef";
  ck_assert_ptr_null(token_of(nul_first, sizeof(nul_first) - 1, &err));
  ck_assert_str_eq(err.field, "auth-token-file");
  ck_assert_ptr_nonnull(strstr(err.message, "control byte (0x00) at offset 0"));
  /* "abc" then NUL: the token used to be "abc", under the minimum. */
  static const char nul_mid[] = "abc\0" "0123456789abcdef0123456789abcdef";
  ck_assert_ptr_null(token_of(nul_mid, sizeof(nul_mid) - 1, &err));
  ck_assert_ptr_nonnull(strstr(err.message, "offset 3"));
  static const char two_lines[] = "0123456789abcdef\nsecond-line-token\n";
  ck_assert_ptr_null(token_of(two_lines, sizeof(two_lines) - 1, &err));
  ck_assert_ptr_nonnull(strstr(err.message, "0x0a"));
  static const char del[] = "0123456789\x7f" "abcdef";
  ck_assert_ptr_null(token_of(del, sizeof(del) - 1, &err));
  /* The message never quotes the token. */
  ck_assert_ptr_null(strstr(err.message, "0123456789"));
}
END_TEST

START_TEST(token_length_limits) {
  struct tt_error err;
  ck_assert_ptr_null(token_of("0123456789abcde\n", 16, &err));
  ck_assert_ptr_nonnull(strstr(err.message, "at least 16 characters"));
  char big[TT_TOKEN_FILE_MAX + 1];
  memset(big, 'k', sizeof(big));
  char *t = token_of(big, TT_TOKEN_FILE_MAX, &err); /* exactly the limit: fine */
  ck_assert_ptr_nonnull(t);
  ck_assert_uint_eq(strlen(t), TT_TOKEN_FILE_MAX);
  free(t);
  /* One byte more used to be cut silently. */
  ck_assert_ptr_null(token_of(big, TT_TOKEN_FILE_MAX + 1, &err));
  ck_assert_ptr_nonnull(strstr(err.message, "longer than 1023 bytes"));
  char *missing = (char *)1;
  ck_assert_int_eq(tt_config_read_token("/nonexistent/tt-token", &missing, &err), -1);
  ck_assert_ptr_null(missing);
}
END_TEST

START_TEST(unauthenticated_network_flag_and_env) {
  struct tt_config cfg;
  struct tt_error err;
  char *argv[] = {"tabletheoryd", NULL};
  char *envp[] = {NULL};
  ck_assert_int_eq(load(&cfg, 1, argv, envp, &err), 0);
  ck_assert(!cfg.allow_unauthenticated_network);
  char *a2[] = {"tabletheoryd", "--allow-unauthenticated-network", NULL};
  ck_assert_int_eq(load(&cfg, 2, a2, envp, &err), 0);
  ck_assert(cfg.allow_unauthenticated_network);
  char *e2[] = {"TABLETHEORYD_ALLOW_UNAUTHENTICATED_NETWORK=true", NULL};
  ck_assert_int_eq(load(&cfg, 1, argv, e2, &err), 0);
  ck_assert(cfg.allow_unauthenticated_network);
}
END_TEST

START_TEST(listen_locality) {
  ck_assert(tt_listener_spec_is_local("127.0.0.1:8737"));
  ck_assert(tt_listener_spec_is_local("127.1.2.3:1"));
  ck_assert(tt_listener_spec_is_local("localhost:1"));
  ck_assert(tt_listener_spec_is_local("[::1]:1"));
  ck_assert(tt_listener_spec_is_local("[::ffff:127.0.0.1]:1"));
  ck_assert(tt_listener_spec_is_local("unix:/run/x.sock"));
  ck_assert(!tt_listener_spec_is_local("0.0.0.0:8737"));
  ck_assert(!tt_listener_spec_is_local("[::]:8737"));
  ck_assert(!tt_listener_spec_is_local("10.0.0.5:8737"));
  ck_assert(!tt_listener_spec_is_local("[::ffff:0.0.0.0]:1"));
}
END_TEST

int main(void) {
  Suite *s = suite_create("config");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, defaults);
  tcase_add_test(tc, flags_beat_env_beat_file);
  tcase_add_test(tc, repeated_flags_append_models);
  tcase_add_test(tc, errors_name_the_setting);
  tcase_add_test(tc, file_errors);
  tcase_add_test(tc, help_and_version);
  tcase_add_test(tc, ca_file_flag_env_and_key);
  tcase_add_test(tc, token_trims_trailing_whitespace_only);
  tcase_add_test(tc, token_with_nul_or_control_bytes_is_refused);
  tcase_add_test(tc, token_length_limits);
  tcase_add_test(tc, unauthenticated_network_flag_and_env);
  tcase_add_test(tc, listen_locality);
  tcase_add_test(tc, max_response_bytes_from_each_source);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
