/* SPDX-License-Identifier: Apache-2.0 */
/* log.c -- JSON-lines logger on stderr (journald-friendly). */
#include "obs/log.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static enum tt_log_level min_level = TT_LOG_INFO;
static tt_log_writer_cb writer_cb;
static void *writer_arg;

static const char *const level_names[] = {"debug", "info", "warn", "error", "notice"};

void tt_log_set_writer(tt_log_writer_cb cb, void *arg) {
  writer_cb = cb;
  writer_arg = arg;
}

void tt_log_set_level(enum tt_log_level level) { min_level = level; }

int tt_log_level_parse(const char *text, enum tt_log_level *out) {
  for (int i = TT_LOG_DEBUG; i <= TT_LOG_ERROR; i++) {
    if (strcmp(text, level_names[i]) == 0) {
      *out = (enum tt_log_level)i;
      return 0;
    }
  }
  return -1;
}

bool tt_log_enabled(enum tt_log_level level) { return level >= min_level; }

/* Room kept free for the closing ',"truncated":true}\n'. */
#define TAIL_RESERVE 24

static void put(struct tt_log_line *l, const char *s, size_t n) {
  memcpy(l->text + l->len, s, n);
  l->len += n;
}

/* Worst case a byte escapes to 6 ("\u00XX"), so reserve that much. */
static void put_escaped(struct tt_log_line *l, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    char *o = l->text + l->len;
    if (c == '"' || c == '\\') {
      o[0] = '\\';
      o[1] = (char)c;
      l->len += 2;
    } else if (c < 0x20 || c == 0x7f) {
      memcpy(o, "\\u00", 4);
      o[4] = hex[c >> 4];
      o[5] = hex[c & 15];
      l->len += 6;
    } else {
      o[0] = (char)c;
      l->len += 1;
    }
  }
}

/* Opens member k, when it and value_room bytes of its value fit. */
static bool key(struct tt_log_line *l, const char *k, size_t value_room) {
  size_t kl = strlen(k);
  if (l->truncated || l->len + kl + 4 + value_room + TAIL_RESERVE > sizeof(l->text)) {
    l->truncated = true;
    return false;
  }
  put(l, ",\"", 2);
  put(l, k, kl);
  put(l, "\":", 2);
  return true;
}

void tt_log_begin(struct tt_log_line *l, enum tt_log_level level, const char *event) {
  l->enabled = tt_log_enabled(level);
  l->truncated = false;
  l->len = 0;
  if (!l->enabled)
    return;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  gmtime_r(&ts.tv_sec, &tm);
  int n = snprintf(l->text, sizeof(l->text),
                   "{\"ts\":\"%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ\",\"level\":\"%s\"",
                   tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                   tm.tm_sec, ts.tv_nsec / 1000, level_names[level]);
  l->len = (size_t)n;
  tt_log_str(l, "event", event);
}

void tt_log_strn(struct tt_log_line *l, const char *k, const char *value, size_t n) {
  if (!l->enabled || value == NULL || !key(l, k, n * 6 + 2))
    return;
  put(l, "\"", 1);
  put_escaped(l, value, n);
  put(l, "\"", 1);
}

void tt_log_str(struct tt_log_line *l, const char *k, const char *value) {
  if (value != NULL)
    tt_log_strn(l, k, value, strlen(value));
}

void tt_log_int(struct tt_log_line *l, const char *k, int64_t value) {
  if (!l->enabled || !key(l, k, 24))
    return;
  l->len += (size_t)snprintf(l->text + l->len, 24, "%" PRId64, value);
}

void tt_log_ms(struct tt_log_line *l, const char *k, double value) {
  if (!l->enabled || !key(l, k, 32))
    return;
  l->len += (size_t)snprintf(l->text + l->len, 32, "%.3f", value);
}

void tt_log_end(struct tt_log_line *l) {
  if (!l->enabled)
    return;
  if (l->truncated)
    put(l, ",\"truncated\":true", 17);
  put(l, "}\n", 2);
  if (writer_cb) {
    writer_cb(l->text, l->len, writer_arg);
    return;
  }
  /* One write per line keeps lines whole when several processes share stderr. */
  ssize_t rc = write(STDERR_FILENO, l->text, l->len);
  (void)rc;
}

void tt_log_event(enum tt_log_level level, const char *event, ...) {
  struct tt_log_line l;
  tt_log_begin(&l, level, event);
  if (!l.enabled)
    return;
  va_list ap;
  va_start(ap, event);
  for (;;) {
    const char *k = va_arg(ap, const char *);
    if (k == NULL)
      break;
    tt_log_str(&l, k, va_arg(ap, const char *));
  }
  va_end(ap);
  tt_log_end(&l);
}
