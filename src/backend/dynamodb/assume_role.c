/* SPDX-License-Identifier: Apache-2.0 */
/* assume_role.c -- STS AssumeRole credentials for one role: one shared
 * call in flight, cached, refreshed in the background before expiry, all
 * on the loop (the partner accounts of the dynamodb backend). */
#include "backend/dynamodb/assume_role.h"
#include "obs/trace.h"

#include <assert.h>
#include <errno.h>
#include <openssl/crypto.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/dynamodb/creds_cache.h"
#include "backend/dynamodb/endpoint.h"
#include "backend/dynamodb/http.h"
#include "backend/dynamodb/sigv4.h"
#include "backend/dynamodb/sts_xml.h"
#include "util/buf.h"

struct ar;

/* One AssumeRole call; at most one exists per provider. */
struct ar_job {
  struct ar *p;
  bool background; /* the cached credentials are still usable */
  bool cancelled;  /* close() asked it to stop */
  bool starting;   /* inside job_start: failures are reported by its return */
  bool failed_sync;
  bool in_http;
  void *base_handle; /* pending get on the base provider */
  struct tt_error err;
  struct tt_creds out;
  char *body; /* form body; wiped (it names the external id) */
  size_t body_len;
  struct tt_http_call http;
  struct tt_span *span; /* the STS call's client span (obs/trace.h); NULL when not traced */
};

struct ar {
  struct tt_creds_provider pub;
  struct tt_http *http;
  struct tt_creds_provider *base;
  char *role_arn, *session_name, *external_id, *region, *label;
  char *url, *host;
  uint32_t duration_s;
  struct tt_sigv4_cache sigcache;

  /* Cached credentials, refresh schedule, waiters and hooks. */
  struct creds_cache cache;
  uint64_t calls;

  struct ar_job *job;
};

static int64_t ar_now(const struct ar *p) {
  return creds_cache_now(&p->cache);
}

