/* SPDX-License-Identifier: Apache-2.0 */
/* test_credentials.c -- the credentials chain on a real loop: each provider
 * (environment, shared files, credential_process, STS web identity,
 * container, IMDSv2 against a local HTTP server this file runs), the chain
 * order, caching and refresh with an injected clock, shared fetches,
 * cancel, close, and that no error or log line carries a secret. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "backend/dynamodb/credentials.h"
#include "backend/dynamodb/creds_internal.h"
#include "backend/dynamodb/http.h"

/* ---- test data ---- */

static char data_dir[1024];

static const char *data_path(const char *name) {
  static char buf[4][1200];
  static int next;
  char *b = buf[next++ % 4];
  snprintf(b, sizeof(buf[0]), "%s/credentials/%s", data_dir, name);
  return b;
}

/* Every secret the fixtures hand out; none may appear in any message. */
static const char *const secrets[] = {
    "SECRETENV",      "TOKENENV",           "SECRETDEFAULTCREDS", "SECRETDEVCREDS",
    "TOKENDEVCREDS",  "SECRETCFGONLY",      "SECRETPROC",         "TOKENPROC",
    "SECRETSTS",      "TOKENSTS",           "WEBTOKEN",           "SECRETWEBTOKEN",
    "EKSTOKEN",       "SECRETCONTAINER",    "TOKENCONTAINER",     "IMDSSESSIONTOKEN",
    "SECRETIMDS",     "TOKENIMDS",          "SECRETPROCFAIL",     "AUTHENVTOKEN",
};

static void assert_no_secret(const char *text) {
  for (size_t i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++)
    ck_assert_msg(strstr(text, secrets[i]) == NULL, "secret %s leaked into: %s", secrets[i], text);
}

/* ---- a small HTTP/1.1 server on the test loop ---- */

struct route {
  const char *method;
  const char *path;
  int status;
  const char *body;     /* NULL: read from the data file `file` */
  const char *file;
  const char *headers;  /* extra response header lines, each ending in \r\n */
  unsigned delay_ms;
};

struct seen {
  char method[16];
  char path[512];
  char headers[4096]; /* lower-cased names */
  char body[8192];
};

struct server;

struct srv_conn {
  struct server *s;
  uv_tcp_t tcp;
  uv_timer_t timer;
  uv_write_t wr;
  char in[16384];
  size_t len;
  char *out;
  int open;
  bool closing, answered;
  const struct route *route;
  struct srv_conn *next;
};

struct server {
  uv_loop_t *loop;
  uv_tcp_t listener;
  int port;
  const struct route *routes;
  size_t n_routes;
  struct seen seen[16];
  size_t n_seen;
  struct srv_conn *conns;
  bool closed;
};

static void conn_handle_closed(uv_handle_t *h) {
  struct srv_conn *c = h->data;
  if (--c->open > 0)
    return;
  struct srv_conn **pp = &c->s->conns;
  while (*pp != c)
    pp = &(*pp)->next;
  *pp = c->next;
  free(c->out);
  free(c);
}

static void conn_close(struct srv_conn *c) {
  if (c->closing)
    return;
  c->closing = true;
  uv_close((uv_handle_t *)&c->tcp, conn_handle_closed);
  uv_close((uv_handle_t *)&c->timer, conn_handle_closed);
}

static void on_written(uv_write_t *w, int status) {
  (void)status;
  conn_close(w->data);
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  static char buf[65536];
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = '\0';
  return strdup(buf);
}

static void respond(struct srv_conn *c) {
  const struct route *r = c->route;
  int status = r ? r->status : 404;
  char *body = r ? (r->body ? strdup(r->body) : slurp(data_path(r->file))) : strdup("");
  size_t blen = strlen(body);
  size_t cap = blen + 512;
  c->out = malloc(cap);
  int n = snprintf(c->out, cap,
                   "HTTP/1.1 %d X\r\nContent-Length: %zu\r\nConnection: close\r\n%s\r\n%s",
                   status, blen, r && r->headers ? r->headers : "", body);
  free(body);
  uv_buf_t b = uv_buf_init(c->out, (unsigned)n);
  c->wr.data = c;
  if (uv_write(&c->wr, (uv_stream_t *)&c->tcp, &b, 1, on_written) != 0)
    conn_close(c);
}

static void on_delay(uv_timer_t *t) {
  respond(t->data);
}

static void request_complete(struct srv_conn *c, const char *hdr_end, size_t body_len) {
  struct server *s = c->s;
  struct seen *sn = &s->seen[s->n_seen < 16 ? s->n_seen++ : 15];
  memset(sn, 0, sizeof(*sn));
  sscanf(c->in, "%15s %511s", sn->method, sn->path);
  const char *hs = strstr(c->in, "\r\n") + 2;
  size_t hl = (size_t)(hdr_end - hs);
  if (hl >= sizeof(sn->headers))
    hl = sizeof(sn->headers) - 1;
  memcpy(sn->headers, hs, hl);
  /* lower-case the names only */
  for (char *line = sn->headers; *line;) {
    for (char *q = line; *q && *q != ':'; q++)
      if (*q >= 'A' && *q <= 'Z')
        *q = (char)(*q - 'A' + 'a');
    char *nl = strstr(line, "\r\n");
    if (nl == NULL)
      break;
    line = nl + 2;
  }
  if (body_len >= sizeof(sn->body))
    body_len = sizeof(sn->body) - 1;
  memcpy(sn->body, hdr_end + 4, body_len);
  c->answered = true;
  for (size_t i = 0; i < s->n_routes; i++) {
    if (strcmp(s->routes[i].method, sn->method) == 0 && strcmp(s->routes[i].path, sn->path) == 0) {
      c->route = &s->routes[i];
      break;
    }
  }
  if (c->route && c->route->delay_ms) {
    c->timer.data = c;
    uv_timer_start(&c->timer, on_delay, c->route->delay_ms, 0);
  } else {
    respond(c);
  }
}

static void srv_alloc(uv_handle_t *h, size_t sz, uv_buf_t *b) {
  struct srv_conn *c = h->data;
  (void)sz;
  *b = uv_buf_init(c->in + c->len, (unsigned)(sizeof(c->in) - 1 - c->len));
}

static void srv_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b) {
  struct srv_conn *c = st->data;
  (void)b;
  if (n < 0) {
    conn_close(c);
    return;
  }
  c->len += (size_t)n;
  c->in[c->len] = '\0';
  if (c->answered)
    return;
  const char *end = strstr(c->in, "\r\n\r\n");
  if (end == NULL)
    return;
  size_t clen = 0;
  for (const char *p = c->in; p < end; p++) {
    if (strncasecmp(p, "\r\ncontent-length:", 17) == 0) {
      clen = strtoul(p + 17, NULL, 10);
      break;
    }
  }
  if ((size_t)(c->in + c->len - (end + 4)) < clen)
    return;
  request_complete(c, end, clen);
}

static void on_connection(uv_stream_t *l, int status) {
  struct server *s = l->data;
  ck_assert_int_eq(status, 0);
  struct srv_conn *c = calloc(1, sizeof(*c));
  c->s = s;
  uv_tcp_init(s->loop, &c->tcp);
  uv_timer_init(s->loop, &c->timer);
  c->tcp.data = c->timer.data = c;
  c->open = 2;
  c->next = s->conns;
  s->conns = c;
  ck_assert_int_eq(uv_accept(l, (uv_stream_t *)&c->tcp), 0);
  uv_read_start((uv_stream_t *)&c->tcp, srv_alloc, srv_read);
}

static void server_start(struct server *s, uv_loop_t *loop, const struct route *routes,
                         size_t n) {
  memset(s, 0, sizeof(*s));
  s->loop = loop;
  s->routes = routes;
  s->n_routes = n;
  struct sockaddr_in addr;
  uv_ip4_addr("127.0.0.1", 0, &addr);
  ck_assert_int_eq(uv_tcp_init(loop, &s->listener), 0);
  s->listener.data = s;
  ck_assert_int_eq(uv_tcp_bind(&s->listener, (const struct sockaddr *)&addr, 0), 0);
  ck_assert_int_eq(uv_listen((uv_stream_t *)&s->listener, 16, on_connection), 0);
  struct sockaddr_in got;
  int len = sizeof(got);
  uv_tcp_getsockname(&s->listener, (struct sockaddr *)&got, &len);
  s->port = ntohs(got.sin_port);
}

static void server_stop(struct server *s) {
  if (s->closed)
    return;
  s->closed = true;
  uv_close((uv_handle_t *)&s->listener, NULL);
  for (struct srv_conn *c = s->conns; c; c = c->next)
    conn_close(c);
}

/* The value of request header `name` (lower case) in `sn`, or NULL. */
static const char *seen_header(const struct seen *sn, const char *name, char *out, size_t n) {
  size_t nl = strlen(name);
  for (const char *line = sn->headers; *line;) {
    if (strncmp(line, name, nl) == 0 && line[nl] == ':') {
      const char *v = line + nl + 1;
      while (*v == ' ')
        v++;
      size_t vl = strcspn(v, "\r\n");
      if (vl >= n)
        vl = n - 1;
      memcpy(out, v, vl);
      out[vl] = '\0';
      return out;
    }
    const char *nlp = strstr(line, "\r\n");
    if (nlp == NULL)
      break;
    line = nlp + 2;
  }
  return NULL;
}

/* ---- fixture ---- */

struct result {
  int calls;
  bool ok;
  struct tt_creds creds;
  struct tt_error err;
};

