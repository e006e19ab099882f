/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_envelope.c -- libFuzzer target for TableTheory's encrypted-attribute
 * envelope as stored values and decrypted plaintexts reach it: the input is
 * read (1) as a stored value in DynamoDB JSON, checked by the envelope
 * parser and opened with a fixed key (it must fail cleanly unless it
 * authenticates), and (2) as a decrypted plaintext JSON form, which, when
 * it decodes, must seal and open back to an equal value. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "orm/envelope.h"
#include "value/codec_ddb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const unsigned char KEY[TT_ENVELOPE_KEY_BYTES] = {7};
static const unsigned char NONCE[TT_ENVELOPE_NONCE_BYTES] = {9};

static void as_stored(const uint8_t *data, size_t size) {
  json_error_t je;
  json_t *j = json_loadb((const char *)data, size, 0, &je);
  struct tt_av v, out;
  struct tt_error err;
  struct tt_envelope_parts p;
  if (j == NULL)
    return;
  if (tt_ddb_value_from_json(j, "v", &v, &err) == 0) {
    if (tt_envelope_parse(&v, "secret", &p, &err) == 0) {
      if (tt_envelope_open(&p, "secret", 6, KEY, &out, &err) == 0)
        tt_av_free(&out);
      else if (err.code != TT_ERR_INVALID_ENCRYPTED_ENVELOPE && err.code != TT_ERR_INTERNAL)
        abort();
    } else if (err.code != TT_ERR_INVALID_ENCRYPTED_ENVELOPE) {
      abort();
    }
    tt_av_free(&v);
  }
  json_decref(j);
}

static void as_plaintext(const uint8_t *data, size_t size) {
  struct tt_av v, env, back;
  struct tt_error err;
  struct tt_envelope_parts p;
  if (tt_envelope_value_from_plaintext(data, size, "secret", &v, &err) != 0) {
    if (err.code != TT_ERR_INVALID_ENCRYPTED_ENVELOPE && err.code != TT_ERR_INTERNAL)
      abort();
    return;
  }
  if (tt_envelope_seal(&v, "secret", 6, KEY, NONCE, "edk", 3, &env, &err) == 0) {
    if (tt_envelope_parse(&env, "secret", &p, &err) != 0 ||
        tt_envelope_open(&p, "secret", 6, KEY, &back, &err) != 0)
      abort(); /* what we seal we must open */
    if (!tt_av_equal(&v, &back))
      abort();
    tt_av_free(&back);
    tt_av_free(&env);
  }
  tt_av_free(&v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  as_stored(data, size);
  as_plaintext(data, size);
  return 0;
}
