/* SPDX-License-Identifier: Apache-2.0 */
/* http_tls.c -- the TLS client side of one connection of our HTTP engine:
 * OpenSSL over two memory BIOs, verification as libcurl did it. */
#include "backend/dynamodb/http_tls.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

/* A new session of a verified handshake (TLS 1.3: one per ticket, the
 * last wins). Returns 1: the reference is ours. */
static int on_new_session(SSL *ssl, SSL_SESSION *session) {
  struct tt_http_tls_cache *cache = SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl));
  const struct tt_http_tls *t = SSL_get_app_data(ssl);
  if (cache == NULL || t == NULL || !SSL_SESSION_is_resumable(session))
    return 0;
  unsigned slot = TT_HTTP_TLS_SESSIONS;
  for (unsigned i = 0; i < TT_HTTP_TLS_SESSIONS && slot == TT_HTTP_TLS_SESSIONS; i++)
    if (cache->e[i].session && strcmp(cache->e[i].peer, t->peer) == 0)
      slot = i;
  if (slot == TT_HTTP_TLS_SESSIONS) {
    slot = cache->next;
    cache->next = (cache->next + 1) % TT_HTTP_TLS_SESSIONS;
  }
  SSL_SESSION_free(cache->e[slot].session);
  cache->e[slot].session = session;
  memcpy(cache->e[slot].peer, t->peer, sizeof(t->peer));
  return 1;
}

void tt_http_tls_cache_free(struct tt_http_tls_cache *cache) {
  for (unsigned i = 0; i < TT_HTTP_TLS_SESSIONS; i++) {
    SSL_SESSION_free(cache->e[i].session);
    cache->e[i].session = NULL;
  }
}

int tt_http_tls_ctx_new(struct tt_http_tls_cache *cache, SSL_CTX **out) {
  *out = NULL;
  SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
  /* ALPN http/1.1, as libcurl offers with CURL_HTTP_VERSION_1_1: a server
   * that can speak h2 must not pick it. */
  static const unsigned char alpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  if (ctx == NULL || SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
      SSL_CTX_set_alpn_protos(ctx, alpn, sizeof(alpn)) != 0) {
    ERR_clear_error();
    SSL_CTX_free(ctx);
    return UV_ENOMEM;
  }
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
  /* Our own cache (keyed by host and port); OpenSSL's internal one is a
   * server's, keyed by session id. */
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb(ctx, on_new_session);
  SSL_CTX_set_app_data(ctx, cache);
  *out = ctx;
  return 0;
}

int tt_http_tls_ctx_load(SSL_CTX *ctx, const char *ca_file) {
  int ok = ca_file ? SSL_CTX_load_verify_locations(ctx, ca_file, NULL)
                   : SSL_CTX_set_default_verify_paths(ctx);
  ERR_clear_error();
  return ok == 1 ? 0 : UV_EINVAL;
}

/* The cached session of t->peer, or NULL (borrowed). */
static SSL_SESSION *cached_session(SSL_CTX *ctx, const struct tt_http_tls *t) {
  struct tt_http_tls_cache *cache = SSL_CTX_get_app_data(ctx);
  for (unsigned i = 0; cache && i < TT_HTTP_TLS_SESSIONS; i++)
    if (cache->e[i].session && strcmp(cache->e[i].peer, t->peer) == 0)
      return cache->e[i].session;
  return NULL;
}

