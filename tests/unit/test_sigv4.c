/* SPDX-License-Identifier: Apache-2.0 */
/* test_sigv4.c -- SigV4 known answers: AWS's test suite, botocore-made DynamoDB vectors, keys, cache. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "backend/dynamodb/sigv4.h"

/* The suite's fixed inputs (aws-sig-v4-test-suite). */
#define SUITE_AKID "AKIDEXAMPLE"
#define SUITE_SECRET "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define SUITE_TIME ((time_t)1440938160) /* 20150830T123600Z */
#define DDB_TOKEN "FQoGZXIvYXdzEXAMPLE//////////SessionToken+For/Tests=="
#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

/* ---- test data files ---- */

static char *read_data(const char *name, const char *ext) {
  const char *dir = getenv("TT_TEST_DATA");
  char path[1024];
  snprintf(path, sizeof path, "%s/sigv4/%s/%s%s", dir && *dir ? dir : "tests/data", name, name,
           ext);
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  char *text = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len + 4096 + 1 > cap) {
      cap = cap ? cap * 2 : 8192;
      text = realloc(text, cap);
      ck_assert_ptr_nonnull(text);
    }
    size_t got = fread(text + len, 1, cap - len - 1, f);
    len += got;
    if (got == 0)
      break;
  }
  fclose(f);
  text[len] = '\0';
  return text;
}

/* A parsed .req file. The suite's format is an HTTP/1.1 message: request
 * line, "Name:value" lines, then a blank line and the body. A line that
 * starts with a blank continues the previous header (obs-fold); the suite's
 * get-header-value-multiline expects each such line to count as another
 * value of that header, so it is added as a repeated header. */
#define MAX_HDRS 32
struct parsed_req {
  char *text;
  char *method, *path, *body;
  size_t body_len;
  struct tt_sigv4_header hdrs[MAX_HDRS];
  size_t n;
  const char *token; /* from an X-Amz-Security-Token line, if any */
};

static void parse_req(char *text, struct parsed_req *p) {
  memset(p, 0, sizeof *p);
  p->text = text;
  char *sep = strstr(text, "\n\n");
  if (sep) {
    *sep = '\0';
    p->body = sep + 2;
    p->body_len = strlen(p->body);
  }
  char *line = text, *next;
  char *end = strchr(line, '\n');
  next = end ? end + 1 : NULL;
  if (end)
    *end = '\0';
  /* Request line: the URI may hold spaces (get-space), so it ends at the
   * last space, before "HTTP/1.1". */
  char *sp1 = strchr(line, ' '), *sp2 = strrchr(line, ' ');
  ck_assert(sp1 && sp2 && sp2 > sp1);
  *sp1 = '\0';
  *sp2 = '\0';
  p->method = line;
  p->path = sp1 + 1;
  ck_assert_ptr_null(strchr(p->path, '?')); /* no query: the signer signs none */
  const char *last_name = NULL;
  for (line = next; line; line = next) {
    end = strchr(line, '\n');
    next = end ? end + 1 : NULL;
    if (end)
      *end = '\0';
    ck_assert_uint_lt(p->n, MAX_HDRS);
    if (line[0] == ' ' || line[0] == '\t') {
      ck_assert_ptr_nonnull(last_name);
      p->hdrs[p->n++] = (struct tt_sigv4_header){last_name, line};
      continue;
    }
    char *colon = strchr(line, ':');
    ck_assert_ptr_nonnull(colon);
    *colon = '\0';
    p->hdrs[p->n++] = (struct tt_sigv4_header){line, colon + 1};
    last_name = line;
    if (strcasecmp(line, "X-Amz-Security-Token") == 0)
      p->token = colon + 1;
  }
}

static struct tt_sigv4_request to_request(const struct parsed_req *p) {
  return (struct tt_sigv4_request){.method = p->method,
                                   .path = p->path,
                                   .headers = p->hdrs,
                                   .n_headers = p->n,
                                   .body = p->body,
                                   .body_len = p->body_len};
}

/* Signs case `name` and compares canonical request, string to sign and
 * Authorization with the stored files, byte for byte. */
