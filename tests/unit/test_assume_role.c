/* SPDX-License-Identifier: Apache-2.0 */
/* test_assume_role.c -- the partner AssumeRole provider against a local
 * fake STS: the signed form it sends, the cache, one call shared by
 * concurrent gets, refresh before expiry on an injected clock, STS errors,
 * cancel and close. Every test ends with uv_loop_close() == 0. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/dynamodb/assume_role.h"
#include "backend/dynamodb/http.h"
#include "http_test_server.h"

#define T0 1767323045 /* 2026-01-02T03:04:05Z */

static struct {
  uv_loop_t loop;
  struct tts_server srv;
  struct tt_http *http;
  struct tt_creds_provider *base, *p;
  int64_t now;
  int status;        /* what the fake STS answers */
  int lifetime;      /* seconds of the credentials it hands out */
  bool hang;
  char body[2048];
  char url[64];
  int busy;
  int p_closed; /* a test closed the provider itself */
  const char *code; /* STS's error code when status != 200; NULL = AccessDenied */
  int warnings;     /* WARN lines the provider logged */
} F;

static void log_cb(void *arg, enum tt_creds_log_level level, const char *msg) {
  (void)arg;
  (void)msg;
  if (level == TT_CREDS_LOG_WARN)
    F.warnings++;
}

static int64_t clock_cb(void *arg) {
  (void)arg;
  return F.now;
}

static void busy_cb(void *arg, int delta) {
  (void)arg;
  F.busy += delta;
}

static void sts(void *arg, const struct tts_request *req, struct tts_response *resp) {
  (void)arg;
  (void)req;
  if (F.hang) {
    resp->action = TTS_HANG;
    return;
  }
  resp->status = F.status;
  if (F.status != 200) {
    snprintf(F.body, sizeof(F.body),
             "<ErrorResponse><Error><Code>%s</Code><Message>no</Message></Error>"
             "</ErrorResponse>",
             F.code ? F.code : "AccessDenied");
  } else {
    time_t exp = (time_t)(F.now + F.lifetime);
    struct tm tm;
    gmtime_r(&exp, &tm);
    char when[32];
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(F.body, sizeof(F.body),
             "<AssumeRoleResponse><AssumeRoleResult><Credentials>"
             "<AccessKeyId>ASIA%u</AccessKeyId><SecretAccessKey>SECRET%u</SecretAccessKey>"
             "<SessionToken>TOKEN%u</SessionToken><Expiration>%s</Expiration>"
             "</Credentials></AssumeRoleResult></AssumeRoleResponse>",
             F.srv.requests, F.srv.requests, F.srv.requests, when);
  }
  resp->body = F.body;
}

static void setup(void) {
  memset(&F, 0, sizeof(F));
  F.now = T0;
  F.status = 200;
  F.lifetime = 900;
  ck_assert_int_eq(uv_loop_init(&F.loop), 0);
  ck_assert_int_eq(tts_start(&F.srv, &F.loop, sts, NULL), 0);
  snprintf(F.url, sizeof(F.url), "http://127.0.0.1:%d", F.srv.port);
  ck_assert_int_eq(tt_http_new(&F.loop, NULL, &F.http), 0);
  struct tt_error err;
  ck_assert_int_eq(tt_creds_static_new(&F.loop, "AKIDBASE", "BASESECRET", NULL, &F.base, &err),
                   0);
  struct tt_creds_assume_role_options o = {
      .role_arn = "arn:aws:iam::111111111111:role/acme",
      .session_name = "theorydb-acme",
      .external_id = "ext/id=1",
      .duration_s = 900,
      .region = "us-east-1",
      .sts_endpoint = F.url,
      .label = "partner acme",
      .now = clock_cb,
      .busy = busy_cb,
      .log = log_cb,
  };
  ck_assert_int_eq(tt_creds_assume_role_new(&F.loop, F.http, F.base, &o, &F.p, &err), 0);
}

static void closed_cb(void *arg) { *(int *)arg += 1; }

