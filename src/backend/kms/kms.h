/* SPDX-License-Identifier: Apache-2.0 */
/* kms.h -- AWS KMS for encrypted attributes: a backend serving the port's
 * TT_KMS_GENERATE_DATA_KEY and TT_KMS_DECRYPT operations (JSON 1.1,
 * TrentService.<Op>, SigV4 service "kms") on the dynamodb backend's HTTP
 * client, signer and credentials, plus the requests and answers of those
 * two operations. Knows nothing of models or envelopes.
 *
 * Key material: the 32-byte data keys returned by tt_kms_data_key are the
 * caller's to wipe (OPENSSL_cleanse) as soon as they are used; the answer
 * trees they came from are wiped here before they are released, and the
 * HTTP layer's copy of the answer text is wiped by the backend. Nothing
 * here logs a key, a plaintext or a ciphertext blob. */
#ifndef TT_BACKEND_KMS_KMS_H
#define TT_BACKEND_KMS_KMS_H

#include <jansson.h>
#include <stddef.h>
#include <uv.h>

#include "backend/backend.h"
#include "backend/dynamodb/credentials.h"
#include "backend/dynamodb/http.h"
#include "util/buf.h"
#include "util/error.h"

#define TT_KMS_DATA_KEY_BYTES 32

struct tt_kms_options {
  const char *region;   /* required */
  const char *endpoint; /* NULL/"" = https://kms.<region>.amazonaws.com; moto in tests */
  struct tt_creds_provider *creds; /* borrowed, required */
  struct tt_http *http;            /* borrowed (shared with DynamoDB); NULL = own */
  uint64_t timeout_ms;             /* per attempt; 0 = 10000 */
};

/* Creates the KMS backend on `loop` (strings copied, creds/http borrowed).
 * Same lifetime rules as tt_ddb_backend_new: ops->close, run the loop,
 * ops->destroy. Returns 0 and *out, or -1 with *err (ValidationError
 * naming the bad option). */
int tt_kms_backend_new(uv_loop_t *loop, const struct tt_kms_options *opts,
                       struct tt_backend **out, struct tt_error *err);

/* GenerateDataKey {KeyId, KeySpec: AES_256}. New reference, NULL when out of memory. */
json_t *tt_kms_generate_data_key_request(const char *key_id);

/* Decrypt {CiphertextBlob: base64(edk), KeyId}. New reference, NULL when out of memory. */
json_t *tt_kms_decrypt_request(const char *key_id, const void *edk, size_t edk_len);

/* Reads a GenerateDataKey or Decrypt answer (borrowed; its Plaintext text is
 * wiped in place): the 32-byte Plaintext into `key`, and for
 * GenerateDataKey the CiphertextBlob appended to `edk` (NULL for Decrypt).
 * Errors: BackendUnavailable ("KMS answered without a 32-byte data key")
 * when a member is missing or malformed. Returns 0 or -1 (key wiped). */
int tt_kms_data_key(json_t *resp, unsigned char key[TT_KMS_DATA_KEY_BYTES], struct tt_buf *edk,
                    struct tt_error *err);

#endif