/* Fills job->err with "credentials: <label>: <reason>". */
static void job_fail(struct ar_job *job, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void job_fail(struct ar_job *job, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  creds_cache_vfail(&job->err, job->p->label, fmt, ap);
  va_end(ap);
}

/* ---- the job ---- */

static void job_free(struct ar_job *job) {
  creds_free_secret(job->body, job->body_len);
  OPENSSL_cleanse(job, sizeof(*job));
  free(job);
}

/* Ends an asynchronous job: caches or reports, then answers the waiters. */
static void job_end(struct ar_job *job, int rc) {
  struct ar *p = job->p;
  p->job = NULL;
  if (creds_cache_fetch_end(&p->cache)) { /* cancelled by close() */
    job_free(job);
    return;
  }
  struct tt_error err = job->err;
  if (rc == 0) {
    int64_t left = creds_cache_install(&p->cache, &job->out);
    creds_cache_log(&p->cache, TT_CREDS_LOG_INFO,
                    "credentials: %s: assumed %s as session %s, expiring in %lld s", p->label,
                    p->role_arn, p->session_name, (long long)left);
  } else {
    creds_cache_note_failure(&p->cache, job->background, &job->err);
  }
  job_free(job);
  creds_cache_answer(&p->cache, rc == 0 ? &p->cache.cur : NULL, rc == 0 ? NULL : &err);
}

/* A failure after job_start returned ends the job; during it, job_start
 * reports it. */
static void job_failed(struct ar_job *job) {
  if (job->starting)
    job->failed_sync = true;
  else
    job_end(job, -1);
}

/* Whether STS refused the call for a reason that retrying will not
 * change: its 4xx answers (AccessDenied, InvalidClientTokenId,
 * SignatureDoesNotMatch, MalformedPolicyDocument, PackedPolicyTooLarge,
 * RegionDisabledException, ValidationError, ...) need a change of the
 * role's trust policy, the base credentials or the configuration.
 * Throttling, an expired base session token (the base chain renews it),
 * a request that expired in transit and every 5xx are transient. */
static bool sts_refusal_permanent(long status, const char *code) {
  static const char *const transient[] = {
      "Throttling", "ThrottlingException", "RequestLimitExceeded", "TooManyRequestsException",
      "ExpiredToken", "ExpiredTokenException", "RequestExpired", "IDPCommunicationError",
      "ServiceUnavailable", "InternalFailure",
  };
  if (status < 400 || status >= 500 || status == 408 || status == 429)
    return false;
  for (size_t i = 0; i < sizeof(transient) / sizeof(transient[0]); i++)
    if (strcmp(code, transient[i]) == 0)
      return false;
  return true;
}

static void on_sts_done(struct tt_http_call *hc, struct tt_http_response *resp, void *arg) {
  (void)hc;
  struct ar_job *job = arg;
  struct ar *p = job->p;
  const char *why = NULL;
  int rc = -1;
  job->in_http = false;
  struct tt_span *span = job->span;
  job->span = NULL;
  if (job->cancelled) {
    rc = -1;
    tt_span_status(span, TT_SPAN_ERROR, "RequestCanceled");
  } else if (resp->transport != TT_HTTP_OK) {
    tt_span_status(span, TT_SPAN_ERROR, resp->transport == TT_HTTP_TIMEOUT ? "Timeout"
                                                                           : "TransportError");
    job_fail(job, "the STS AssumeRole request failed (%s)",
             resp->transport == TT_HTTP_TIMEOUT ? "timeout" : "transport error");
  } else if (resp->status != 200) {
    char code[64];
    tt_sts_error_code(resp->body.data, resp->body.len, code, sizeof(code));
    tt_span_int(span, "http.response.status_code", resp->status);
    tt_span_str(span, "error.type", code[0] ? code : "HttpError");
    tt_span_status(span, TT_SPAN_ERROR, code[0] ? code : "HttpError");
    job_fail(job, "STS AssumeRole answered HTTP %ld%s%s%s", resp->status, code[0] ? " (" : "",
             code, code[0] ? ")" : "");
    if (sts_refusal_permanent(resp->status, code))
      job->err.code = TT_ERR_FORBIDDEN; /* credentials.h: a refusal, not an outage */
  } else if (tt_sts_parse_credentials(resp->body.data, resp->body.len, "assume-role", &job->out,
                                      &why) != 0) {
    job_fail(job, "%s", why);
  } else if (job->out.expires_at <= ar_now(p) + CREDS_USABLE_MARGIN_S) {
    tt_creds_clear(&job->out);
    job_fail(job, "STS AssumeRole answered credentials that are already expired");
  } else {
    rc = 0;
  }
  if (resp->body.data)
    OPENSSL_cleanse(resp->body.data, resp->body.len);
  tt_span_end(span);
  job_end(job, rc);
}

static int form_append(struct tt_buf *b, const char *name, const char *v) {
  return tt_sigv4_form_append(b, name, v, strlen(v));
}

/* Signs the AssumeRole call with the base credentials and starts it. */
static void send_sts(struct ar_job *job, const struct tt_creds *base) {
  struct ar *p = job->p;
  struct tt_buf form, lines;
  tt_buf_init(&form, 0);
  tt_buf_init(&lines, 0);
  char duration[16];
  snprintf(duration, sizeof(duration), "%u", (unsigned)p->duration_s);
  int bad = form_append(&form, "Action", "AssumeRole") |
            form_append(&form, "Version", "2011-06-15") |
            form_append(&form, "RoleArn", p->role_arn) |
            form_append(&form, "RoleSessionName", p->session_name) |
            form_append(&form, "DurationSeconds", duration);
  if (p->external_id)
    bad |= form_append(&form, "ExternalId", p->external_id);
  if (bad) {
    job_fail(job, "out of memory");
    goto fail;
  }
  job->body_len = form.len;
  job->body = tt_buf_steal(&form, NULL);
  static const char ctype[] = "application/x-www-form-urlencoded; charset=utf-8";
  struct tt_sigv4_header sh[] = {{"Host", p->host}, {"Content-Type", ctype}};
  struct tt_sigv4_request sreq = {.method = "POST", .path = "/", .headers = sh, .n_headers = 2,
                                  .body = job->body, .body_len = job->body_len};
  struct tt_sigv4_credentials sc = {base->access_key_id, base->secret_access_key,
                                    base->session_token};
  struct tt_sigv4_config cfg = {p->region, "sts", 0, &p->sigcache};
  const char *hdrs[2 + TT_SIGV4_MAX_ADDED + 2];
  bad = tt_sigv4_sign_lines(&sreq, &sc, &cfg, (time_t)ar_now(p), "Accept: text/xml", &lines, hdrs);
  if (bad) {
    job_fail(job, bad == -1 ? "the AssumeRole request could not be signed" : "out of memory");
    goto fail;
  }
  struct tt_http_request hreq = {.method = "POST", .url = p->url, .headers = hdrs,
                                 .body = job->body, .body_len = job->body_len,
                                 .timeout_ms = 5000, .connect_timeout_ms = 5000};
  /* A client span of its own trace: the fetch belongs to no request. No
   * role, session or credential is recorded. */
  job->span = tt_span_start_root("STS.AssumeRole", TT_SPAN_CLIENT);
  tt_span_str(job->span, "rpc.system", "aws-api");
  tt_span_str(job->span, "rpc.service", "STS");
  tt_span_str(job->span, "rpc.method", "AssumeRole");
  tt_span_bool(job->span, "tabletheoryd.background", job->background);
  int rc = tt_http_start(p->http, &job->http, &hreq, on_sts_done, job);
  if (rc != 0) {
    tt_span_free(job->span);
    job->span = NULL;
    job_fail(job, "the STS AssumeRole request could not start (%s)", uv_err_name(rc));
    goto fail;
  }
  job->in_http = true;
  p->calls++;
  tt_sigv4_lines_free(&lines); /* they hold the signature and the base session token */
  return;
fail:
  tt_sigv4_lines_free(&lines);
  if (form.data)
    OPENSSL_cleanse(form.data, form.alloc);
  tt_buf_free(&form);
  job_failed(job);
}

static void on_base_creds(void *arg, const struct tt_creds *creds, const struct tt_error *err) {
  struct ar_job *job = arg;
  job->base_handle = NULL;
  if (creds == NULL) {
    /* The base chain's message already names its provider and reason. */
    job_fail(job, "no base credentials to call STS with (%s)",
             err && err->message[0] ? err->message : "none");
    job_failed(job);
    return;
  }
  send_sts(job, creds);
}

/* Starts an AssumeRole (creds_fetch_fn): signed at once when the base
 * provider has credentials cached (peek), else once its get answered.
 * Returns 0 (p->job set, asynchronous) or -1 with *err (nothing left
 * running). */
static int job_start(void *owner, bool background, struct tt_error *err) {
  struct ar *p = owner;
  struct ar_job *job = calloc(1, sizeof(*job));
  if (job == NULL)
    return tt_error_set(err, TT_ERR_INTERNAL, "credentials", "credentials: out of memory");
  job->p = p;
  job->background = background;
  job->starting = true;
  p->job = job;
  /* A failure inside sets failed_sync. */
  int rc = tt_creds_acquire(p->base, on_base_creds, job, &job->base_handle);
  if (rc != 0) {
    job_fail(job, "the base credentials could not be asked for (%s)", uv_err_name(rc));
    job->failed_sync = true;
  }
  job->starting = false;
  if (job->failed_sync) {
    p->job = NULL;
    creds_cache_note_failure(&p->cache, job->background, &job->err);
    *err = job->err;
    job_free(job);
    return -1;
  }
  creds_cache_fetch_begin(&p->cache);
  return 0;
}

/* ---- the provider ops ---- */

/* A get waits for the running call (cache.promote): its failure is no
 * longer a background one. */
static void ar_promote(void *owner) {
  ((struct ar *)owner)->job->background = false;
}

/* Stops the running call on close (cache.stop). */
static void ar_stop(void *owner) {
  struct ar *p = owner;
  struct ar_job *job = p->job;
  if (job == NULL)
    return;
  job->cancelled = true;
  if (job->in_http) {
    tt_http_cancel(p->http, &job->http); /* on_sts_done ends the job */
  } else {
    tt_creds_cancel(p->base, job->base_handle);
    job->base_handle = NULL;
    job_end(job, -1); /* cancelled: frees it, no dispatch */
  }
}

static void ar_free(void *owner) {
  struct ar *p = owner;
  free(p->role_arn);
  free(p->session_name);
  creds_free_str(p->external_id);
  free(p->region);
  free(p->label);
  free(p->url);
  free(p->host);
  tt_sigv4_cache_clear(&p->sigcache);
  creds_cache_clear(&p->cache);
  free(p);
}

uint64_t tt_creds_assume_role_calls(const struct tt_creds_provider *pub) {
  return ((const struct ar *)((const struct creds_cache *)pub->impl)->owner)->calls;
}

/* ---- construction ---- */

static const struct tt_aws_endpoint_msgs sts_endpoint_msgs = {
    "sts_endpoint", "the STS endpoint must be an absolute http:// or https:// URL",
    "the STS endpoint must be an absolute http:// or https:// URL",
    "the STS endpoint must have no path, query or user part"};

int tt_creds_assume_role_new(uv_loop_t *loop, struct tt_http *http,
                             struct tt_creds_provider *base,
                             const struct tt_creds_assume_role_options *o,
                             struct tt_creds_provider **out, struct tt_error *err) {
  if (o == NULL || o->role_arn == NULL || strncmp(o->role_arn, "arn:", 4) != 0)
    return tt_error_set(err, TT_ERR_VALIDATION, "role_arn", "a role ARN (arn:...) is required");
  if (o->session_name == NULL || o->session_name[0] == '\0' || strlen(o->session_name) > 64)
    return tt_error_set(err, TT_ERR_VALIDATION, "session_name",
                        "a session name of 1 to 64 characters is required");
  if (o->region == NULL || !tt_aws_region_ok(o->region))
    return tt_error_set(err, TT_ERR_VALIDATION, "region", "a region such as eu-west-1 is required");
  if (o->duration_s != 0 && (o->duration_s < 900 || o->duration_s > 43200))
    return tt_error_set(err, TT_ERR_VALIDATION, "duration_s",
                        "the session duration must be 900 to 43200 seconds");
  if (http == NULL || base == NULL)
    return tt_error_set(err, TT_ERR_VALIDATION, "credentials",
                        "an HTTP client and base credentials are required");
  struct ar *p = calloc(1, sizeof(*p));
  if (p == NULL)
    return tt_error_set(err, TT_ERR_INTERNAL, "credentials", "out of memory");
  p->http = http;
  p->base = base;
  creds_cache_init(&p->cache, job_start, p, ar_free);
  p->cache.stop = ar_stop;
  p->cache.promote = ar_promote;
  tt_sigv4_cache_init(&p->sigcache);
  p->role_arn = strdup(o->role_arn);
  p->session_name = strdup(o->session_name);
  p->region = strdup(o->region);
  p->label = strdup(o->label ? o->label : "assume-role");
  if (o->external_id && o->external_id[0])
    p->external_id = strdup(o->external_id);
  if (!p->role_arn || !p->session_name || !p->region || !p->label ||
      (o->external_id && o->external_id[0] && !p->external_id)) {
    ar_free(p);
    return tt_error_set(err, TT_ERR_INTERNAL, "credentials", "out of memory");
  }
  /* The URL we post to and the Host header we sign. */
  if (tt_aws_endpoint_parse(o->sts_endpoint, "sts", p->region, &sts_endpoint_msgs, &p->url,
                            &p->host, err) != 0) {
    ar_free(p);
    return -1;
  }
  p->cache.label = p->label;
  p->duration_s = o->duration_s ? o->duration_s : 3600;
  p->cache.now = o->now;
  p->cache.now_arg = o->now_arg;
  p->cache.log = o->log;
  p->cache.log_arg = o->log_arg;
  p->cache.busy = o->busy;
  p->cache.busy_arg = o->busy_arg;
  creds_cache_open(&p->cache, loop, &p->pub); /* last: nothing fails after it */
  *out = &p->pub;
  return 0;
}