static void check_case(const char *name, const char *akid, const char *secret, const char *token,
                       const char *region, const char *service, unsigned flags,
                       struct tt_sigv4_result *out) {
  char *req_text = read_data(name, ".req");
  char *creq = read_data(name, ".creq");
  char *sts = read_data(name, ".sts");
  char *authz = read_data(name, ".authz");
  struct parsed_req p;
  parse_req(req_text, &p);
  struct tt_sigv4_request req = to_request(&p);
  struct tt_sigv4_credentials creds = {akid, secret, token ? token : p.token};
  struct tt_sigv4_config cfg = {region, service, flags | TT_SIGV4_KEEP_INTERMEDIATE, NULL};
  struct tt_error err;
  tt_error_clear(&err);
  int rc = tt_sigv4_sign(&req, &creds, &cfg, SUITE_TIME, out, &err);
  ck_assert_msg(rc == 0, "%s: %s", name, err.message);
  ck_assert_str_eq(out->canonical_request, creq);
  ck_assert_str_eq(out->string_to_sign, sts);
  ck_assert_str_eq(out->authorization, authz);
  ck_assert_str_eq(out->amz_date, "20150830T123600Z");
  free(req_text);
  free(creq);
  free(sts);
  free(authz);
}

/* ---- the AWS test suite ---- */

static const char *const suite_cases[] = {
    "get-vanilla",
    "get-vanilla-query",
    "get-header-key-duplicate",
    "get-header-value-order",
    "get-header-value-trim",
    "get-header-value-multiline",
    "get-unreserved",
    "get-utf8",
    "get-space",
    "get-relative",
    "get-relative-relative",
    "get-slash",
    "get-slash-dot-slash",
    "get-slash-pointless-dot",
    "get-slashes",
    "post-vanilla",
    "post-header-key-case",
    "post-header-key-sort",
    "post-header-value-case",
    "post-x-www-form-urlencoded",
    "post-x-www-form-urlencoded-parameters",
    "post-sts-header-before",
    "post-sts-header-after",
};
#define N_SUITE ((int)(sizeof suite_cases / sizeof suite_cases[0]))

START_TEST(test_aws_suite_case) {
  struct tt_sigv4_result out;
  check_case(suite_cases[_i], SUITE_AKID, SUITE_SECRET, NULL, "us-east-1", "service", 0, &out);
  tt_sigv4_result_free(&out);
}
END_TEST

START_TEST(test_get_vanilla_signature) {
  struct tt_sigv4_result out;
  check_case("get-vanilla", SUITE_AKID, SUITE_SECRET, NULL, "us-east-1", "service", 0, &out);
  /* the AWS SigV4 test suite's get-vanilla: signature starts 5fa00fa3. */
  ck_assert_int_eq(strncmp(out.signature, "5fa00fa3", 8), 0);
  ck_assert_str_eq(out.signed_headers, "host;x-amz-date");
  ck_assert_str_eq(out.payload_hash, EMPTY_SHA256);
  /* No token, no content hash header: X-Amz-Date then Authorization. */
  ck_assert_uint_eq(out.n_headers, 2);
  ck_assert_str_eq(out.headers[0].name, "X-Amz-Date");
  ck_assert_str_eq(out.headers[0].value, "20150830T123600Z");
  ck_assert_str_eq(out.headers[1].name, "Authorization");
  ck_assert_ptr_eq(out.headers[1].value, out.authorization);
  tt_sigv4_result_free(&out);
}
END_TEST

START_TEST(test_sts_token_is_signed_and_returned) {
  struct tt_sigv4_result out;
  check_case("post-sts-header-before", SUITE_AKID, SUITE_SECRET, NULL, "us-east-1", "service", 0,
             &out);
  ck_assert_uint_eq(out.n_headers, 3);
  ck_assert_str_eq(out.headers[1].name, "X-Amz-Security-Token");
  ck_assert_int_eq(strncmp(out.headers[1].value, "AQoDYXdzEPT//////////wEXAMPLE", 29), 0);
  ck_assert_str_eq(out.signed_headers, "host;x-amz-date;x-amz-security-token");
  tt_sigv4_result_free(&out);
}
END_TEST