struct fx {
  uv_loop_t loop;
  struct tt_http *http;
  struct server srv;
  bool have_srv;
  struct tt_creds_provider *p;
  char *env[48];
  size_t n_env;
  int64_t now;
  char log[16384];
  size_t log_len;
  int closed_calls;
  char tmpdir[256];
  struct tt_creds_chain_options opts;
};

static int64_t fx_clock(void *arg) {
  return ((struct fx *)arg)->now;
}

static void fx_log(void *arg, enum tt_creds_log_level level, const char *msg) {
  struct fx *f = arg;
  (void)level;
  assert_no_secret(msg);
  int n = snprintf(f->log + f->log_len, sizeof(f->log) - f->log_len, "%s\n", msg);
  if (n > 0 && f->log_len + (size_t)n < sizeof(f->log))
    f->log_len += (size_t)n;
}

static void fx_env(struct fx *f, const char *name, const char *value) {
  ck_assert_uint_lt(f->n_env, 46);
  size_t n = strlen(name) + strlen(value) + 2;
  char *s = malloc(n);
  snprintf(s, n, "%s=%s", name, value);
  f->env[f->n_env++] = s;
  f->env[f->n_env] = NULL;
}

static void fx_init(struct fx *f) {
  memset(f, 0, sizeof(*f));
  ck_assert_int_eq(uv_loop_init(&f->loop), 0);
  const char *path = getenv("PATH");
  fx_env(f, "PATH", path ? path : "/usr/bin:/bin");
  snprintf(f->tmpdir, sizeof(f->tmpdir), "/tmp/tt_creds_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(f->tmpdir));
  /* A home without ~/.aws, so the developer's own files never leak in. */
  fx_env(f, "HOME", f->tmpdir);
  f->now = 1893456000 - 3600; /* one hour before 2030-01-01T00:00:00Z */
  f->opts.envp = f->env;
  f->opts.now = fx_clock;
  f->opts.now_arg = f;
  f->opts.log = fx_log;
  f->opts.log_arg = f;
}

static void fx_http(struct fx *f, const struct route *routes, size_t n) {
  ck_assert_int_eq(tt_http_new(&f->loop, NULL, &f->http), 0);
  if (routes) {
    server_start(&f->srv, &f->loop, routes, n);
    f->have_srv = true;
  }
}

static char *fx_server_url(struct fx *f, const char *path) {
  static char buf[4][256];
  static int next;
  char *b = buf[next++ % 4];
  snprintf(b, sizeof(buf[0]), "http://127.0.0.1:%d%s", f->srv.port, path);
  return b;
}

static void fx_chain(struct fx *f) {
  struct tt_error err;
  ck_assert_int_eq(tt_creds_chain_new(&f->loop, f->http, &f->opts, &f->p, &err), 0);
}

static void on_creds(void *arg, const struct tt_creds *c, const struct tt_error *err) {
  struct result *r = arg;
  r->calls++;
  r->ok = c != NULL;
  if (c) {
    r->creds = *c;
  } else {
    r->err = *err;
    assert_no_secret(err->message);
  }
}

static void run_until(struct fx *f, const int *calls, int want) {
  for (int i = 0; i < 100000 && *calls < want; i++)
    uv_run(&f->loop, UV_RUN_ONCE);
  ck_assert_int_ge(*calls, want);
}

/* What a signer does: peek at the cache (answered here, synchronously)
 * and get only on a miss (answered later on the loop). Returns 0 when peek
 * answered (*h = NULL), else what tt_creds_get returned. */
static int ask(struct tt_creds_provider *p, struct result *r, void **h) {
  const struct tt_creds *c = NULL;
  struct tt_error err;
  int pk = tt_creds_peek(p, &c, &err);
  if (pk == 0 || pk == TT_CREDS_PEEK_FAILED) {
    if (h)
      *h = NULL;
    on_creds(r, pk == 0 ? c : NULL, pk == 0 ? NULL : &err);
    return 0;
  }
  ck_assert_int_eq(pk, TT_CREDS_PEEK_MISS);
  return tt_creds_get(p, on_creds, r, h);
}

/* get + wait; returns the result. */
static struct result fx_get(struct fx *f) {
  struct result r;
  memset(&r, 0, sizeof(r));
  void *h = NULL;
  ck_assert_int_eq(ask(f->p, &r, &h), 0);
  run_until(f, &r.calls, 1);
  ck_assert_int_eq(r.calls, 1);
  return r;
}

static void on_closed(void *arg) {
  ((struct fx *)arg)->closed_calls++;
}

static void on_http_closed(void *arg) {
  (void)arg;
}

static void fx_done(struct fx *f) {
  if (f->p) {
    tt_creds_close(f->p, on_closed, f);
    run_until(f, &f->closed_calls, 1);
    ck_assert_int_eq(f->closed_calls, 1);
    tt_creds_destroy(f->p);
  }
  if (f->have_srv)
    server_stop(&f->srv);
  if (f->http)
    tt_http_close(f->http, on_http_closed, NULL);
  uv_run(&f->loop, UV_RUN_DEFAULT);
  if (f->http)
    tt_http_destroy(f->http);
  ck_assert_int_eq(uv_loop_close(&f->loop), 0);
  assert_no_secret(f->log);
  for (size_t i = 0; i < f->n_env; i++)
    free(f->env[i]);
  char cmd[300];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->tmpdir);
  ck_assert_int_eq(system(cmd), 0);
}

/* Writes a config file naming process.sh into the temp dir. */
static void fx_process_profile(struct fx *f, const char *args) {
  char path[400];
  snprintf(path, sizeof(path), "%s/config", f->tmpdir);
  FILE *fp = fopen(path, "w");
  ck_assert_ptr_nonnull(fp);
  fprintf(fp, "[profile proc]\ncredential_process = /bin/sh \"%s\" %s\n", data_path("process.sh"),
          args);
  fclose(fp);
  fx_env(f, "AWS_CONFIG_FILE", path);
  fx_env(f, "AWS_PROFILE", "proc");
  fx_env(f, "AWS_EC2_METADATA_DISABLED", "true");
}

static int read_counter(struct fx *f) {
  char path[400];
  snprintf(path, sizeof(path), "%s/counter", f->tmpdir);
  FILE *fp = fopen(path, "r");
  if (fp == NULL)
    return 0;
  int n = 0;
  if (fscanf(fp, "%d", &n) != 1)
    n = -1;
  fclose(fp);
  return n;
}

static void fx_counter(struct fx *f) {
  char path[400];
  snprintf(path, sizeof(path), "%s/counter", f->tmpdir);
  fx_env(f, "TT_CP_COUNTER", path);
}

/* ---- parsers ---- */

START_TEST(parse_time_known_answers) {
  int64_t t = -1;
  ck_assert_int_eq(creds_parse_time("1970-01-01T00:00:00Z", 20, &t), 0);
  ck_assert_int_eq(t, 0);
  ck_assert_int_eq(creds_parse_time("2019-11-09T13:34:41Z", 20, &t), 0);
  ck_assert_int_eq(t, 1573306481);
  ck_assert_int_eq(creds_parse_time("2019-11-09T13:34:41.123Z", 24, &t), 0);
  ck_assert_int_eq(t, 1573306481);
  ck_assert_int_eq(creds_parse_time("2019-11-09T14:34:41+01:00", 25, &t), 0);
  ck_assert_int_eq(t, 1573306481);
  ck_assert_int_eq(creds_parse_time("2030-01-01T00:00:00Z", 20, &t), 0);
  ck_assert_int_eq(t, 1893456000);
  ck_assert_int_eq(creds_parse_time("2019-11-09 13:34:41Z", 20, &t), -1);
  ck_assert_int_eq(creds_parse_time("2019-13-09T13:34:41Z", 20, &t), -1);
  ck_assert_int_eq(creds_parse_time("2019-11-09T13:34:41", 19, &t), -1);
  ck_assert_int_eq(creds_parse_time("2019-11-09T13:34:41Zjunk", 24, &t), -1);
}
END_TEST

START_TEST(json_credentials_fields) {
  struct tt_creds c;
  const char *why = NULL;
  const char *ok = "{\"Code\":\"Success\",\"AccessKeyId\":\"AKID\",\"SecretAccessKey\":\"SECRETX\","
                   "\"Token\":\"TOK\",\"Expiration\":\"2030-01-01T00:00:00Z\"}";
  ck_assert_int_eq(creds_from_json(ok, strlen(ok), "Token", false, true, "imds", &c, &why), 0);
  ck_assert_str_eq(c.access_key_id, "AKID");
  ck_assert_str_eq(c.secret_access_key, "SECRETX");
  ck_assert_str_eq(c.session_token, "TOK");
  ck_assert_int_eq(c.expires_at, 1893456000);
  ck_assert_str_eq(c.source, "imds");
  const char *nover = "{\"AccessKeyId\":\"AKID\",\"SecretAccessKey\":\"S\"}";
  ck_assert_int_eq(creds_from_json(nover, strlen(nover), "SessionToken", true, false, "process",
                                   &c, &why),
                   -1);
  ck_assert_str_eq(why, "Version is not 1");
  ck_assert_str_eq(c.access_key_id, ""); /* wiped on failure */
  const char *nosecret = "{\"Version\":1,\"AccessKeyId\":\"AKID\"}";
  ck_assert_int_eq(creds_from_json(nosecret, strlen(nosecret), "SessionToken", true, false,
                                   "process", &c, &why),
                   -1);
  ck_assert_str_eq(why, "SecretAccessKey is missing");
  const char *badexp = "{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"S\",\"Expiration\":\"soon\"}";
  ck_assert_int_eq(creds_from_json(badexp, strlen(badexp), "Token", false, false, "x", &c, &why),
                   -1);
  ck_assert_str_eq(why, "Expiration is not an ISO 8601 time");
  const char *fail = "{\"Code\":\"AssumeRoleUnauthorizedAccess\",\"AccessKeyId\":\"A\"}";
  ck_assert_int_eq(creds_from_json(fail, strlen(fail), "Token", false, true, "imds", &c, &why),
                   -1);
  ck_assert_str_eq(why, "Code is not Success");
  ck_assert_int_eq(creds_from_json("[1]", 3, "Token", false, false, "x", &c, &why), -1);
  ck_assert_str_eq(why, "the response is not a JSON object");
  const char *ctl = "{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"S\\r\\nX: y\"}";
  ck_assert_int_eq(creds_from_json(ctl, strlen(ctl), "Token", false, false, "x", &c, &why), -1);
  ck_assert_str_eq(why, "SecretAccessKey is too long or has invalid characters");
}
END_TEST

