/* SPDX-License-Identifier: Apache-2.0 */
/* log.h -- structured logger: one JSON object per line, never payloads. */
#ifndef TT_OBS_LOG_H
#define TT_OBS_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* NOTICE marks the daemon's lifecycle (ready, draining, stopped): written at
 * every level, because supervisors and tests find the listen address in the
 * ready line. It is not a level one can set. */
enum tt_log_level { TT_LOG_DEBUG = 0, TT_LOG_INFO, TT_LOG_WARN, TT_LOG_ERROR, TT_LOG_NOTICE };

/* A line being built. It lives on the caller's stack; text longer than the
 * buffer is cut at a field boundary and marked "truncated": true. Callers
 * pass only names, codes and numbers: values from items, keys, bodies and
 * credentials never go through here. */
struct tt_log_line {
  bool enabled;
  bool truncated;
  size_t len;
  char text[2048];
};

/* Where complete lines go; the default writes to stderr with one write(2).
 * The line ends with '\n'. Pass NULL to restore the default. */
typedef void (*tt_log_writer_cb)(const char *line, size_t len, void *arg);
void tt_log_set_writer(tt_log_writer_cb cb, void *arg);

/* Sets the least severe level that is written. */
void tt_log_set_level(enum tt_log_level level);

/* Parses "debug"/"info"/"warn"/"error". Returns 0 or -1. */
int tt_log_level_parse(const char *text, enum tt_log_level *out);

/* Whether a line at `level` would be written. */
bool tt_log_enabled(enum tt_log_level level);

/* Starts a line with ts, level and event. When the level is disabled the
 * line is marked so and every later call is a no-op. */
void tt_log_begin(struct tt_log_line *l, enum tt_log_level level, const char *event);

/* Adds a string field (escaped); NULL values are skipped. */
void tt_log_str(struct tt_log_line *l, const char *key, const char *value);

/* Adds a string field of n bytes. */
void tt_log_strn(struct tt_log_line *l, const char *key, const char *value, size_t n);

/* Adds an integer field. */
void tt_log_int(struct tt_log_line *l, const char *key, int64_t value);

/* Adds a number field with three decimals (durations in ms). */
void tt_log_ms(struct tt_log_line *l, const char *key, double value);

/* Closes the object and writes the line. */
void tt_log_end(struct tt_log_line *l);

/* One-call form for simple events: tt_log_event(TT_LOG_INFO, "daemon.ready",
 * "listen", addr, NULL) -- string key/value pairs, NULL-terminated. */
void tt_log_event(enum tt_log_level level, const char *event, ...);

#endif
