/* SPDX-License-Identifier: Apache-2.0 */
/* sigv4.c -- AWS Signature Version 4 for DynamoDB requests. */
#include "backend/dynamodb/sigv4.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "util/buf.h"
#include "util/civil.h"

#define ALGORITHM "AWS4-HMAC-SHA256"
#define TERMINATOR "aws4_request"
/* Canonical requests are built from the backend's own headers; the cap only
 * guards against a runaway caller, as every buffer here must have one. */
#define CANON_CAP ((size_t)1 << 20)

static const char hex_lower[] = "0123456789abcdef";
static const char hex_upper[] = "0123456789ABCDEF";

/* Appends each string of a NULL-terminated list. Every text here is made of
 * known strings, so this replaces tt_buf_printf, whose vsnprintf (run twice
 * per call, to measure then to write) was a third of a signature's cost.
 * Returns 0, or -1 when the cap or memory ran out (`b` then holds a prefix:
 * callers drop the whole text). */
__attribute__((sentinel)) static int append_strs(struct tt_buf *b, ...) {
  va_list ap;
  int rc = 0;
  va_start(ap, b);
  for (const char *s = va_arg(ap, const char *); s && rc == 0; s = va_arg(ap, const char *))
    rc = tt_buf_append(b, s, strlen(s));
  va_end(ap);
  return rc;
}

/* ---- crypto: OpenSSL 3 EVP APIs only (HMAC_CTX and SHA256_Init are
 * deprecated there). ----
 *
 * Why the algorithms are fetched once: EVP_Q_mac(NULL, "HMAC", ...) fetches
 * the HMAC implementation and then SHA-256 by name on every call, and
 * EVP_Digest with EVP_sha256() fetches SHA-256 implicitly each time; a
 * request signs with three digests and one HMAC, and the fetches (name
 * lookups and locks in OpenSSL's method store) cost more than the hashing.
 * Fetched objects are immutable and may be shared between threads, so one
 * process-wide set is enough; it is fetched under pthread_once because
 * signing is pure and any thread may call it (today only the loop thread
 * does: the threadpool work of the credentials chain only reads files).
 * The HMAC context template has its digest set once; every HMAC context is
 * a duplicate of it (a context is not shareable). Contexts that carry state
 * from one signature to the next (the keyed kSigning HMAC, a SHA-256
 * context) belong to the caller's struct tt_sigv4_cache, not to this
 * process-wide set, so threads never share them. Freed at exit, before
 * OpenSSL's own cleanup (registered earlier, so run later), so leak
 * checkers see nothing. */
static struct {
  EVP_MD *sha256;
  EVP_MAC *hmac;
  EVP_MAC_CTX *hmac_sha256; /* template: HMAC with digest SHA256, no key */
} crypto;
static pthread_once_t crypto_once = PTHREAD_ONCE_INIT;

static void crypto_free(void) {
  EVP_MAC_CTX_free(crypto.hmac_sha256);
  EVP_MAC_free(crypto.hmac);
  EVP_MD_free(crypto.sha256);
  memset(&crypto, 0, sizeof crypto);
}

static void crypto_fetch(void) {
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                         OSSL_PARAM_construct_end()};
  crypto.sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
  crypto.hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
  if (crypto.hmac)
    crypto.hmac_sha256 = EVP_MAC_CTX_new(crypto.hmac);
  if (crypto.sha256 == NULL || crypto.hmac_sha256 == NULL ||
      EVP_MAC_CTX_set_params(crypto.hmac_sha256, params) != 1 || atexit(crypto_free) != 0)
    crypto_free(); /* every signature then fails with an internal error */
}

/* The fetched algorithms, or false when OpenSSL could not provide them. */
static bool crypto_ready(void) {
  return pthread_once(&crypto_once, crypto_fetch) == 0 && crypto.hmac_sha256 != NULL;
}

static void to_hex(const unsigned char *p, size_t n, char *out) {
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = hex_lower[p[i] >> 4];
    out[2 * i + 1] = hex_lower[p[i] & 15];
  }
  out[2 * n] = '\0';
}

/* SHA-256 of p[0..n). With `ctx` the digest runs on that context, reused
 * from call to call (no allocation after its first use); NULL means a
 * one-shot EVP_Digest. Returns 0 or -1. */
