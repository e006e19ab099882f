/* SPDX-License-Identifier: Apache-2.0 */
/* router.c -- matches a method and a raw path against a route table. */
#include "api/router.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const struct {
  const char *name;
  unsigned bit;
} method_names[] = {
    {"GET", TT_METHOD_GET},     {"HEAD", TT_METHOD_HEAD},     {"POST", TT_METHOD_POST},
    {"PUT", TT_METHOD_PUT},     {"PATCH", TT_METHOD_PATCH},   {"DELETE", TT_METHOD_DELETE},
    {"OPTIONS", TT_METHOD_OPTIONS},
};

unsigned tt_method_parse(const char *name) {
  for (size_t i = 0; i < sizeof(method_names) / sizeof(method_names[0]); i++)
    if (strcmp(name, method_names[i].name) == 0)
      return method_names[i].bit;
  return 0;
}

void tt_method_allow_header(unsigned mask, char *out, size_t cap) {
  size_t len = 0;
  out[0] = '\0';
  for (size_t i = 0; i < sizeof(method_names) / sizeof(method_names[0]); i++) {
    if (!(mask & method_names[i].bit))
      continue;
    int n = snprintf(out + len, cap - len, "%s%s", len ? ", " : "", method_names[i].name);
    if (n < 0 || (size_t)n >= cap - len)
      return;
    len += (size_t)n;
  }
}

/* Matches one pattern against the path; fills params on success. */
static bool match_pattern(const char *pattern, const char *path, size_t path_len,
                          struct tt_route_match *m) {
  const char *p = pattern;
  size_t i = 0;
  m->nparams = 0;
  while (*p) {
    if (i >= path_len || path[i] != '/' || *p != '/')
      return false;
    p++;
    i++;
    const char *seg_end = strchr(p, '/');
    size_t seg_len = seg_end ? (size_t)(seg_end - p) : strlen(p);
    size_t end = i;
    while (end < path_len && path[end] != '/')
      end++;
    if (seg_len >= 2 && p[0] == '{' && p[seg_len - 1] == '}') {
      bool rest = p[seg_len - 2] == '+';
      if (rest)
        end = path_len;
      if (end == i || m->nparams == TT_ROUTE_MAX_PARAMS)
        return false; /* empty parameter */
      struct tt_route_param *prm = &m->params[m->nparams++];
      prm->name = p + 1;
      prm->name_len = seg_len - 2 - (rest ? 1 : 0);
      prm->value = path + i;
      prm->len = end - i;
    } else if (end - i != seg_len || memcmp(path + i, p, seg_len) != 0) {
      return false;
    }
    i = end;
    p += seg_len;
  }
  return i == path_len;
}

/* Rank of one pattern segment: a literal is more specific than a
 * parameter, a parameter more than a rest parameter. */
static int segment_rank(const char *seg, size_t len) {
  if (len >= 2 && seg[0] == '{' && seg[len - 1] == '}')
    return seg[len - 2] == '+' ? 0 : 1;
  return 2;
}

/* Compares the specificity of two patterns that both matched one path:
 * segment by segment, the first difference in rank decides. > 0 when a is
 * more specific, 0 when they have the same shape (then their literals are
 * equal too, since both matched). */
static int pattern_cmp(const char *a, const char *b) {
  while (*a == '/' && *b == '/') {
    a++;
    b++;
    size_t la = strcspn(a, "/"), lb = strcspn(b, "/");
    int d = segment_rank(a, la) - segment_rank(b, lb);
    if (d != 0)
      return d;
    a += la;
    b += lb;
  }
  return (*a == '/') - (*b == '/');
}

int tt_router_match(const struct tt_route *routes, size_t nroutes, unsigned method,
                    const char *path, size_t path_len, unsigned enabled_flags,
                    struct tt_route_match *m) {
  unsigned want = method == TT_METHOD_HEAD ? TT_METHOD_GET : method;
  m->route = NULL;
  m->allow = 0;
  /* The most specific pattern that matches the path wins whatever the
   * method (/v1/jobs/table is never the job "table"); among routes of that
   * shape the method picks one, or the answer is 405 with their methods. */
  const char *best = NULL;
  const struct tt_route *found = NULL;
  unsigned allow = 0;
  struct tt_route_match tmp;
  for (size_t r = 0; r < nroutes; r++) {
    const struct tt_route *route = &routes[r];
    if ((route->flags & TT_ROUTE_FAULTS) && !(enabled_flags & TT_ROUTE_FAULTS))
      continue;
    if (!match_pattern(route->pattern, path, path_len, &tmp))
      continue;
    int cmp = best ? pattern_cmp(route->pattern, best) : 1;
    if (cmp < 0)
      continue;
    if (cmp > 0) {
      best = route->pattern;
      found = NULL;
      allow = 0;
    }
    allow |= route->methods | (route->methods & TT_METHOD_GET ? TT_METHOD_HEAD : 0);
    if (found == NULL && (route->methods & want)) {
      found = route;
      *m = tmp;
    }
  }
  if (found) {
    m->route = found;
    m->allow = 0;
    return TT_ROUTER_FOUND;
  }
  m->route = NULL;
  m->nparams = 0;
  m->allow = allow;
  return allow ? TT_ROUTER_NO_METHOD : TT_ROUTER_NO_PATH;
}

const struct tt_route_param *tt_route_param(const struct tt_route_match *m, const char *name) {
  size_t n = strlen(name);
  for (size_t i = 0; i < m->nparams; i++)
    if (m->params[i].name_len == n && memcmp(m->params[i].name, name, n) == 0)
      return &m->params[i];
  return NULL;
}