/* ---- static ---- */

static void count_closed(void *arg) {
  (*(int *)arg)++;
}

/* peek answers synchronously; get answers later on the loop, once, and
 * may be called again from its own callback. */
struct regetter {
  struct tt_creds_provider *p;
  int calls, again;
  bool inside; /* true while tt_creds_get runs */
  bool called_inside;
  struct tt_creds creds;
};

static void reget_cb(void *arg, const struct tt_creds *c, const struct tt_error *err) {
  struct regetter *g = arg;
  ck_assert_ptr_null(err);
  g->called_inside |= g->inside;
  g->calls++;
  g->creds = *c;
  if (g->again > 0) {
    g->again--;
    g->inside = true;
    ck_assert_int_eq(tt_creds_get(g->p, reget_cb, g, NULL), 0);
    g->inside = false;
  }
}

START_TEST(static_provider_peeks_synchronously_and_gets_later) {
  uv_loop_t loop;
  ck_assert_int_eq(uv_loop_init(&loop), 0);
  struct tt_creds_provider *p = NULL;
  struct tt_error err;
  ck_assert_int_eq(tt_creds_static_new(&loop, "AKIDSTATIC", "SECRETENV", NULL, &p, &err), 0);
  const struct tt_creds *c = NULL;
  ck_assert_int_eq(tt_creds_peek(p, &c, &err), 0);
  ck_assert_str_eq(c->access_key_id, "AKIDSTATIC");
  ck_assert_str_eq(c->secret_access_key, "SECRETENV");
  ck_assert_str_eq(c->session_token, "");
  ck_assert_int_eq(c->expires_at, 0);
  ck_assert_str_eq(c->source, "static");
  struct regetter g = {.p = p, .again = 3};
  void *h = NULL;
  g.inside = true;
  ck_assert_int_eq(tt_creds_get(p, reget_cb, &g, &h), 0);
  g.inside = false;
  ck_assert_int_eq(g.calls, 0); /* never inside get */
  ck_assert_ptr_nonnull(h);
  for (int i = 0; i < 100 && g.calls < 4; i++)
    uv_run(&loop, UV_RUN_ONCE);
  ck_assert_int_eq(g.calls, 4); /* once per get */
  ck_assert(!g.called_inside);
  ck_assert_str_eq(g.creds.access_key_id, "AKIDSTATIC");
  /* A cancelled get never calls back. */
  struct result r;
  memset(&r, 0, sizeof(r));
  ck_assert_int_eq(tt_creds_get(p, on_creds, &r, &h), 0);
  tt_creds_cancel(p, h);
  uv_run(&loop, UV_RUN_NOWAIT);
  ck_assert_int_eq(r.calls, 0);
  /* close fails a pending get at once and says closed later. */
  ck_assert_int_eq(tt_creds_get(p, on_creds, &r, &h), 0);
  int closed = 0;
  tt_creds_close(p, count_closed, &closed);
  ck_assert_int_eq(r.calls, 1);
  ck_assert(!r.ok);
  ck_assert_int_eq(closed, 0);
  ck_assert_int_eq(tt_creds_get(p, on_creds, &r, &h), -ESHUTDOWN);
  ck_assert_int_eq(tt_creds_peek(p, &c, &err), TT_CREDS_PEEK_MISS);
  uv_run(&loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(closed, 1);
  ck_assert_int_eq(r.calls, 1);
  tt_creds_destroy(p);
  ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

START_TEST(static_provider_validates) {
  uv_loop_t loop;
  ck_assert_int_eq(uv_loop_init(&loop), 0);
  struct tt_creds_provider *p = NULL;
  struct tt_error err;
  ck_assert_int_eq(tt_creds_static_new(&loop, "AKID", "", NULL, &p, &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
  ck_assert_str_eq(err.message, "static credentials: SecretAccessKey is missing");
  ck_assert_int_eq(tt_creds_static_new(&loop, "AKID", "SECRET ENV", NULL, &p, &err), -1);
  ck_assert_str_eq(err.message,
                   "static credentials: SecretAccessKey is too long or has invalid characters");
  assert_no_secret(err.message);
  ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

/* ---- environment ---- */

START_TEST(env_provider) {
  struct fx f;
  fx_init(&f);
  fx_env(&f, "AWS_ACCESS_KEY_ID", "AKIDENV");
  fx_env(&f, "AWS_SECRET_ACCESS_KEY", "SECRETENV");
  fx_env(&f, "AWS_SESSION_TOKEN", "TOKENENV");
  fx_chain(&f);
  struct result r;
  memset(&r, 0, sizeof(r));
  void *h = NULL;
  ck_assert_int_eq(ask(f.p, &r, &h), 0);
  /* No I/O, but nothing was cached: get resolved it and answers on the
   * loop, never before it returned. */
  ck_assert_int_eq(r.calls, 0);
  ck_assert_ptr_nonnull(h);
  run_until(&f, &r.calls, 1);
  ck_assert_int_eq(r.calls, 1);
  ck_assert(r.ok);
  ck_assert_str_eq(r.creds.access_key_id, "AKIDENV");
  ck_assert_str_eq(r.creds.secret_access_key, "SECRETENV");
  ck_assert_str_eq(r.creds.session_token, "TOKENENV");
  ck_assert_int_eq(r.creds.expires_at, 0);
  ck_assert_str_eq(r.creds.source, "environment");
  ck_assert_ptr_nonnull(strstr(f.log, "resolved from environment"));
  fx_done(&f);
}
END_TEST

/* On a cache hit peek answers the cached credentials synchronously, and
 * get still answers later on the loop, exactly once: never inside itself,
 * also when called from its own callback. */
struct chain_regetter {
  struct fx *f;
  int calls, again;
  bool inside;
  bool called_inside;
};

static void chain_reget_cb(void *arg, const struct tt_creds *c, const struct tt_error *err) {
  struct chain_regetter *g = arg;
  ck_assert_ptr_null(err);
  ck_assert_str_eq(c->access_key_id, "AKIDENV");
  g->called_inside |= g->inside;
  g->calls++;
  if (g->again > 0) {
    g->again--;
    g->inside = true;
    ck_assert_int_eq(tt_creds_get(g->f->p, chain_reget_cb, g, NULL), 0);
    g->inside = false;
  }
}

START_TEST(cache_hit_peek_is_synchronous_get_is_not) {
  struct fx f;
  fx_init(&f);
  fx_env(&f, "AWS_ACCESS_KEY_ID", "AKIDENV");
  fx_env(&f, "AWS_SECRET_ACCESS_KEY", "SECRETENV");
  fx_chain(&f);
  const struct tt_creds *c = NULL;
  struct tt_error err;
  ck_assert_int_eq(tt_creds_peek(f.p, &c, &err), TT_CREDS_PEEK_MISS); /* nothing cached */
  struct result r = fx_get(&f);
  ck_assert(r.ok);
  ck_assert_int_eq(tt_creds_peek(f.p, &c, &err), 0);
  ck_assert_ptr_nonnull(c);
  ck_assert_str_eq(c->access_key_id, "AKIDENV");
  ck_assert_str_eq(c->secret_access_key, "SECRETENV");
  struct chain_regetter g = {.f = &f, .again = 2};
  void *h = NULL;
  g.inside = true;
  ck_assert_int_eq(tt_creds_get(f.p, chain_reget_cb, &g, &h), 0);
  g.inside = false;
  ck_assert_int_eq(g.calls, 0); /* a cache hit, still not inside get */
  ck_assert_ptr_nonnull(h);
  run_until(&f, &g.calls, 3);
  ck_assert_int_eq(g.calls, 3);
  ck_assert(!g.called_inside);
  /* A cancelled hit never calls back. */
  memset(&r, 0, sizeof(r));
  ck_assert_int_eq(tt_creds_get(f.p, on_creds, &r, &h), 0);
  tt_creds_cancel(f.p, h);
  uv_run(&f.loop, UV_RUN_NOWAIT);
  ck_assert_int_eq(r.calls, 0);
  /* close fails a posted get at once; peek then misses. */
  ck_assert_int_eq(tt_creds_get(f.p, on_creds, &r, &h), 0);
  tt_creds_close(f.p, on_closed, &f);
  ck_assert_int_eq(r.calls, 1);
  ck_assert(!r.ok);
  ck_assert_int_eq(tt_creds_peek(f.p, &c, &err), TT_CREDS_PEEK_MISS);
  run_until(&f, &f.closed_calls, 1);
  ck_assert_int_eq(r.calls, 1);
  tt_creds_destroy(f.p);
  f.p = NULL;
  fx_done(&f);
}
END_TEST

START_TEST(env_provider_partial_is_an_error) {
  struct fx f;
  fx_init(&f);
  fx_env(&f, "AWS_ACCESS_KEY_ID", "AKIDENV");
  fx_env(&f, "AWS_SESSION_TOKEN", "TOKENENV");
  fx_chain(&f);
  struct result r = fx_get(&f);
  ck_assert(!r.ok);
  ck_assert_int_eq(r.err.code, TT_ERR_BACKEND_UNAVAILABLE);
  ck_assert_str_eq(r.err.message, "credentials: environment: AWS_ACCESS_KEY_ID is set but "
                                  "AWS_SECRET_ACCESS_KEY is not");
  fx_done(&f);
}
END_TEST

/* ---- shared files ---- */

static struct result profile_get(const char *profile, bool files) {
  struct fx f;
  fx_init(&f);
  if (files) {
    fx_env(&f, "AWS_SHARED_CREDENTIALS_FILE", data_path("credentials"));
    fx_env(&f, "AWS_CONFIG_FILE", data_path("config"));
  }
  if (profile)
    fx_env(&f, "AWS_PROFILE", profile);
  fx_env(&f, "AWS_EC2_METADATA_DISABLED", "true");
  fx_chain(&f);
  struct result r = fx_get(&f);
  fx_done(&f);
  return r;
}

START_TEST(profile_default_credentials_file_wins) {
  struct result r = profile_get(NULL, true);
  ck_assert(r.ok);
  ck_assert_str_eq(r.creds.access_key_id, "AKIDDEFAULTCREDS");
  ck_assert_str_eq(r.creds.secret_access_key, "SECRETDEFAULTCREDS"); /* inline comment cut */
  ck_assert_str_eq(r.creds.session_token, "");
  ck_assert_str_eq(r.creds.source, "profile");
  ck_assert_int_eq(r.creds.expires_at, 0);
}
END_TEST

START_TEST(profile_named_sections) {
  struct result r = profile_get("dev", true);
  ck_assert(r.ok);
  ck_assert_str_eq(r.creds.access_key_id, "AKIDDEVCREDS");
  ck_assert_str_eq(r.creds.secret_access_key, "SECRETDEVCREDS");
  ck_assert_str_eq(r.creds.session_token, "TOKENDEVCREDS");
  r = profile_get("cfgonly", true); /* [profile cfgonly] in config */
  ck_assert(r.ok);
  ck_assert_str_eq(r.creds.access_key_id, "AKIDCFGONLY");
  ck_assert_str_eq(r.creds.secret_access_key, "SECRETCFGONLY");
}
END_TEST

START_TEST(profile_errors) {
  struct result r = profile_get("partial", true);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.err.message,
                   "credentials: profile: profile 'partial': aws_secret_access_key is missing");
  r = profile_get("nosuch", true);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.err.message, "credentials: profile: profile 'nosuch' was not found in the "
                                  "shared config or credentials file");
  r = profile_get("cfgonly2", true); /* "[cfgonly2]" in config is not a profile */
  ck_assert(!r.ok);
  ck_assert_ptr_nonnull(strstr(r.err.message, "'cfgonly2' was not found"));
  r = profile_get("sso", true);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.err.message,
                   "credentials: profile: profile 'sso': SSO is not supported; use "
                   "credential_process");
  r = profile_get("assume", true);
  ck_assert(!r.ok);
  ck_assert_ptr_nonnull(strstr(r.err.message, "(AssumeRole) is not supported"));
}
END_TEST

START_TEST(profile_without_credentials_is_skipped) {
  /* Only a region: the chain moves on; with IMDS disabled nothing is left. */
  struct result r = profile_get("regiononly", true);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.err.message,
                   "credentials: no provider is configured (environment, shared files, web "
                   "identity, container, instance metadata)");
  /* No files at all (HOME has no .aws): same. */
  r = profile_get(NULL, false);
  ck_assert(!r.ok);
  ck_assert_ptr_nonnull(strstr(r.err.message, "no provider is configured"));
}
END_TEST

START_TEST(chain_env_wins_over_profile) {
  struct fx f;
  fx_init(&f);
  fx_env(&f, "AWS_SHARED_CREDENTIALS_FILE", data_path("credentials"));
  fx_env(&f, "AWS_PROFILE", "dev");
  fx_env(&f, "AWS_ACCESS_KEY_ID", "AKIDENV");
  fx_env(&f, "AWS_SECRET_ACCESS_KEY", "SECRETENV");
  fx_chain(&f);
  struct result r = fx_get(&f);
  ck_assert(r.ok);
  ck_assert_str_eq(r.creds.source, "environment");
  ck_assert_str_eq(r.creds.access_key_id, "AKIDENV");
  fx_done(&f);
}
END_TEST

START_TEST(chain_profile_wins_over_web_identity_and_imds) {
  struct fx f;
  fx_init(&f);
  fx_env(&f, "AWS_SHARED_CREDENTIALS_FILE", data_path("credentials"));
  fx_env(&f, "AWS_PROFILE", "dev");
  fx_env(&f, "AWS_WEB_IDENTITY_TOKEN_FILE", data_path("web_token"));
  fx_env(&f, "AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/demo");
  fx_env(&f, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/x");
  fx_chain(&f); /* no HTTP client: any HTTP provider would fail */
  struct result r = fx_get(&f);
  ck_assert_msg(r.ok, "%s", r.err.message);
  ck_assert_str_eq(r.creds.source, "profile");
  ck_assert_str_eq(r.creds.access_key_id, "AKIDDEVCREDS");
  fx_done(&f);
}
END_TEST

START_TEST(home_finds_dot_aws) {
  struct fx f;
  fx_init(&f);
  char cmd[1200];
  /* HOME of the environment is f.tmpdir (fx_init). */
  snprintf(cmd, sizeof(cmd), "mkdir -p '%s/.aws' && cp '%s' '%s/.aws/credentials'", f.tmpdir,
           data_path("credentials"), f.tmpdir);
  ck_assert_int_eq(system(cmd), 0);
  fx_env(&f, "AWS_PROFILE", "dev");
  fx_chain(&f);
  struct result r = fx_get(&f);
  ck_assert(r.ok);
  ck_assert_str_eq(r.creds.access_key_id, "AKIDDEVCREDS");
  fx_done(&f);
}
END_TEST

/* ---- credential_process ---- */

START_TEST(process_ok) {
  struct fx f;
  fx_init(&f);
  fx_process_profile(&f, "ok");
  fx_counter(&f);
  fx_chain(&f);
  struct result r;
  memset(&r, 0, sizeof(r));
  void *h = NULL;
  ck_assert_int_eq(ask(f.p, &r, &h), 0);
  ck_assert_int_eq(r.calls, 0); /* runs on the loop */
  ck_assert_ptr_nonnull(h);
  run_until(&f, &r.calls, 1);
  ck_assert(r.ok);
  ck_assert_str_eq(r.creds.access_key_id, "AKIDPROC1");
  ck_assert_str_eq(r.creds.secret_access_key, "SECRETPROC1");
  ck_assert_str_eq(r.creds.session_token, "TOKENPROC1");
  ck_assert_int_eq(r.creds.expires_at, 1893456000);
  ck_assert_str_eq(r.creds.source, "process");
  /* cached: peek answers synchronously and runs nothing */
  struct result r2;
  memset(&r2, 0, sizeof(r2));
  ck_assert_int_eq(ask(f.p, &r2, &h), 0);
  ck_assert_int_eq(r2.calls, 1);
  ck_assert_str_eq(r2.creds.access_key_id, "AKIDPROC1");
  ck_assert_int_eq(read_counter(&f), 1);
  fx_done(&f);
}
END_TEST

START_TEST(process_quoted_arguments) {
  struct fx f;
  fx_init(&f);
  fx_process_profile(&f, "args \"two words\" x");
  fx_chain(&f);
  struct result r = fx_get(&f);
  ck_assert_msg(r.ok, "%s", r.err.message);
  ck_assert_str_eq(r.creds.access_key_id, "AKIDPROCARGS");
  ck_assert_int_eq(r.creds.expires_at, 0); /* no Expiration: does not expire */
  fx_done(&f);
}
END_TEST

static struct result process_fails(const char *args, uint32_t timeout_ms) {
  struct fx f;
  fx_init(&f);
  fx_process_profile(&f, args);
  f.opts.process_timeout_ms = timeout_ms;
  fx_chain(&f);
  struct result r = fx_get(&f);
  ck_assert(!r.ok);
  ck_assert_int_eq(r.err.code, TT_ERR_BACKEND_UNAVAILABLE);
  fx_done(&f);
  return r;
}

START_TEST(process_failures) {
  struct result r = process_fails("fail", 0);
  ck_assert_str_eq(r.err.message,
                   "credentials: profile: credential_process exited with status 3");
  r = process_fails("v2", 0);
  ck_assert_str_eq(r.err.message,
                   "credentials: profile: credential_process output: Version is not 1");
  r = process_fails("big", 0);
  ck_assert_str_eq(r.err.message,
                   "credentials: profile: credential_process printed more than 65536 bytes");
  /* The child sleeps for an hour: the fetch ends only if the timeout kills it. */
  r = process_fails("sleep", 300);
  ck_assert_str_eq(r.err.message,
                   "credentials: profile: credential_process did not finish within 300 ms");
}
END_TEST

START_TEST(process_not_found) {
  struct fx f;
  fx_init(&f);
  char path[400];
  snprintf(path, sizeof(path), "%s/config", f.tmpdir);
  FILE *fp = fopen(path, "w");
  fprintf(fp, "[default]\ncredential_process = /nonexistent/tt-creds-helper --flag\n");
  fclose(fp);
  fx_env(&f, "AWS_CONFIG_FILE", path);
  fx_chain(&f);
  struct result r = fx_get(&f);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.err.message,
                   "credentials: profile: credential_process could not be started (ENOENT)");
  fx_done(&f);
}
END_TEST

START_TEST(concurrent_gets_share_one_fetch) {
  struct fx f;
  fx_init(&f);
  fx_process_profile(&f, "ok");
  fx_counter(&f);
  fx_chain(&f);
  struct result r[3];
  memset(r, 0, sizeof(r));
  void *h[3];
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq(ask(f.p, &r[i], &h[i]), 0);
  run_until(&f, &r[2].calls, 1);
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(r[i].calls, 1);
    ck_assert(r[i].ok);
    ck_assert_str_eq(r[i].creds.access_key_id, "AKIDPROC1");
  }
  ck_assert_int_eq(read_counter(&f), 1);
  fx_done(&f);
}
END_TEST