static int sha256(EVP_MD_CTX *ctx, const void *p, size_t n, unsigned char md[32]) {
  unsigned int len = 0;
  /* EVP wants a non-NULL pointer even for zero bytes. */
  const void *data = p ? p : "";
  if (!crypto_ready())
    return -1;
  if (ctx == NULL)
    return EVP_Digest(data, n, md, &len, crypto.sha256, NULL) == 1 && len == 32 ? 0 : -1;
  return EVP_DigestInit_ex2(ctx, crypto.sha256, NULL) == 1 && EVP_DigestUpdate(ctx, data, n) == 1 &&
                 EVP_DigestFinal_ex(ctx, md, &len) == 1 && len == 32
             ? 0
             : -1;
}

static int sha256_hex(EVP_MD_CTX *ctx, const void *p, size_t n, char out[TT_SIGV4_HEX_LEN + 1]) {
  unsigned char md[32];
  if (sha256(ctx, p, n, md) != 0)
    return -1;
  to_hex(md, sizeof md, out);
  return 0;
}

/* A new HMAC-SHA256 context, a duplicate of the template (so no digest
 * fetch), keyed with key[0..n); NULL when OpenSSL fails. EVP_MAC_CTX_free
 * releases it and cleanses the keyed state. */
static EVP_MAC_CTX *hmac_new(const void *key, size_t n) {
  EVP_MAC_CTX *ctx = crypto_ready() ? EVP_MAC_CTX_dup(crypto.hmac_sha256) : NULL;
  if (ctx != NULL && EVP_MAC_init(ctx, key, n, NULL) != 1) {
    EVP_MAC_CTX_free(ctx);
    ctx = NULL;
  }
  return ctx;
}

/* HMAC of msg[0..n) into out. `key` non-NULL rekeys `ctx` with
 * key[0..key_len) first; NULL reuses the key it has. Why reuse pays: HMAC
 * keeps the hashed inner and outer key pads in the context, and
 * EVP_MAC_init with a NULL key restarts from them ("just reinit" in
 * OpenSSL 3's HMAC provider), where a new context would duplicate three
 * digest states and hash both pads again. Returns 0 or -1. */
static int hmac_with(EVP_MAC_CTX *ctx, const void *key, size_t key_len, const void *msg, size_t n,
                     unsigned char out[32]) {
  size_t out_len = 0;
  return EVP_MAC_init(ctx, key, key_len, NULL) == 1 &&
                 EVP_MAC_update(ctx, (const unsigned char *)(msg ? msg : ""), n) == 1 &&
                 EVP_MAC_final(ctx, out, &out_len, 32) == 1 && out_len == 32
             ? 0
             : -1;
}

/* ---- character classes and percent-encoding ---- */

static bool is_unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         c == '-' || c == '.' || c == '_' || c == '~';
}

/* RFC 9110 token characters: what a method or header name may hold. */
static bool is_tchar(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static bool is_token(const char *s) {
  if (s == NULL || *s == '\0')
    return false;
  for (; *s; s++)
    if (!is_tchar((unsigned char)*s))
      return false;
  return true;
}

/* Header values may hold tabs and non-ASCII bytes but no CR, LF or other
 * controls: those would let a value forge extra canonical lines. */
static bool is_field_value(const char *s) {
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if ((c < 0x20 && c != '\t') || c == 0x7f)
      return false;
  }
  return true;
}

/* What may go into the credential scope: no '/', separators or controls. */
static bool is_scope_part(const char *s) {
  if (s == NULL || *s == '\0')
    return false;
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c <= 0x20 || c == 0x7f || c == '/' || c == ',' || c == '=')
      return false;
  }
  return true;
}

/* Appends s[0..n) percent-encoded as SigV4 wants: unreserved bytes as they
 * are, '/' as is when keep_slash, every other byte as %XX (upper case). */
static int append_encoded(struct tt_buf *b, const char *s, size_t n, bool keep_slash) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (is_unreserved(c) || (keep_slash && c == '/')) {
      if (tt_buf_append(b, &s[i], 1) != 0)
        return -1;
    } else {
      char esc[3] = {'%', hex_upper[c >> 4], hex_upper[c & 15]};
      if (tt_buf_append(b, esc, 3) != 0)
        return -1;
    }
  }
  return 0;
}

