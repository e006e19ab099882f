/* SPDX-License-Identifier: Apache-2.0 */
/* credentials.c -- the credentials cache and default provider chain (lazy
 * resolution, shared fetches, refresh before expiry, cancel, close), the
 * static provider, the environment provider and the shared parsers. */
#include "backend/dynamodb/credentials.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend/dynamodb/creds_internal.h"
#include "util/civil.h"

extern char **environ;

void tt_creds_clear(struct tt_creds *c) {
  if (c)
    OPENSSL_cleanse(c, sizeof(*c));
}

void creds_free_secret(void *p, size_t n) {
  if (p == NULL)
    return;
  OPENSSL_cleanse(p, n);
  free(p);
}

/* ---- wrappers ---- */

int tt_creds_peek(struct tt_creds_provider *p, const struct tt_creds **creds,
                  struct tt_error *err) {
  return p->ops->peek(p, creds, err);
}

int tt_creds_get(struct tt_creds_provider *p, tt_creds_cb cb, void *arg, void **handle) {
  return p->ops->get(p, cb, arg, handle);
}

void tt_creds_cancel(struct tt_creds_provider *p, void *handle) {
  p->ops->cancel(p, handle);
}

void tt_creds_close(struct tt_creds_provider *p, void (*closed)(void *arg), void *arg) {
  p->ops->close(p, closed, arg);
}

void tt_creds_destroy(struct tt_creds_provider *p) {
  if (p)
    p->ops->destroy(p);
}

int tt_creds_acquire(struct tt_creds_provider *p, tt_creds_cb cb, void *arg, void **handle) {
  const struct tt_creds *creds = NULL;
  struct tt_error err;
  *handle = NULL;
  int pk = tt_creds_peek(p, &creds, &err);
  if (pk == TT_CREDS_PEEK_MISS)
    return tt_creds_get(p, cb, arg, handle);
  cb(arg, pk == 0 ? creds : NULL, pk == 0 ? NULL : &err);
  return 0;
}

/* ---- shared helpers ---- */

/* Credentials travel in HTTP headers: printable ASCII without spaces. */
static bool printable_token(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch <= 0x20 || ch >= 0x7f)
      return false;
  }
  return true;
}

int creds_fill(struct tt_creds *c, const char *akid, size_t akid_len, const char *secret,
               size_t secret_len, const char *token, size_t token_len, int64_t expires_at,
               const char *source, const char **why) {
  tt_creds_clear(c);
  if (akid == NULL || akid_len == 0) {
    *why = "AccessKeyId is missing";
    return -1;
  }
  if (secret == NULL || secret_len == 0) {
    *why = "SecretAccessKey is missing";
    return -1;
  }
  if (akid_len >= sizeof(c->access_key_id) || !printable_token(akid, akid_len)) {
    *why = "AccessKeyId is too long or has invalid characters";
    return -1;
  }
  if (secret_len >= sizeof(c->secret_access_key) || !printable_token(secret, secret_len)) {
    *why = "SecretAccessKey is too long or has invalid characters";
    return -1;
  }
  if (token == NULL)
    token_len = 0;
  if (token_len >= sizeof(c->session_token) || !printable_token(token, token_len)) {
    *why = "SessionToken is too long or has invalid characters";
    return -1;
  }
  memcpy(c->access_key_id, akid, akid_len);
  memcpy(c->secret_access_key, secret, secret_len);
  if (token_len)
    memcpy(c->session_token, token, token_len);
  c->expires_at = expires_at;
  snprintf(c->source, sizeof(c->source), "%s", source);
  return 0;
}

static int digits(const char *s, size_t n, size_t at, size_t count, int *out) {
  int v = 0;
  if (at + count > n)
    return -1;
  for (size_t i = 0; i < count; i++) {
    char ch = s[at + i];
    if (ch < '0' || ch > '9')
      return -1;
    v = v * 10 + (ch - '0');
  }
  *out = v;
  return 0;
}