START_TEST(cancel_withdraws_one_get) {
  struct fx f;
  fx_init(&f);
  fx_process_profile(&f, "ok");
  fx_counter(&f);
  fx_chain(&f);
  struct result a, b;
  memset(&a, 0, sizeof(a));
  memset(&b, 0, sizeof(b));
  void *ha, *hb;
  ck_assert_int_eq(ask(f.p, &a, &ha), 0);
  ck_assert_int_eq(ask(f.p, &b, &hb), 0);
  tt_creds_cancel(f.p, ha);
  run_until(&f, &b.calls, 1);
  ck_assert_int_eq(a.calls, 0);
  ck_assert_int_eq(b.calls, 1);
  ck_assert(b.ok);
  /* cancelling every waiter still lets the fetch finish into the cache */
  fx_done(&f);
}
END_TEST

START_TEST(cancel_all_keeps_the_fetch) {
  struct fx f;
  fx_init(&f);
  fx_process_profile(&f, "ok");
  fx_counter(&f);
  fx_chain(&f);
  struct result a;
  memset(&a, 0, sizeof(a));
  void *ha;
  ck_assert_int_eq(ask(f.p, &a, &ha), 0);
  tt_creds_cancel(f.p, ha);
  uv_run(&f.loop, UV_RUN_DEFAULT); /* the process ends; nothing else keeps the loop */
  ck_assert_int_eq(a.calls, 0);
  struct result b;
  memset(&b, 0, sizeof(b));
  void *hb = (void *)1;
  ck_assert_int_eq(ask(f.p, &b, &hb), 0);
  ck_assert_int_eq(b.calls, 1); /* from the cache */
  ck_assert_ptr_null(hb);
  ck_assert_str_eq(b.creds.access_key_id, "AKIDPROC1");
  ck_assert_int_eq(read_counter(&f), 1);
  fx_done(&f);
}
END_TEST

