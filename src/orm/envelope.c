/* SPDX-License-Identifier: Apache-2.0 */
/* envelope.c -- TableTheory's encrypted-attribute envelope (v1): the
 * plaintext JSON form of a value, AES-256-GCM with the attribute's AAD, and
 * the envelope M, byte-compatible with TableTheory's Go service. */
#include "orm/envelope.h"

#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "value/base64.h"

#define AAD_PREFIX "theorydb:encrypted:v1|attr="

static int oom(struct tt_error *err) {
  return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
}

static int bad(struct tt_error *err, const char *field, const char *why) {
  return tt_error_set(err, TT_ERR_INVALID_ENCRYPTED_ENVELOPE, field,
                      "attribute %s: the stored encrypted envelope is invalid: %s",
                      field ? field : "?", why);
}

/* ---- plaintext JSON (Go's encoding/json of avJSON) ------------------------ */

/* A JSON string as Go writes it with HTML escaping on (json.Marshal's
 * default): the deterministic envelope of another runtime must decrypt to
 * the same bytes we would have written. */
static int go_string(struct tt_buf *b, const char *s, size_t len) {
  return tt_buf_append(b, "\"", 1) || tt_buf_json_escape_as(b, s, len, true) ||
                 tt_buf_append(b, "\"", 1)
             ? -1
             : 0;
}

int tt_envelope_plaintext(struct tt_buf *b, const struct tt_av *v) {
  const char *t = tt_av_type_name(v->type);
  int r = tt_buf_puts(b, "{\"t\":") || go_string(b, t, strlen(t));
  switch (v->type) {
  case TT_AV_S:
  case TT_AV_N:
    r = r || tt_buf_puts(b, v->type == TT_AV_S ? ",\"s\":" : ",\"n\":") ||
        go_string(b, v->u.bytes, v->len);
    break;
  case TT_AV_B:
    r = r || tt_buf_puts(b, ",\"b\":") || tt_base64_write_av(b, v);
    break;
  case TT_AV_BOOL:
    r = r || tt_buf_puts(b, v->u.boolean ? ",\"bool\":true" : ",\"bool\":false");
    break;
  case TT_AV_NULL:
    r = r || tt_buf_puts(b, ",\"null\":true");
    break;
  case TT_AV_L:
    if (v->len == 0)
      break;
    r = r || tt_buf_puts(b, ",\"l\":[");
    for (size_t i = 0; i < v->len && !r; i++)
      r = (i && tt_buf_append(b, ",", 1)) || tt_envelope_plaintext(b, &v->u.elems[i]);
    r = r || tt_buf_append(b, "]", 1);
    break;
  case TT_AV_M:
    if (v->len == 0)
      break;
    /* Members are sorted by name bytes, as Go sorts map keys. */
    r = r || tt_buf_puts(b, ",\"m\":{");
    for (size_t i = 0; i < v->len && !r; i++) {
      const struct tt_av_member *mb = &v->u.members[i];
      r = (i && tt_buf_append(b, ",", 1)) || go_string(b, mb->name, mb->name_len) ||
          tt_buf_append(b, ":", 1) || tt_envelope_plaintext(b, &mb->value);
    }
    r = r || tt_buf_append(b, "}", 1);
    break;
  case TT_AV_SS:
  case TT_AV_NS:
  case TT_AV_BS:
    if (v->len == 0)
      break;
    r = r || tt_buf_puts(b, v->type == TT_AV_SS   ? ",\"ss\":["
                            : v->type == TT_AV_NS ? ",\"ns\":["
                                                  : ",\"bs\":[");
    for (size_t i = 0; i < v->len && !r; i++) {
      const struct tt_av *e = &v->u.elems[i];
      r = (i && tt_buf_append(b, ",", 1)) ||
          (v->type == TT_AV_BS ? tt_base64_write_av(b, e) : go_string(b, e->u.bytes, e->len));
    }
    r = r || tt_buf_append(b, "]", 1);
    break;
  }
  return r || tt_buf_append(b, "}", 1) ? -1 : 0;
}

/* ---- plaintext back to a value ------------------------------------------- */

/* A member that must be a string when present; NULL when absent or null. */
static int member_string(const json_t *o, const char *k, const char **s, size_t *n) {
  const json_t *x = json_object_get(o, k);
  *s = NULL;
  *n = 0;
  if (x == NULL || json_is_null(x))
    return 0;
  if (!json_is_string(x))
    return -1;
  *s = json_string_value(x);
  *n = json_string_length(x);
  return 0;
}

