/* SPDX-License-Identifier: Apache-2.0 */
/* path.h -- internal to src/value: the attribute path ("a.b[2]") that the
 * codecs grow and shrink while descending, for error fields. */
#ifndef TT_VALUE_PATH_H
#define TT_VALUE_PATH_H

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "util/error.h"
#include "value/av.h"

/* Sized like tt_error.field; longer paths are truncated. No allocation. */
struct tt_vpath {
  char path[128];
  size_t len;
  struct tt_error *err;
};

static inline size_t tt_vpath_key(struct tt_vpath *c, const char *key, size_t key_len) {
  size_t old = c->len;
  size_t room = sizeof(c->path) - 1 - c->len;
  if (c->len && room) {
    c->path[c->len++] = '.';
    room--;
  }
  if (key_len > room)
    key_len = room;
  memcpy(c->path + c->len, key, key_len);
  c->len += key_len;
  c->path[c->len] = '\0';
  return old;
}

static inline void tt_vpath_pop(struct tt_vpath *c, size_t old) {
  c->len = old;
  c->path[old] = '\0';
}

/* Converts one JSON value into the slot `out`; 0 or -1 (error set). */
typedef int (*tt_vpath_elem_fn)(struct tt_vpath *c, const json_t *in, int depth,
                                struct tt_av *out);

/* Fills the out->len slots of a list made by tt_av_list from the JSON
 * array `in`, each element by fn with its index on the path. Returns 0, or
 * -1 at the first failure. */
static inline int tt_vpath_elems(struct tt_vpath *c, const json_t *in, int depth,
                                 tt_vpath_elem_fn fn, struct tt_av *out) {
  for (size_t i = 0; i < out->len; i++) {
    size_t old = c->len, room = sizeof(c->path) - c->len;
    int n = snprintf(c->path + c->len, room, "[%zu]", i);
    if (n > 0)
      c->len += (size_t)n < room ? (size_t)n : room - 1;
    int rc = fn(c, json_array_get(in, i), depth, &out->u.elems[i]);
    tt_vpath_pop(c, old);
    if (rc != 0)
      return -1;
  }
  return 0;
}

/* Out of memory at the current path. Returns -1. */
static inline int tt_vpath_oom(struct tt_vpath *c) {
  return tt_error_set(c->err, TT_ERR_INTERNAL, c->path, "out of memory");
}

/* Fills the out->len members of a map made by tt_av_map from the JSON
 * object `in`, each value by fn with its name on the path, then sorts
 * them. A name with a NUL byte (or an empty one when `no_empty`) fails
 * with bad(c, bad_name). Returns 0, or -1 at the first failure. */
static inline int tt_vpath_members(struct tt_vpath *c, const json_t *in, int depth,
                                   tt_vpath_elem_fn fn, bool no_empty,
                                   int (*bad)(struct tt_vpath *c, const char *what),
                                   const char *bad_name, struct tt_av *out) {
  const char *key;
  size_t key_len, i = 0;
  json_t *val;
  json_object_keylen_foreach((json_t *)in, key, key_len, val) {
    struct tt_av_member *m = &out->u.members[i++];
    size_t old = tt_vpath_key(c, key, key_len);
    int rc = 0;
    if ((no_empty && key_len == 0) || memchr(key, '\0', key_len) != NULL)
      rc = bad(c, bad_name);
    else if (tt_av_member_name(m, key, key_len) != 0)
      rc = tt_vpath_oom(c);
    if (rc == 0)
      rc = fn(c, val, depth, &m->value);
    tt_vpath_pop(c, old);
    if (rc != 0)
      return -1;
  }
  return tt_av_map_finish(out, c->path, c->err);
}

static inline void tt_vpath_init(struct tt_vpath *c, const char *path, struct tt_error *err) {
  c->err = err;
  c->len = 0;
  c->path[0] = '\0';
  if (path && *path)
    tt_vpath_key(c, path, strlen(path));
}

#endif