/* ---- DynamoDB-shaped requests (vectors made by botocore, see README) ---- */

START_TEST(test_dynamodb_getitem_session_token) {
  struct tt_sigv4_result out;
  check_case("dynamodb-getitem", SUITE_AKID, SUITE_SECRET, DDB_TOKEN, "eu-west-1", "dynamodb", 0,
             &out);
  ck_assert_uint_eq(out.n_headers, 3);
  ck_assert_str_eq(out.headers[0].name, "X-Amz-Date");
  ck_assert_str_eq(out.headers[1].name, "X-Amz-Security-Token");
  ck_assert_str_eq(out.headers[1].value, DDB_TOKEN);
  ck_assert_str_eq(out.headers[2].name, "Authorization");
  ck_assert_str_eq(out.signed_headers,
                   "content-type;host;x-amz-date;x-amz-security-token;x-amz-target");
  tt_sigv4_result_free(&out);
}
END_TEST

/* ---- helpers for direct requests ---- */

static const struct tt_sigv4_header host_only[] = {{"Host", "example.amazonaws.com"}};

static struct tt_sigv4_request simple_req(const char *method, const char *path) {
  return (struct tt_sigv4_request){.method = method, .path = path, .headers = host_only,
                                   .n_headers = 1};
}

/* Returns line `which` (from 0) of a canonical request in a static
 * buffer. */
static const char *creq_line(const char *creq, int which) {
  static char line[512];
  const char *p = creq;
  for (int i = 0; i < which; i++) {
    p = strchr(p, '\n');
    ck_assert_ptr_nonnull(p);
    p++;
  }
  size_t n = strcspn(p, "\n");
  ck_assert_uint_lt(n, sizeof line);
  memcpy(line, p, n);
  line[n] = '\0';
  return line;
}

static void sign_ok(const struct tt_sigv4_request *req, unsigned flags, struct tt_sigv4_result *out) {
  struct tt_sigv4_credentials creds = {SUITE_AKID, SUITE_SECRET, NULL};
  struct tt_sigv4_config cfg = {"us-east-1", "service", flags | TT_SIGV4_KEEP_INTERMEDIATE, NULL};
  struct tt_error err;
  int rc = tt_sigv4_sign(req, &creds, &cfg, SUITE_TIME, out, &err);
  ck_assert_msg(rc == 0, "%s", err.message);
}

struct path_case {
  const char *in;
  unsigned flags;
  const char *want;
};

