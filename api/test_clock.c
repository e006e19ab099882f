/* SPDX-License-Identifier: Apache-2.0 */
/* test_clock.c -- GET/POST /v1/_test/clock: the frozen clock of --test-clock. */
#include "api/test_clock.h"

#include "api/handlers.h"
#include "value/json_exact.h"

#include <string.h>

#define NS_PER_MS 1000000LL
#define NS_PER_S 1000000000LL
#define ADVANCE_MAX_MS (3650LL * 86400 * 1000) /* ten years */

void tt_test_clock_init(struct tt_test_clock *c, int64_t start_ns) {
  c->now_ns = start_ns - start_ns % NS_PER_S + 123456789;
}

int64_t tt_test_clock_now(void *arg) { return ((const struct tt_test_clock *)arg)->now_ns; }

/* The clock the ORM reads, or NULL (then answers 500: the route is served
 * only when the daemon installed one). */
static struct tt_test_clock *clock_of(struct tt_request *req) {
  struct tt_orm *orm = req->server->orm;
  if (orm == NULL || orm->now_ns != tt_test_clock_now || orm->clock_arg == NULL) {
    tt_request_fail(req, TT_ERR_INTERNAL, NULL, "the test clock is not installed");
    return NULL;
  }
  return orm->clock_arg;
}

static void answer(struct tt_request *req, const struct tt_test_clock *c) {
  json_t *out = json_pack("{s:I,s:I}", "now_ns", (json_int_t)c->now_ns, "now_s",
                          (json_int_t)(c->now_ns / NS_PER_S));
  tt_request_respond_json(req, 200, out);
}

void tt_handle_test_clock_get(struct tt_request *req) {
  struct tt_test_clock *c = clock_of(req);
  if (c)
    answer(req, c);
}

void tt_handle_test_clock_post(struct tt_request *req) {
  json_t *body = tt_request_json_body(req, false);
  if (body == NULL)
    return;
  const char *key;
  json_t *v;
  json_object_foreach(body, key, v) {
    if (strcmp(key, "advance_ms") != 0) {
      tt_request_fail(req, TT_ERR_VALIDATION, key, "unknown field %s (only advance_ms)", key);
      goto done;
    }
  }
  int64_t ms = 0;
  v = json_object_get(body, "advance_ms");
  if (v == NULL || tt_json_integer(v, &ms) != 0 || ms < 0 || ms > ADVANCE_MAX_MS) {
    tt_request_fail(req, TT_ERR_VALIDATION, "advance_ms",
                    "advance_ms must be an integer from 0 to %lld", (long long)ADVANCE_MAX_MS);
    goto done;
  }
  struct tt_test_clock *c = clock_of(req);
  if (c) {
    c->now_ns += ms * NS_PER_MS;
    answer(req, c);
  }
done:
  json_decref(body);
}
