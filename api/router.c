/* SPDX-License-Identifier: Apache-2.0 */
/* router.c -- matches a method and a raw path against a route table (a segment trie). */
#include "api/router.h"

#include <errno.h>
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

const char *tt_method_name(unsigned bit) {
  for (size_t i = 0; i < sizeof(method_names) / sizeof(method_names[0]); i++)
    if (bit == method_names[i].bit)
      return method_names[i].name;
  return NULL;
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

/* Why a trie: a lookup reads each path segment once and follows at most
 * one literal edge per level, backtracking into the {param} and {rest+}
 * edges only when the literal branch has no route, instead of matching and
 * ranking every pattern. Buckets by segment count would still scan and rank
 * every pattern of a length, and {rest+} patterns belong to every length.
 *
 * Why the order literal, then {param}, then {rest+} gives "the most specific
 * pattern wins": specificity compares patterns segment by segment by rank,
 * so it is the lexicographic order of their rank sequences, and a
 * depth-first walk that tries the higher rank first reaches the patterns in
 * exactly that order; the first node with a route that matches the whole
 * path holds the most specific patterns. Patterns of the same shape that
 * match one path have the same literals, so they end at the same node;
 * parameters at one position share a node whatever their names (names come
 * from the route found), otherwise a {a} branch could hide a more specific
 * pattern under {b}. */

/* Rank of one pattern segment: a literal is more specific than a
 * parameter, a parameter more than a rest parameter. */
static int segment_rank(const char *seg, size_t len) {
  if (len >= 2 && seg[0] == '{' && seg[len - 1] == '}')
    return seg[len - 2] == '+' ? 0 : 1;
  return 2;
}

static int new_node(struct tt_router *r, uint16_t *link) {
  if (r->nnodes == TT_ROUTER_MAX_NODES)
    return -ENOSPC;
  memset(&r->nodes[r->nnodes], 0, sizeof(r->nodes[0]));
  *link = (uint16_t)r->nnodes++;
  return 0;
}

/* The child of node n for one pattern segment, created when missing. */
static int child_for(struct tt_router *r, uint16_t n, const char *seg, size_t len, int rank,
                     uint16_t *out) {
  int rc;
  if (rank == 0 || rank == 1) {
    uint16_t *link = rank == 0 ? &r->nodes[n].rest : &r->nodes[n].param;
    if (*link == 0 && (rc = new_node(r, link)) != 0)
      return rc;
    *out = *link;
    return 0;
  }
  uint16_t *link = &r->nodes[n].child;
  for (; *link; link = &r->nodes[*link].sibling) {
    const struct tt_router_node *c = &r->nodes[*link];
    if (c->seg_len == len && memcmp(c->seg, seg, len) == 0) {
      *out = *link;
      return 0;
    }
  }
  if ((rc = new_node(r, link)) != 0)
    return rc;
  r->nodes[*link].seg = seg;
  r->nodes[*link].seg_len = len;
  *out = *link;
  return 0;
}

int tt_router_init(struct tt_router *r, const struct tt_route *routes, size_t nroutes) {
  memset(r, 0, sizeof(*r));
  if (nroutes > TT_ROUTER_MAX_ROUTES)
    return -ENOSPC;
  r->routes = routes;
  r->nnodes = 1; /* the root */
  for (size_t i = 0; i < nroutes; i++) {
    const char *p = routes[i].pattern;
    uint16_t n = 0;
    size_t nparams = 0;
    while (*p) {
      if (*p != '/')
        return -EINVAL;
      p++;
      size_t len = strcspn(p, "/");
      int rank = segment_rank(p, len);
      if (rank == 0 && p[len] != '\0')
        return -EINVAL; /* a rest parameter is the last segment */
      if (rank != 2 && ++nparams > TT_ROUTE_MAX_PARAMS)
        return -EINVAL;
      int rc = child_for(r, n, p, len, rank, &n);
      if (rc != 0)
        return rc;
      p += len;
    }
    /* Appended, so each node lists its routes in table order. */
    uint16_t *link = &r->nodes[n].route;
    while (*link)
      link = &r->route_next[*link - 1];
    *link = (uint16_t)(i + 1);
  }
  return 0;
}

/* Whether a route that is served with `enabled` ends at node n. */
static bool ends_here(const struct tt_router *r, const struct tt_router_node *n,
                      unsigned enabled) {
  for (uint16_t x = n->route; x; x = r->route_next[x - 1])
    if (!(r->routes[x - 1].flags & TT_ROUTE_GATES & ~enabled))
      return true;
  return false;
}

/* Parameter values met on the way down, in pattern order. */
struct spans {
  const char *value[TT_ROUTE_MAX_PARAMS];
  size_t len[TT_ROUTE_MAX_PARAMS];
};

/* Depth-first from node n at path offset i (a '/' or the end); returns the
 * node of the most specific patterns that match the rest of the path, or
 * -1. `np` counts the parameters taken so far (their spans go in sp). */
static int walk(const struct tt_router *r, uint16_t n, const char *path, size_t i, size_t len,
                unsigned enabled, struct spans *sp, size_t np) {
  const struct tt_router_node *node = &r->nodes[n];
  if (i == len)
    return ends_here(r, node, enabled) ? n : -1;
  if (path[i] != '/')
    return -1;
  size_t start = i + 1;
  const char *slash = memchr(path + start, '/', len - start);
  size_t end = slash ? (size_t)(slash - path) : len;
  size_t seg_len = end - start;
  for (uint16_t c = node->child; c; c = r->nodes[c].sibling) {
    if (r->nodes[c].seg_len != seg_len || memcmp(r->nodes[c].seg, path + start, seg_len) != 0)
      continue;
    int found = walk(r, c, path, end, len, enabled, sp, np);
    if (found >= 0)
      return found;
    break; /* literals of one node differ: no other can match */
  }
  /* init caps the parameters of a pattern, so np < TT_ROUTE_MAX_PARAMS. */
  if (node->param && seg_len > 0) {
    sp->value[np] = path + start;
    sp->len[np] = seg_len;
    int found = walk(r, node->param, path, end, len, enabled, sp, np + 1);
    if (found >= 0)
      return found;
  }
  if (node->rest && start < len && ends_here(r, &r->nodes[node->rest], enabled)) {
    sp->value[np] = path + start;
    sp->len[np] = len - start; /* the rest of the path, '/' included */
    return node->rest;
  }
  return -1;
}

/* Names the spans after the parameters of the route's pattern. */
static void fill_params(const struct tt_route *route, const struct spans *sp,
                        struct tt_route_match *m) {
  m->nparams = 0;
  for (const char *p = route->pattern; *p; p++) {
    if (p[0] != '/' || p[1] != '{')
      continue;
    size_t len = strcspn(p + 1, "/");
    if (segment_rank(p + 1, len) == 2)
      continue; /* a literal that starts with '{' */
    struct tt_route_param *prm = &m->params[m->nparams];
    prm->name = p + 2;
    prm->name_len = len - 2 - (p[len - 1] == '+' ? 1 : 0);
    prm->value = sp->value[m->nparams];
    prm->len = sp->len[m->nparams];
    m->nparams++;
  }
}

int tt_router_match(const struct tt_router *r, unsigned method, const char *path,
                    size_t path_len, unsigned enabled_flags, struct tt_route_match *m) {
  unsigned want = method == TT_METHOD_HEAD ? TT_METHOD_GET : method;
  struct spans sp;
  m->route = NULL;
  m->nparams = 0;
  m->allow = 0;
  /* The most specific pattern that matches the path wins whatever the
   * method (/v1/jobs/table is never the job "table"); among routes of that
   * shape the method picks one, or the answer is 405 with their methods. */
  int n = walk(r, 0, path, 0, path_len, enabled_flags, &sp, 0);
  if (n < 0)
    return TT_ROUTER_NO_PATH;
  const struct tt_route *found = NULL;
  unsigned allow = 0;
  for (uint16_t x = r->nodes[n].route; x; x = r->route_next[x - 1]) {
    const struct tt_route *route = &r->routes[x - 1];
    if (route->flags & TT_ROUTE_GATES & ~enabled_flags)
      continue;
    allow |= route->methods | (route->methods & TT_METHOD_GET ? TT_METHOD_HEAD : 0);
    if (found == NULL && (route->methods & want))
      found = route;
  }
  if (found == NULL) {
    m->allow = allow;
    return TT_ROUTER_NO_METHOD;
  }
  m->route = found;
  fill_params(found, &sp, m);
  return TT_ROUTER_FOUND;
}

const struct tt_route_param *tt_route_param(const struct tt_route_match *m, const char *name) {
  size_t n = strlen(name);
  for (size_t i = 0; i < m->nparams; i++)
    if (m->params[i].name_len == n && memcmp(m->params[i].name, name, n) == 0)
      return &m->params[i];
  return NULL;
}
