/* SPDX-License-Identifier: Apache-2.0 */
/* http_test_server.c -- a tiny HTTP/1.1 server on 127.0.0.1 for unit tests,
 * plain or over TLS. */
#include "http_test_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct tts_conn {
  uv_tcp_t tcp;
  struct tts_server *s;
  unsigned no;
  char *in;
  size_t in_len, in_alloc;
  bool closing;
  SSL *ssl; /* TLS: owns the two memory BIOs */
  BIO *rbio, *wbio;
  bool handshaken;
  struct tts_conn *next;
};

struct tts_write {
  uv_write_t req;
  char *data;
  bool close_after;
};

static void conn_closed(uv_handle_t *h) {
  struct tts_conn *c = h->data;
  struct tts_server *s = c->s;
  for (struct tts_conn **p = &s->conns; *p; p = &(*p)->next)
    if (*p == c) {
      *p = c->next;
      break;
    }
  free(c->in);
  SSL_free(c->ssl);
  free(c);
}

static void conn_close(struct tts_conn *c, bool reset) {
  if (c->closing)
    return;
  c->closing = true;
  if (reset && uv_tcp_close_reset(&c->tcp, conn_closed) == 0)
    return;
  uv_close((uv_handle_t *)&c->tcp, conn_closed);
}

static void on_written(uv_write_t *w, int status) {
  struct tts_write *wr = (struct tts_write *)w;
  struct tts_conn *c = w->handle->data;
  if (wr->close_after || status < 0)
    conn_close(c, false);
  free(wr->data);
  free(wr);
}

/* TLS: encrypts `data` (freed) and returns what goes on the wire,
 * including anything OpenSSL had waiting (handshake records). */
static char *tls_wrap(struct tts_conn *c, char *data, size_t *len) {
  if (*len > 0)
    SSL_write(c->ssl, data, (int)*len);
  free(data);
  size_t n = (size_t)BIO_ctrl_pending(c->wbio);
  char *out = malloc(n + 1);
  *len = n > 0 ? (size_t)BIO_read(c->wbio, out, (int)n) : 0;
  return out;
}

static void conn_write(struct tts_conn *c, char *data, size_t len, bool close_after) {
  if (c->ssl)
    data = tls_wrap(c, data, &len);
  if (len == 0) { /* nothing to send (a TLS handshake step without output) */
    free(data);
    if (close_after)
      conn_close(c, false);
    return;
  }
  struct tts_write *wr = calloc(1, sizeof(*wr));
  wr->data = data;
  wr->close_after = close_after;
  uv_buf_t b = uv_buf_init(data, (unsigned)len);
  if (uv_write(&wr->req, (uv_stream_t *)&c->tcp, &b, 1, on_written) != 0) {
    free(data);
    free(wr);
    conn_close(c, false);
  }
}

static const char *reason(int status) {
  switch (status) {
  case 200: return "OK";
  case 400: return "Bad Request";
  case 403: return "Forbidden";
  case 500: return "Internal Server Error";
  case 503: return "Service Unavailable";
  default: return "Status";
  }
}

const char *tts_header(const struct tts_request *r, const char *lname, char *out, size_t cap) {
  size_t n = strlen(lname);
  for (const char *p = r->headers; p && *p;) {
    const char *eol = strstr(p, "\r\n");
    if (eol == NULL)
      break;
    if ((size_t)(eol - p) > n + 1 && strncmp(p, lname, n) == 0 && p[n] == ':') {
      const char *v = p + n + 1;
      while (*v == ' ')
        v++;
      size_t len = (size_t)(eol - v);
      if (len + 1 > cap)
        return NULL;
      memcpy(out, v, len);
      out[len] = '\0';
      return out;
    }
    p = eol + 2;
  }
  return NULL;
}

static void request_free(struct tts_request *r) {
  free(r->headers);
  free(r->body);
  memset(r, 0, sizeof(*r));
}

/* Parses one complete request from the front of c->in; returns the bytes
 * it used, 0 when more input is needed, -1 on garbage. */