int tt_sigv4_form_append(struct tt_buf *b, const char *name, const char *value, size_t n) {
  return (b->len > 0 && tt_buf_append(b, "&", 1) != 0) || tt_buf_puts(b, name) != 0 ||
                 tt_buf_append(b, "=", 1) != 0 || append_encoded(b, value, n, false) != 0
             ? -1
             : 0;
}

/* ---- canonical URI ---- */

struct segment {
  size_t off, len;
};

/* The canonical path (of every service but S3, which none of ours is):
 * "." and ".." segments and empty segments removed (the suite's get-slashes
 * and normalize-path cases), a trailing slash kept, each segment encoded.
 * The path was sent encoded once, so this second encoding is the "double
 * encoding" AWS documents ('%' becomes %25). NULL or "" is "/". */
static int append_canonical_path(struct tt_buf *b, const char *path) {
  if (path == NULL)
    path = "";
  size_t n = strlen(path);
  struct segment *segs = malloc((n + 1) * sizeof *segs);
  int rc = -1;
  if (segs == NULL)
    return -1;
  size_t ns = 0;
  bool trailing = false;
  for (size_t i = 0; i <= n;) {
    size_t j = i;
    while (j < n && path[j] != '/')
      j++;
    size_t len = j - i;
    bool last = j >= n;
    const char *s = path + i;
    if (len == 0 || (len == 1 && s[0] == '.')) {
      trailing = last ? true : trailing;
    } else if (len == 2 && s[0] == '.' && s[1] == '.') {
      if (ns > 0)
        ns--;
      trailing = last ? true : trailing;
    } else {
      segs[ns].off = i;
      segs[ns].len = len;
      ns++;
      trailing = false;
    }
    i = j + 1;
  }
  if (tt_buf_puts(b, "/") != 0)
    goto fail;
  for (size_t k = 0; k < ns; k++) {
    if (k > 0 && tt_buf_puts(b, "/") != 0)
      goto fail;
    if (append_encoded(b, path + segs[k].off, segs[k].len, false) != 0)
      goto fail;
  }
  if (trailing && ns > 0 && tt_buf_puts(b, "/") != 0)
    goto fail;
  rc = 0;
fail:
  free(segs);
  return rc;
}

/* ---- canonical headers ---- */

struct chdr {
  char *name;   /* lower case */
  char *value;  /* trimmed, inner runs of blanks collapsed to one space */
  size_t order; /* input position: repeated names keep their order */
};

static int chdr_cmp(const void *a, const void *b) {
  const struct chdr *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  if (c != 0)
    return c;
  return x->order < y->order ? -1 : x->order > y->order;
}

static char *lower_dup(const char *s) {
  size_t n = strlen(s);
  char *d = malloc(n + 1);
  if (d == NULL)
    return NULL;
  for (size_t i = 0; i <= n; i++)
    d[i] = (s[i] >= 'A' && s[i] <= 'Z') ? (char)(s[i] - 'A' + 'a') : s[i];
  return d;
}

static char *value_dup(const char *s) {
  size_t n = strlen(s), o = 0;
  char *d = malloc(n + 1);
  if (d == NULL)
    return NULL;
  bool blank = false;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == ' ' || s[i] == '\t') {
      blank = o > 0; /* leading blanks are dropped */
      continue;
    }
    if (blank)
      d[o++] = ' ';
    blank = false;
    d[o++] = s[i];
  }
  d[o] = '\0'; /* trailing blanks were never written */
  return d;
}

struct header_set {
  struct chdr *h;
  size_t n;
};

static void header_set_free(struct header_set *hs) {
  for (size_t i = 0; i < hs->n; i++) {
    free(hs->h[i].name);
    if (hs->h[i].value) {
      /* Values include the session token. */
      OPENSSL_cleanse(hs->h[i].value, strlen(hs->h[i].value));
      free(hs->h[i].value);
    }
  }
  free(hs->h);
  hs->h = NULL;
  hs->n = 0;
}

static int header_add(struct header_set *hs, char *lname, const char *value) {
  struct chdr *c = &hs->h[hs->n];
  c->name = lname;
  c->value = value_dup(value);
  c->order = hs->n;
  hs->n++;
  return c->name && c->value ? 0 : -1;
}