static void teardown(void) {
  int closed = F.p_closed;
  if (!closed)
    tt_creds_close(F.p, closed_cb, &closed);
  while (closed == 0)
    uv_run(&F.loop, UV_RUN_ONCE);
  tt_creds_destroy(F.p);
  tt_creds_close(F.base, NULL, NULL);
  tt_http_close(F.http, NULL, NULL);
  tts_close(&F.srv);
  /* A callback's uv_stop may end one run early: run until nothing is left. */
  while (uv_run(&F.loop, UV_RUN_DEFAULT) != 0) {
  }
  tt_creds_destroy(F.base);
  tt_http_destroy(F.http);
  ck_assert_int_eq(F.busy, 0);
  ck_assert_int_eq(uv_loop_close(&F.loop), 0);
}

struct got {
  int n;
  struct tt_creds creds;
  struct tt_error err;
  bool ok;
};

static void got_cb(void *arg, const struct tt_creds *c, const struct tt_error *err) {
  struct got *g = arg;
  g->n++;
  g->ok = c != NULL;
  if (c)
    g->creds = *c;
  if (err)
    g->err = *err;
  uv_stop(&F.loop);
}

/* What a signer does: peek at the cache (answered here, synchronously),
 * get only on a miss (answered later on the loop). */
static void get(struct got *g, void **h) {
  memset(g, 0, sizeof(*g));
  const struct tt_creds *c = NULL;
  struct tt_error err;
  int pk = tt_creds_peek(F.p, &c, &err);
  if (pk == 0) {
    g->n = 1;
    g->ok = true;
    g->creds = *c;
    return;
  }
  if (pk == TT_CREDS_PEEK_FAILED) {
    g->n = 1;
    g->err = err;
    return;
  }
  ck_assert_int_eq(pk, TT_CREDS_PEEK_MISS);
  ck_assert_int_eq(tt_creds_get(F.p, got_cb, g, h), 0);
}

/* Only tt_creds_get: never answered inside it. */
static void get_only(struct got *g, void **h) {
  memset(g, 0, sizeof(*g));
  ck_assert_int_eq(tt_creds_get(F.p, got_cb, g, h), 0);
  ck_assert_int_eq(g->n, 0);
}