static long parse_one(struct tts_conn *c, struct tts_request *r) {
  char *end = memmem(c->in, c->in_len, "\r\n\r\n", 4);
  if (end == NULL)
    return 0;
  size_t head_len = (size_t)(end - c->in) + 4;
  char *eol = memmem(c->in, head_len, "\r\n", 2);
  char line[600];
  size_t ll = (size_t)(eol - c->in);
  if (ll >= sizeof(line))
    return -1;
  memcpy(line, c->in, ll);
  line[ll] = '\0';
  char *sp1 = strchr(line, ' ');
  char *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
  if (sp2 == NULL || (size_t)(sp1 - line) >= sizeof(r->method) ||
      (size_t)(sp2 - sp1 - 1) >= sizeof(r->path))
    return -1;
  memset(r, 0, sizeof(*r));
  memcpy(r->method, line, (size_t)(sp1 - line));
  memcpy(r->path, sp1 + 1, (size_t)(sp2 - sp1 - 1));
  size_t hl = head_len - 2 - (ll + 2);
  r->headers = malloc(hl + 1);
  memcpy(r->headers, eol + 2, hl);
  r->headers[hl] = '\0';
  for (char *p = r->headers; *p;) { /* lower-case the names */
    for (; *p && *p != ':' && *p != '\r'; p++)
      if (*p >= 'A' && *p <= 'Z')
        *p = (char)(*p - 'A' + 'a');
    char *n = strstr(p, "\r\n");
    if (n == NULL)
      break;
    p = n + 2;
  }
  char v[32];
  size_t clen = 0;
  if (tts_header(r, "content-length", v, sizeof(v)))
    clen = strtoul(v, NULL, 10);
  if (c->in_len < head_len + clen) {
    request_free(r);
    return 0;
  }
  r->body = malloc(clen + 1);
  memcpy(r->body, c->in + head_len, clen);
  r->body[clen] = '\0';
  r->body_len = clen;
  r->conn_no = c->no;
  return (long)(head_len + clen);
}

