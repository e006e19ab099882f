/* SPDX-License-Identifier: Apache-2.0 */
/* sigv4_bench.c -- signs a DynamoDB GetItem N times, for callgrind's instruction counts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dynamodb/sigv4.h"

/* Signs what ddb.c signs for a GetItem (the same three headers, a ~100-byte
 * body, the backend's key cache, one second later each time, as a busy
 * backend would), then frees the result. One warm-up signature runs before
 * the loop, so with N = 0 the program does all start-up work (algorithm
 * fetch, key derivation) and (Ir(N) - Ir(0)) / N under callgrind is the cost
 * of one more signature:
 *
 *   make bench/sigv4_bench
 *   valgrind --tool=callgrind --callgrind-out-file=/dev/null bench/sigv4_bench 0
 *   valgrind --tool=callgrind --callgrind-out-file=/dev/null bench/sigv4_bench 2000
 *
 * "nocache" as the second argument signs without the cache (derivation on
 * every call). The last signature is printed so two builds can be compared
 * byte for byte. */
int main(int argc, char **argv) {
  static const char body[] =
      "{\"TableName\":\"Orders\",\"Key\":{\"pk\":{\"S\":\"ORDER#1\"},\"sk\":{\"S\":\"ITEM#42\"}}}";
  static const struct tt_sigv4_header hdrs[] = {
      {"Host", "dynamodb.eu-west-1.amazonaws.com"},
      {"Content-Type", "application/x-amz-json-1.0"},
      {"X-Amz-Target", "DynamoDB_20120810.GetItem"}};
  struct tt_sigv4_request req = {.method = "POST", .path = "/", .headers = hdrs, .n_headers = 3,
                                 .body = body, .body_len = sizeof body - 1};
  struct tt_sigv4_credentials creds = {"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                                       NULL};
  struct tt_sigv4_cache cache;
  struct tt_sigv4_config cfg = {"eu-west-1", "dynamodb", 0, &cache};
  struct tt_sigv4_result out;
  struct tt_error err;
  char last[TT_SIGV4_HEX_LEN + 1] = "";
  long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
  time_t when = (time_t)1440938160; /* 20150830T123600Z */

  if (argc > 2 && strcmp(argv[2], "nocache") == 0)
    cfg.cache = NULL;
  tt_sigv4_cache_init(&cache);
  for (long i = -1; i < n; i++) {
    if (tt_sigv4_sign(&req, &creds, &cfg, when + i + 1, &out, &err) != 0) {
      fprintf(stderr, "sigv4_bench: %s\n", err.message);
      return EXIT_FAILURE;
    }
    memcpy(last, out.signature, sizeof last);
    tt_sigv4_result_free(&out);
  }
  tt_sigv4_cache_clear(&cache);
  printf("%ld signatures, last %s, %llu key derivations\n", n + 1, last,
         (unsigned long long)cache.derivations);
  return EXIT_SUCCESS;
}