START_TEST(test_canonical_path_rules) {
  static const struct path_case cases[] = {
      {NULL, 0, "/"},
      {"", 0, "/"},
      /* Non-S3: the wire path is encoded again ("double encoding"). */
      {"/a%20b", 0, "/a%2520b"},
      {"/a/./b/../c//d/", 0, "/a/c/d/"},
      {"/../..", 0, "/"},
      {"/a/b/..", 0, "/a/"},
      {"/a:b@c", 0, "/a%3Ab%40c"},
      {"relative", 0, "/relative"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct tt_sigv4_request req = simple_req("GET", cases[i].in);
    struct tt_sigv4_result out;
    sign_ok(&req, cases[i].flags, &out);
    ck_assert_msg(strcmp(creq_line(out.canonical_request, 1), cases[i].want) == 0,
                  "case %zu: got %s want %s", i, creq_line(out.canonical_request, 1),
                  cases[i].want);
    tt_sigv4_result_free(&out);
  }
}
END_TEST

START_TEST(test_headers_owned_by_signer_are_replaced) {
  /* A stale Authorization, date and token from a previous attempt (a retry)
   * must not be signed: the signer's own values replace them. */
  static const struct tt_sigv4_header hdrs[] = {
      {"Host", "example.amazonaws.com"},
      {"Authorization", "AWS4-HMAC-SHA256 stale"},
      {"X-Amz-Date", "20000101T000000Z"},
      {"x-amz-security-token", "stale-token"},
      {"My-Header", "\t a \t b  "},
  };
  struct tt_sigv4_request req = {.method = "GET", .path = "/", .headers = hdrs, .n_headers = 5};
  struct tt_sigv4_result out;
  sign_ok(&req, 0, &out);
  ck_assert_str_eq(out.canonical_request, "GET\n/\n\n"
                                          "host:example.amazonaws.com\n"
                                          "my-header:a b\n"
                                          "x-amz-date:20150830T123600Z\n\n"
                                          "host;my-header;x-amz-date\n" EMPTY_SHA256);
  ck_assert_uint_eq(out.n_headers, 2);
  tt_sigv4_result_free(&out);
}
END_TEST

START_TEST(test_intermediates_dropped_without_flag) {
  struct tt_sigv4_request req = simple_req("GET", "/");
  struct tt_sigv4_credentials creds = {SUITE_AKID, SUITE_SECRET, NULL};
  struct tt_sigv4_config cfg = {"us-east-1", "service", 0, NULL};
  struct tt_sigv4_result out;
  ck_assert_int_eq(tt_sigv4_sign(&req, &creds, &cfg, SUITE_TIME, &out, NULL), 0);
  ck_assert_ptr_null(out.canonical_request);
  ck_assert_ptr_null(out.string_to_sign);
  /* Same request as get-vanilla, so the same signature. */
  ck_assert_str_eq(out.signature,
                   "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
  tt_sigv4_result_free(&out);
  tt_sigv4_result_free(&out); /* idempotent */
}
END_TEST

/* ---- key derivation and the cache ---- */

START_TEST(test_derive_key_aws_doc_example) {
  /* AWS's documented example: secret wJalr..., 20120215, us-east-1, iam. */
  unsigned char key[TT_SIGV4_KEY_LEN];
  static const unsigned char want[TT_SIGV4_KEY_LEN] = {
      0xf4, 0x78, 0x0e, 0x2d, 0x9f, 0x65, 0xfa, 0x89, 0x5f, 0x9c, 0x67, 0xb3, 0x2c, 0xe1, 0xba, 0xf0,
      0xb0, 0xd8, 0xa4, 0x35, 0x05, 0xa0, 0x00, 0xa1, 0xa9, 0xe0, 0x90, 0xd4, 0x14, 0xdb, 0x40, 0x4d};
  ck_assert_int_eq(tt_sigv4_derive_key(SUITE_SECRET, "20120215", "us-east-1", "iam", key, NULL), 0);
  ck_assert_mem_eq(key, want, sizeof want);
}
END_TEST

/* Derives the documented key 200 times; returns how many came out wrong. */
static void *derive_many(void *arg) {
  static const unsigned char want[TT_SIGV4_KEY_LEN] = {
      0xf4, 0x78, 0x0e, 0x2d, 0x9f, 0x65, 0xfa, 0x89, 0x5f, 0x9c, 0x67, 0xb3, 0x2c, 0xe1, 0xba, 0xf0,
      0xb0, 0xd8, 0xa4, 0x35, 0x05, 0xa0, 0x00, 0xa1, 0xa9, 0xe0, 0x90, 0xd4, 0x14, 0xdb, 0x40, 0x4d};
  size_t *wrong = arg;
  for (int i = 0; i < 200; i++) {
    unsigned char key[TT_SIGV4_KEY_LEN];
    if (tt_sigv4_derive_key(SUITE_SECRET, "20120215", "us-east-1", "iam", key, NULL) != 0 ||
        memcmp(key, want, sizeof want) != 0)
      (*wrong)++;
  }
  return NULL;
}

START_TEST(test_threads_share_the_fetched_algorithms) {
  /* The HMAC and SHA-256 implementations are fetched once per process
   * (each test runs in a fresh fork, so these threads race on the first
   * fetch) and shared: signing stays correct from several threads. */
  pthread_t t[4];
  size_t wrong[4] = {0, 0, 0, 0};
  for (int i = 0; i < 4; i++)
    ck_assert_int_eq(pthread_create(&t[i], NULL, derive_many, &wrong[i]), 0);
  for (int i = 0; i < 4; i++) {
    ck_assert_int_eq(pthread_join(t[i], NULL), 0);
    ck_assert_uint_eq(wrong[i], 0);
  }
}
END_TEST

static void sign_cached(struct tt_sigv4_cache *cache, const char *secret, const char *region,
                        time_t when, char sig[TT_SIGV4_HEX_LEN + 1]) {
  struct tt_sigv4_request req = simple_req("GET", "/");
  struct tt_sigv4_credentials creds = {SUITE_AKID, secret, NULL};
  struct tt_sigv4_config cfg = {region, "service", 0, cache};
  struct tt_sigv4_result out;
  struct tt_error err;
  ck_assert_int_eq(tt_sigv4_sign(&req, &creds, &cfg, when, &out, &err), 0);
  memcpy(sig, out.signature, TT_SIGV4_HEX_LEN + 1);
  tt_sigv4_result_free(&out);
}

START_TEST(test_cache_derives_once_per_day) {
  struct tt_sigv4_cache cache;
  char a[65], b[65], c[65], nocache[65];
  tt_sigv4_cache_init(&cache);
  sign_cached(&cache, SUITE_SECRET, "us-east-1", SUITE_TIME, a);
  sign_cached(&cache, SUITE_SECRET, "us-east-1", SUITE_TIME + 3600, b);
  ck_assert_uint_eq(cache.derivations, 1);
  ck_assert_str_eq(a, "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
  /* An hour later the signature differs (x-amz-date) but the key is reused. */
  ck_assert_str_ne(a, b);
  sign_cached(NULL, SUITE_SECRET, "us-east-1", SUITE_TIME + 3600, nocache);
  ck_assert_str_eq(b, nocache);
  /* Another region is another key, and both stay cached. */
  sign_cached(&cache, SUITE_SECRET, "eu-west-1", SUITE_TIME, c);
  ck_assert_uint_eq(cache.derivations, 2);
  sign_cached(&cache, SUITE_SECRET, "us-east-1", SUITE_TIME, c);
  ck_assert_uint_eq(cache.derivations, 2);
  ck_assert_str_eq(a, c);
  /* A rotated secret misses even on the same day and scope. */
  sign_cached(&cache, "another-secret", "us-east-1", SUITE_TIME, c);
  ck_assert_uint_eq(cache.derivations, 3);
  ck_assert_str_ne(a, c);
  /* The next day derives again, and yesterday's keys are wiped. */
  sign_cached(&cache, SUITE_SECRET, "us-east-1", SUITE_TIME + 86400, c);
  ck_assert_uint_eq(cache.derivations, 4);
  size_t used = 0;
  for (size_t i = 0; i < TT_SIGV4_CACHE_SLOTS; i++)
    used += cache.slots[i].used != 0;
  ck_assert_uint_eq(used, 1);
  tt_sigv4_cache_clear(&cache);
  static const struct tt_sigv4_cache_entry zero;
  for (size_t i = 0; i < TT_SIGV4_CACHE_SLOTS; i++)
    ck_assert_mem_eq(&cache.slots[i], &zero, sizeof zero);
  ck_assert_ptr_null(cache.md);
  ck_assert_uint_eq(cache.derivations, 4);
  /* A cleared cache is still usable: it derives and caches again. */
  sign_cached(&cache, SUITE_SECRET, "us-east-1", SUITE_TIME, c);
  ck_assert_str_eq(a, c);
  ck_assert_uint_eq(cache.derivations, 5);
  tt_sigv4_cache_clear(&cache);
  tt_sigv4_cache_clear(&cache); /* idempotent */
}
END_TEST

static size_t slots_used(const struct tt_sigv4_cache *cache) {
  size_t used = 0;
  for (size_t i = 0; i < TT_SIGV4_CACHE_SLOTS; i++)
    used += cache->slots[i].used != 0;
  return used;
}

START_TEST(test_cache_matches_fresh_signatures) {
  /* Each step signs through the cache and without it (a fresh derivation
   * and fresh contexts): the two must agree byte for byte, across a change
   * of date, of region and of secret. `derives` says whether the step must
   * miss the cache. */
  static const struct {
    const char *secret, *region;
    time_t when;
    int derives;
  } steps[] = {
      {SUITE_SECRET, "us-east-1", SUITE_TIME, 1},
      {SUITE_SECRET, "us-east-1", SUITE_TIME + 1, 0},
      /* 23:59:59 then 00:00:00: the date changes, the key with it. */
      {SUITE_SECRET, "us-east-1", (time_t)1440979199, 0},
      {SUITE_SECRET, "us-east-1", (time_t)1440979200, 1},
      {SUITE_SECRET, "us-east-1", (time_t)1440979201, 0},
      {SUITE_SECRET, "eu-west-1", (time_t)1440979202, 1},
      {SUITE_SECRET, "us-east-1", (time_t)1440979203, 0},
      /* Credentials rotate: the new secret derives its own key... */
      {"rotated/Secret+Key0123456789EXAMPLEKEY", "us-east-1", (time_t)1440979204, 1},
      {"rotated/Secret+Key0123456789EXAMPLEKEY", "us-east-1", (time_t)1440979205, 0},
      /* ...and the old one is not answered from the rotated slot. */
      {SUITE_SECRET, "us-east-1", (time_t)1440979206, 1},
      {SUITE_SECRET, "eu-west-1", (time_t)1440979207, 0},
  };
  struct tt_sigv4_cache cache;
  char cached[65], fresh[65];
  uint64_t want = 0;
  tt_sigv4_cache_init(&cache);
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
    sign_cached(&cache, steps[i].secret, steps[i].region, steps[i].when, cached);
    sign_cached(NULL, steps[i].secret, steps[i].region, steps[i].when, fresh);
    ck_assert_msg(strcmp(cached, fresh) == 0, "step %zu: cached %s, fresh %s", i, cached, fresh);
    want += (uint64_t)steps[i].derives;
    ck_assert_msg(cache.derivations == want, "step %zu: %llu derivations, want %llu", i,
                  (unsigned long long)cache.derivations, (unsigned long long)want);
  }
  /* Left: one slot per region. The rotations replaced the us-east-1 slot
   * each time instead of keeping the old secret's key beside the new one. */
  ck_assert_uint_eq(slots_used(&cache), 2);
  tt_sigv4_cache_clear(&cache);
}
END_TEST

START_TEST(test_rotated_secret_is_not_reused) {
  /* Two secrets that differ in their last byte: a cache keyed on a prefix,
   * a length or a pointer would hand the first key to the second. */
  char secret[] = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
  char first[65], second[65], fresh[65];
  struct tt_sigv4_cache cache;
  tt_sigv4_cache_init(&cache);
  sign_cached(&cache, secret, "us-east-1", SUITE_TIME, first);
  secret[sizeof secret - 2] = 'Z'; /* rotated in place, same pointer and length */
  sign_cached(&cache, secret, "us-east-1", SUITE_TIME, second);
  sign_cached(NULL, secret, "us-east-1", SUITE_TIME, fresh);
  ck_assert_str_ne(first, second);
  ck_assert_str_eq(second, fresh);
  ck_assert_uint_eq(cache.derivations, 2);
  ck_assert_uint_eq(slots_used(&cache), 1);
  tt_sigv4_cache_clear(&cache);
}
END_TEST

START_TEST(test_cache_evicts_least_recently_used) {
  static const char *const regions[] = {"r-1", "r-2", "r-3", "r-4", "r-5"};
  struct tt_sigv4_cache cache;
  char sig[65];
  tt_sigv4_cache_init(&cache);
  for (size_t i = 0; i < 4; i++)
    sign_cached(&cache, SUITE_SECRET, regions[i], SUITE_TIME, sig);
  sign_cached(&cache, SUITE_SECRET, regions[0], SUITE_TIME, sig); /* r-1 is now fresh */
  ck_assert_uint_eq(cache.derivations, 4);
  sign_cached(&cache, SUITE_SECRET, regions[4], SUITE_TIME, sig); /* evicts r-2 */
  ck_assert_uint_eq(cache.derivations, 5);
  sign_cached(&cache, SUITE_SECRET, regions[0], SUITE_TIME, sig);
  ck_assert_uint_eq(cache.derivations, 5);
  sign_cached(&cache, SUITE_SECRET, regions[1], SUITE_TIME, sig);
  ck_assert_uint_eq(cache.derivations, 6);
  tt_sigv4_cache_clear(&cache);
}
END_TEST

/* ---- time ---- */

START_TEST(test_amz_date) {
  char d[TT_SIGV4_AMZ_DATE_LEN + 1];
  ck_assert_int_eq(tt_sigv4_amz_date(SUITE_TIME, d), 0);
  ck_assert_str_eq(d, "20150830T123600Z");
  ck_assert_int_eq(tt_sigv4_amz_date(0, d), 0);
  ck_assert_str_eq(d, "19700101T000000Z");
  ck_assert_int_eq(tt_sigv4_amz_date((time_t)951782400, d), 0); /* leap day 2000 */
  ck_assert_str_eq(d, "20000229T000000Z");
  ck_assert_int_eq(tt_sigv4_amz_date((time_t)-1, d), -1);
  ck_assert_str_eq(d, "");
  ck_assert_int_eq(tt_sigv4_amz_date((time_t)4107542399, d), 0); /* 2100 is not a leap year */
  ck_assert_str_eq(d, "21000228T235959Z");
  ck_assert_int_eq(tt_sigv4_amz_date((time_t)4107542400, d), 0);
  ck_assert_str_eq(d, "21000301T000000Z");
  ck_assert_int_eq(tt_sigv4_amz_date((time_t)253402300799LL, d), 0);
  ck_assert_str_eq(d, "99991231T235959Z");
  ck_assert_int_eq(tt_sigv4_amz_date((time_t)253402300800LL, d), -1);
  ck_assert_str_eq(d, "");
}
END_TEST

START_TEST(test_amz_date_agrees_with_gmtime) {
  /* The signer formats dates with arithmetic; from 1970 to 9999, one time
   * a week (a second earlier in the day each week, so the time of day is
   * swept too) must read as gmtime_r + strftime read it. Plain checks in the
   * loop: a ck_assert per iteration would cost more than the work. */
  char got[TT_SIGV4_AMZ_DATE_LEN + 1], want[TT_SIGV4_AMZ_DATE_LEN + 1];
  long long bad = -1;
  for (long long t = 0; t <= 253402300799LL && bad < 0; t += 6 * 86400 + 86399) {
    struct tm tm;
    time_t now = (time_t)t;
    if (gmtime_r(&now, &tm) == NULL ||
        strftime(want, sizeof want, "%Y%m%dT%H%M%SZ", &tm) != TT_SIGV4_AMZ_DATE_LEN ||
        tt_sigv4_amz_date(now, got) != 0 || strcmp(got, want) != 0)
      bad = t;
  }
  ck_assert_msg(bad < 0, "t=%lld: got %s want %s", bad, got, want);
}
END_TEST

/* ---- errors ---- */

struct bad_case {
  const char *field;
  struct tt_sigv4_request req;
  struct tt_sigv4_credentials creds;
  const char *region;
};

START_TEST(test_errors_name_the_field_not_the_value) {
  static const struct tt_sigv4_header no_host[] = {{"Content-Type", "x"}};
  static const struct tt_sigv4_header crlf[] = {{"Host", "h"}, {"X-Evil", "a\r\nx-amz-date:1"}};
  static const struct tt_sigv4_header bad_name[] = {{"Host", "h"}, {"Bad Name", "v"}};
  const struct tt_sigv4_credentials good = {SUITE_AKID, SUITE_SECRET, NULL};
  const struct bad_case cases[] = {
      {"headers", {.method = "GET", .headers = no_host, .n_headers = 1}, good, "us-east-1"},
      {"headers", {.method = "GET", .headers = crlf, .n_headers = 2}, good, "us-east-1"},
      {"headers", {.method = "GET", .headers = bad_name, .n_headers = 2}, good, "us-east-1"},
      {"method", {.method = "GE T", .headers = host_only, .n_headers = 1}, good, "us-east-1"},
      {"secret_access_key",
       {.method = "GET", .headers = host_only, .n_headers = 1},
       {SUITE_AKID, "", NULL},
       "us-east-1"},
      {"access_key_id",
       {.method = "GET", .headers = host_only, .n_headers = 1},
       {"AKID/X", SUITE_SECRET, NULL},
       "us-east-1"},
      {"session_token",
       {.method = "GET", .headers = host_only, .n_headers = 1},
       {SUITE_AKID, SUITE_SECRET, "tok\nen"},
       "us-east-1"},
      {"region", {.method = "GET", .headers = host_only, .n_headers = 1}, good, "us/east"},
      {"region", {.method = "GET", .headers = host_only, .n_headers = 1}, good, NULL},
      {"body", {.method = "GET", .headers = host_only, .n_headers = 1, .body_len = 3}, good,
       "us-east-1"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct tt_sigv4_config cfg = {cases[i].region, "service", 0, NULL};
    struct tt_sigv4_result out;
    struct tt_error err;
    tt_error_clear(&err);
    int rc = tt_sigv4_sign(&cases[i].req, &cases[i].creds, &cfg, SUITE_TIME, &out, &err);
    ck_assert_msg(rc == -1, "case %zu signed", i);
    ck_assert_int_eq(err.code, TT_ERR_INTERNAL);
    ck_assert_msg(strcmp(err.field, cases[i].field) == 0, "case %zu: field %s", i, err.field);
    ck_assert_ptr_null(strstr(err.message, "wJalr"));
    ck_assert_ptr_null(strstr(err.message, "x-amz-date:1"));
    ck_assert_ptr_null(out.authorization);
    ck_assert_uint_eq(out.n_headers, 0);
    tt_sigv4_result_free(&out);
  }
}
END_TEST

START_TEST(test_time_out_of_range) {
  struct tt_sigv4_request req = simple_req("GET", "/");
  struct tt_sigv4_credentials creds = {SUITE_AKID, SUITE_SECRET, NULL};
  struct tt_sigv4_config cfg = {"us-east-1", "service", 0, NULL};
  struct tt_sigv4_result out;
  struct tt_error err;
  ck_assert_int_eq(tt_sigv4_sign(&req, &creds, &cfg, (time_t)-86400, &out, &err), -1);
  ck_assert_str_eq(err.field, "time");
}
END_TEST

static Suite *sigv4_suite(void) {
  Suite *s = suite_create("sigv4");
  TCase *tc = tcase_create("aws-test-suite");
  tcase_add_loop_test(tc, test_aws_suite_case, 0, N_SUITE);
  tcase_add_test(tc, test_get_vanilla_signature);
  tcase_add_test(tc, test_sts_token_is_signed_and_returned);
  suite_add_tcase(s, tc);
  tc = tcase_create("dynamodb");
  tcase_add_test(tc, test_dynamodb_getitem_session_token);
  suite_add_tcase(s, tc);
  tc = tcase_create("canonical");
  tcase_add_test(tc, test_canonical_path_rules);
  tcase_add_test(tc, test_headers_owned_by_signer_are_replaced);
  tcase_add_test(tc, test_intermediates_dropped_without_flag);
  suite_add_tcase(s, tc);
  tc = tcase_create("keys");
  tcase_add_test(tc, test_derive_key_aws_doc_example);
  tcase_add_test(tc, test_threads_share_the_fetched_algorithms);
  tcase_add_test(tc, test_cache_derives_once_per_day);
  tcase_add_test(tc, test_cache_matches_fresh_signatures);
  tcase_add_test(tc, test_rotated_secret_is_not_reused);
  tcase_add_test(tc, test_cache_evicts_least_recently_used);
  tcase_add_test(tc, test_amz_date);
  tcase_add_test(tc, test_amz_date_agrees_with_gmtime);
  suite_add_tcase(s, tc);
  tc = tcase_create("errors");
  tcase_add_test(tc, test_errors_name_the_field_not_the_value);
  tcase_add_test(tc, test_time_out_of_range);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(sigv4_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