static void handle(struct tts_conn *c, const struct tts_request *r) {
  struct tts_server *s = c->s;
  s->requests++;
  request_free(&s->last);
  s->last = *r;
  s->last.headers = strdup(r->headers);
  s->last.body = malloc(r->body_len + 1);
  memcpy(s->last.body, r->body, r->body_len + 1);
  struct tts_response resp = {.action = TTS_RESPOND, .status = 200};
  s->handler(s->arg, r, &resp);
  size_t blen = resp.body ? (resp.body_len ? resp.body_len : strlen(resp.body)) : 0;
  switch (resp.action) {
  case TTS_HANG:
    return;
  case TTS_RESET:
    conn_close(c, true);
    return;
  case TTS_CLOSE:
    conn_close(c, false);
    return;
  case TTS_RAW:
  case TTS_RAW_KEEP: {
    char *d = malloc(blen + 1);
    memcpy(d, resp.body, blen);
    conn_write(c, d, blen, resp.action == TTS_RAW);
    return;
  }
  case TTS_RESPOND:
    break;
  }
  int status = resp.status ? resp.status : 200;
  const char *extra = resp.headers ? resp.headers : "";
  size_t cap = strlen(extra) + blen + 200;
  char *d = malloc(cap);
  int n = snprintf(d, cap, "HTTP/1.1 %d %s\r\nContent-Length: %zu\r\n%s\r\n", status,
                   reason(status), blen, extra);
  memcpy(d + n, resp.body ? resp.body : "", blen);
  conn_write(c, d, (size_t)n + blen, false);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  (void)h;
  buf->base = malloc(suggested);
  buf->len = suggested;
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf) {
  struct tts_conn *c = st->data;
  if (nread < 0) {
    free(buf->base);
    conn_close(c, false);
    return;
  }
  if (c->in_len + (size_t)nread + 1 > c->in_alloc) {
    c->in_alloc = (c->in_len + (size_t)nread + 1) * 2;
    c->in = realloc(c->in, c->in_alloc);
  }
  if (c->ssl) {
    struct tts_server *s = c->s;
    if (!s->tls_stall)
      BIO_write(c->rbio, buf->base, (int)nread);
    free(buf->base);
    if (s->tls_stall)
      return;
    if (!c->handshaken) {
      int rc = SSL_do_handshake(c->ssl);
      if (rc == 1) {
        c->handshaken = true;
        s->handshakes++;
        s->resumed += SSL_session_reused(c->ssl) == 1;
        const char *sni = SSL_get_servername(c->ssl, TLSEXT_NAMETYPE_host_name);
        snprintf(s->sni, sizeof(s->sni), "%s", sni ? sni : "");
      }
      bool failed = rc != 1 && SSL_get_error(c->ssl, rc) != SSL_ERROR_WANT_READ;
      ERR_clear_error();
      conn_write(c, malloc(1), 0, failed); /* the handshake's records, or an alert */
      if (failed || !c->handshaken)
        return;
    }
    char plain[16384];
    int n;
    while ((n = SSL_read(c->ssl, plain, sizeof(plain))) > 0) {
      if (c->in_len + (size_t)n + 1 > c->in_alloc) {
        c->in_alloc = (c->in_len + (size_t)n + 1) * 2;
        c->in = realloc(c->in, c->in_alloc);
      }
      memcpy(c->in + c->in_len, plain, (size_t)n);
      c->in_len += (size_t)n;
    }
    ERR_clear_error();
  } else {
    memcpy(c->in + c->in_len, buf->base, (size_t)nread);
    c->in_len += (size_t)nread;
    free(buf->base);
  }
  if (c->ssl == NULL && c->in_len > 0 && (unsigned char)c->in[0] == 0x16) { /* a TLS ClientHello */
    char *d = strdup("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
    conn_write(c, d, strlen(d), true);
    c->in_len = 0;
    return;
  }
  while (!c->closing) {
    struct tts_request r;
    long used = parse_one(c, &r);
    if (used < 0) {
      conn_close(c, false);
      return;
    }
    if (used == 0)
      return;
    memmove(c->in, c->in + used, c->in_len - (size_t)used);
    c->in_len -= (size_t)used;
    handle(c, &r);
    request_free(&r);
  }
}

static void on_connection(uv_stream_t *server, int status) {
  struct tts_server *s = server->data;
  if (status < 0)
    return;
  struct tts_conn *c = calloc(1, sizeof(*c));
  c->s = s;
  uv_tcp_init(s->loop, &c->tcp);
  c->tcp.data = c;
  if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0) {
    uv_close((uv_handle_t *)&c->tcp, conn_closed);
    c->next = s->conns;
    s->conns = c;
    return;
  }
  c->no = ++s->connections;
  c->next = s->conns;
  s->conns = c;
  if (s->tls) {
    c->ssl = SSL_new(s->tls);
    c->rbio = BIO_new(BIO_s_mem());
    c->wbio = BIO_new(BIO_s_mem());
    BIO_set_mem_eof_return(c->rbio, -1);
    SSL_set_bio(c->ssl, c->rbio, c->wbio);
    SSL_set_accept_state(c->ssl);
  }
  uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

int tts_start(struct tts_server *s, uv_loop_t *loop, tts_handler handler, void *arg) {
  return tts_start_tls(s, loop, handler, arg, NULL);
}

int tts_start_tls(struct tts_server *s, uv_loop_t *loop, tts_handler handler, void *arg,
                  SSL_CTX *ctx) {
  /* libuv writes to sockets with write(2): a client that closed first (a
   * canceled request) would kill the test with SIGPIPE. The daemon ignores
   * it the same way (daemon/main.c). */
  signal(SIGPIPE, SIG_IGN);
  memset(s, 0, sizeof(*s));
  if (ctx && SSL_CTX_up_ref(ctx) == 1)
    s->tls = ctx;
  s->loop = loop;
  s->handler = handler;
  s->arg = arg;
  int rc = uv_tcp_init(loop, &s->listener);
  if (rc != 0)
    return rc;
  s->listener.data = s;
  struct sockaddr_in a;
  uv_ip4_addr("127.0.0.1", 0, &a);
  if ((rc = uv_tcp_bind(&s->listener, (const struct sockaddr *)&a, 0)) != 0 ||
      (rc = uv_listen((uv_stream_t *)&s->listener, 64, on_connection)) != 0)
    return rc;
  struct sockaddr_storage got;
  int len = sizeof(got);
  uv_tcp_getsockname(&s->listener, (struct sockaddr *)&got, &len);
  s->port = ntohs(((struct sockaddr_in *)&got)->sin_port);
  return 0;
}

void tts_close(struct tts_server *s) {
  uv_close((uv_handle_t *)&s->listener, NULL);
  for (struct tts_conn *c = s->conns; c; c = c->next)
    conn_close(c, false);
  request_free(&s->last);
  SSL_CTX_free(s->tls); /* connections keep theirs through their SSL */
  s->tls = NULL;
}

/* A certificate for `key`, named `cn`, signed by `ikey` as `issuer` (self
 * when NULL), with the extensions in `ext` (NID, value pairs). */
static X509 *cert_make(EVP_PKEY *key, const char *cn, X509 *issuer, EVP_PKEY *ikey,
                       const char *const *ext) {
  static long serial = 1;
  X509 *x = X509_new();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), serial++);
  X509_gmtime_adj(X509_getm_notBefore(x), -60);
  X509_gmtime_adj(X509_getm_notAfter(x), 3600);
  X509_NAME *name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
  X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name);
  X509_set_pubkey(x, key);
  X509V3_CTX v3;
  X509V3_set_ctx(&v3, issuer ? issuer : x, x, NULL, NULL, 0);
  for (const char *const *e = ext; e[0]; e += 2) {
    X509_EXTENSION *ex = X509V3_EXT_conf(NULL, &v3, e[0], e[1]);
    if (ex == NULL) {
      X509_free(x);
      return NULL;
    }
    X509_add_ext(x, ex, -1);
    X509_EXTENSION_free(ex);
  }
  if (X509_sign(x, ikey ? ikey : key, EVP_sha256()) == 0) {
    X509_free(x);
    return NULL;
  }
  return x;
}