static int from_form(const json_t *o, int depth, const char *field, struct tt_av *out,
                     struct tt_error *err);

/* Decodes an "ss"/"ns"/"bs"/"l" array member into a list value of `type`. */
static int from_array(const json_t *o, const char *k, enum tt_av_type type, int depth,
                      const char *field, struct tt_av *out, struct tt_error *err) {
  const json_t *a = json_object_get(o, k);
  size_t n = json_is_array(a) ? json_array_size(a) : 0;
  if (a != NULL && !json_is_null(a) && !json_is_array(a))
    return bad(err, field, "a list member is not an array");
  if (tt_av_list(out, type, n) != 0)
    return oom(err);
  for (size_t i = 0; i < n; i++) {
    const json_t *e = json_array_get(a, i);
    struct tt_av *slot = &out->u.elems[i];
    if (type == TT_AV_L) {
      if (from_form(e, depth + 1, field, slot, err) != 0)
        goto fail;
      continue;
    }
    if (!json_is_string(e)) {
      bad(err, field, "a set member is not a string");
      goto fail;
    }
    const char *s = json_string_value(e);
    size_t sl = json_string_length(e);
    /* 0, 1 (not a member of the set's type) or -1 (memory) */
    int rc = type == TT_AV_SS   ? (tt_av_string(slot, s, sl) ? -1 : 0)
             : type == TT_AV_NS ? (tt_av_number_text(slot, s, sl, field, NULL) ? 1 : 0)
                                : tt_base64_decode_av(slot, s, sl, TT_BASE64_STD, 0);
    if (rc < 0) {
      oom(err);
      goto fail;
    }
    if (rc != 0) {
      bad(err, field, type == TT_AV_NS ? "a number set member is not a number"
                                       : "a binary set member is not base64");
      goto fail;
    }
  }
  if (type != TT_AV_L && tt_av_set_finish(out, field, NULL) != 0) {
    bad(err, field, "a set is empty or has duplicates");
    goto fail;
  }
  return 0;
fail:
  tt_av_free(out);
  return -1;
}

static int from_form(const json_t *o, int depth, const char *field, struct tt_av *out,
                     struct tt_error *err) {
  const char *s;
  size_t n;
  tt_av_null(out);
  if (depth > TT_ENVELOPE_MAX_DEPTH)
    return bad(err, field, "the value is nested too deeply");
  if (!json_is_object(o) || member_string(o, "t", &s, &n) != 0 || s == NULL)
    return bad(err, field, "the plaintext is not a typed value");
  enum tt_av_type t = tt_av_type_parse(s, n);
  switch (t) {
  case TT_AV_S:
  case TT_AV_N:
  case TT_AV_B: {
    const char *k = t == TT_AV_S ? "s" : t == TT_AV_N ? "n" : "b";
    if (member_string(o, k, &s, &n) != 0)
      return bad(err, field, "a scalar member is not a string");
    if (t == TT_AV_S)
      return tt_av_string(out, s ? s : "", n) ? oom(err) : 0;
    if (t == TT_AV_N) {
      if (s == NULL) /* Go reads a missing n as "0" */
        s = "0", n = 1;
      return tt_av_number_text(out, s, n, field, NULL) ? bad(err, field, "n is not a number") : 0;
    }
    int rc = tt_base64_decode_av(out, s ? s : "", n, TT_BASE64_STD, 0);
    return rc < 0 ? oom(err) : rc ? bad(err, field, "b is not base64") : 0;
  }
  case TT_AV_BOOL: {
    const json_t *x = json_object_get(o, "bool");
    if (x != NULL && !json_is_null(x) && !json_is_boolean(x))
      return bad(err, field, "bool is not a boolean");
    tt_av_bool(out, x != NULL && json_is_true(x));
    return 0;
  }
  case TT_AV_NULL:
    return 0;
  case TT_AV_L:
    return from_array(o, "l", TT_AV_L, depth, field, out, err);
  case TT_AV_SS:
    return from_array(o, "ss", TT_AV_SS, depth, field, out, err);
  case TT_AV_NS:
    return from_array(o, "ns", TT_AV_NS, depth, field, out, err);
  case TT_AV_BS:
    return from_array(o, "bs", TT_AV_BS, depth, field, out, err);
  case TT_AV_M: {
    const json_t *m = json_object_get(o, "m");
    if (m != NULL && !json_is_null(m) && !json_is_object(m))
      return bad(err, field, "m is not an object");
    if (tt_av_map(out, m ? json_object_size(m) : 0) != 0)
      return oom(err);
    size_t i = 0;
    const char *k;
    size_t kl;
    json_t *x;
    if (m != NULL && json_is_object(m)) {
      json_object_keylen_foreach((json_t *)m, k, kl, x) {
        struct tt_av_member *mb = &out->u.members[i];
        if (tt_av_member_name(mb, k, kl) != 0) {
          tt_av_free(out);
          return oom(err);
        }
        i++;
        if (from_form(x, depth + 1, field, &mb->value, err) != 0) {
          tt_av_free(out);
          return -1;
        }
      }
    }
    if (tt_av_map_finish(out, field, NULL) != 0) {
      tt_av_free(out);
      return bad(err, field, "a map has duplicate names");
    }
    return 0;
  }
  }
  return bad(err, field, "the plaintext has an unknown type");
}

