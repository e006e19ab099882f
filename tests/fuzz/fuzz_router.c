/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_router.c -- libFuzzer target for what the API does with a request
 * line: routing over the real route table, the percent-decoding of path
 * parameters, query-string lookups, and item keys from the {key} segment. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "api/request.h"
#include "api/router.h"
#include "harness.h"
#include "api/item_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const query_names[] = {
    "select", "format", "consistent", "expected_version", "owner", "status",
    "tenant_id", "limit", "cursor", "order", "a b", "",
};

/* ---- the reference: the linear scan the trie replaced, kept as an oracle
 * so the fuzzer proves both answer every path the same way. ---- */

static bool ref_match_pattern(const char *pattern, const char *path, size_t path_len,
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
        return false;
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

static int ref_rank(const char *seg, size_t len) {
  if (len >= 2 && seg[0] == '{' && seg[len - 1] == '}')
    return seg[len - 2] == '+' ? 0 : 1;
  return 2;
}

static int ref_cmp(const char *a, const char *b) {
  while (*a == '/' && *b == '/') {
    a++;
    b++;
    size_t la = strcspn(a, "/"), lb = strcspn(b, "/");
    int d = ref_rank(a, la) - ref_rank(b, lb);
    if (d != 0)
      return d;
    a += la;
    b += lb;
  }
  return (*a == '/') - (*b == '/');
}

static int ref_router_match(unsigned method, const char *path, size_t path_len,
                            unsigned enabled, struct tt_route_match *m) {
  unsigned want = method == TT_METHOD_HEAD ? TT_METHOD_GET : method;
  const char *best = NULL;
  const struct tt_route *found = NULL;
  unsigned allow = 0;
  struct tt_route_match tmp;
  memset(m, 0, sizeof(*m));
  for (size_t r = 0; r < tt_api_nroutes; r++) {
    const struct tt_route *route = &tt_api_routes[r];
    if ((route->flags & TT_ROUTE_FAULTS) && !(enabled & TT_ROUTE_FAULTS))
      continue;
    if (!ref_match_pattern(route->pattern, path, path_len, &tmp))
      continue;
    int cmp = best ? ref_cmp(route->pattern, best) : 1;
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

/* Forgets an answer the helpers under test gave (a 400 for a bad escape). */
static void reset_answer(struct tt_request *req) {
  if (req->resp.body && !req->resp.body_static)
    free(req->resp.body);
  memset(&req->resp, 0, sizeof(req->resp));
  req->responded = false;
}

/* The first byte is the method (bit i of enum tt_method, modulo 7) and
 * whether fault routes are enabled (bit 7); the rest is path[?query]. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_init();
  if (size < 1)
    return 0;
  unsigned method = 1u << (data[0] % 7);
  unsigned enabled = data[0] & 0x80 ? TT_ROUTE_FAULTS : 0;
  const char *url = (const char *)data + 1;
  size_t url_len = size - 1;
  const char *qm = memchr(url, '?', url_len);
  size_t path_len = qm ? (size_t)(qm - url) : url_len;

  struct tt_request req;
  memset(&req, 0, sizeof(req));
  tt_arena_init(&req.arena);
  req.method = method;
  req.query = qm ? tt_arena_strndup(&req.arena, qm + 1, url_len - path_len - 1) : "";
  if (req.query == NULL)
    abort();

  static struct tt_router router;
  static bool router_ready;
  if (!router_ready) {
    if (tt_router_init(&router, tt_api_routes, tt_api_nroutes) != 0)
      abort();
    router_ready = true;
  }
  int rc = tt_router_match(&router, method, url, path_len, enabled, &req.match);
  struct tt_route_match ref;
  if (ref_router_match(method, url, path_len, enabled, &ref) != rc || ref.route != req.match.route ||
      ref.allow != req.match.allow || ref.nparams != req.match.nparams)
    abort(); /* the trie and the linear scan disagree */
  for (size_t i = 0; i < ref.nparams; i++)
    if (ref.params[i].name != req.match.params[i].name ||
        ref.params[i].name_len != req.match.params[i].name_len ||
        ref.params[i].value != req.match.params[i].value ||
        ref.params[i].len != req.match.params[i].len)
      abort();
  if (rc == TT_ROUTER_NO_METHOD) {
    char allow[64];
    if (req.match.allow == 0 || (req.match.allow & method))
      abort();
    tt_method_allow_header(req.match.allow, allow, sizeof(allow));
    if (allow[0] == '\0')
      abort();
  } else if (rc == TT_ROUTER_FOUND) {
    const struct tt_route *r = req.match.route;
    if (r == NULL || !(r->methods & (method == TT_METHOD_HEAD ? TT_METHOD_GET | method : method)) ||
        ((r->flags & TT_ROUTE_FAULTS) && !enabled) || req.match.nparams > TT_ROUTE_MAX_PARAMS)
      abort();
    for (size_t i = 0; i < req.match.nparams; i++) {
      const struct tt_route_param *p = &req.match.params[i];
      if (p->value < url || p->value + p->len > url + path_len)
        abort(); /* a parameter points into the path */
      char name[32];
      if (p->name_len >= sizeof(name))
        abort();
      memcpy(name, p->name, p->name_len);
      name[p->name_len] = '\0';
      if (tt_route_param(&req.match, name) != p)
        abort();
      const char *dec = tt_request_param(&req, name);
      if (dec != NULL && (strlen(dec) > p->len || req.responded))
        abort();
      if (dec == NULL && !req.responded)
        abort(); /* a refusal answers 400 */
      reset_answer(&req);
    }
    const char *model = tt_request_param(&req, "model");
    reset_answer(&req);
    const struct tt_route_param *key = tt_route_param(&req.match, "key");
    const struct tt_model *m = model ? tt_model_registry_get(FZ.models, model) : NULL;
    if (m && key) {
      struct tt_av k;
      struct tt_error err;
      if (tt_api_item_key(m, key->value, key->len, &k, &err) == 0)
        tt_av_free(&k);
      else if (k.type != TT_AV_NULL || err.code != TT_ERR_VALIDATION)
        abort();
    }
  } else if (rc != TT_ROUTER_NO_PATH) {
    abort();
  }

  for (size_t i = 0; i < sizeof(query_names) / sizeof(query_names[0]); i++) {
    const char *v = tt_request_query(&req, query_names[i]);
    if (v != NULL && strlen(v) > strlen(req.query))
      abort();
  }
  reset_answer(&req);
  tt_arena_free(&req.arena);
  return 0;
}
