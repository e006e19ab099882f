/* SPDX-License-Identifier: Apache-2.0 */
/* creds_http.c -- the providers that fetch over HTTP on the loop: STS
 * AssumeRoleWithWebIdentity, the ECS/EKS container endpoint and EC2 IMDSv2,
 * reading the STS answer with sts_xml.c. */
#include <arpa/inet.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backend/dynamodb/creds_internal.h"
#include "backend/dynamodb/endpoint.h"
#include "backend/dynamodb/http.h"
#include "backend/dynamodb/sigv4.h"
#include "backend/dynamodb/sts_xml.h"
#include "util/buf.h"
#include "util/text.h"

#define TOKEN_FILE_CAP CREDS_TOKEN_FILE_CAP
#define IMDS_TOKEN_TTL 21600

enum op_kind { OP_STS, OP_CONTAINER, OP_IMDS };
enum imds_step { IMDS_TOKEN, IMDS_ROLE, IMDS_CREDS };

struct creds_http_op {
  /* A step starts the next request on the same call from the previous
   * one's done callback (docs/internals/completions.md). */
  struct tt_http_call call;
  bool in_flight;
  struct creds_job *job;
  enum op_kind kind;
  enum imds_step step;
  bool retried; /* IMDS: one retry with a fresh token after a 401 */
  const char *source;
  char *body; /* STS form body (holds the web identity token); wiped */
  size_t body_len;
  char url[2048]; /* STS and container: the request URL; IMDS: the base */
  char role[160];
};

static const char *transport_reason(enum tt_http_transport t) {
  static const char *const names[] = {[TT_HTTP_OK] = "ok",
      [TT_HTTP_TIMEOUT] = "the request timed out", [TT_HTTP_CONNECT] = "could not connect",
      [TT_HTTP_RESET] = "the connection was reset",
      [TT_HTTP_TLS] = "TLS handshake or verification failed",
      [TT_HTTP_CANCELED] = "the request was cancelled",
      [TT_HTTP_TOO_LARGE] = "the response is too large"};
  return TT_NAME_OF(names, t, "the transfer failed");
}

static void op_free(struct creds_http_op *op) {
  creds_free_secret(op->body, op->body_len + 1);
  OPENSSL_cleanse(op, sizeof(*op));
  free(op);
}

static void on_done(struct tt_http_call *call, struct tt_http_response *resp, void *arg);

/* Starts one request of `op`. Header strings are copied by tt_http_start,
 * so callers wipe theirs right after. Returns 0 or a negative code. */
static int op_send(struct creds_http_op *op, const char *method, const char *url,
                   const char *h1, const char *h2, uint32_t timeout_ms) {
  const char *headers[3] = {h1, h1 ? h2 : NULL, NULL};
  struct tt_http_request req = {
      .method = method,
      .url = url,
      .headers = headers,
      .body = op->body,
      .body_len = op->body ? op->body_len : 0,
      .timeout_ms = timeout_ms,
      .connect_timeout_ms = timeout_ms,
  };
  int rc = tt_http_start(op->job->ch->http, &op->call, &req, on_done, op);
  op->in_flight = rc == 0;
  return rc;
}

/* What a job's start returns once op_send said `src`: CREDS_ASYNC, the
 * job owning *op, or CREDS_FAIL naming `what`, *op freed. *op is NULL
 * then. */
static int op_started(struct creds_job *job, struct creds_http_op **op, const char *what,
                      int src) {
  if (src != 0) {
    op_free(*op);
    *op = NULL;
    return creds_job_fail(job, "%s could not be started (%s)", what, uv_err_name(src));
  }
  job->http = *op;
  *op = NULL;
  return CREDS_ASYNC;
}

/* A new operation of `job`; NULL with job->err set when there is no HTTP
 * client or no memory. */
static struct creds_http_op *op_new(struct creds_job *job, enum op_kind kind, const char *source) {
  struct creds_http_op *op = job->ch->http ? calloc(1, sizeof(*op)) : NULL;
  if (op == NULL) {
    creds_job_fail(job, job->ch->http ? "out of memory" : "no HTTP client is configured");
    return NULL;
  }
  op->job = job;
  op->kind = kind;
  op->source = source;
  return op;
}

