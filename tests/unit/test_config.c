/* SPDX-License-Identifier: Apache-2.0 */
/* test_config.c -- precedence (flags > env > file > defaults) and errors
 * that name the setting. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/config.h"

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

int main(void) {
  Suite *s = suite_create("config");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, defaults);
  tcase_add_test(tc, flags_beat_env_beat_file);
  tcase_add_test(tc, repeated_flags_append_models);
  tcase_add_test(tc, errors_name_the_setting);
  tcase_add_test(tc, file_errors);
  tcase_add_test(tc, help_and_version);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
