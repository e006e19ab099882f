/* SPDX-License-Identifier: Apache-2.0 */
/* envelope.h -- TableTheory's encrypted-attribute envelope (v1), byte-compatible
 * with its Go source (internal/encryption/service.go): pure, no I/O, no KMS.
 *
 * A DMS attribute with `encryption: {v: 1}` is stored as the M value
 *   {"v": N "1", "edk": B <KMS CiphertextBlob>, "nonce": B <12 bytes>,
 *    "ct": B <AES-256-GCM ciphertext || 16-byte tag>}
 * whose plaintext is the attribute value in TableTheory's JSON form
 * ({"t":"S","s":"..."}, see tt_envelope_plaintext) and whose AAD is
 * "theorydb:encrypted:v1|attr=<attribute name>". The AES key is the 32-byte
 * data key KMS GenerateDataKey gave with the edk; KMS Decrypt of the edk
 * gives it back. Key material passed in is borrowed and never copied except
 * into OpenSSL's cipher context, which is freed (and wiped) before return. */
#ifndef TT_ORM_ENVELOPE_H
#define TT_ORM_ENVELOPE_H

#include <stddef.h>

#include "util/buf.h"
#include "util/error.h"
#include "value/av.h"

#define TT_ENVELOPE_KEY_BYTES 32
#define TT_ENVELOPE_NONCE_BYTES 12
#define TT_ENVELOPE_TAG_BYTES 16
/* Nesting accepted in a decrypted plaintext (DynamoDB allows 32 levels). */
#define TT_ENVELOPE_MAX_DEPTH 40

/* The borrowed parts of a parsed envelope (pointers into the M value). */
struct tt_envelope_parts {
  const unsigned char *edk;
  size_t edk_len;
  const unsigned char *nonce; /* TT_ENVELOPE_NONCE_BYTES */
  const unsigned char *ct;    /* ciphertext followed by the tag */
  size_t ct_len;              /* >= TT_ENVELOPE_TAG_BYTES */
};

/* Appends the plaintext JSON of `v` as Go's encoding/json writes
 * TableTheory's avJSON: members in the order t, s, n, b, bool, l, m, ss,
 * ns, bs, null, each only for its type (empty l/m/ss/ns/bs left out, as
 * omitempty does), map keys sorted, <>& and U+2028/2029 escaped as \uXXXX.
 * Returns 0, or -1 when b's cap or memory ran out. */
int tt_envelope_plaintext(struct tt_buf *b, const struct tt_av *v);

/* Parses a plaintext JSON form back into *out (new value, caller frees):
 * Go's decoding rules (a missing s/n/b/bool reads as "", "0", empty, false).
 * Errors: InvalidEncryptedEnvelope naming `field` (the attribute), with a
 * message that never quotes the plaintext. Returns 0 or -1 (*out NULL). */
int tt_envelope_value_from_plaintext(const void *text, size_t len, const char *field,
                                     struct tt_av *out, struct tt_error *err);

/* Checks that `env` is a v1 envelope and points *out at its parts
 * (borrowed from env). Errors: InvalidEncryptedEnvelope naming `field`.
 * Returns 0 or -1. */
int tt_envelope_parse(const struct tt_av *env, const char *field, struct tt_envelope_parts *out,
                      struct tt_error *err);

/* Encrypts `v` (borrowed) for attribute `attr` with `key` and `nonce` and
 * builds the envelope M in *out (new value) carrying `edk`. Errors:
 * Internal (memory, OpenSSL). Returns 0 or -1 (*out NULL). */
int tt_envelope_seal(const struct tt_av *v, const char *attr, size_t attr_len,
                     const unsigned char key[TT_ENVELOPE_KEY_BYTES],
                     const unsigned char nonce[TT_ENVELOPE_NONCE_BYTES], const void *edk,
                     size_t edk_len, struct tt_av *out, struct tt_error *err);

/* Decrypts parsed parts for attribute `attr` with `key` into *out (new
 * value). A wrong key, AAD or tag is InvalidEncryptedEnvelope ("does not
 * authenticate"), as is a plaintext that is not the JSON form. Returns 0
 * or -1 (*out NULL). */
int tt_envelope_open(const struct tt_envelope_parts *p, const char *attr, size_t attr_len,
                     const unsigned char key[TT_ENVELOPE_KEY_BYTES], struct tt_av *out,
                     struct tt_error *err);

#endif