void creds_http_cancel(struct creds_job *job) {
  struct creds_http_op *op = job->http;
  if (op && op->in_flight)
    tt_http_cancel(job->ch->http, &op->call);
}

/* Reads a token file, trimming surrounding whitespace. Returns 0 and a new
 * buffer (free with creds_free_secret(*out, *cap_out)), or -1 with *why. */
static int read_token(const struct creds_chain *ch, const char *path, char **out,
                      size_t *alloc_len, size_t *len, const char **why) {
  char *buf = NULL;
  size_t n = 0;
  if (creds_read_file(ch, path, TOKEN_FILE_CAP, &buf, &n) != 0) {
    *why = "cannot be read";
    return -1;
  }
  size_t s = 0, e = n;
  while (s < e && (buf[s] == ' ' || buf[s] == '\t' || buf[s] == '\r' || buf[s] == '\n'))
    s++;
  while (e > s && (buf[e - 1] == ' ' || buf[e - 1] == '\t' || buf[e - 1] == '\r' ||
                   buf[e - 1] == '\n'))
    e--;
  for (size_t i = s; i < e; i++) {
    unsigned char c = (unsigned char)buf[i];
    if (c < 0x20 || c == 0x7f) { /* no header or form injection */
      creds_free_secret(buf, n + 1);
      *why = "holds control characters";
      return -1;
    }
  }
  if (s == e) {
    creds_free_secret(buf, n + 1);
    *why = "is empty";
    return -1;
  }
  memmove(buf, buf + s, e - s);
  buf[e - s] = '\0';
  *out = buf;
  *alloc_len = n + 1;
  *len = e - s;
  return 0;
}

/* ---- STS AssumeRoleWithWebIdentity ---- */

/* The STS URL: an override (option, AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL)
 * or the regional endpoint. Returns 0 or -1 with *why. */
static int sts_url(const struct creds_chain *ch, char *buf, size_t n, const char **why) {
  const char *ep = ch->sts_endpoint;
  if (ep == NULL)
    ep = creds_env(ch, "AWS_ENDPOINT_URL_STS");
  if (ep == NULL)
    ep = creds_env(ch, "AWS_ENDPOINT_URL");
  int w;
  if (ep) {
    size_t len = strlen(ep);
    while (len > 0 && ep[len - 1] == '/')
      len--;
    w = snprintf(buf, n, "%.*s/", (int)len, ep);
  } else {
    char region[64];
    const char *r = ch->region;
    if (r == NULL)
      r = creds_env(ch, "AWS_REGION");
    if (r == NULL)
      r = creds_env(ch, "AWS_DEFAULT_REGION");
    if (r == NULL) {
      creds_profile_region(ch, region, sizeof(region));
      r = region[0] ? region : "us-east-1";
    }
    if (strlen(r) > 32 || !tt_aws_region_ok(r)) {
      *why = "the region is not a valid region name";
      return -1;
    }
    w = snprintf(buf, n, "https://sts.%s.amazonaws.com%s/", r,
                 strncmp(r, "cn-", 3) == 0 ? ".cn" : "");
  }
  if (w < 0 || (size_t)w >= n) {
    *why = "the STS endpoint is too long";
    return -1;
  }
  return 0;
}

