/* SPDX-License-Identifier: Apache-2.0 */
/* sigv4.h -- AWS Signature Version 4 request signing: pure, no I/O, no clock. */
#ifndef TT_BACKEND_DYNAMODB_SIGV4_H
#define TT_BACKEND_DYNAMODB_SIGV4_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <openssl/types.h>

#include "util/error.h"

/* Lengths of the fixed-size outputs, without the terminating NUL. */
#define TT_SIGV4_AMZ_DATE_LEN 16 /* "20150830T123600Z" */
#define TT_SIGV4_HEX_LEN 64      /* hex SHA-256 / HMAC-SHA256 */
#define TT_SIGV4_KEY_LEN 32      /* derived signing key, bytes */

/* One HTTP header. Both strings are borrowed by whoever holds the struct. */
struct tt_sigv4_header {
  const char *name;
  const char *value;
};

/* Credentials to sign with; all strings borrowed for the duration of the
 * call. `session_token` is NULL or "" for long-term credentials. */
struct tt_sigv4_credentials {
  const char *access_key_id;
  const char *secret_access_key;
  const char *session_token;
};

/* The request as it will go on the wire. All pointers are borrowed. */
struct tt_sigv4_request {
  const char *method; /* "POST" */
  /* The path exactly as sent (already percent-encoded once); NULL or ""
   * means "/". It is normalized (dot segments and empty segments removed)
   * and encoded again, as AWS requires of every service but S3. The
   * request has no query string. */
  const char *path;
  /* Headers to sign; must contain Host. Names are case-insensitive and
   * repeated names are combined in order. Authorization, X-Amz-Date and
   * X-Amz-Security-Token are ignored here: the signer owns them and
   * returns fresh ones in the result. */
  const struct tt_sigv4_header *headers;
  size_t n_headers;
  const void *body; /* may be NULL when body_len is 0; hashed as the payload */
  size_t body_len;
};

enum tt_sigv4_flags {
  /* Keep the canonical request and string to sign in the result (tests,
   * debugging). They hold header values, the session token included:
   * never log them. */
  TT_SIGV4_KEEP_INTERMEDIATE = 1u << 0,
};

/* The signing state one signer keeps between requests: kSigning for
 * (date, region, service, secret) changes once a day (or when credentials
 * rotate), so deriving it (4 HMACs) on every request is waste, and so is
 * setting up a new HMAC and SHA-256 context per request.
 *
 * Ownership: each object that signs embeds and owns one (a dynamodb backend
 * account, an AssumeRole provider) and hands it to tt_sigv4_sign in
 * `cfg->cache`; tt_sigv4_sign borrows it. Only the owner's loop thread may
 * use it (not thread-safe; the daemon's signing is all on the loop). It
 * owns OpenSSL contexts holding key material, so it must not be copied, and
 * the owner releases it with tt_sigv4_cache_clear(), which frees and wipes
 * them. Fields are private to sigv4.c (tests read `used`, `md` and
 * `derivations`).
 *
 * Each slot keeps a SHA-256 of the secret, never the secret: a rotated
 * secret misses (compared with CRYPTO_memcmp) and replaces the slot of the
 * same scope, wiping the old key. */
#define TT_SIGV4_CACHE_SLOTS 4
struct tt_sigv4_cache_entry {
  int used;
  char date[9]; /* YYYYMMDD */
  char region[48];
  char service[48];
  unsigned char secret_hash[32];
  EVP_MAC_CTX *mac; /* HMAC-SHA256 keyed with kSigning, reinitialized per use */
  uint64_t last_use;
};
struct tt_sigv4_cache {
  struct tt_sigv4_cache_entry slots[TT_SIGV4_CACHE_SLOTS];
  EVP_MD_CTX *md;       /* SHA-256 context reused by every digest; NULL until first use */
  uint64_t tick;
  uint64_t derivations; /* keys derived so far: for tests and metrics */
};

/* Where and how to sign. All borrowed. `cache` may be NULL (derive every
 * time). */
struct tt_sigv4_config {
  const char *region;  /* "us-east-1" */
  const char *service; /* "dynamodb" */
  unsigned flags;      /* enum tt_sigv4_flags */
  struct tt_sigv4_cache *cache;
};

/* Headers that tt_sigv4_sign returns for the caller to add, in this order
 * (absent ones skipped): X-Amz-Date, X-Amz-Security-Token, Authorization. */
