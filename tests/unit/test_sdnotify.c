/* SPDX-License-Identifier: Apache-2.0 */
/* test_sdnotify.c -- notify message building, addresses, real datagrams. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/sdnotify.h"

START_TEST(messages) {
  char buf[64];
  ck_assert_int_eq(tt_sdnotify_message(buf, sizeof(buf), "READY=1", NULL), 0);
  ck_assert_str_eq(buf, "READY=1");
  ck_assert_int_eq(tt_sdnotify_message(buf, sizeof(buf), "READY=1", "serving"), 0);
  ck_assert_str_eq(buf, "READY=1\nSTATUS=serving");
  ck_assert_int_eq(tt_sdnotify_message(buf, 8, "STOPPING=1", NULL), -1);
}
END_TEST

START_TEST(addresses) {
  struct sockaddr_un a;
  socklen_t len;
  ck_assert_int_eq(tt_sdnotify_address("/run/systemd/notify", &a, &len), 0);
  ck_assert_str_eq(a.sun_path, "/run/systemd/notify");
  ck_assert_int_eq(tt_sdnotify_address("@abstract", &a, &len), 0);
  ck_assert_int_eq(a.sun_path[0], '\0');
  ck_assert_int_eq(memcmp(a.sun_path + 1, "abstract", 8), 0);
  ck_assert_uint_eq(len, offsetof(struct sockaddr_un, sun_path) + 9);
  ck_assert_int_eq(tt_sdnotify_address("relative", &a, &len), -1);
  ck_assert_int_eq(tt_sdnotify_address("", &a, &len), -1);
}
END_TEST

START_TEST(sends_a_datagram) {
  char path[] = "/tmp/tt-notify-XXXXXX";
  int tmp = mkstemp(path);
  ck_assert_int_ge(tmp, 0);
  close(tmp);
  unlink(path);
  int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
  ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
  unsetenv("NOTIFY_SOCKET");
  ck_assert_int_eq(tt_sdnotify_send("READY=1"), 1);
  setenv("NOTIFY_SOCKET", path, 1);
  ck_assert_int_eq(tt_sdnotify_send("READY=1"), 0);
  char buf[64];
  ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
  ck_assert_int_eq(n, 7);
  buf[n] = '\0';
  ck_assert_str_eq(buf, "READY=1");
  close(fd);
  unlink(path);
  unsetenv("NOTIFY_SOCKET");
}
END_TEST

START_TEST(watchdog_and_listen_fds) {
  char pid[32];
  snprintf(pid, sizeof(pid), "%ld", (long)getpid());
  setenv("WATCHDOG_USEC", "30000000", 1);
  unsetenv("WATCHDOG_PID");
  ck_assert_uint_eq(tt_sdnotify_watchdog_ms(), 15000);
  setenv("WATCHDOG_PID", "1", 1);
  ck_assert_uint_eq(tt_sdnotify_watchdog_ms(), 0);
  unsetenv("WATCHDOG_USEC");
  setenv("LISTEN_FDS", "1", 1);
  setenv("LISTEN_PID", pid, 1);
  ck_assert_int_eq(tt_sdnotify_listen_fds(), 1);
  setenv("LISTEN_PID", "1", 1);
  ck_assert_int_eq(tt_sdnotify_listen_fds(), 0);
  unsetenv("LISTEN_FDS");
  unsetenv("LISTEN_PID");
}
END_TEST

int main(void) {
  Suite *s = suite_create("sdnotify");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, messages);
  tcase_add_test(tc, addresses);
  tcase_add_test(tc, sends_a_datagram);
  tcase_add_test(tc, watchdog_and_listen_fds);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