static void find_process(uv_handle_t *h, void *arg) {
  if (h->type == UV_PROCESS && uv_is_active(h))
    *(bool *)arg = true;
}

/* Whether a child process runs on the loop. */
static bool child_running(uv_loop_t *loop) {
  bool found = false;
  uv_walk(loop, find_process, &found);
  return found;
}

START_TEST(close_fails_pending_gets_and_kills_the_process) {
  struct fx f;
  fx_init(&f);
  fx_process_profile(&f, "sleep");
  fx_chain(&f);
  struct result a;
  memset(&a, 0, sizeof(a));
  void *ha;
  ck_assert_int_eq(ask(f.p, &a, &ha), 0);
  for (int i = 0; i < 100000 && !child_running(&f.loop); i++)
    uv_run(&f.loop, UV_RUN_ONCE);
  ck_assert(child_running(&f.loop)); /* the profile was read: the child runs */
  tt_creds_close(f.p, on_closed, &f);
  ck_assert_int_eq(a.calls, 1);
  ck_assert(!a.ok);
  ck_assert_str_eq(a.err.message, "credentials: the provider is closing");
  ck_assert_int_eq(f.closed_calls, 0); /* later, once the child is reaped */
  struct result late;
  void *hl;
  ck_assert_int_eq(ask(f.p, &late, &hl), -ESHUTDOWN);
  run_until(&f, &f.closed_calls, 1); /* the child sleeps for an hour unless killed */
  tt_creds_destroy(f.p);
  f.p = NULL;
  fx_done(&f);
}
END_TEST

