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

int tt_router_match(const struct tt_route *routes, size_t nroutes, unsigned method,
                    const char *path, size_t path_len, unsigned enabled_flags,
                    struct tt_route_match *m) {
  unsigned want = method == TT_METHOD_HEAD ? TT_METHOD_GET : method;
  m->route = NULL;
  m->allow = 0;
  struct tt_route_match tmp;
  for (size_t r = 0; r < nroutes; r++) {
    const struct tt_route *route = &routes[r];
    if ((route->flags & TT_ROUTE_FAULTS) && !(enabled_flags & TT_ROUTE_FAULTS))
      continue;
    if (!match_pattern(route->pattern, path, path_len, &tmp))
      continue;
    if (route->methods & want) {
      *m = tmp;
      m->route = route;
      m->allow = 0;
      return TT_ROUTER_FOUND;
    }
    m->allow |= route->methods;
    if (route->methods & TT_METHOD_GET)
      m->allow |= TT_METHOD_HEAD;
  }
  return m->allow ? TT_ROUTER_NO_METHOD : TT_ROUTER_NO_PATH;
}

const struct tt_route_param *tt_route_param(const struct tt_route_match *m, const char *name) {
  size_t n = strlen(name);
  for (size_t i = 0; i < m->nparams; i++)
    if (m->params[i].name_len == n && memcmp(m->params[i].name, name, n) == 0)
      return &m->params[i];
  return NULL;
}