/* Builds the sorted header set: the caller's headers (validated, minus the
 * ones the signer owns) plus x-amz-date and the token. */
static int build_headers(struct header_set *hs, const struct tt_sigv4_request *req,
                         const struct tt_sigv4_result *out, struct tt_error *err) {
  hs->n = 0;
  hs->h = calloc(req->n_headers + 2, sizeof *hs->h);
  if (hs->h == NULL)
    return tt_error_set(err, TT_ERR_INTERNAL, "sigv4", "out of memory");
  bool host = false;
  for (size_t i = 0; i < req->n_headers; i++) {
    const struct tt_sigv4_header *h = &req->headers[i];
    if (!is_token(h->name))
      return tt_error_set(err, TT_ERR_INTERNAL, "headers", "header %zu has an invalid name", i);
    if (h->value == NULL || !is_field_value(h->value))
      return tt_error_set(err, TT_ERR_INTERNAL, "headers",
                          "header %zu has a missing value or a control character", i);
    char *lname = lower_dup(h->name);
    if (lname == NULL)
      return tt_error_set(err, TT_ERR_INTERNAL, "sigv4", "out of memory");
    if (strcmp(lname, "authorization") == 0 || strcmp(lname, "x-amz-date") == 0 ||
        strcmp(lname, "x-amz-security-token") == 0) { /* the signer's own */
      free(lname);
      continue;
    }
    host = host || strcmp(lname, "host") == 0;
    if (header_add(hs, lname, h->value) != 0)
      return tt_error_set(err, TT_ERR_INTERNAL, "sigv4", "out of memory");
  }
  if (!host)
    return tt_error_set(err, TT_ERR_INTERNAL, "headers", "the Host header is required");
  if (header_add(hs, lower_dup("x-amz-date"), out->amz_date) != 0 ||
      (out->security_token &&
       header_add(hs, lower_dup("x-amz-security-token"), out->security_token) != 0))
    return tt_error_set(err, TT_ERR_INTERNAL, "sigv4", "out of memory");
  qsort(hs->h, hs->n, sizeof *hs->h, chdr_cmp);
  return 0;
}

/* Appends "name:v1,v2\n" per distinct name, and fills `signed_hdrs` with
 * "name1;name2". Repeated names are joined with ',' in input order. */
static int append_headers(struct tt_buf *b, struct tt_buf *signed_hdrs,
                          const struct header_set *hs) {
  for (size_t i = 0; i < hs->n; i++) {
    bool first = i == 0 || strcmp(hs->h[i].name, hs->h[i - 1].name) != 0;
    bool last = i + 1 == hs->n || strcmp(hs->h[i].name, hs->h[i + 1].name) != 0;
    if (first) {
      if (append_strs(b, hs->h[i].name, ":", (char *)NULL) != 0 ||
          append_strs(signed_hdrs, i ? ";" : "", hs->h[i].name, (char *)NULL) != 0)
        return -1;
    } else if (tt_buf_puts(b, ",") != 0) {
      return -1;
    }
    if (tt_buf_puts(b, hs->h[i].value) != 0 || (last && tt_buf_puts(b, "\n") != 0))
      return -1;
  }
  return 0;
}

/* ---- time ---- */

/* Writes v as n decimal digits, zero-padded. */
static void put_digits(char *out, long long v, int n) {
  for (int i = n - 1; i >= 0; i--, v /= 10)
    out[i] = (char)('0' + v % 10);
}

/* Arithmetic, not gmtime_r + strftime: those took ~1,350 instructions a
 * signature (glibc's time-zone lock, a format parser) for 16 characters.
 * The date is Howard Hinnant's civil_from_days (util/civil.h: proleptic
 * Gregorian, which is what UTC timestamps use); test_amz_date_agrees_with_gmtime checks it
 * against gmtime_r. */