START_TEST(refresh_before_expiry_with_injected_clock) {
  struct fx f;
  fx_init(&f);
  fx_process_profile(&f, "ok"); /* Expiration 2030-01-01T00:00:00Z = T */
  fx_counter(&f);
  fx_chain(&f);
  const int64_t T = 1893456000;
  f.now = T - 3600;
  struct result r = fx_get(&f);
  ck_assert_str_eq(r.creds.access_key_id, "AKIDPROC1");
  ck_assert_int_eq(read_counter(&f), 1);

  /* 400 s left: fresh, answered from the cache, no refresh */
  f.now = T - 400;
  struct result s;
  memset(&s, 0, sizeof(s));
  void *h;
  ck_assert_int_eq(ask(f.p, &s, &h), 0);
  ck_assert_int_eq(s.calls, 1);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(read_counter(&f), 1);

  /* 200 s left (inside the 300 s window): peek answers the current
   * credentials and a refresh runs in the background */
  f.now = T - 200;
  memset(&s, 0, sizeof(s));
  ck_assert_int_eq(ask(f.p, &s, &h), 0);
  ck_assert_int_eq(s.calls, 1);
  ck_assert_str_eq(s.creds.access_key_id, "AKIDPROC1");
  uv_run(&f.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(read_counter(&f), 2);
  memset(&s, 0, sizeof(s));
  ck_assert_int_eq(ask(f.p, &s, &h), 0);
  ck_assert_int_eq(s.calls, 1);
  ck_assert_str_eq(s.creds.access_key_id, "AKIDPROC2");

  /* The new set expires at T too (inside the window): no refresh storm,
   * the next attempt waits retry_refresh_s (60 s). */
  f.now = T - 170;
  memset(&s, 0, sizeof(s));
  ck_assert_int_eq(ask(f.p, &s, &h), 0);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(read_counter(&f), 2);
  f.now = T - 139;
  memset(&s, 0, sizeof(s));
  ck_assert_int_eq(ask(f.p, &s, &h), 0);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(read_counter(&f), 3);

  /* 10 s left: too close to use; the get waits for a fetch, whose answer
   * expires as soon (at T): refused, not used to sign */
  f.now = T - 10;
  memset(&s, 0, sizeof(s));
  ck_assert_int_eq(ask(f.p, &s, &h), 0);
  ck_assert_int_eq(s.calls, 0);
  run_until(&f, &s.calls, 1);
  ck_assert(!s.ok);
  ck_assert_int_eq(s.err.code, TT_ERR_BACKEND_UNAVAILABLE);
  ck_assert_str_eq(s.err.message, "credentials: profile: the credentials it answered expire in "
                                  "10 s, too soon to sign with");
  ck_assert_int_eq(read_counter(&f), 4);
  fx_done(&f);
}
END_TEST

/* ---- work outside any request: the gauge, reads off the loop ---- */

struct busy_count {
  int now, max, starts;
};

static void on_busy(void *arg, int delta) {
  struct busy_count *b = arg;
  b->now += delta;
  ck_assert_int_ge(b->now, 0);
  if (delta > 0)
    b->starts++;
  if (b->now > b->max)
    b->max = b->now;
}

START_TEST(background_work_is_counted_and_returns_to_zero) {
  struct fx f;
  fx_init(&f);
  fx_process_profile(&f, "ok"); /* Expiration T */
  fx_counter(&f);
  struct busy_count b = {0, 0, 0};
  f.opts.busy = on_busy;
  f.opts.busy_arg = &b;
  fx_chain(&f);
  const int64_t T = 1893456000;
  f.now = T - 3600;
  /* The first fetch: files on the thread pool, then credential_process. */
  struct result r;
  memset(&r, 0, sizeof(r));
  void *h = NULL;
  ck_assert_int_eq(ask(f.p, &r, &h), 0);
  ck_assert_int_eq(b.now, 1);
  run_until(&f, &r.calls, 1);
  ck_assert(r.ok);
  ck_assert_int_eq(b.now, 0);
  /* A background refresh: peek answers at once, the fetch is counted
   * until it ends. */
  f.now = T - 200;
  memset(&r, 0, sizeof(r));
  ck_assert_int_eq(ask(f.p, &r, &h), 0);
  ck_assert_int_eq(r.calls, 1);
  ck_assert_int_eq(b.now, 1);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(b.now, 0);
  ck_assert_int_eq(read_counter(&f), 2);
  /* A fetch whose only waiter cancelled still counts until it ended. */
  f.now = T - 10;
  memset(&r, 0, sizeof(r));
  ck_assert_int_eq(ask(f.p, &r, &h), 0);
  ck_assert_int_eq(b.now, 1);
  tt_creds_cancel(f.p, h);
  ck_assert_int_eq(b.now, 1);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(b.now, 0);
  ck_assert_int_eq(r.calls, 0);
  ck_assert_int_eq(b.starts, 3);
  ck_assert_int_eq(b.max, 1);
  fx_done(&f);
  ck_assert_int_eq(b.now, 0);
}
END_TEST

/* A config file that is a FIFO blocks its reader until someone writes:
 * the loop must keep running meanwhile. */
struct fifo_fx {
  struct fx *f;
  char path[400];
  struct result *r;
  struct busy_count *b;
  bool close_first;
  int fired;
  uv_timer_t timer;
};

static void on_fifo_timer(uv_timer_t *t) {
  struct fifo_fx *x = t->data;
  int fd = open(x->path, O_WRONLY | O_NONBLOCK);
  if (fd < 0) { /* ENXIO: the worker has not opened it yet; try again */
    ck_assert_int_eq(errno, ENXIO);
    return;
  }
  x->fired++;
  uv_timer_stop(t);
  uv_close((uv_handle_t *)t, NULL);
  /* The loop runs while the read blocks: the get is still pending. */
  ck_assert_int_eq(x->r->calls, 0);
  ck_assert_int_eq(x->b->now, 1);
  if (x->close_first) {
    tt_creds_close(x->f->p, on_closed, x->f);
    ck_assert_int_eq(x->r->calls, 1); /* the waiter failed at once */
    ck_assert_int_eq(x->f->closed_calls, 0); /* the read is not joined yet */
  }
  /* The worker holds the read end: write the file, then end it. */
  static const char text[] = "[profile dev]\nregion = eu-west-1\n";
  ck_assert_int_eq(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
  close(fd);
}

static void fifo_case(bool close_first) {
  struct fx f;
  fx_init(&f);
  struct fifo_fx x;
  memset(&x, 0, sizeof(x));
  x.f = &f;
  x.close_first = close_first;
  snprintf(x.path, sizeof(x.path), "%s/config", f.tmpdir);
  ck_assert_int_eq(mkfifo(x.path, 0600), 0);
  fx_env(&f, "AWS_CONFIG_FILE", x.path);
  fx_env(&f, "AWS_SHARED_CREDENTIALS_FILE", data_path("credentials"));
  fx_env(&f, "AWS_PROFILE", "dev");
  fx_env(&f, "AWS_EC2_METADATA_DISABLED", "true");
  struct busy_count b = {0, 0, 0};
  f.opts.busy = on_busy;
  f.opts.busy_arg = &b;
  fx_chain(&f);
  struct result r;
  memset(&r, 0, sizeof(r));
  x.r = &r;
  x.b = &b;
  void *h = NULL;
  ck_assert_int_eq(ask(f.p, &r, &h), 0);
  ck_assert_int_eq(r.calls, 0);
  ck_assert_int_eq(uv_timer_init(&f.loop, &x.timer), 0);
  x.timer.data = &x;
  ck_assert_int_eq(uv_timer_start(&x.timer, on_fifo_timer, 1, 1), 0);
  if (close_first) {
    run_until(&f, &f.closed_calls, 1);
    ck_assert_int_eq(x.fired, 1);
    ck_assert(!r.ok);
    ck_assert_int_eq(b.now, 0);
    tt_creds_destroy(f.p);
    f.p = NULL; /* fx_done: closed and destroyed already */
  } else {
    run_until(&f, &r.calls, 1);
    ck_assert_int_eq(x.fired, 1);
    ck_assert_msg(r.ok, "%s", r.err.message);
    ck_assert_str_eq(r.creds.access_key_id, "AKIDDEVCREDS");
    ck_assert_int_eq(b.now, 0);
  }
  fx_done(&f); /* uv_loop_close must be 0: the read was joined */
}

START_TEST(profile_files_are_read_off_the_loop) {
  fifo_case(false);
}
END_TEST

START_TEST(close_joins_a_blocked_file_read) {
  fifo_case(true);
}
END_TEST

START_TEST(failed_background_refresh_keeps_current_credentials) {
  struct fx f;
  fx_init(&f);
  char path[400];
  snprintf(path, sizeof(path), "%s/config", f.tmpdir);
  fx_process_profile(&f, "ok");
  fx_chain(&f);
  const int64_t T = 1893456000;
  struct result r = fx_get(&f);
  ck_assert(r.ok);
  /* break the profile: the tool now fails */
  FILE *fp = fopen(path, "w");
  fprintf(fp, "[profile proc]\ncredential_process = /bin/sh \"%s\" fail\n",
          data_path("process.sh"));
  fclose(fp);
  f.now = T - 100;
  struct result s;
  memset(&s, 0, sizeof(s));
  void *h;
  ck_assert_int_eq(ask(f.p, &s, &h), 0);
  ck_assert(s.ok);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  ck_assert_ptr_nonnull(strstr(f.log, "credential_process exited with status 3 (keeping the "
                                      "current credentials)"));
  memset(&s, 0, sizeof(s));
  ck_assert_int_eq(ask(f.p, &s, &h), 0);
  ck_assert_int_eq(s.calls, 1);
  ck_assert(s.ok);
  ck_assert_str_eq(s.creds.access_key_id, "AKIDPROC1");
  fx_done(&f);
}
END_TEST

/* ---- IMDSv2 ---- */

static const char imds_creds_json[] =
    "{\"Code\":\"Success\",\"LastUpdated\":\"2029-12-31T23:00:00Z\",\"Type\":\"AWS-HMAC\","
    "\"AccessKeyId\":\"ASIAIMDS\",\"SecretAccessKey\":\"SECRETIMDS\",\"Token\":\"TOKENIMDS\","
    "\"Expiration\":\"2030-01-01T00:00:00Z\"}";

static const struct route imds_routes[] = {
    {"PUT", "/latest/api/token", 200, "IMDSSESSIONTOKEN", NULL,
     "x-aws-ec2-metadata-token-ttl-seconds: 21600\r\n", 0},
    {"GET", "/latest/meta-data/iam/security-credentials/", 200, "demo-role\n", NULL, NULL, 0},
    {"GET", "/latest/meta-data/iam/security-credentials/demo-role", 200, imds_creds_json, NULL,
     NULL, 0},
};

START_TEST(imds_v2_flow) {
  struct fx f;
  fx_init(&f);
  fx_http(&f, imds_routes, 3);
  fx_env(&f, "AWS_EC2_METADATA_SERVICE_ENDPOINT", fx_server_url(&f, "/"));
  fx_chain(&f);
  struct result r = fx_get(&f);
  ck_assert_msg(r.ok, "%s", r.err.message);
  ck_assert_str_eq(r.creds.access_key_id, "ASIAIMDS");
  ck_assert_str_eq(r.creds.secret_access_key, "SECRETIMDS");
  ck_assert_str_eq(r.creds.session_token, "TOKENIMDS");
  ck_assert_int_eq(r.creds.expires_at, 1893456000);
  ck_assert_str_eq(r.creds.source, "imds");
  ck_assert_uint_eq(f.srv.n_seen, 3);
  char v[256];
  ck_assert_str_eq(f.srv.seen[0].method, "PUT");
  ck_assert_str_eq(f.srv.seen[0].path, "/latest/api/token");
  ck_assert_ptr_nonnull(seen_header(&f.srv.seen[0], "x-aws-ec2-metadata-token-ttl-seconds", v,
                                    sizeof(v)));
  ck_assert_str_eq(v, "21600");
  ck_assert_str_eq(f.srv.seen[1].method, "GET");
  ck_assert_str_eq(f.srv.seen[1].path, "/latest/meta-data/iam/security-credentials/");
  ck_assert_ptr_nonnull(seen_header(&f.srv.seen[1], "x-aws-ec2-metadata-token", v, sizeof(v)));
  ck_assert_str_eq(v, "IMDSSESSIONTOKEN");
  ck_assert_str_eq(f.srv.seen[2].path, "/latest/meta-data/iam/security-credentials/demo-role");
  ck_assert_ptr_nonnull(seen_header(&f.srv.seen[2], "x-aws-ec2-metadata-token", v, sizeof(v)));
  ck_assert_str_eq(v, "IMDSSESSIONTOKEN");

  /* A refresh reuses the session token: no second PUT. */
  f.now = 1893456000 - 100;
  struct result s;
  memset(&s, 0, sizeof(s));
  void *h;
  ck_assert_int_eq(ask(f.p, &s, &h), 0);
  ck_assert(s.ok);
  for (int i = 0; i < 1000 && f.srv.n_seen < 5; i++)
    uv_run(&f.loop, UV_RUN_ONCE);
  ck_assert_uint_eq(f.srv.n_seen, 5);
  ck_assert_str_eq(f.srv.seen[3].method, "GET");
  ck_assert_str_eq(f.srv.seen[4].method, "GET");
  fx_done(&f);
}
END_TEST

START_TEST(imds_no_role) {
  static const struct route routes[] = {
      {"PUT", "/latest/api/token", 200, "IMDSSESSIONTOKEN", NULL, NULL, 0},
  };
  struct fx f;
  fx_init(&f);
  fx_http(&f, routes, 1);
  fx_env(&f, "AWS_EC2_METADATA_SERVICE_ENDPOINT", fx_server_url(&f, ""));
  fx_chain(&f);
  struct result r = fx_get(&f);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.err.message, "credentials: imds: no IAM role is attached to this instance");
  fx_done(&f);
}
END_TEST

START_TEST(imds_unreachable_and_disabled) {
  struct fx f;
  fx_init(&f);
  fx_http(&f, NULL, 0);
  fx_env(&f, "AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:1"); /* nothing listens */
  fx_chain(&f);
  struct result r = fx_get(&f);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.err.message, "credentials: imds: could not connect (token request)");
  fx_done(&f);

  fx_init(&f);
  fx_http(&f, NULL, 0);
  fx_env(&f, "AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:1");
  fx_env(&f, "AWS_EC2_METADATA_DISABLED", "TRUE");
  fx_chain(&f);
  r = fx_get(&f);
  ck_assert(!r.ok);
  ck_assert_ptr_nonnull(strstr(r.err.message, "no provider is configured"));
  fx_done(&f);
}
END_TEST