#define TT_SIGV4_MAX_ADDED 3

/* The result of signing. Owns everything it points to; release with
 * tt_sigv4_result_free(). `headers[i].name` are static strings and
 * `headers[i].value` point into this struct. */
struct tt_sigv4_result {
  char amz_date[TT_SIGV4_AMZ_DATE_LEN + 1];
  char payload_hash[TT_SIGV4_HEX_LEN + 1];
  char signature[TT_SIGV4_HEX_LEN + 1];
  char *authorization;      /* the Authorization header value */
  char *security_token;     /* copy of the token, NULL when none */
  char *signed_headers;     /* "host;x-amz-date" */
  char *canonical_request;  /* only with TT_SIGV4_KEEP_INTERMEDIATE */
  char *string_to_sign;     /* only with TT_SIGV4_KEEP_INTERMEDIATE */
  struct tt_sigv4_header headers[TT_SIGV4_MAX_ADDED];
  size_t n_headers;
};

/* Initializes an empty cache; allocates nothing (contexts come on first use). */
void tt_sigv4_cache_init(struct tt_sigv4_cache *cache);

/* Frees the cache's contexts, wipes every cached key (OPENSSL_cleanse) and
 * empties the cache; the `derivations` counter is kept. Safe on an
 * initialized or cleared cache, which stays usable: this is both "forget
 * the keys" and the owner's release. */
void tt_sigv4_cache_clear(struct tt_sigv4_cache *cache);

/* Signs `req` at time `now` (seconds since the Unix epoch, UTC; the clock
 * is never read here) and fills `*out` (which need not be initialized).
 * Borrows every input; `cfg->cache` is updated when given. Returns 0, or
 * -1 with `*err` set (TT_ERR_INTERNAL: these are caller bugs or resource
 * failures; messages name the field, never a value or credential) and
 * `*out` left empty (tt_sigv4_result_free on it is still safe). */
int tt_sigv4_sign(const struct tt_sigv4_request *req, const struct tt_sigv4_credentials *creds,
                  const struct tt_sigv4_config *cfg, time_t now, struct tt_sigv4_result *out,
                  struct tt_error *err);

/* Frees and wipes what `*out` owns and leaves it empty. Idempotent. */
void tt_sigv4_result_free(struct tt_sigv4_result *out);

struct tt_buf;

/* Signs `req` (tt_sigv4_sign; `creds->session_token` may be "") and
 * writes its header lines for the HTTP client into `lines` (empty on
 * entry), each "Name: value" and NUL-terminated: the request's signed
 * headers, then the ones the signature added, then `extra` (a whole line,
 * or NULL). Then points hdrs[0..] at them and ends it with NULL: `hdrs`
 * holds req->n_headers + TT_SIGV4_MAX_ADDED + 2 entries. Borrows
 * everything. Returns 0, -1 when signing failed or -2 when out of memory
 * (`hdrs` untouched then); either way the caller releases `lines` with
 * tt_sigv4_lines_free. */
int tt_sigv4_sign_lines(const struct tt_sigv4_request *req,
                        const struct tt_sigv4_credentials *creds,
                        const struct tt_sigv4_config *cfg, time_t now, const char *extra,
                        struct tt_buf *lines, const char **hdrs);

/* Wipes (they hold the signature and the session token) and frees the
 * lines of tt_sigv4_sign_lines. */
void tt_sigv4_lines_free(struct tt_buf *lines);

/* Appends name=value to a form body (after a '&' unless `b` is empty),
 * the n bytes of value percent-encoded as SigV4 encodes a query component:
 * the bodies of STS's Query API. Returns 0 or -1 (cap or memory). */
int tt_sigv4_form_append(struct tt_buf *b, const char *name, const char *value, size_t n);

/* Derives kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" secret, date), region),
 * service), "aws4_request") into `key`. `date` is YYYYMMDD. Borrows all
 * inputs; intermediates are wiped. Returns 0, or -1 with `*err` set. */
int tt_sigv4_derive_key(const char *secret, const char *date, const char *region,
                        const char *service, unsigned char key[TT_SIGV4_KEY_LEN],
                        struct tt_error *err);

/* Formats `now` as an ISO 8601 basic UTC timestamp ("20150830T123600Z").
 * Returns 0, or -1 when the time is outside years 1970..9999. */
int tt_sigv4_amz_date(time_t now, char out[TT_SIGV4_AMZ_DATE_LEN + 1]);

#endif