int tt_sigv4_amz_date(time_t now, char out[TT_SIGV4_AMZ_DATE_LEN + 1]) {
  out[0] = '\0';
  /* 1970-01-01T00:00:00Z .. 9999-12-31T23:59:59Z */
  if (now < 0 || (long long)now > 253402300799LL)
    return -1;
  long long secs = (long long)now % 86400;
  int64_t year;
  unsigned month, day;
  tt_civil_from_days((long long)now / 86400, &year, &month, &day);
  put_digits(out, year, 4);
  put_digits(out + 4, month, 2);
  put_digits(out + 6, day, 2);
  out[8] = 'T';
  put_digits(out + 9, secs / 3600, 2);
  put_digits(out + 11, secs / 60 % 60, 2);
  put_digits(out + 13, secs % 60, 2);
  out[15] = 'Z';
  out[16] = '\0';
  return 0;
}

/* ---- signing key and its cache ---- */

int tt_sigv4_derive_key(const char *secret, const char *date, const char *region,
                        const char *service, unsigned char key[TT_SIGV4_KEY_LEN],
                        struct tt_error *err) {
  unsigned char k1[32], k2[32], k3[32];
  char *ksecret = NULL;
  EVP_MAC_CTX *ctx = NULL;
  size_t slen = 0;
  int rc = -1;
  if (secret == NULL || *secret == '\0')
    return tt_error_set(err, TT_ERR_INTERNAL, "secret_access_key", "is missing");
  if (date == NULL || strlen(date) != 8 || !is_scope_part(region) || !is_scope_part(service))
    return tt_error_set(err, TT_ERR_INTERNAL, "scope", "date, region or service is invalid");
  slen = strlen(secret);
  ksecret = malloc(slen + 5);
  if (ksecret == NULL)
    return tt_error_set(err, TT_ERR_INTERNAL, "sigv4", "out of memory");
  memcpy(ksecret, "AWS4", 4);
  memcpy(ksecret + 4, secret, slen + 1);
  /* One context for the chain, rekeyed at each step. */
  ctx = hmac_new(ksecret, slen + 4);
  if (ctx == NULL || hmac_with(ctx, NULL, 0, date, strlen(date), k1) != 0 ||
      hmac_with(ctx, k1, 32, region, strlen(region), k2) != 0 ||
      hmac_with(ctx, k2, 32, service, strlen(service), k3) != 0 ||
      hmac_with(ctx, k3, 32, TERMINATOR, strlen(TERMINATOR), key) != 0) {
    tt_error_set(err, TT_ERR_INTERNAL, "sigv4", "HMAC-SHA256 failed");
    goto fail;
  }
  rc = 0;
fail:
  EVP_MAC_CTX_free(ctx);
  OPENSSL_cleanse(ksecret, slen + 5);
  free(ksecret);
  OPENSSL_cleanse(k1, sizeof k1);
  OPENSSL_cleanse(k2, sizeof k2);
  OPENSSL_cleanse(k3, sizeof k3);
  if (rc != 0)
    OPENSSL_cleanse(key, TT_SIGV4_KEY_LEN);
  return rc;
}

void tt_sigv4_cache_init(struct tt_sigv4_cache *cache) {
  memset(cache, 0, sizeof *cache);
}

/* Frees the slot's keyed context (which cleanses it) and zeroes the slot. */
static void slot_wipe(struct tt_sigv4_cache_entry *e) {
  EVP_MAC_CTX_free(e->mac);
  OPENSSL_cleanse(e, sizeof *e); /* zeroes: the slot is free again */
}

void tt_sigv4_cache_clear(struct tt_sigv4_cache *cache) {
  for (size_t i = 0; i < TT_SIGV4_CACHE_SLOTS; i++)
    slot_wipe(&cache->slots[i]);
  EVP_MD_CTX_free(cache->md); /* cleanses the last digest state */
  cache->md = NULL;
  cache->tick = 0;
}

/* The cache's reusable SHA-256 context, made on first use; NULL (one-shot
 * digests) without a cache or when that allocation fails. */
static EVP_MD_CTX *digest_ctx(struct tt_sigv4_cache *cache) {
  if (cache && cache->md == NULL)
    cache->md = EVP_MD_CTX_new();
  return cache ? cache->md : NULL;
}

/* Derives kSigning and returns a new HMAC context keyed with it (*err set
 * and NULL on failure); the raw key is wiped at once. */