int creds_parse_time(const char *s, size_t n, int64_t *out) {
  int y, mo, d, h, mi, se;
  if (digits(s, n, 0, 4, &y) || n < 19 || s[4] != '-' || digits(s, n, 5, 2, &mo) ||
      s[7] != '-' || digits(s, n, 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
      digits(s, n, 11, 2, &h) || s[13] != ':' || digits(s, n, 14, 2, &mi) || s[16] != ':' ||
      digits(s, n, 17, 2, &se))
    return -1;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
    return -1;
  size_t i = 19;
  if (i < n && s[i] == '.') {
    i++;
    size_t start = i;
    while (i < n && s[i] >= '0' && s[i] <= '9')
      i++;
    if (i == start)
      return -1;
  }
  int64_t offset = 0;
  if (i < n && (s[i] == 'Z' || s[i] == 'z')) {
    i++;
  } else if (i < n && (s[i] == '+' || s[i] == '-')) {
    int oh, om;
    if (digits(s, n, i + 1, 2, &oh) || i + 3 >= n || s[i + 3] != ':' ||
        digits(s, n, i + 4, 2, &om) || oh > 23 || om > 59)
      return -1;
    offset = (int64_t)oh * 3600 + om * 60;
    if (s[i] == '-')
      offset = -offset;
    i += 6;
  } else {
    return -1;
  }
  if (i != n)
    return -1;
  int64_t days = tt_days_from_civil(y, (unsigned)mo, (unsigned)d);
  *out = days * 86400 + (int64_t)h * 3600 + mi * 60 + (se == 60 ? 59 : se) - offset;
  return 0;
}

/* jansson keeps its own copies of the parsed strings; overwrite the secret
 * ones before the tree is freed (jansson owns that memory, but nothing reads
 * it again). */
static void wipe_json_strings(json_t *obj) {
  const char *key;
  json_t *v;
  json_object_foreach(obj, key, v) {
    if (json_is_string(v))
      OPENSSL_cleanse((char *)json_string_value(v), json_string_length(v));
  }
}

int creds_from_json(const char *data, size_t len, const char *token_field, bool need_version,
                    bool need_expiration, const char *source, struct tt_creds *out,
                    const char **why) {
  int rc = -1;
  json_error_t jerr;
  json_t *root = json_loadb(data, len, 0, &jerr);
  if (root == NULL || !json_is_object(root)) {
    *why = "the response is not a JSON object";
    goto fail;
  }
  if (need_version) {
    json_t *v = json_object_get(root, "Version");
    if (!json_is_integer(v) || json_integer_value(v) != 1) {
      *why = "Version is not 1";
      goto fail;
    }
  }
  json_t *code = json_object_get(root, "Code");
  if (code && (!json_is_string(code) || strcmp(json_string_value(code), "Success") != 0)) {
    *why = "Code is not Success";
    goto fail;
  }
  json_t *akid = json_object_get(root, "AccessKeyId");
  json_t *secret = json_object_get(root, "SecretAccessKey");
  json_t *token = json_object_get(root, token_field);
  json_t *exp = json_object_get(root, "Expiration");
  if (!json_is_string(akid)) {
    *why = "AccessKeyId is missing";
    goto fail;
  }
  if (!json_is_string(secret)) {
    *why = "SecretAccessKey is missing";
    goto fail;
  }
  if (token && !json_is_null(token) && !json_is_string(token)) {
    *why = strcmp(token_field, "Token") == 0 ? "Token is not a string"
                                             : "SessionToken is not a string";
    goto fail;
  }
  int64_t expires = 0;
  if (exp && !json_is_null(exp)) {
    if (!json_is_string(exp) ||
        creds_parse_time(json_string_value(exp), json_string_length(exp), &expires) != 0) {
      *why = "Expiration is not an ISO 8601 time";
      goto fail;
    }
  } else if (need_expiration) {
    *why = "Expiration is missing";
    goto fail;
  }
  if (creds_fill(out, json_string_value(akid), json_string_length(akid),
                 json_string_value(secret), json_string_length(secret),
                 json_is_string(token) ? json_string_value(token) : NULL,
                 json_is_string(token) ? json_string_length(token) : 0, expires, source,
                 why) != 0)
    goto fail;
  rc = 0;
fail:
  if (root) {
    if (json_is_object(root))
      wipe_json_strings(root);
    json_decref(root);
  }
  if (rc != 0)
    tt_creds_clear(out);
  return rc;
}

int creds_read_file(const struct creds_chain *ch, const char *path, size_t cap, char **out,
                    size_t *len) {
  int rc = -1;
  if (ch->serving && creds_files_lookup(ch->serving, path, out, len, &rc))
    return rc;
  /* Not read beforehand: a path no provider announced. Read it here
   * rather than fail; creds_files_start lists every path read today. */
  return creds_read_file_now(path, cap, out, len);
}

int creds_read_file_now(const char *path, size_t cap, char **out, size_t *len) {
  int rc = -1, saved = 0;
  char *buf = NULL;
  size_t n = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  struct stat st;
  if (fstat(fd, &st) != 0)
    goto fail;
  if (S_ISDIR(st.st_mode)) {
    errno = EISDIR;
    goto fail;
  }
  if (st.st_size > 0 && (uint64_t)st.st_size > cap) {
    errno = EFBIG;
    goto fail;
  }
  /* Sized once: growing with realloc would leave copies of secrets behind. */
  buf = malloc(cap + 1);
  if (buf == NULL)
    goto fail;
  for (;;) {
    if (n == cap) {
      char extra;
      ssize_t r = read(fd, &extra, 1);
      if (r > 0) {
        errno = EFBIG;
        goto fail;
      }
      break;
    }
    ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      goto fail;
    }
    if (r == 0)
      break;
    n += (size_t)r;
  }
  buf[n] = '\0';
  *out = buf;
  *len = n;
  buf = NULL;
  rc = 0;
fail:
  saved = errno;
  if (buf)
    creds_free_secret(buf, n);
  close(fd);
  errno = saved;
  return rc;
}