static void wait_for(struct got *g) {
  while (g->n == 0)
    uv_run(&F.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(g->n, 1);
}

START_TEST(sends_signed_assume_role_and_caches) {
  struct got g;
  get(&g, NULL);
  ck_assert_int_eq(g.n, 0); /* asynchronous: nothing cached yet */
  wait_for(&g);
  ck_assert(g.ok);
  ck_assert_str_eq(g.creds.access_key_id, "ASIA1");
  ck_assert_str_eq(g.creds.secret_access_key, "SECRET1");
  ck_assert_str_eq(g.creds.session_token, "TOKEN1");
  ck_assert_int_eq(g.creds.expires_at, T0 + 900);
  const struct tts_request *r = &F.srv.last;
  ck_assert_str_eq(r->method, "POST");
  ck_assert_str_eq(r->body, "Action=AssumeRole&Version=2011-06-15&RoleArn=arn%3Aaws%3Aiam%3A%3A"
                            "111111111111%3Arole%2Facme&RoleSessionName=theorydb-acme&"
                            "DurationSeconds=900&ExternalId=ext%2Fid%3D1");
  char auth[512];
  ck_assert_ptr_nonnull(tts_header(r, "authorization", auth, sizeof(auth)));
  ck_assert_ptr_nonnull(strstr(auth, "Credential=AKIDBASE/20260102/us-east-1/sts/aws4_request"));
  /* Cached: peek answers at once, no second call. */
  get(&g, NULL);
  ck_assert_int_eq(g.n, 1);
  ck_assert_str_eq(g.creds.access_key_id, "ASIA1");
  ck_assert_uint_eq(F.srv.requests, 1);
  ck_assert_uint_eq(tt_creds_assume_role_calls(F.p), 1);
}
END_TEST

/* get keeps the completion contract also when the cache or the back-off
 * answers: the callback runs later on the loop, exactly once. */
START_TEST(get_never_answers_inside_itself) {
  struct got g;
  get_only(&g, NULL); /* a miss: the AssumeRole call */
  wait_for(&g);
  ck_assert(g.ok);
  void *h = NULL;
  get_only(&g, &h); /* a hit */
  ck_assert_ptr_nonnull(h);
  wait_for(&g);
  ck_assert_str_eq(g.creds.access_key_id, "ASIA1");
  get_only(&g, &h); /* a cancelled hit never calls back */
  tt_creds_cancel(F.p, h);
  uv_run(&F.loop, UV_RUN_NOWAIT);
  ck_assert_int_eq(g.n, 0);
  ck_assert_uint_eq(tt_creds_assume_role_calls(F.p), 1);
  /* The back-off: a failure answered later, without STS. */
  F.status = 403;
  F.now += 900;
  get_only(&g, NULL);
  wait_for(&g);
  ck_assert(!g.ok);
  get_only(&g, NULL);
  wait_for(&g);
  ck_assert_int_eq(g.err.code, TT_ERR_FORBIDDEN);
  ck_assert_uint_eq(tt_creds_assume_role_calls(F.p), 2);
}
END_TEST

START_TEST(concurrent_gets_share_one_call) {
  struct got g[3];
  for (int i = 0; i < 3; i++)
    get(&g[i], NULL);
  for (int i = 0; i < 3; i++)
    wait_for(&g[i]);
  for (int i = 0; i < 3; i++)
    ck_assert_str_eq(g[i].creds.access_key_id, "ASIA1");
  ck_assert_uint_eq(F.srv.requests, 1);
}
END_TEST

START_TEST(refreshes_before_expiry) {
  struct got g;
  get(&g, NULL);
  wait_for(&g);
  /* 599 s into a 900 s session: more than 300 s left, no refresh. */
  F.now = T0 + 599;
  get(&g, NULL);
  ck_assert_int_eq(g.n, 1);
  ck_assert_uint_eq(tt_creds_assume_role_calls(F.p), 1);
  /* 601 s: the cached credentials answer and a refresh starts behind them. */
  F.now = T0 + 601;
  get(&g, NULL);
  ck_assert_int_eq(g.n, 1);
  ck_assert_str_eq(g.creds.access_key_id, "ASIA1");
  ck_assert_uint_eq(tt_creds_assume_role_calls(F.p), 1 + 1);
  ck_assert_int_eq(F.busy, 1); /* counted as background work */
  while (F.srv.requests < 2 || F.busy != 0)
    uv_run(&F.loop, UV_RUN_ONCE);
  get(&g, NULL);
  ck_assert_int_eq(g.n, 1);
  ck_assert_str_eq(g.creds.access_key_id, "ASIA2");
  ck_assert_int_eq(g.creds.expires_at, T0 + 601 + 900);
}
END_TEST

START_TEST(expired_credentials_are_fetched_again) {
  struct got g;
  get(&g, NULL);
  wait_for(&g);
  F.now = T0 + 890; /* inside the 15 s margin: not usable */
  get(&g, NULL);
  ck_assert_int_eq(g.n, 0);
  wait_for(&g);
  ck_assert_str_eq(g.creds.access_key_id, "ASIA2");
}
END_TEST

START_TEST(failed_refresh_keeps_the_cache_and_backs_off) {
  struct got g;
  get(&g, NULL);
  wait_for(&g);
  F.status = 403;
  F.now = T0 + 700;
  get(&g, NULL); /* answers ASIA1, refresh fails behind it */
  ck_assert_str_eq(g.creds.access_key_id, "ASIA1");
  while (F.srv.requests < 2 || F.busy != 0)
    uv_run(&F.loop, UV_RUN_ONCE);
  F.now = T0 + 730; /* within retry_refresh_s (60): no new call */
  get(&g, NULL);
  ck_assert_str_eq(g.creds.access_key_id, "ASIA1");
  ck_assert_uint_eq(tt_creds_assume_role_calls(F.p), 2);
}
END_TEST

START_TEST(sts_error_is_reported_without_secrets) {
  F.status = 403;
  struct got g;
  get(&g, NULL);
  wait_for(&g);
  ck_assert(!g.ok);
  /* AccessDenied will not change by retrying: a refusal, not an outage */
  ck_assert_int_eq(g.err.code, TT_ERR_FORBIDDEN);
  ck_assert_str_eq(g.err.message,
                   "credentials: partner acme: STS AssumeRole answered HTTP 403 (AccessDenied)");
}
END_TEST

/* Which STS answers are refusals for good (not retryable) and which are
 * transient. */
START_TEST(permanent_and_transient_sts_errors) {
  static const struct {
    int status;
    const char *code;
    int want;
  } cases[] = {
      {403, "AccessDenied", TT_ERR_FORBIDDEN},
      {403, "InvalidClientTokenId", TT_ERR_FORBIDDEN},
      {403, "RegionDisabledException", TT_ERR_FORBIDDEN},
      {400, "MalformedPolicyDocument", TT_ERR_FORBIDDEN},
      {400, "ValidationError", TT_ERR_FORBIDDEN},
      {400, "ExpiredToken", TT_ERR_BACKEND_UNAVAILABLE},
      {400, "Throttling", TT_ERR_BACKEND_UNAVAILABLE},
      {500, "InternalFailure", TT_ERR_BACKEND_UNAVAILABLE},
      {503, "ServiceUnavailable", TT_ERR_BACKEND_UNAVAILABLE},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    F.status = cases[i].status;
    F.code = cases[i].code;
    F.now += 3600; /* past any back-off of the case before */
    struct got g;
    get(&g, NULL);
    wait_for(&g);
    ck_assert(!g.ok);
    ck_assert_msg(g.err.code == (enum tt_err_code)cases[i].want, "%s", cases[i].code);
    char want[160];
    snprintf(want, sizeof(want), "credentials: partner acme: STS AssumeRole answered HTTP %d (%s)",
             cases[i].status, cases[i].code);
    ck_assert_str_eq(g.err.message, want);
  }
}
END_TEST

/* A failing AssumeRole is not called again on every get: the failure is
 * answered during a back-off of 1 s doubling to 60 s, logged once, and a
 * success ends it. */
START_TEST(failures_back_off_and_log_once) {
  F.status = 403;
  struct got g;
  get(&g, NULL);
  wait_for(&g);
  ck_assert_int_eq(g.err.code, TT_ERR_FORBIDDEN);
  ck_assert_uint_eq(tt_creds_assume_role_calls(F.p), 1);
  for (int i = 0; i < 10; i++) { /* ten requests within the first second */
    get(&g, NULL);
    ck_assert_int_eq(g.n, 1); /* peek answers the failure, without STS */
    ck_assert_int_eq(g.err.code, TT_ERR_FORBIDDEN);
    ck_assert_ptr_nonnull(strstr(g.err.message, "(AccessDenied)"));
  }
  ck_assert_uint_eq(tt_creds_assume_role_calls(F.p), 1);
  /* The waits double: 1, 2, 4, 8, ... 60, 60 s after each failure. */
  static const int waits[] = {1, 2, 4, 8, 16, 32, 60, 60};
  for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
    F.now += waits[i] - 1;
    get(&g, NULL);
    ck_assert_int_eq(g.n, 1); /* still backing off */
    ck_assert_uint_eq(tt_creds_assume_role_calls(F.p), i + 1);
    F.now += 1;
    get(&g, NULL);
    wait_for(&g);
    ck_assert(!g.ok);
    ck_assert_uint_eq(tt_creds_assume_role_calls(F.p), i + 2);
  }
  ck_assert_int_eq(F.warnings, 1); /* one line for the whole run of equal failures */
  /* Another failure is logged; a success ends the back-off. */
  F.code = "Throttling";
  F.status = 400;
  F.now += 60;
  get(&g, NULL);
  wait_for(&g);
  ck_assert_int_eq(g.err.code, TT_ERR_BACKEND_UNAVAILABLE);
  ck_assert_int_eq(F.warnings, 2);
  F.status = 200;
  F.now += 60;
  get(&g, NULL);
  wait_for(&g);
  ck_assert(g.ok);
  F.now += 900; /* expired: fetched again at once, no back-off left */
  get(&g, NULL);
  wait_for(&g);
  ck_assert(g.ok);
  ck_assert_uint_eq(tt_creds_assume_role_calls(F.p), 12);
}
END_TEST

