/* SPDX-License-Identifier: Apache-2.0 */
/* http_tls.h -- private to http_wire.c: the TLS client side of one
 * connection as a pure byte transformer (OpenSSL over two memory BIOs, no
 * I/O). The engine moves the encrypted bytes with its own libuv reads and
 * writes; this module only encrypts, decrypts and verifies. */
#ifndef TT_BACKEND_DYNAMODB_HTTP_TLS_H
#define TT_BACKEND_DYNAMODB_HTTP_TLS_H

#include <openssl/ssl.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "util/buf.h"

/* Results besides 0 and byte counts. */
enum {
  TT_HTTP_TLS_AGAIN = -1, /* needs more bytes from the peer */
  TT_HTTP_TLS_EOF = -2,   /* the peer sent close_notify */
  TT_HTTP_TLS_FAIL = -3,  /* handshake, verification or protocol failure */
  TT_HTTP_TLS_NOMEM = -4,
};

/* Longest "host:port" of a session cache entry. */
#define TT_HTTP_TLS_PEER_MAX 262
/* Peers whose last session is kept for resumption. */
#define TT_HTTP_TLS_SESSIONS 16

/* One connection's TLS state; zeroed means "no TLS". */
struct tt_http_tls {
  SSL *ssl;
  BIO *in;  /* encrypted bytes from the peer, read by OpenSSL (owned by ssl) */
  BIO *out; /* encrypted bytes for the peer, written by OpenSSL (owned by ssl) */
  char peer[TT_HTTP_TLS_PEER_MAX + 1]; /* "host:port": the session cache key */
};

/* The last session of up to TT_HTTP_TLS_SESSIONS peers, so that a new
 * connection to a peer resumes instead of a full handshake (libcurl keeps
 * such a cache too). Sessions come only from handshakes that verified the
 * peer as "host:port", and are offered only to that same key. */
struct tt_http_tls_cache {
  struct {
    char peer[TT_HTTP_TLS_PEER_MAX + 1];
    SSL_SESSION *session; /* a reference of ours */
  } e[TT_HTTP_TLS_SESSIONS];
  unsigned next; /* the slot a new peer takes (round robin) */
};

/* The client context shared by every connection of one engine: TLS 1.2 at
 * least, ALPN http/1.1, peer verification always on (libcurl's
 * VERIFYPEER=1; the host check is per connection), sessions kept in
 * `cache` (borrowed: it must outlive the context; zeroed by the caller).
 * No trust anchors yet: see tt_http_tls_ctx_load. Returns 0 and a new
 * context in *out, or UV_ENOMEM. */
int tt_http_tls_ctx_new(struct tt_http_tls_cache *cache, SSL_CTX **out);

/* Drops the cache's sessions. */
void tt_http_tls_cache_free(struct tt_http_tls_cache *cache);

/* Loads the trust anchors into `ctx`: `ca_file` (PEM) when not NULL, else
 * OpenSSL's default paths (SSL_CERT_FILE/SSL_CERT_DIR, or the system
 * bundle), as libcurl's CAINFO. Loading the system bundle costs about
 * 30 ms of CPU, so the engine does it at its first https connection, not
 * when made. Returns 0, or UV_EINVAL when it could not be loaded (what did
 * load stays; calling again is fine). */
int tt_http_tls_ctx_load(SSL_CTX *ctx, const char *ca_file);

/* Starts the client side for `host` (a name or an IP literal without
 * brackets; the certificate must match it; SNI for names only) at `port`,
 * offering the cached session of host:port, ready for
 * tt_http_tls_handshake. `t` must not move until freed (OpenSSL points at
 * it). Returns 0 or TT_HTTP_TLS_NOMEM / TT_HTTP_TLS_FAIL (t stays
 * zeroed). */
int tt_http_tls_begin(struct tt_http_tls *t, SSL_CTX *ctx, const char *host, unsigned port);

/* Advances the handshake. Returns 0 when it completed (the peer verified),
 * TT_HTTP_TLS_AGAIN, or TT_HTTP_TLS_FAIL. Either way output may be waiting
 * (tt_http_tls_take_out). */
int tt_http_tls_handshake(struct tt_http_tls *t);

/* Hands encrypted bytes from the peer to OpenSSL (copied). 0 or
 * TT_HTTP_TLS_NOMEM. */
int tt_http_tls_feed(struct tt_http_tls *t, const char *data, size_t len);

/* Decrypts into buf. Returns the bytes (> 0), TT_HTTP_TLS_AGAIN when no
 * whole record is buffered, TT_HTTP_TLS_EOF, or TT_HTTP_TLS_FAIL. */
ssize_t tt_http_tls_read(struct tt_http_tls *t, char *buf, size_t cap);

/* Encrypts all `len` bytes (into memory: never partial). 0 or
 * TT_HTTP_TLS_FAIL. */
int tt_http_tls_write(struct tt_http_tls *t, const char *data, size_t len);

/* Moves the encrypted bytes waiting for the peer to the end of `b`.
 * Returns how many, or TT_HTTP_TLS_NOMEM (then nothing moved). */
ssize_t tt_http_tls_take_out(struct tt_http_tls *t, struct tt_buf *b);

/* Frees the state (no close_notify: the connection is simply closed) and
 * zeroes t. Zeroed t is fine. */
void tt_http_tls_free(struct tt_http_tls *t);

#endif