/* ---- static provider ---- */

/* A cache that is always full: gets are posted to its timer. Credentials
 * that never expire are always usable: nothing is fetched. */
struct static_provider {
  struct tt_creds_provider pub;
  struct creds_cache cache;
};

static void static_free(void *owner) {
  struct static_provider *sp = owner;
  creds_cache_clear(&sp->cache);
  free(sp);
}

int tt_creds_static_new(uv_loop_t *loop, const char *access_key_id,
                        const char *secret_access_key, const char *session_token,
                        struct tt_creds_provider **out, struct tt_error *err) {
  const char *why = NULL;
  struct static_provider *sp = calloc(1, sizeof(*sp));
  if (sp == NULL)
    return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
  creds_cache_init(&sp->cache, NULL, sp, static_free);
  sp->cache.label = "static";
  if (creds_fill(&sp->cache.cur, access_key_id, access_key_id ? strlen(access_key_id) : 0,
                 secret_access_key, secret_access_key ? strlen(secret_access_key) : 0,
                 session_token, session_token ? strlen(session_token) : 0, 0, "static",
                 &why) != 0) {
    static_free(sp);
    return tt_error_set(err, TT_ERR_VALIDATION, "credentials", "static credentials: %s", why);
  }
  sp->cache.have = true;
  creds_cache_open(&sp->cache, loop, &sp->pub);
  *out = &sp->pub;
  return 0;
}

/* ---- chain: helpers ---- */

const char *creds_env(const struct creds_chain *ch, const char *name) {
  size_t n = strlen(name);
  for (char **e = ch->env; *e; e++) {
    if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
      return (*e)[n + 1] ? *e + n + 1 : NULL;
  }
  return NULL;
}

int64_t creds_now(const struct creds_chain *ch) {
  return creds_cache_now(&ch->cache);
}

static const char *const src_names[CREDS_SRC__COUNT] = {
    [CREDS_SRC_ENV] = "environment",
    [CREDS_SRC_PROFILE] = "profile",
    [CREDS_SRC_WEB_IDENTITY] = "web-identity",
    [CREDS_SRC_CONTAINER] = "container",
    [CREDS_SRC_IMDS] = "imds",
};

int creds_job_fail(struct creds_job *job, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  creds_cache_vfail(&job->err, src_names[job->src], fmt, ap);
  va_end(ap);
  return CREDS_FAIL;
}

/* ---- environment provider ---- */

static int env_start(struct creds_job *job) {
  const struct creds_chain *ch = job->ch;
  const char *akid = creds_env(ch, "AWS_ACCESS_KEY_ID");
  const char *secret = creds_env(ch, "AWS_SECRET_ACCESS_KEY");
  const char *token = creds_env(ch, "AWS_SESSION_TOKEN");
  const char *why = NULL;
  if (akid == NULL && secret == NULL)
    return CREDS_SKIP;
  if (akid == NULL)
    return creds_job_fail(job, "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not");
  if (secret == NULL)
    return creds_job_fail(job, "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not");
  if (creds_fill(&job->out, akid, strlen(akid), secret, strlen(secret), token,
                 token ? strlen(token) : 0, 0, "environment", &why) != 0)
    return creds_job_fail(job, "%s", why);
  return CREDS_DONE;
}