/* Credentials STS answers already expired are refused and backed off
 * from like any failure. */
START_TEST(expired_answers_are_refused_and_backed_off) {
  F.lifetime = -818025749;
  struct got g;
  get(&g, NULL);
  wait_for(&g);
  ck_assert(!g.ok);
  ck_assert_int_eq(g.err.code, TT_ERR_BACKEND_UNAVAILABLE);
  ck_assert_ptr_nonnull(strstr(g.err.message, "already expired"));
  for (int i = 0; i < 10; i++) {
    get(&g, NULL);
    ck_assert_int_eq(g.n, 1);
    ck_assert(!g.ok);
  }
  ck_assert_uint_eq(tt_creds_assume_role_calls(F.p), 1);
  ck_assert_int_eq(F.warnings, 1);
}
END_TEST

START_TEST(short_lived_answer_is_refused) {
  F.lifetime = 10; /* expires inside the usable margin */
  struct got g;
  get(&g, NULL);
  wait_for(&g);
  ck_assert(!g.ok);
  ck_assert_ptr_nonnull(strstr(g.err.message, "already expired"));
}
END_TEST

START_TEST(cancelled_get_never_calls_back_but_the_call_is_cached) {
  struct got g;
  void *h = NULL;
  get(&g, &h);
  ck_assert_ptr_nonnull(h);
  tt_creds_cancel(F.p, h);
  while (F.busy != 0)
    uv_run(&F.loop, UV_RUN_ONCE);
  ck_assert_int_eq(g.n, 0);
  get(&g, NULL);
  ck_assert_int_eq(g.n, 1); /* from the cache */
  ck_assert_str_eq(g.creds.access_key_id, "ASIA1");
}
END_TEST