int creds_sts_start(struct creds_job *job, const char *role_arn, const char *session_name,
                    const char *token_file, const char *source) {
  struct creds_chain *ch = job->ch;
  const char *why = NULL;
  char *tok = NULL;
  size_t tok_alloc = 0, tok_len = 0;
  char gen_name[64];
  int rc = CREDS_FAIL;
  struct creds_http_op *op = op_new(job, OP_STS, source);
  if (op == NULL)
    return CREDS_FAIL;
  if (sts_url(ch, op->url, sizeof(op->url), &why) != 0) {
    creds_job_fail(job, "%s", why);
    goto fail;
  }
  if (read_token(ch, token_file, &tok, &tok_alloc, &tok_len, &why) != 0) {
    creds_job_fail(job, "the web identity token file %s", why);
    goto fail;
  }
  if (session_name == NULL) {
    uint64_t ms = uv_now(ch->loop);
    snprintf(gen_name, sizeof(gen_name), "tabletheoryd-%lld-%llu", (long long)creds_now(ch),
             (unsigned long long)(ms % 1000000));
    session_name = gen_name;
  }
  /* Worst case every byte is percent-encoded. The room is taken at once,
   * so that no copy of the token is left behind by a growing buffer. */
  struct tt_buf form;
  tt_buf_init(&form, 160 + 3 * (strlen(role_arn) + strlen(session_name) + tok_len));
  if (tt_buf_reserve(&form, form.cap) != 0) {
    creds_job_fail(job, "out of memory");
    goto fail;
  }
  int frc = tt_sigv4_form_append(&form, "Action", "AssumeRoleWithWebIdentity", 25) |
            tt_sigv4_form_append(&form, "Version", "2011-06-15", 10) |
            tt_sigv4_form_append(&form, "RoleArn", role_arn, strlen(role_arn)) |
            tt_sigv4_form_append(&form, "RoleSessionName", session_name, strlen(session_name)) |
            tt_sigv4_form_append(&form, "WebIdentityToken", tok, tok_len);
  op->body = form.data; /* every byte written is below body_len + 1: op_free wipes them */
  op->body_len = form.len;
  if (frc != 0) {
    creds_job_fail(job, "the request does not fit");
    goto fail;
  }
  /* POST keeps the token out of the URL, which proxies and logs record. */
  rc = op_started(job, &op, "the STS request",
                  op_send(op, "POST", op->url, "Content-Type: application/x-www-form-urlencoded",
                          "Accept: text/xml", CREDS_HTTP_TIMEOUT_MS));
fail:
  creds_free_secret(tok, tok_alloc);
  if (op)
    op_free(op);
  return rc;
}

int creds_web_identity_start(struct creds_job *job) {
  const struct creds_chain *ch = job->ch;
  const char *file = creds_env(ch, "AWS_WEB_IDENTITY_TOKEN_FILE");
  const char *role = creds_env(ch, "AWS_ROLE_ARN");
  if (file == NULL && role == NULL)
    return CREDS_SKIP;
  if (file == NULL)
    return creds_job_fail(job, "AWS_ROLE_ARN is set but AWS_WEB_IDENTITY_TOKEN_FILE is not");
  if (role == NULL)
    return creds_job_fail(job, "AWS_WEB_IDENTITY_TOKEN_FILE is set but AWS_ROLE_ARN is not");
  return creds_sts_start(job, role, creds_env(ch, "AWS_ROLE_SESSION_NAME"), file,
                         "web-identity");
}

/* ---- container endpoint ---- */

/* Whether an http:// URL's host is one the AWS SDKs allow in clear text:
 * loopback, the ECS endpoint or the EKS Pod Identity agent. Host names
 * other than "localhost" are refused rather than resolved (a blocking
 * lookup on the loop). */