typedef int (*start_fn)(struct creds_job *job);

static const start_fn src_start[CREDS_SRC__COUNT] = {
    [CREDS_SRC_ENV] = env_start,
    [CREDS_SRC_PROFILE] = creds_profile_start,
    [CREDS_SRC_WEB_IDENTITY] = creds_web_identity_start,
    [CREDS_SRC_CONTAINER] = creds_container_start,
    [CREDS_SRC_IMDS] = creds_imds_start,
};

/* ---- chain: jobs ---- */

static void job_free(struct creds_job *job) {
  tt_creds_clear(&job->out);
  free(job);
}

/* Tries the providers from job->src on. */
static int job_step(struct creds_job *job) {
  struct creds_chain *ch = job->ch;
  for (; job->src < CREDS_SRC__COUNT; job->src++) {
    if (ch->sticky >= 0 && job->src != ch->sticky)
      continue;
    int rc = src_start[job->src](job);
    if (rc != CREDS_SKIP)
      return rc;
  }
  job->src = CREDS_SRC_ENV;
  tt_error_set(&job->err, TT_ERR_BACKEND_UNAVAILABLE, "credentials",
               "credentials: no provider is configured (environment, shared files, web "
               "identity, container, instance metadata)");
  return CREDS_FAIL;
}

/* Takes the outcome of a job into the cache: its credentials, unless a
 * provider answered them already expired (or about to be, within
 * CREDS_USABLE_MARGIN_S) -- DynamoDB would refuse a request signed with
 * them: the job fails instead --, else its failure. Returns 0 or -1. */
static int settle(struct creds_chain *ch, struct creds_job *job, int rc) {
  int64_t exp = job->out.expires_at, now = creds_now(ch);
  if (rc == 0 && exp != 0 && exp <= now + CREDS_USABLE_MARGIN_S) {
    tt_creds_clear(&job->out);
    if (exp <= now)
      creds_job_fail(job, "the credentials it answered expired %lld s ago",
                     (long long)(now - exp));
    else
      creds_job_fail(job, "the credentials it answered expire in %lld s, too soon to sign with",
                     (long long)(exp - now));
    rc = -1;
  }
  if (rc != 0) {
    creds_cache_note_failure(&ch->cache, job->background, &job->err);
    return -1;
  }
  int64_t left = creds_cache_install(&ch->cache, &job->out);
  ch->sticky = job->src;
  if (ch->cache.cur.expires_at != 0)
    creds_cache_log(&ch->cache, TT_CREDS_LOG_INFO,
                    "credentials: resolved from %s, expiring in %lld s", ch->cache.cur.source,
                    (long long)left);
  else
    creds_cache_log(&ch->cache, TT_CREDS_LOG_INFO, "credentials: resolved from %s, not expiring",
                    ch->cache.cur.source);
  return 0;
}

/* A fetch counts on the background-operations gauge from its start until
 * it ended, whether or not a request still waits for it. */
void creds_job_async_done(struct creds_job *job, int rc) {
  struct creds_chain *ch = job->ch;
  ch->job = NULL;
  if (creds_cache_fetch_end(&ch->cache)) {
    job_free(job);
    return;
  }
  rc = settle(ch, job, rc);
  struct tt_error err = job->err;
  job_free(job);
  creds_cache_answer(&ch->cache, rc == 0 ? &ch->cache.cur : NULL, rc == 0 ? NULL : &err);
}

void creds_job_resume(struct creds_job *job, struct creds_files *fs) {
  struct creds_chain *ch = job->ch;
  ch->serving = fs;
  int rc = job_step(job);
  ch->serving = NULL;
  creds_files_free(fs);
  if (rc != CREDS_ASYNC)
    creds_job_async_done(job, rc == CREDS_DONE ? 0 : -1);
}

/* Starts a fetch (creds_fetch_fn). Returns 0 (ch->job set), 1 (cache
 * updated) or -1 (*err filled). */