int tt_envelope_value_from_plaintext(const void *text, size_t len, const char *field,
                                     struct tt_av *out, struct tt_error *err) {
  json_error_t je;
  tt_av_null(out);
  json_t *o = json_loadb(text, len, JSON_ALLOW_NUL, &je);
  if (o == NULL)
    return bad(err, field, "the plaintext is not JSON");
  int rc = from_form(o, 0, field, out, err);
  json_decref(o);
  return rc;
}

/* ---- the envelope M ------------------------------------------------------ */

int tt_envelope_parse(const struct tt_av *env, const char *field, struct tt_envelope_parts *out,
                      struct tt_error *err) {
  memset(out, 0, sizeof(*out));
  if (env->type != TT_AV_M)
    return bad(err, field, "expected an envelope map");
  const struct tt_av *v = tt_av_map_get(env, "v");
  /* Go compares the N's text with "1"; our stored N text is canonical. */
  if (v == NULL || v->type != TT_AV_N || v->len != 1 || v->u.bytes[0] != '1')
    return bad(err, field, "unsupported envelope version");
  const struct tt_av *edk = tt_av_map_get(env, "edk");
  const struct tt_av *nonce = tt_av_map_get(env, "nonce");
  const struct tt_av *ct = tt_av_map_get(env, "ct");
  if (edk == NULL || edk->type != TT_AV_B || edk->len == 0)
    return bad(err, field, "missing encrypted data key");
  /* Go's GCM would panic on another nonce length; refuse it here. */
  if (nonce == NULL || nonce->type != TT_AV_B || nonce->len != TT_ENVELOPE_NONCE_BYTES)
    return bad(err, field, "missing or malformed nonce");
  if (ct == NULL || ct->type != TT_AV_B || ct->len < TT_ENVELOPE_TAG_BYTES)
    return bad(err, field, "missing or short ciphertext");
  out->edk = (const unsigned char *)edk->u.bytes;
  out->edk_len = edk->len;
  out->nonce = (const unsigned char *)nonce->u.bytes;
  out->ct = (const unsigned char *)ct->u.bytes;
  out->ct_len = ct->len;
  return 0;
}

/* AAD of attribute `attr`, in `aad` (cap bytes) or a malloc'd buffer for a
 * long name; *len set. Returns the buffer or NULL (out of memory). */
static unsigned char *aad_for(const char *attr, size_t attr_len, unsigned char *stack,
                              size_t cap, size_t *len) {
  size_t pl = sizeof(AAD_PREFIX) - 1;
  *len = pl + attr_len;
  unsigned char *a = *len <= cap ? stack : malloc(*len);
  if (a == NULL)
    return NULL;
  memcpy(a, AAD_PREFIX, pl);
  memcpy(a + pl, attr, attr_len);
  return a;
}

/* One AES-256-GCM pass. enc: out = in's ciphertext, tag written to `tag`;
 * !enc: out = plaintext, `tag` checked. Returns 0, -1 (OpenSSL/memory) or
 * 1 (authentication failed). */
static int gcm(int enc, const unsigned char *key, const unsigned char *nonce,
               const unsigned char *aad, size_t aad_len, const unsigned char *in, size_t n,
               unsigned char *out, unsigned char *tag) {
  EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
  int l = 0, rc = -1;
  if (c == NULL || n > (size_t)INT32_MAX || aad_len > (size_t)INT32_MAX)
    goto done;
  if (EVP_CipherInit_ex(c, EVP_aes_256_gcm(), NULL, NULL, NULL, enc) != 1 ||
      EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, TT_ENVELOPE_NONCE_BYTES, NULL) != 1 ||
      EVP_CipherInit_ex(c, NULL, NULL, key, nonce, enc) != 1 ||
      EVP_CipherUpdate(c, NULL, &l, aad, (int)aad_len) != 1 ||
      (n > 0 && EVP_CipherUpdate(c, out, &l, in, (int)n) != 1))
    goto done;
  if (!enc && EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, TT_ENVELOPE_TAG_BYTES, tag) != 1)
    goto done;
  if (EVP_CipherFinal_ex(c, out + (n > 0 ? l : 0), &l) != 1) {
    rc = enc ? -1 : 1;
    goto done;
  }
  if (enc && EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, TT_ENVELOPE_TAG_BYTES, tag) != 1)
    goto done;
  rc = 0;