static bool container_host_allowed(const char *url) {
  const char *h = url + strlen("http://");
  const char *end;
  char host[64];
  if (*h == '[') {
    end = strchr(h, ']');
    if (end == NULL)
      return false;
    h++;
  } else {
    end = h + strcspn(h, ":/?#");
  }
  if ((size_t)(end - h) >= sizeof(host) || end == h)
    return false;
  memcpy(host, h, (size_t)(end - h));
  host[end - h] = '\0';
  if (strcasecmp(host, "localhost") == 0)
    return true;
  unsigned char a[16];
  if (inet_pton(AF_INET, host, a) == 1)
    return a[0] == 127 || (a[0] == 169 && a[1] == 254 && a[2] == 170 && (a[3] == 2 || a[3] == 23));
  if (inet_pton(AF_INET6, host, a) == 1) {
    static const unsigned char lo[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    static const unsigned char eks[16] = {0xfd, 0, 0, 0, 0x0e, 0xc2, 0, 0,
                                          0,    0, 0, 0, 0,    0,    0, 0x23};
    return memcmp(a, lo, 16) == 0 || memcmp(a, eks, 16) == 0;
  }
  return false;
}

int creds_container_start(struct creds_job *job) {
  struct creds_chain *ch = job->ch;
  const char *rel = creds_env(ch, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
  const char *full = creds_env(ch, "AWS_CONTAINER_CREDENTIALS_FULL_URI");
  const char *why = NULL;
  char *tok = NULL, *hdr = NULL;
  size_t tok_alloc = 0, tok_len = 0, hdr_len = 0;
  int rc = CREDS_FAIL;
  if (rel == NULL && full == NULL)
    return CREDS_SKIP;
  struct creds_http_op *op = op_new(job, OP_CONTAINER, "container");
  if (op == NULL)
    return CREDS_FAIL;
  int w;
  if (rel) {
    const char *base = ch->container_endpoint ? ch->container_endpoint : "http://169.254.170.2";
    if (rel[0] != '/') {
      creds_job_fail(job, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI must start with '/'");
      goto fail;
    }
    w = snprintf(op->url, sizeof(op->url), "%s%s", base, rel);
  } else {
    if (strncasecmp(full, "https://", 8) != 0 &&
        !(strncasecmp(full, "http://", 7) == 0 && container_host_allowed(full))) {
      creds_job_fail(job, "AWS_CONTAINER_CREDENTIALS_FULL_URI must be https or name a "
                          "loopback, ECS or EKS Pod Identity address");
      goto fail;
    }
    w = snprintf(op->url, sizeof(op->url), "%s", full);
  }
  if (w < 0 || (size_t)w >= sizeof(op->url)) {
    creds_job_fail(job, "the container credentials URI is too long");
    goto fail;
  }
  const char *tok_file = creds_env(ch, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
  const char *tok_env = creds_env(ch, "AWS_CONTAINER_AUTHORIZATION_TOKEN");
  if (tok_file) { /* the file wins: EKS rotates it */
    if (read_token(ch, tok_file, &tok, &tok_alloc, &tok_len, &why) != 0) {
      creds_job_fail(job, "the authorization token file %s", why);
      goto fail;
    }
  } else if (tok_env) {
    tok_len = strlen(tok_env);
    for (size_t i = 0; i < tok_len; i++)
      if ((unsigned char)tok_env[i] < 0x20 || tok_env[i] == 0x7f) {
        creds_job_fail(job, "AWS_CONTAINER_AUTHORIZATION_TOKEN holds control characters");
        goto fail;
      }
    tok_alloc = tok_len + 1;
    if ((tok = strdup(tok_env)) == NULL) {
      creds_job_fail(job, "out of memory");
      goto fail;
    }
  }
  if (tok) {
    hdr_len = tok_len + 32;
    hdr = malloc(hdr_len);
    if (hdr == NULL) {
      creds_job_fail(job, "out of memory");
      goto fail;
    }
    snprintf(hdr, hdr_len, "Authorization: %s", tok);
  }
  rc = op_started(job, &op, "the request",
                  op_send(op, "GET", op->url, "Accept: application/json", hdr,
                          CREDS_HTTP_TIMEOUT_MS));
fail:
  creds_free_secret(tok, tok_alloc);
  creds_free_secret(hdr, hdr_len);
  if (op)
    op_free(op);
  return rc;
}

/* ---- IMDSv2 ---- */

static int imds_send(struct creds_http_op *op) {
  struct creds_chain *ch = op->job->ch;
  char url[2300];
  char hdr[600];
  int rc;
  if (op->step == IMDS_TOKEN) {
    snprintf(url, sizeof(url), "%s/latest/api/token", op->url);
    snprintf(hdr, sizeof(hdr), "X-aws-ec2-metadata-token-ttl-seconds: %d", IMDS_TOKEN_TTL);
    rc = op_send(op, "PUT", url, hdr, NULL, CREDS_IMDS_TIMEOUT_MS);
  } else {
    snprintf(url, sizeof(url), "%s/latest/meta-data/iam/security-credentials/%s", op->url,
             op->step == IMDS_CREDS ? op->role : "");
    snprintf(hdr, sizeof(hdr), "X-aws-ec2-metadata-token: %s", ch->imds_token);
    rc = op_send(op, "GET", url, hdr, NULL, CREDS_IMDS_TIMEOUT_MS);
  }
  OPENSSL_cleanse(hdr, sizeof(hdr));
  return rc;
}

int creds_imds_start(struct creds_job *job) {
  struct creds_chain *ch = job->ch;
  const char *disabled = creds_env(ch, "AWS_EC2_METADATA_DISABLED");
  if (disabled && strcasecmp(disabled, "true") == 0)
    return CREDS_SKIP;
  struct creds_http_op *op = op_new(job, OP_IMDS, "imds");
  if (op == NULL)
    return CREDS_FAIL;
  const char *base = creds_env(ch, "AWS_EC2_METADATA_SERVICE_ENDPOINT");
  if (base == NULL) {
    const char *mode = creds_env(ch, "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE");
    base = mode && strcasecmp(mode, "IPv6") == 0 ? "http://[fd00:ec2::254]"
                                                  : "http://169.254.169.254";
  }
  size_t n = strlen(base);
  while (n > 0 && base[n - 1] == '/')
    n--;
  if (n >= sizeof(op->url)) {
    op_free(op);
    return creds_job_fail(job, "the metadata endpoint is too long");
  }
  memcpy(op->url, base, n);
  op->url[n] = '\0';
  /* The session token is good for 6 hours: reuse it. */
  op->step = ch->imds_token[0] && creds_now(ch) < ch->imds_token_expires ? IMDS_ROLE : IMDS_TOKEN;
  return op_started(job, &op, "the request", imds_send(op));
}

static void forget_imds_token(struct creds_chain *ch) {
  OPENSSL_cleanse(ch->imds_token, sizeof(ch->imds_token));
  ch->imds_token_expires = 0;
}

/* Sends the request of op->step: 1 when it is in flight, -1 when it could
 * not be started (job->err set). */
static int imds_next(struct creds_http_op *op) {
  int rc = imds_send(op);
  if (rc != 0) {
    creds_job_fail(op->job, "the request could not be started (%s)", uv_err_name(rc));
    return -1;
  }
  return 1;
}

/* Handles one IMDS answer. Returns 1 when a next request is in flight, 0
 * when done with credentials, -1 on failure (job->err set). */
static int imds_step(struct creds_http_op *op, struct tt_http_response *resp) {
  struct creds_job *job = op->job;
  struct creds_chain *ch = job->ch;
  const char *body = resp->body.data ? resp->body.data : "";
  size_t len = resp->body.len;
  const char *why = NULL;
  if (resp->transport != TT_HTTP_OK) {
    creds_job_fail(job, "%s (%s)", transport_reason(resp->transport),
                   op->step == IMDS_TOKEN ? "token request" : "credentials request");
    return -1;
  }
  if (op->step != IMDS_TOKEN && resp->status == 401 && !op->retried) {
    op->retried = true; /* the cached token expired early: get a new one */
    forget_imds_token(ch);
    op->step = IMDS_TOKEN;
    return imds_next(op);
  }
  switch (op->step) {
  case IMDS_TOKEN: {
    if (resp->status != 200) {
      creds_job_fail(job, "the token request answered HTTP %ld%s", resp->status,
                     resp->status == 403 ? " (IMDS is disabled on this instance)" : "");
      return -1;
    }
    size_t e = len;
    while (e > 0 && (body[e - 1] == '\n' || body[e - 1] == '\r' || body[e - 1] == ' '))
      e--;
    if (e == 0 || e >= sizeof(ch->imds_token)) {
      creds_job_fail(job, "the token response is empty or too long");
      return -1;
    }
    for (size_t i = 0; i < e; i++)
      if ((unsigned char)body[i] <= 0x20 || (unsigned char)body[i] >= 0x7f) {
        creds_job_fail(job, "the token response has invalid characters");
        return -1;
      }
    forget_imds_token(ch);
    memcpy(ch->imds_token, body, e);
    int64_t ttl = IMDS_TOKEN_TTL;
    size_t hl = 0;
    const char *h = tt_http_response_header(resp, "x-aws-ec2-metadata-token-ttl-seconds", &hl);
    if (h && hl > 0 && hl < 8) {
      int64_t v = 0;
      size_t i = 0;
      for (; i < hl && h[i] >= '0' && h[i] <= '9'; i++)
        v = v * 10 + (h[i] - '0');
      if (i == hl)
        ttl = v;
    }
    ch->imds_token_expires = creds_now(ch) + ttl - 60;
    op->step = IMDS_ROLE;
    break;
  }
  case IMDS_ROLE: {
    if (resp->status == 404) {
      creds_job_fail(job, "no IAM role is attached to this instance");
      return -1;
    }
    if (resp->status != 200) {
      creds_job_fail(job, "the role request answered HTTP %ld", resp->status);
      return -1;
    }
    size_t e = strcspn(body, "\r\n");
    if (e > len)
      e = len;
    if (e == 0 || e >= sizeof(op->role)) {
      creds_job_fail(job, "the role name is empty or too long");
      return -1;
    }
    for (size_t i = 0; i < e; i++) {
      char c = body[i];
      /* IAM role name characters; also keeps the URL path safe */
      if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            strchr("+=,.@_-", c))) {
        creds_job_fail(job, "the role name has invalid characters");
        return -1;
      }
    }
    memcpy(op->role, body, e);
    op->role[e] = '\0';
    op->step = IMDS_CREDS;
    break;
  }
  case IMDS_CREDS:
    if (resp->status != 200) {
      creds_job_fail(job, "the credentials request answered HTTP %ld", resp->status);
      return -1;
    }
    if (creds_from_json(body, len, "Token", false, true, "imds", &job->out, &why) != 0) {
      creds_job_fail(job, "the credentials response: %s", why);
      return -1;
    }
    return 0;
  }
  return imds_next(op);
}

static void on_done(struct tt_http_call *call, struct tt_http_response *resp, void *arg) {
  struct creds_http_op *op = arg;
  struct creds_job *job = op->job;
  const char *why = NULL;
  int rc = -1;
  (void)call;
  op->in_flight = false;
  const char *body = resp->body.data ? resp->body.data : "";
  size_t len = resp->body.len;
  if (job->cancelled) {
    rc = -1;
  } else if (op->kind == OP_IMDS) {
    rc = imds_step(op, resp); /* 1: the next request is in flight */
  } else if (resp->transport != TT_HTTP_OK) {
    creds_job_fail(job, "%s", transport_reason(resp->transport));
  } else if (op->kind == OP_STS) {
    if (resp->status != 200) {
      char code[64];
      tt_sts_error_code(resp->body.data, len, code, sizeof(code));
      creds_job_fail(job, "STS answered HTTP %ld%s%s%s", resp->status, code[0] ? " (" : "",
                     code, code[0] ? ")" : "");
    } else {
      if (tt_sts_parse_credentials(body, len, op->source, &job->out, &why) != 0)
        creds_job_fail(job, "%s", why);
      else
        rc = 0;
    }
  } else { /* OP_CONTAINER */
    if (resp->status != 200)
      creds_job_fail(job, "the container endpoint answered HTTP %ld", resp->status);
    else if (creds_from_json(body, len, "Token", false, false, "container", &job->out, &why) !=
             0)
      creds_job_fail(job, "the container endpoint response: %s", why);
    else
      rc = 0;
  }
  if (resp->body.data)
    OPENSSL_cleanse(resp->body.data, resp->body.len);
  if (rc != 1) {
    job->http = NULL;
    op_free(op);
    creds_job_async_done(job, rc);
  }
}
