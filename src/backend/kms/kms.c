/* SPDX-License-Identifier: Apache-2.0 */
/* kms.c -- AWS KMS GenerateDataKey and Decrypt over the dynamodb backend's
 * signed JSON transport. */
#include "backend/kms/kms.h"

#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dynamodb/ddb.h"
#include "value/base64.h"

int tt_kms_backend_new(uv_loop_t *loop, const struct tt_kms_options *opts,
                       struct tt_backend **out, struct tt_error *err) {
  struct tt_ddb_options o = {.service = TT_DDB_SERVICE_KMS,
                             .region = opts->region,
                             .endpoint = opts->endpoint,
                             .creds = opts->creds,
                             .http = opts->http,
                             .timeout_ms = opts->timeout_ms,
                             /* KMS answers are small: a data key and a blob. */
                             .max_response_bytes = 64 * 1024};
  return tt_ddb_backend_new(loop, &o, out, err);
}

json_t *tt_kms_generate_data_key_request(const char *key_id) {
  return json_pack("{s:s,s:s}", "KeyId", key_id, "KeySpec", "AES_256");
}

json_t *tt_kms_decrypt_request(const char *key_id, const void *edk, size_t edk_len) {
  struct tt_buf b;
  tt_buf_init(&b, 0);
  json_t *req = NULL;
  if (tt_base64_encode(&b, edk, edk_len, TT_BASE64_STD) == 0 && tt_buf_append(&b, "", 1) == 0)
    req = json_pack("{s:s,s:s}", "CiphertextBlob", b.data, "KeyId", key_id);
  tt_buf_free(&b);
  return req;
}

/* Decodes the base64 string member `k` into `out` (cap bytes); wipes the
 * member's text when `secret`. Returns the length or -1. */
static long member_b64(json_t *resp, const char *k, unsigned char *out, size_t cap, bool secret) {
  json_t *s = json_object_get(resp, k);
  if (!json_is_string(s))
    return -1;
  size_t n = json_string_length(s), got = 0;
  char *text = (char *)json_string_value(s); /* ours to wipe: the tree is the caller's copy */
  long rc = -1;
  if (TT_BASE64_DECODED_MAX(n) <= cap &&
      tt_base64_decode(text, n, TT_BASE64_STD, 0, out, &got) == 0)
    rc = (long)got;
  if (secret)
    OPENSSL_cleanse(text, n);
  return rc;
}

int tt_kms_data_key(json_t *resp, unsigned char key[TT_KMS_DATA_KEY_BYTES], struct tt_buf *edk,
                    struct tt_error *err) {
  unsigned char tmp[TT_BASE64_DECODED_MAX(44)]; /* 32 bytes are 44 characters */
  long n = member_b64(resp, "Plaintext", tmp, sizeof(tmp), true);
  int rc = -1;
  if (n != TT_KMS_DATA_KEY_BYTES)
    goto done;
  memcpy(key, tmp, TT_KMS_DATA_KEY_BYTES);
  if (edk != NULL) {
    json_t *blob = json_object_get(resp, "CiphertextBlob");
    size_t bl = json_is_string(blob) ? json_string_length(blob) : 0;
    unsigned char *raw = bl ? malloc(TT_BASE64_DECODED_MAX(bl)) : NULL;
    long m = raw ? member_b64(resp, "CiphertextBlob", raw, TT_BASE64_DECODED_MAX(bl), false) : -1;
    if (m > 0 && tt_buf_append(edk, raw, (size_t)m) == 0)
      rc = 0;
    free(raw);
  } else {
    rc = 0;
  }
done:
  OPENSSL_cleanse(tmp, sizeof(tmp));
  if (rc != 0) {
    OPENSSL_cleanse(key, TT_KMS_DATA_KEY_BYTES);
    tt_error_set(err, TT_ERR_BACKEND_UNAVAILABLE, NULL,
                 "KMS answered without a 32-byte data key and its ciphertext blob");
  }
  return rc;
}