done:
  EVP_CIPHER_CTX_free(c); /* cleanses the key schedule */
  return rc;
}

static int put_binary(struct tt_av *m, const char *name, const void *p, size_t n) {
  struct tt_av v;
  if (tt_av_binary(&v, p, n) != 0)
    return -1;
  if (tt_av_map_put(m, name, strlen(name), &v) != 0) {
    tt_av_free(&v);
    return -1;
  }
  return 0;
}

int tt_envelope_seal(const struct tt_av *v, const char *attr, size_t attr_len,
                     const unsigned char key[TT_ENVELOPE_KEY_BYTES],
                     const unsigned char nonce[TT_ENVELOPE_NONCE_BYTES], const void *edk,
                     size_t edk_len, struct tt_av *out, struct tt_error *err) {
  struct tt_buf pt;
  unsigned char aad_stack[128], *aad = NULL, *ct = NULL;
  size_t aad_len = 0;
  int rc = -1;
  tt_buf_init(&pt, 0);
  tt_av_null(out);
  if (tt_envelope_plaintext(&pt, v) != 0 ||
      (aad = aad_for(attr, attr_len, aad_stack, sizeof(aad_stack), &aad_len)) == NULL ||
      (ct = malloc(pt.len + TT_ENVELOPE_TAG_BYTES)) == NULL) {
    oom(err);
    goto done;
  }
  if (gcm(1, key, nonce, aad, aad_len, (const unsigned char *)pt.data, pt.len, ct,
          ct + pt.len) != 0) {
    tt_error_set(err, TT_ERR_INTERNAL, attr, "AES-GCM encryption failed");
    goto done;
  }
  struct tt_av m, one;
  if (tt_av_map(&m, 0) != 0) {
    oom(err);
    goto done;
  }
  if (tt_av_number_int(&one, 1) != 0 || tt_av_map_put(&m, "v", 1, &one) != 0 ||
      put_binary(&m, "edk", edk, edk_len) != 0 ||
      put_binary(&m, "nonce", nonce, TT_ENVELOPE_NONCE_BYTES) != 0 ||
      put_binary(&m, "ct", ct, pt.len + TT_ENVELOPE_TAG_BYTES) != 0) {
    tt_av_free(&one);
    tt_av_free(&m);
    oom(err);
    goto done;
  }
  *out = m;
  rc = 0;
done:
  if (pt.data) /* the plaintext is the secret */
    OPENSSL_cleanse(pt.data, pt.alloc);
  tt_buf_free(&pt);
  free(ct);
  if (aad != aad_stack)
    free(aad);
  return rc;
}

int tt_envelope_open(const struct tt_envelope_parts *p, const char *attr, size_t attr_len,
                     const unsigned char key[TT_ENVELOPE_KEY_BYTES], struct tt_av *out,
                     struct tt_error *err) {
  unsigned char aad_stack[128], *aad = NULL, *pt = NULL, tag[TT_ENVELOPE_TAG_BYTES];
  size_t aad_len = 0, n = p->ct_len - TT_ENVELOPE_TAG_BYTES;
  int rc = -1;
  tt_av_null(out);
  memcpy(tag, p->ct + n, TT_ENVELOPE_TAG_BYTES);
  if ((aad = aad_for(attr, attr_len, aad_stack, sizeof(aad_stack), &aad_len)) == NULL ||
      (pt = malloc(n + 1)) == NULL) {
    oom(err);
    goto done;
  }
  int g = gcm(0, key, p->nonce, aad, aad_len, p->ct, n, pt, tag);
  if (g != 0) {
    if (g > 0)
      bad(err, attr, "the ciphertext does not authenticate (wrong key, attribute or data)");
    else
      tt_error_set(err, TT_ERR_INTERNAL, attr, "AES-GCM decryption failed");
    goto done;
  }
  rc = tt_envelope_value_from_plaintext(pt, n, attr, out, err);
done:
  if (pt != NULL) {
    OPENSSL_cleanse(pt, n + 1);
    free(pt);
  }
  if (aad != aad_stack)
    free(aad);
  return rc;
}
