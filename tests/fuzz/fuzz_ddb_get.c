/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_ddb_get.c -- libFuzzer target for api/ddb_get.c, the DynamoDB
 * listener's one-pass GetItem reader, against the generic path it stands
 * in for. The first byte picks the Content-Type (bits 0-1: JSON 1.0,
 * application/json, text/plain, none) and whether the Authorization header
 * is well-formed (bit 2 clear) or lacks its Signature, bit 3 adds a
 * presigned request's query parameters and bit 4 drops the header; the rest is the
 * body of a POST with X-Amz-Target GetItem. Invariant (differential): when
 * the reader takes a request, the generic path (tt_ddbw_parse, every check
 * the listener makes, then its typed request, ddb_items.h) takes it too, with the
 * same table, ConsistentRead, Key (byte for byte as written back) and
 * Authorization parts; when it declines, nothing is left to free (ASan's
 * leak check). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/ddb_wire.h"
#include "tests/unit/ddb_get_oracle.h"
#include "util/buf.h"
#include "value/codec_ddb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The listener's generic path for a GetItem: 0 with *out when it crosses
 * the port typed, -1 when refused or sent as JSON. */
static int generic(const struct tt_ddbw_input *in, struct tt_ddbw_get *out,
                   struct tt_ddbw_auth *auth) {
  struct tt_ddbw_request req;
  struct tt_ddbw_error err;
  bool not_json;
  memset(out, 0, sizeof(*out));
  if (tt_ddbw_parse(in, &req, &err, &not_json) != 0)
    return -1;
  *auth = req.auth;
  int rc = -1;
  if (req.op == TT_DDB_GET_ITEM && tt_ddbw_check_request(req.op, req.body, &err) == 0 &&
      tt_ddbw_legacy(req.op, req.body, &err) == 0)
    rc = tt_test_generic_get(req.body, out);
  json_decref(req.body);
  return rc;
}

static char *written(const struct tt_av *key) {
  struct tt_buf b;
  tt_buf_init(&b, 0);
  if (tt_ddb_item_write(&b, key, 0) != 0 || tt_buf_append(&b, "", 1) != 0)
    abort();
  return tt_buf_steal(&b, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const types[] = {"application/x-amz-json-1.0", "application/json",
                                      "text/plain", NULL};
  if (size == 0)
    return 0;
  char *body = malloc(size); /* exactly the body: ASan sees any read past it */
  if (body == NULL)
    return 0;
  memcpy(body, data + 1, size - 1);
  struct tt_ddbw_input in = {
      .method = "POST",
      .content_type = types[data[0] & 3],
      .target = "DynamoDB_20120810.GetItem",
      .authorization = data[0] & 4 ? "AWS4-HMAC-SHA256 Credential=AKID/20260101/eu-west-3/"
                                     "dynamodb/aws4_request, SignedHeaders=host"
                                   : "AWS4-HMAC-SHA256 Credential=AKID/20260101/eu-west-3/"
                                     "dynamodb/aws4_request, SignedHeaders=host;x-amz-date, "
                                     "Signature=abcd",
      .amz_date = "20260101T000000Z",
      .query_auth = (data[0] & 8) != 0,
      .query = {"AWS4-HMAC-SHA256", "AKID/20260101/eu-west-3/dynamodb/aws4_request", "abcd",
                "host", "20260101T000000Z"},
      .body = body,
      .body_len = size - 1,
  };
  if (data[0] & 16)
    in.authorization = NULL;
  struct tt_ddbw_get fast, slow;
  struct tt_ddbw_auth fa, sa;
  if (tt_ddbw_fast_get(&in, &fast, &fa)) {
    if (generic(&in, &slow, &sa) != 0 || strcmp(fast.table, slow.table) != 0 ||
        fast.consistent_read != slow.consistent_read ||
        memcmp(&fa, &sa, sizeof(fa)) != 0)
      abort();
    char *a = written(&fast.key), *b = written(&slow.key);
    if (strcmp(a, b) != 0)
      abort();
    free(a);
    free(b);
    tt_av_free(&slow.key);
    tt_av_free(&fast.key);
  } else if (fast.key.type != 0 || fast.table[0] != '\0') {
    abort();
  }
  free(body);
  return 0;
}