int tt_http_tls_begin(struct tt_http_tls *t, SSL_CTX *ctx, const char *host, unsigned port) {
  memset(t, 0, sizeof(*t));
  int plen = snprintf(t->peer, sizeof(t->peer), "%s:%u", host, port);
  if (plen < 0 || (size_t)plen >= sizeof(t->peer))
    return TT_HTTP_TLS_FAIL;
  SSL *ssl = SSL_new(ctx);
  BIO *in = BIO_new(BIO_s_mem());
  BIO *out = BIO_new(BIO_s_mem());
  if (ssl == NULL || in == NULL || out == NULL) {
    SSL_free(ssl);
    BIO_free(in);
    BIO_free(out);
    ERR_clear_error();
    memset(t, 0, sizeof(*t));
    return TT_HTTP_TLS_NOMEM;
  }
  /* An empty input BIO means "wait for the network", not end of file. */
  BIO_set_mem_eof_return(in, -1);
  SSL_set_bio(ssl, in, out); /* ssl owns both from here */
  SSL_set_connect_state(ssl);
  unsigned char ip[16];
  bool literal = inet_pton(AF_INET, host, ip) == 1 || inet_pton(AF_INET6, host, ip) == 1;
  int ok;
  if (literal) {
    /* No SNI for an address (RFC 6066); the certificate must list it as an
     * IP SAN, as libcurl checks it. */
    ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host);
  } else {
    SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    ok = SSL_set_tlsext_host_name(ssl, host) == 1 && SSL_set1_host(ssl, host) == 1;
  }
  SSL_SESSION *session = cached_session(ctx, t);
  if (ok != 1 || SSL_set_app_data(ssl, t) != 1 ||
      (session && SSL_set_session(ssl, session) != 1)) {
    SSL_free(ssl);
    ERR_clear_error();
    memset(t, 0, sizeof(*t));
    return TT_HTTP_TLS_FAIL;
  }
  t->ssl = ssl;
  t->in = in;
  t->out = out;
  return 0;
}

/* OpenSSL's per-thread error queue must be empty before an SSL_* call for
 * SSL_get_error to speak about that call (libcrypto users elsewhere in the
 * daemon may leave entries), and is emptied after a failure. */
static int map_error(struct tt_http_tls *t, int ret) {
  int e = SSL_get_error(t->ssl, ret);
  ERR_clear_error();
  switch (e) {
  case SSL_ERROR_WANT_READ:
  case SSL_ERROR_WANT_WRITE: /* not with a memory BIO, which always grows */
    return TT_HTTP_TLS_AGAIN;
  case SSL_ERROR_ZERO_RETURN:
    return TT_HTTP_TLS_EOF;
  default:
    return TT_HTTP_TLS_FAIL;
  }
}

int tt_http_tls_handshake(struct tt_http_tls *t) {
  ERR_clear_error();
  int ret = SSL_do_handshake(t->ssl);
  if (ret == 1)
    return 0;
  int rc = map_error(t, ret);
  return rc == TT_HTTP_TLS_AGAIN ? rc : TT_HTTP_TLS_FAIL;
}

int tt_http_tls_feed(struct tt_http_tls *t, const char *data, size_t len) {
  size_t written = 0;
  if (BIO_write_ex(t->in, data, len, &written) != 1 || written != len) {
    ERR_clear_error();
    return TT_HTTP_TLS_NOMEM;
  }
  return 0;
}

ssize_t tt_http_tls_read(struct tt_http_tls *t, char *buf, size_t cap) {
  size_t n = 0;
  ERR_clear_error();
  int ret = SSL_read_ex(t->ssl, buf, cap, &n);
  if (ret == 1)
    return (ssize_t)n;
  return map_error(t, ret);
}

int tt_http_tls_write(struct tt_http_tls *t, const char *data, size_t len) {
  if (len == 0)
    return 0;
  size_t n = 0;
  ERR_clear_error();
  int ret = SSL_write_ex(t->ssl, data, len, &n);
  if (ret == 1 && n == len)
    return 0;
  ERR_clear_error();
  return TT_HTTP_TLS_FAIL;
}

ssize_t tt_http_tls_take_out(struct tt_http_tls *t, struct tt_buf *b) {
  size_t n = (size_t)BIO_ctrl_pending(t->out);
  if (n == 0)
    return 0;
  if (tt_buf_reserve(b, n) != 0)
    return TT_HTTP_TLS_NOMEM;
  size_t got = 0;
  if (BIO_read_ex(t->out, b->data + b->len, n, &got) != 1) {
    ERR_clear_error();
    return 0;
  }
  b->len += got;
  return (ssize_t)got;
}

void tt_http_tls_free(struct tt_http_tls *t) {
  /* Without close_notify OpenSSL would call the connection "not shut down"
   * and mark its session not resumable, taking it from our cache too. An
   * HTTP/1.1 connection we close needs no close_notify (the framing says
   * where the answer ends); a fatal error already marked the session. */
  if (t->ssl)
    SSL_set_shutdown(t->ssl, SSL_SENT_SHUTDOWN);
  SSL_free(t->ssl); /* frees both BIOs */
  memset(t, 0, sizeof(*t));
}