/* ---- container ---- */

static const char container_json[] =
    "{\"AccessKeyId\":\"ASIACONTAINER\",\"SecretAccessKey\":\"SECRETCONTAINER\","
    "\"Token\":\"TOKENCONTAINER\",\"Expiration\":\"2030-01-01T00:00:00Z\","
    "\"RoleArn\":\"arn:aws:iam::123456789012:role/task\"}";

static const struct route container_routes[] = {
    {"GET", "/v2/credentials/6f1c-uuid", 200, container_json, NULL, NULL, 0},
    {"GET", "/pod-creds", 200, container_json, NULL, NULL, 0},
    {"GET", "/slow", 200, container_json, NULL, NULL, 3600000},
};

START_TEST(container_relative_uri) {
  struct fx f;
  fx_init(&f);
  fx_http(&f, container_routes, 3);
  f.opts.container_endpoint = fx_server_url(&f, "");
  fx_env(&f, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/6f1c-uuid");
  fx_env(&f, "AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:1");
  fx_chain(&f);
  struct result r = fx_get(&f);
  ck_assert_msg(r.ok, "%s", r.err.message);
  ck_assert_str_eq(r.creds.access_key_id, "ASIACONTAINER");
  ck_assert_str_eq(r.creds.secret_access_key, "SECRETCONTAINER");
  ck_assert_str_eq(r.creds.session_token, "TOKENCONTAINER");
  ck_assert_str_eq(r.creds.source, "container");
  ck_assert_uint_eq(f.srv.n_seen, 1);
  ck_assert_str_eq(f.srv.seen[0].method, "GET");
  ck_assert_str_eq(f.srv.seen[0].path, "/v2/credentials/6f1c-uuid");
  char v[256];
  ck_assert_ptr_null(seen_header(&f.srv.seen[0], "authorization", v, sizeof(v)));
  fx_done(&f);
}
END_TEST

START_TEST(container_full_uri_with_token_file_and_env) {
  struct fx f;
  fx_init(&f);
  fx_http(&f, container_routes, 3);
  fx_env(&f, "AWS_CONTAINER_CREDENTIALS_FULL_URI", fx_server_url(&f, "/pod-creds"));
  fx_env(&f, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", data_path("eks_token"));
  fx_env(&f, "AWS_CONTAINER_AUTHORIZATION_TOKEN", "AUTHENVTOKEN");
  fx_chain(&f);
  struct result r = fx_get(&f);
  ck_assert_msg(r.ok, "%s", r.err.message);
  ck_assert_str_eq(r.creds.access_key_id, "ASIACONTAINER");
  char v[256];
  ck_assert_str_eq(f.srv.seen[0].path, "/pod-creds");
  ck_assert_ptr_nonnull(seen_header(&f.srv.seen[0], "authorization", v, sizeof(v)));
  ck_assert_str_eq(v, "Bearer-EKSTOKEN"); /* the file wins, trimmed */
  fx_done(&f);

  fx_init(&f);
  fx_http(&f, container_routes, 3);
  fx_env(&f, "AWS_CONTAINER_CREDENTIALS_FULL_URI", fx_server_url(&f, "/pod-creds"));
  fx_env(&f, "AWS_CONTAINER_AUTHORIZATION_TOKEN", "AUTHENVTOKEN");
  fx_chain(&f);
  r = fx_get(&f);
  ck_assert(r.ok);
  ck_assert_ptr_nonnull(seen_header(&f.srv.seen[0], "authorization", v, sizeof(v)));
  ck_assert_str_eq(v, "AUTHENVTOKEN");
  fx_done(&f);
}
END_TEST

START_TEST(container_full_uri_host_rules) {
  const char *bad[] = {"http://10.0.0.1/creds", "http://example.com/creds",
                       "http://169.254.170.3/x"};
  for (size_t i = 0; i < 3; i++) {
    struct fx f;
    fx_init(&f);
    fx_http(&f, NULL, 0);
    fx_env(&f, "AWS_CONTAINER_CREDENTIALS_FULL_URI", bad[i]);
    fx_chain(&f);
    struct result r = fx_get(&f);
    ck_assert(!r.ok);
    ck_assert_str_eq(r.err.message,
                     "credentials: container: AWS_CONTAINER_CREDENTIALS_FULL_URI must be https "
                     "or name a loopback, ECS or EKS Pod Identity address");
    fx_done(&f);
  }
}
END_TEST

START_TEST(container_error_status) {
  static const struct route routes[] = {
      {"GET", "/v2/credentials/x", 500, "{\"code\":\"x\",\"message\":\"SECRETCONTAINER\"}", NULL,
       NULL, 0},
  };
  struct fx f;
  fx_init(&f);
  fx_http(&f, routes, 1);
  f.opts.container_endpoint = fx_server_url(&f, "");
  fx_env(&f, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/x");
  fx_chain(&f);
  struct result r = fx_get(&f);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.err.message, "credentials: container: the container endpoint answered "
                                  "HTTP 500");
  fx_done(&f);
}
END_TEST

/* Credentials the container endpoint answers already expired are refused
 * (never used to sign), logged once, and not fetched again on every get:
 * the failure is answered during a back-off of 1 s doubling to 60 s. */
START_TEST(container_expired_credentials_refused_and_backed_off) {
  static const char expired_json[] =
      "{\"AccessKeyId\":\"ASIACONTAINER\",\"SecretAccessKey\":\"SECRETCONTAINER\","
      "\"Token\":\"TOKENCONTAINER\",\"Expiration\":\"2004-01-31T00:00:00Z\"}";
  static const struct route routes[] = {
      {"GET", "/v2/credentials/old", 200, expired_json, NULL, NULL, 0},
  };
  struct fx f;
  fx_init(&f);
  fx_http(&f, routes, 1);
  f.opts.container_endpoint = fx_server_url(&f, "");
  fx_env(&f, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/old");
  fx_chain(&f);
  struct result r = fx_get(&f);
  ck_assert(!r.ok);
  ck_assert_int_eq(r.err.code, TT_ERR_BACKEND_UNAVAILABLE);
  ck_assert_str_eq(r.err.message,
                   "credentials: container: the credentials it answered expired 817945200 s ago");
  for (int i = 0; i < 10; i++) { /* ten requests in the same second */
    struct result q;
    memset(&q, 0, sizeof(q));
    void *h;
    ck_assert_int_eq(ask(f.p, &q, &h), 0);
    ck_assert_int_eq(q.calls, 1); /* peek answers the failure, without a fetch */
    ck_assert(!q.ok);
    ck_assert_str_eq(q.err.message, r.err.message);
  }
  ck_assert_uint_eq(f.srv.n_seen, 1);
  f.now += 1; /* the first back-off (1 s) is over: one fetch */
  r = fx_get(&f);
  ck_assert(!r.ok);
  ck_assert_uint_eq(f.srv.n_seen, 2);
  f.now += 1; /* the second is 2 s */
  r = fx_get(&f);
  ck_assert_uint_eq(f.srv.n_seen, 2);
  f.now += 1;
  r = fx_get(&f);
  ck_assert_uint_eq(f.srv.n_seen, 3);
  /* One log line for the run of equal failures, none saying "resolved". */
  const char *first = strstr(f.log, "expired 817945200 s ago");
  ck_assert_ptr_nonnull(first);
  ck_assert_ptr_null(strstr(first + 1, "expired 8180"));
  ck_assert_ptr_null(strstr(f.log, "resolved"));
  fx_done(&f);
}
END_TEST

START_TEST(close_cancels_an_http_fetch) {
  struct fx f;
  fx_init(&f);
  fx_http(&f, container_routes, 3);
  f.opts.container_endpoint = fx_server_url(&f, "");
  fx_env(&f, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/slow");
  fx_chain(&f);
  struct result a, b;
  memset(&a, 0, sizeof(a));
  memset(&b, 0, sizeof(b));
  void *ha, *hb;
  ck_assert_int_eq(ask(f.p, &a, &ha), 0);
  ck_assert_int_eq(ask(f.p, &b, &hb), 0);
  for (int i = 0; i < 1000 && f.srv.n_seen < 1; i++)
    uv_run(&f.loop, UV_RUN_ONCE);
  ck_assert_uint_eq(f.srv.n_seen, 1); /* the request reached the server */
  tt_creds_cancel(f.p, ha);
  tt_creds_close(f.p, on_closed, &f);
  ck_assert_int_eq(a.calls, 0);
  ck_assert_int_eq(b.calls, 1);
  ck_assert_str_eq(b.err.message, "credentials: the provider is closing");
  run_until(&f, &f.closed_calls, 1); /* the server answers after an hour: canceled */
  tt_creds_destroy(f.p);
  f.p = NULL;
  fx_done(&f);
}
END_TEST

/* ---- web identity (STS) ---- */

static const struct route sts_routes[] = {
    {"POST", "/", 200, NULL, "sts_ok.xml", NULL, 0},
};

START_TEST(web_identity_assume_role) {
  struct fx f;
  fx_init(&f);
  fx_http(&f, sts_routes, 1);
  f.opts.sts_endpoint = fx_server_url(&f, "/");
  fx_env(&f, "AWS_WEB_IDENTITY_TOKEN_FILE", data_path("web_token"));
  fx_env(&f, "AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/demo");
  fx_env(&f, "AWS_ROLE_SESSION_NAME", "sess-1");
  /* container is configured too, but web identity comes first */
  fx_env(&f, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/x");
  fx_chain(&f);
  struct result r = fx_get(&f);
  ck_assert_msg(r.ok, "%s", r.err.message);
  ck_assert_str_eq(r.creds.access_key_id, "ASIASTSEXAMPLE");
  ck_assert_str_eq(r.creds.secret_access_key, "SECRETSTS&x/y"); /* entities decoded */
  ck_assert_str_eq(r.creds.session_token, "TOKENSTS/abc+def==");
  ck_assert_int_eq(r.creds.expires_at, 1893456000);
  ck_assert_str_eq(r.creds.source, "web-identity");
  ck_assert_uint_eq(f.srv.n_seen, 1);
  const struct seen *sn = &f.srv.seen[0];
  ck_assert_str_eq(sn->method, "POST");
  ck_assert_str_eq(sn->path, "/");
  char v[256];
  ck_assert_ptr_nonnull(seen_header(sn, "content-type", v, sizeof(v)));
  ck_assert_str_eq(v, "application/x-www-form-urlencoded");
  ck_assert_str_eq(sn->body,
                   "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=arn%3Aaws%3Aiam%"
                   "3A%3A123456789012%3Arole%2Fdemo&RoleSessionName=sess-1&WebIdentityToken="
                   "WEBTOKEN.eyJhbGciOi%2Bx%2Fy%3D");
  ck_assert_ptr_null(seen_header(sn, "authorization", v, sizeof(v))); /* unsigned call */
  fx_done(&f);
}
END_TEST

START_TEST(web_identity_from_profile) {
  struct fx f;
  fx_init(&f);
  fx_http(&f, sts_routes, 1);
  f.opts.sts_endpoint = fx_server_url(&f, "");
  char path[400];
  snprintf(path, sizeof(path), "%s/config", f.tmpdir);
  FILE *fp = fopen(path, "w");
  fprintf(fp, "[profile wi]\nrole_arn = arn:aws:iam::123456789012:role/demo\n"
              "web_identity_token_file = %s\nrole_session_name = fromprofile\n",
          data_path("web_token"));
  fclose(fp);
  fx_env(&f, "AWS_CONFIG_FILE", path);
  fx_env(&f, "AWS_PROFILE", "wi");
  fx_chain(&f);
  struct result r = fx_get(&f);
  ck_assert_msg(r.ok, "%s", r.err.message);
  ck_assert_str_eq(r.creds.source, "profile");
  ck_assert_str_eq(r.creds.access_key_id, "ASIASTSEXAMPLE");
  ck_assert_ptr_nonnull(strstr(f.srv.seen[0].body, "&RoleSessionName=fromprofile&"));
  fx_done(&f);
}
END_TEST

START_TEST(web_identity_errors) {
  static const struct route routes[] = {
      {"POST", "/", 400, NULL, "sts_error.xml", NULL, 0},
  };
  struct fx f;
  fx_init(&f);
  fx_http(&f, routes, 1);
  f.opts.sts_endpoint = fx_server_url(&f, "/");
  fx_env(&f, "AWS_WEB_IDENTITY_TOKEN_FILE", data_path("web_token"));
  fx_env(&f, "AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/demo");
  fx_chain(&f);
  struct result r = fx_get(&f);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.err.message,
                   "credentials: web-identity: STS answered HTTP 400 (InvalidIdentityToken)");
  /* the generated session name is used when none is configured */
  ck_assert_ptr_nonnull(strstr(f.srv.seen[0].body, "&RoleSessionName=tabletheoryd-"));
  fx_done(&f);

  fx_init(&f);
  fx_http(&f, NULL, 0);
  fx_env(&f, "AWS_WEB_IDENTITY_TOKEN_FILE", "/nonexistent/token");
  fx_env(&f, "AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/demo");
  fx_chain(&f);
  r = fx_get(&f);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.err.message,
                   "credentials: web-identity: the web identity token file cannot be read");
  fx_done(&f);

  fx_init(&f);
  fx_env(&f, "AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/demo");
  fx_chain(&f); /* no HTTP client needed to see the configuration error */
  r = fx_get(&f);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.err.message, "credentials: web-identity: AWS_ROLE_ARN is set but "
                                  "AWS_WEB_IDENTITY_TOKEN_FILE is not");
  fx_done(&f);
}
END_TEST

START_TEST(sts_bad_xml) {
  static const struct route routes[] = {
      {"POST", "/", 200,
       "<R><Credentials><AccessKeyId>A</AccessKeyId><SecretAccessKey>SECRETSTS<x/>"
       "</SecretAccessKey></Credentials></R>",
       NULL, NULL, 0},
  };
  struct fx f;
  fx_init(&f);
  fx_http(&f, routes, 1);
  f.opts.sts_endpoint = fx_server_url(&f, "/");
  fx_env(&f, "AWS_WEB_IDENTITY_TOKEN_FILE", data_path("web_token"));
  fx_env(&f, "AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/demo");
  fx_chain(&f);
  struct result r = fx_get(&f);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.err.message,
                   "credentials: web-identity: the STS response has no valid SecretAccessKey");
  fx_done(&f);
}
END_TEST

START_TEST(container_wins_over_imds) {
  struct fx f;
  fx_init(&f);
  fx_http(&f, container_routes, 3);
  f.opts.container_endpoint = fx_server_url(&f, "");
  fx_env(&f, "AWS_EC2_METADATA_SERVICE_ENDPOINT", fx_server_url(&f, ""));
  fx_env(&f, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/6f1c-uuid");
  fx_chain(&f);
  struct result r = fx_get(&f);
  ck_assert(r.ok);
  ck_assert_str_eq(r.creds.source, "container");
  ck_assert_uint_eq(f.srv.n_seen, 1); /* no IMDS token request */
  fx_done(&f);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("credentials");
  TCase *tc = tcase_create("parsers");
  tcase_add_test(tc, parse_time_known_answers);
  tcase_add_test(tc, json_credentials_fields);
  suite_add_tcase(s, tc);
  tc = tcase_create("local");
  tcase_set_timeout(tc, 20);
  tcase_add_test(tc, static_provider_peeks_synchronously_and_gets_later);
  tcase_add_test(tc, static_provider_validates);
  tcase_add_test(tc, background_work_is_counted_and_returns_to_zero);
  tcase_add_test(tc, profile_files_are_read_off_the_loop);
  tcase_add_test(tc, close_joins_a_blocked_file_read);
  tcase_add_test(tc, env_provider);
  tcase_add_test(tc, cache_hit_peek_is_synchronous_get_is_not);
  tcase_add_test(tc, env_provider_partial_is_an_error);
  tcase_add_test(tc, profile_default_credentials_file_wins);
  tcase_add_test(tc, profile_named_sections);
  tcase_add_test(tc, profile_errors);
  tcase_add_test(tc, profile_without_credentials_is_skipped);
  tcase_add_test(tc, chain_env_wins_over_profile);
  tcase_add_test(tc, chain_profile_wins_over_web_identity_and_imds);
  tcase_add_test(tc, home_finds_dot_aws);
  tcase_add_test(tc, process_ok);
  tcase_add_test(tc, process_quoted_arguments);
  tcase_add_test(tc, process_failures);
  tcase_add_test(tc, process_not_found);
  tcase_add_test(tc, concurrent_gets_share_one_fetch);
  tcase_add_test(tc, cancel_withdraws_one_get);
  tcase_add_test(tc, cancel_all_keeps_the_fetch);
  tcase_add_test(tc, close_fails_pending_gets_and_kills_the_process);
  tcase_add_test(tc, refresh_before_expiry_with_injected_clock);
  tcase_add_test(tc, failed_background_refresh_keeps_current_credentials);
  suite_add_tcase(s, tc);
  tc = tcase_create("http");
  tcase_set_timeout(tc, 20);
  tcase_add_test(tc, imds_v2_flow);
  tcase_add_test(tc, imds_no_role);
  tcase_add_test(tc, imds_unreachable_and_disabled);
  tcase_add_test(tc, container_relative_uri);
  tcase_add_test(tc, container_full_uri_with_token_file_and_env);
  tcase_add_test(tc, container_full_uri_host_rules);
  tcase_add_test(tc, container_error_status);
  tcase_add_test(tc, container_expired_credentials_refused_and_backed_off);
  tcase_add_test(tc, close_cancels_an_http_fetch);
  tcase_add_test(tc, web_identity_assume_role);
  tcase_add_test(tc, web_identity_from_profile);
  tcase_add_test(tc, web_identity_errors);
  tcase_add_test(tc, sts_bad_xml);
  tcase_add_test(tc, container_wins_over_imds);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  const char *d = getenv("TT_TEST_DATA");
  snprintf(data_dir, sizeof(data_dir), "%s", d ? d : "tests/data");
  /* credential_process paths in generated profiles must be absolute */
  char *abs = realpath(data_dir, NULL);
  if (abs) {
    snprintf(data_dir, sizeof(data_dir), "%s", abs);
    free(abs);
  }
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