static EVP_MAC_CTX *signing_mac_new(const char *secret, const char *date, const char *region,
                                    const char *service, struct tt_error *err) {
  unsigned char key[TT_SIGV4_KEY_LEN];
  EVP_MAC_CTX *ctx = NULL;
  if (tt_sigv4_derive_key(secret, date, region, service, key, err) == 0) {
    ctx = hmac_new(key, sizeof key);
    if (ctx == NULL)
      tt_error_set(err, TT_ERR_INTERNAL, "sigv4", "HMAC-SHA256 failed");
  }
  OPENSSL_cleanse(key, sizeof key);
  return ctx;
}

/* Returns an HMAC context keyed with kSigning for (secret, date, region,
 * service): a cache slot's, borrowed, derived on a miss; or, without a
 * cache or for a scope too long for a slot, a new one stored in *owned for
 * the caller to free. NULL with *err set on failure.
 *
 * On the way, slots of another day are wiped: the clock only moves
 * forward, so they will not be used again and key material should not
 * outlive its use. A slot of the same scope under another secret holds the
 * key of rotated-out credentials: it is the one replaced, so the old key
 * goes at once instead of lingering until evicted. */
static EVP_MAC_CTX *signing_mac(struct tt_sigv4_cache *cache, EVP_MD_CTX *md, const char *secret,
                               const char *date, const char *region, const char *service,
                               EVP_MAC_CTX **owned, struct tt_error *err) {
  struct tt_sigv4_cache_entry *victim = NULL, *rotated = NULL;
  EVP_MAC_CTX *ctx = NULL;
  unsigned char hash[32];
  bool cacheable = cache && strlen(region) < sizeof cache->slots[0].region &&
                   strlen(service) < sizeof cache->slots[0].service;
  if (!cacheable) {
    *owned = signing_mac_new(secret, date, region, service, err);
    if (*owned && cache)
      cache->derivations++;
    return *owned;
  }
  if (sha256(md, secret, strlen(secret), hash) != 0) {
    tt_error_set(err, TT_ERR_INTERNAL, "sigv4", "SHA-256 failed");
    goto done;
  }
  for (size_t i = 0; i < TT_SIGV4_CACHE_SLOTS; i++) {
    struct tt_sigv4_cache_entry *e = &cache->slots[i];
    if (e->used && strcmp(e->date, date) != 0)
      slot_wipe(e);
    if (e->used && strcmp(e->region, region) == 0 && strcmp(e->service, service) == 0) {
      if (CRYPTO_memcmp(e->secret_hash, hash, sizeof hash) == 0) {
        e->last_use = ++cache->tick;
        ctx = e->mac;
        goto done;
      }
      rotated = e;
    }
    /* Otherwise the first free slot, else the least recently used. */
    if (victim == NULL || (victim->used && (!e->used || e->last_use < victim->last_use)))
      victim = e;
  }
  if (rotated)
    victim = rotated;
  ctx = signing_mac_new(secret, date, region, service, err);
  if (ctx == NULL)
    goto done;
  cache->derivations++;
  slot_wipe(victim);
  victim->used = 1;
  memcpy(victim->date, date, 9);
  memcpy(victim->region, region, strlen(region) + 1);
  memcpy(victim->service, service, strlen(service) + 1);
  memcpy(victim->secret_hash, hash, sizeof hash);
  victim->mac = ctx;
  victim->last_use = ++cache->tick;
done:
  OPENSSL_cleanse(hash, sizeof hash);
  return ctx;
}

/* ---- the signature ---- */

void tt_sigv4_result_free(struct tt_sigv4_result *out) {
  char **owned[] = {&out->authorization, &out->security_token, &out->signed_headers,
                    &out->canonical_request, &out->string_to_sign};
  for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++) {
    if (*owned[i]) {
      OPENSSL_cleanse(*owned[i], strlen(*owned[i]));
      free(*owned[i]);
    }
  }
  memset(out, 0, sizeof *out);
}

static void buf_wipe(struct tt_buf *b) {
  if (b->data)
    OPENSSL_cleanse(b->data, b->len);
  tt_buf_free(b);
}