START_TEST(close_fails_waiters_and_stops_the_call) {
  F.hang = true;
  struct got g;
  get(&g, NULL);
  uv_run(&F.loop, UV_RUN_NOWAIT); /* the request is out */
  int closed = 0;
  tt_creds_close(F.p, closed_cb, &closed);
  ck_assert_int_eq(g.n, 1);
  ck_assert(!g.ok);
  ck_assert_int_eq(closed, 0); /* the transfer ends later, on the loop */
  while (closed == 0)
    uv_run(&F.loop, UV_RUN_ONCE);
  ck_assert_int_eq(tt_creds_get(F.p, got_cb, &g, NULL), -ESHUTDOWN);
  F.p_closed = 1;
}
END_TEST

START_TEST(options_are_validated) {
  struct tt_creds_provider *p = NULL;
  struct tt_error err;
  struct tt_creds_assume_role_options o = {.role_arn = "role", .session_name = "s",
                                           .region = "us-east-1"};
  ck_assert_int_eq(tt_creds_assume_role_new(&F.loop, F.http, F.base, &o, &p, &err), -1);
  ck_assert_str_eq(err.field, "role_arn");
  o.role_arn = "arn:aws:iam::1:role/x";
  o.duration_s = 899;
  ck_assert_int_eq(tt_creds_assume_role_new(&F.loop, F.http, F.base, &o, &p, &err), -1);
  ck_assert_str_eq(err.field, "duration_s");
  o.duration_s = 0;
  o.sts_endpoint = "ftp://x";
  ck_assert_int_eq(tt_creds_assume_role_new(&F.loop, F.http, F.base, &o, &p, &err), -1);
  ck_assert_str_eq(err.field, "sts_endpoint");
  o.sts_endpoint = NULL;
  o.region = "EU WEST";
  ck_assert_int_eq(tt_creds_assume_role_new(&F.loop, F.http, F.base, &o, &p, &err), -1);
  ck_assert_str_eq(err.field, "region");
}
END_TEST

int main(void) {
  Suite *s = suite_create("assume_role");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 20);
  tcase_add_test(tc, sends_signed_assume_role_and_caches);
  tcase_add_test(tc, get_never_answers_inside_itself);
  tcase_add_test(tc, concurrent_gets_share_one_call);
  tcase_add_test(tc, refreshes_before_expiry);
  tcase_add_test(tc, expired_credentials_are_fetched_again);
  tcase_add_test(tc, failed_refresh_keeps_the_cache_and_backs_off);
  tcase_add_test(tc, sts_error_is_reported_without_secrets);
  tcase_add_test(tc, short_lived_answer_is_refused);
  tcase_add_test(tc, permanent_and_transient_sts_errors);
  tcase_add_test(tc, failures_back_off_and_log_once);
  tcase_add_test(tc, expired_answers_are_refused_and_backed_off);
  tcase_add_test(tc, cancelled_get_never_calls_back_but_the_call_is_cached);
  tcase_add_test(tc, close_fails_waiters_and_stops_the_call);
  tcase_add_test(tc, options_are_validated);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