int tts_tls_make(const char *san, char *ca_path, size_t cap, SSL_CTX **ctx) {
  int rc = -1;
  EVP_PKEY *cakey = EVP_EC_gen("P-256");
  EVP_PKEY *key = EVP_EC_gen("P-256");
  X509 *ca = NULL, *crt = NULL;
  SSL_CTX *sctx = NULL;
  const char *const ca_ext[] = {"basicConstraints", "critical,CA:TRUE", "keyUsage",
                                "critical,keyCertSign,cRLSign", "subjectKeyIdentifier", "hash",
                                NULL};
  const char *const srv_ext[] = {"basicConstraints", "critical,CA:FALSE", "keyUsage",
                                 "critical,digitalSignature", "extendedKeyUsage", "serverAuth",
                                 "subjectAltName", san, "authorityKeyIdentifier", "keyid",
                                 NULL};
  if (cakey == NULL || key == NULL ||
      (ca = cert_make(cakey, "tts throwaway CA", NULL, NULL, ca_ext)) == NULL ||
      (crt = cert_make(key, "tts server", ca, cakey, srv_ext)) == NULL)
    goto out;
  snprintf(ca_path, cap, "/tmp/tts-ca-XXXXXX");
  int fd = mkstemp(ca_path);
  if (fd < 0)
    goto out;
  FILE *f = fdopen(fd, "w");
  if (f == NULL || PEM_write_X509(f, ca) != 1) {
    if (f)
      fclose(f);
    goto out;
  }
  fclose(f);
  sctx = SSL_CTX_new(TLS_server_method());
  if (sctx == NULL || SSL_CTX_use_certificate(sctx, crt) != 1 ||
      SSL_CTX_use_PrivateKey(sctx, key) != 1)
    goto out;
  *ctx = sctx;
  sctx = NULL;
  rc = 0;
out:
  ERR_clear_error();
  SSL_CTX_free(sctx);
  X509_free(ca);
  X509_free(crt);
  EVP_PKEY_free(cakey);
  EVP_PKEY_free(key);
  return rc;
}

int tts_unused_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  int port = -1;
  if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
      getsockname(fd, (struct sockaddr *)&a, &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}
