/* SPDX-License-Identifier: Apache-2.0 */
/* router.h -- matches a method and a raw path against a route table. */
#ifndef TT_API_ROUTER_H
#define TT_API_ROUTER_H

#include <stddef.h>
#include <stdint.h>

enum tt_method {
  TT_METHOD_GET = 1u << 0,
  TT_METHOD_HEAD = 1u << 1,
  TT_METHOD_POST = 1u << 2,
  TT_METHOD_PUT = 1u << 3,
  TT_METHOD_PATCH = 1u << 4,
  TT_METHOD_DELETE = 1u << 5,
  TT_METHOD_OPTIONS = 1u << 6,
};

/* Route flags. */
#define TT_ROUTE_FAULTS 1u /* served only with --enable-fault-injection */
#define TT_ROUTE_AUTH 2u   /* guarded by the bearer token when one is configured */
#define TT_ROUTE_TEST_CLOCK 4u /* served only with --test-clock */
/* The flags that gate a route: it is served only when all of its are enabled. */
#define TT_ROUTE_GATES (TT_ROUTE_FAULTS | TT_ROUTE_TEST_CLOCK)
/* A small number for the route's handler (the ledger's operation) among
 * the flags, opaque to the router; tt_route_arg reads it back. */
#define TT_ROUTE_ARG(n) ((unsigned)(n) << 8)
#define tt_route_arg(route) ((route)->flags >> 8)

/* One route. `pattern` segments are literals, `{name}` (one segment) or
 * `{name+}` (the rest of the path, one or more segments; last only).
 * `pattern` doubles as the metrics/log label, so it must be a literal. */
struct tt_route {
  unsigned methods; /* one method per route; HEAD matches GET routes */
  const char *pattern;
  const void *handler; /* opaque to the router */
  unsigned flags; /* TT_ROUTE_*, and above them the handler's argument (TT_ROUTE_ARG) */
};

#define TT_ROUTE_MAX_PARAMS 4

/* A path parameter: points into the matched path (not NUL-terminated, still
 * percent-encoded). */
struct tt_route_param {
  const char *name; /* the pattern's name, without braces */
  size_t name_len;
  const char *value;
  size_t len;
};

struct tt_route_match {
  const struct tt_route *route;
  size_t nparams;
  struct tt_route_param params[TT_ROUTE_MAX_PARAMS];
  unsigned allow; /* on 405: methods the path accepts */
};

enum tt_router_result { TT_ROUTER_FOUND = 0, TT_ROUTER_NO_PATH = -1, TT_ROUTER_NO_METHOD = -2 };

/* Maps an HTTP method name to its bit; 0 when unknown. */
unsigned tt_method_parse(const char *name);

/* The name of one method's bit (a static string); NULL for none or many. */
const char *tt_method_name(unsigned bit);

/* Writes the methods in `mask` as an Allow header value ("GET, HEAD, PUT")
 * into out (cap bytes). */
void tt_method_allow_header(unsigned mask, char *out, size_t cap);

/* Capacities of a router; tt_router_init refuses a larger table. */
#define TT_ROUTER_MAX_ROUTES 128
#define TT_ROUTER_MAX_NODES 256

/* One node of the segment trie (private to router.c; here only so that a
 * router can be embedded without an allocation). Indexes are into the
 * router's nodes; 0 means none (node 0 is the root, never a child). */
struct tt_router_node {
  const char *seg;  /* literal segment (points into a pattern); NULL otherwise */
  size_t seg_len;
  uint16_t child;   /* first literal child */
  uint16_t sibling; /* next literal child of the same parent */
  uint16_t param;   /* the {name} child: every name at this position shares it */
  uint16_t rest;    /* the {name+} child */
  uint16_t route;   /* first route whose pattern ends here, index + 1 */
};

/* A route table compiled into a trie of path segments. Borrows the table,
 * which must outlive it; owns no memory (nothing to free). Read-only after
 * tt_router_init, so one router may serve several threads. */
struct tt_router {
  const struct tt_route *routes;
  size_t nnodes;
  struct tt_router_node nodes[TT_ROUTER_MAX_NODES];
  uint16_t route_next[TT_ROUTER_MAX_ROUTES]; /* next route ending at the same node, + 1 */
};

/* Compiles `routes` (borrowed) into r. Returns 0, or -EINVAL when a pattern
 * is malformed (does not start with '/', a rest parameter not last, more
 * than TT_ROUTE_MAX_PARAMS parameters) or -ENOSPC when the table exceeds
 * the capacities above. */
int tt_router_init(struct tt_router *r, const struct tt_route *routes, size_t nroutes);

/* Finds the route for (method, path). Of the patterns that match the path
 * only the most specific take part (compared segment by segment: literal,
 * then {param}, then {rest+}), whatever the method. Returns TT_ROUTER_FOUND
 * with m filled (the first such route in table order that accepts the
 * method), TT_ROUTER_NO_PATH when no pattern matches the path, or
 * TT_ROUTER_NO_METHOD with m->allow set to the methods of the most specific
 * patterns when none of them accepts the method. `enabled_flags` masks out
 * routes whose TT_ROUTE_FAULTS flag is not enabled. Borrows everything; the
 * parameters in m point into `path`. */
int tt_router_match(const struct tt_router *r, unsigned method, const char *path,
                    size_t path_len, unsigned enabled_flags, struct tt_route_match *m);

/* Looks up a matched parameter by name; NULL when absent. */
const struct tt_route_param *tt_route_param(const struct tt_route_match *m, const char *name);

#endif