static int job_start(void *owner, bool background, struct tt_error *err) {
  struct creds_chain *ch = owner;
  struct creds_job *job = calloc(1, sizeof(*job));
  if (job == NULL) {
    tt_error_set(err, TT_ERR_INTERNAL, "credentials", "credentials: out of memory");
    return CREDS_FAIL;
  }
  job->ch = ch;
  job->background = background;
  int rc;
  if (ch->sticky == CREDS_SRC_ENV) {
    rc = job_step(job); /* the environment reads no file */
  } else {
    /* The environment first, at once; the other providers after their
     * files were read off the loop. */
    rc = ch->sticky < 0 ? src_start[CREDS_SRC_ENV](job) : CREDS_SKIP;
    if (rc == CREDS_SKIP) {
      job->src = ch->sticky < 0 ? CREDS_SRC_ENV + 1 : ch->sticky;
      rc = creds_files_start(job) == 0 ? CREDS_ASYNC : CREDS_FAIL;
    }
  }
  if (rc == CREDS_ASYNC) {
    ch->job = job;
    creds_cache_fetch_begin(&ch->cache);
    return 0;
  }
  rc = settle(ch, job, rc == CREDS_DONE ? 0 : -1) == 0 ? CREDS_DONE : CREDS_FAIL;
  if (rc == CREDS_FAIL)
    *err = job->err;
  job_free(job);
  return rc;
}

/* Stops the running job on close (cache.stop). */
static void chain_stop(void *owner) {
  struct creds_chain *ch = owner;
  struct creds_job *job = ch->job;
  if (job == NULL)
    return;
  job->cancelled = true;
  if (job->proc)
    creds_process_cancel(job);
  if (job->http)
    creds_http_cancel(job);
  if (job->files)
    creds_files_cancel(job);
}

void creds_free_str(char *s) {
  if (s)
    creds_free_secret(s, strlen(s) + 1);
}

static void chain_free(void *owner) {
  struct creds_chain *ch = owner;
  if (ch->env) {
    for (char **e = ch->env; *e; e++)
      creds_free_str(*e); /* the environment may hold AWS_SECRET_ACCESS_KEY */
    free(ch->env);
  }
  free(ch->home);
  free(ch->region);
  free(ch->sts_endpoint);
  free(ch->container_endpoint);
  creds_cache_clear(&ch->cache);
  OPENSSL_cleanse(ch->imds_token, sizeof(ch->imds_token));
  free(ch);
}

int tt_creds_chain_new(uv_loop_t *loop, struct tt_http *http,
                       const struct tt_creds_chain_options *opts,
                       struct tt_creds_provider **out, struct tt_error *err) {
  static const struct tt_creds_chain_options defaults;
  if (opts == NULL)
    opts = &defaults;
  struct creds_chain *ch = calloc(1, sizeof(*ch));
  if (ch == NULL)
    goto oom;
  ch->loop = loop;
  ch->http = http;
  ch->sticky = -1;
  creds_cache_init(&ch->cache, job_start, ch, chain_free);
  ch->cache.stop = chain_stop;
  char *const *envp = opts->envp ? opts->envp : environ;
  size_t n = 0;
  while (envp && envp[n])
    n++;
  ch->env = calloc(n + 1, sizeof(char *));
  if (ch->env == NULL)
    goto oom;
  for (size_t i = 0; i < n; i++)
    if ((ch->env[i] = strdup(envp[i])) == NULL)
      goto oom;
  const char *from[] = {creds_env(ch, "HOME"), opts->region, opts->sts_endpoint,
                        opts->container_endpoint};
  char **to[] = {&ch->home, &ch->region, &ch->sts_endpoint, &ch->container_endpoint};
  for (size_t i = 0; i < sizeof(to) / sizeof(to[0]); i++)
    if (from[i] && (*to[i] = strdup(from[i])) == NULL)
      goto oom;
  ch->cache.now = opts->now;
  ch->cache.now_arg = opts->now_arg;
  ch->process_timeout_ms = opts->process_timeout_ms ? opts->process_timeout_ms : 30000;
  ch->cache.log = opts->log;
  ch->cache.log_arg = opts->log_arg;
  ch->cache.busy = opts->busy;
  ch->cache.busy_arg = opts->busy_arg;
  creds_cache_open(&ch->cache, loop, &ch->pub);
  *out = &ch->pub;
  return 0;
oom:
  if (ch)
    chain_free(ch);
  return tt_error_set(err, TT_ERR_INTERNAL, "credentials", "credentials: out of memory");
}