static int check_inputs(const struct tt_sigv4_request *req,
                        const struct tt_sigv4_credentials *creds,
                        const struct tt_sigv4_config *cfg, struct tt_error *err) {
  if (req == NULL || creds == NULL || cfg == NULL)
    return tt_error_set(err, TT_ERR_INTERNAL, "sigv4", "request, credentials and config are required");
  if (!is_token(req->method))
    return tt_error_set(err, TT_ERR_INTERNAL, "method", "is missing or not an HTTP token");
  if (req->n_headers > 0 && req->headers == NULL)
    return tt_error_set(err, TT_ERR_INTERNAL, "headers", "is NULL with a non-zero count");
  if (req->body == NULL && req->body_len > 0)
    return tt_error_set(err, TT_ERR_INTERNAL, "body", "is NULL with a non-zero length");
  if (req->path && !is_field_value(req->path))
    return tt_error_set(err, TT_ERR_INTERNAL, "path", "has a control character");
  if (!is_scope_part(creds->access_key_id))
    return tt_error_set(err, TT_ERR_INTERNAL, "access_key_id", "is missing or malformed");
  if (creds->secret_access_key == NULL || *creds->secret_access_key == '\0')
    return tt_error_set(err, TT_ERR_INTERNAL, "secret_access_key", "is missing");
  if (creds->session_token && !is_field_value(creds->session_token))
    return tt_error_set(err, TT_ERR_INTERNAL, "session_token", "has a control character");
  if (!is_scope_part(cfg->region))
    return tt_error_set(err, TT_ERR_INTERNAL, "region", "is missing or malformed");
  if (!is_scope_part(cfg->service))
    return tt_error_set(err, TT_ERR_INTERNAL, "service", "is missing or malformed");
  return 0;
}

int tt_sigv4_sign(const struct tt_sigv4_request *req, const struct tt_sigv4_credentials *creds,
                  const struct tt_sigv4_config *cfg, time_t now, struct tt_sigv4_result *out,
                  struct tt_error *err) {
  struct header_set hs = {NULL, 0};
  struct tt_buf creq, sts, signed_hdrs, auth;
  EVP_MAC_CTX *kmac = NULL, *owned_kmac = NULL;
  EVP_MD_CTX *md = NULL;
  unsigned char mac[32];
  char date[9], creq_hash[TT_SIGV4_HEX_LEN + 1];
  int rc = -1;

  memset(out, 0, sizeof *out);
  tt_buf_init(&creq, CANON_CAP);
  tt_buf_init(&sts, CANON_CAP);
  tt_buf_init(&signed_hdrs, CANON_CAP);
  tt_buf_init(&auth, CANON_CAP);
  if (check_inputs(req, creds, cfg, err) != 0)
    goto fail;
  md = digest_ctx(cfg->cache);
  if (tt_sigv4_amz_date(now, out->amz_date) != 0) {
    tt_error_set(err, TT_ERR_INTERNAL, "time", "is outside the years 1970 to 9999");
    goto fail;
  }
  memcpy(date, out->amz_date, 8);
  date[8] = '\0';

  if (sha256_hex(md, req->body, req->body_len, out->payload_hash) != 0) {
    tt_error_set(err, TT_ERR_INTERNAL, "sigv4", "SHA-256 failed");
    goto fail;
  }
  if (creds->session_token && *creds->session_token) {
    out->security_token = strdup(creds->session_token);
    if (out->security_token == NULL) {
      tt_error_set(err, TT_ERR_INTERNAL, "sigv4", "out of memory");
      goto fail;
    }
  }

  /* Canonical request. */
  if (build_headers(&hs, req, out, err) != 0)
    goto fail;
  /* The query line is empty: none of our requests has one. */
  if (append_strs(&creq, req->method, "\n", (char *)NULL) != 0 ||
      append_canonical_path(&creq, req->path) != 0 || tt_buf_puts(&creq, "\n\n") != 0 ||
      append_headers(&creq, &signed_hdrs, &hs) != 0 ||
      append_strs(&creq, "\n", signed_hdrs.data, "\n", out->payload_hash, (char *)NULL) != 0) {
    tt_error_set(err, TT_ERR_INTERNAL, "sigv4", "canonical request too large or out of memory");
    goto fail;
  }

  /* String to sign. */
  if (sha256_hex(md, creq.data, creq.len, creq_hash) != 0) {
    tt_error_set(err, TT_ERR_INTERNAL, "sigv4", "SHA-256 failed");
    goto fail;
  }
  if (append_strs(&sts, ALGORITHM "\n", out->amz_date, "\n", date, "/", cfg->region, "/",
                  cfg->service, "/" TERMINATOR "\n", creq_hash, (char *)NULL) != 0) {
    tt_error_set(err, TT_ERR_INTERNAL, "sigv4", "out of memory");
    goto fail;
  }

  /* Signature and Authorization. */
  kmac = signing_mac(cfg->cache, md, creds->secret_access_key, date, cfg->region, cfg->service,
                     &owned_kmac, err);
  if (kmac == NULL)
    goto fail;
  if (hmac_with(kmac, NULL, 0, sts.data, sts.len, mac) != 0) {
    tt_error_set(err, TT_ERR_INTERNAL, "sigv4", "HMAC-SHA256 failed");
    goto fail;
  }
  to_hex(mac, sizeof mac, out->signature);
  if (append_strs(&auth, ALGORITHM " Credential=", creds->access_key_id, "/", date, "/",
                  cfg->region, "/", cfg->service, "/" TERMINATOR ", SignedHeaders=",
                  signed_hdrs.data, ", Signature=", out->signature, (char *)NULL) != 0) {
    tt_error_set(err, TT_ERR_INTERNAL, "sigv4", "out of memory");
    goto fail;
  }
  out->authorization = tt_buf_steal(&auth, NULL);
  out->signed_headers = tt_buf_steal(&signed_hdrs, NULL);
  bool keep = cfg->flags & TT_SIGV4_KEEP_INTERMEDIATE;
  if (keep) {
    out->canonical_request = tt_buf_steal(&creq, NULL);
    out->string_to_sign = tt_buf_steal(&sts, NULL);
  }
  if (out->authorization == NULL || out->signed_headers == NULL ||
      (keep && (out->canonical_request == NULL || out->string_to_sign == NULL))) {
    tt_error_set(err, TT_ERR_INTERNAL, "sigv4", "out of memory");
    goto fail;
  }

  /* Headers for the caller to add, in the documented order. */
  out->headers[out->n_headers++] = (struct tt_sigv4_header){"X-Amz-Date", out->amz_date};
  if (out->security_token)
    out->headers[out->n_headers++] =
        (struct tt_sigv4_header){"X-Amz-Security-Token", out->security_token};
  out->headers[out->n_headers++] = (struct tt_sigv4_header){"Authorization", out->authorization};
  rc = 0;

fail:
  EVP_MAC_CTX_free(owned_kmac);
  OPENSSL_cleanse(mac, sizeof mac);
  header_set_free(&hs);
  buf_wipe(&creq);
  buf_wipe(&sts);
  buf_wipe(&signed_hdrs);
  buf_wipe(&auth);
  if (rc != 0)
    tt_sigv4_result_free(out);
  return rc;
}

int tt_sigv4_sign_lines(const struct tt_sigv4_request *req,
                        const struct tt_sigv4_credentials *creds,
                        const struct tt_sigv4_config *cfg, time_t now, const char *extra,
                        struct tt_buf *lines, const char **hdrs) {
  struct tt_sigv4_result sig;
  struct tt_error err;
  if (tt_sigv4_sign(req, creds, cfg, now, &sig, &err) != 0)
    return -1;
  int bad = 0;
  for (size_t i = 0; i < req->n_headers; i++)
    bad |= append_strs(lines, req->headers[i].name, ": ", req->headers[i].value,
                       (char *)NULL) != 0 ||
           tt_buf_append(lines, "", 1) != 0;
  for (size_t i = 0; i < sig.n_headers; i++)
    bad |= append_strs(lines, sig.headers[i].name, ": ", sig.headers[i].value, (char *)NULL) != 0 ||
           tt_buf_append(lines, "", 1) != 0;
  if (extra)
    bad |= tt_buf_append(lines, extra, strlen(extra)) != 0 || tt_buf_append(lines, "", 1) != 0;
  tt_sigv4_result_free(&sig);
  if (bad)
    return -2;
  /* Pointers only now: the buffer may have moved while it grew. */
  size_t nl = 0;
  for (size_t at = 0; at < lines->len; at += strlen(lines->data + at) + 1)
    hdrs[nl++] = lines->data + at;
  hdrs[nl] = NULL;
  return 0;
}

void tt_sigv4_lines_free(struct tt_buf *lines) {
  if (lines->data)
    OPENSSL_cleanse(lines->data, lines->alloc);
  tt_buf_free(lines);
}
