/* SPDX-License-Identifier: Apache-2.0 */
/* creds_profile.c -- the shared config and credentials files provider:
 * profile selection, the INI subset AWS uses, and the dispatch to static
 * keys, credential_process or web identity. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backend/dynamodb/creds_internal.h"
#include "util/error.h"

#define PROFILE_FILE_CAP CREDS_PROFILE_FILE_CAP

/* The settings this provider reads from a profile. */
enum prop {
  P_AKID,
  P_SECRET,
  P_TOKEN,
  P_PROCESS,
  P_ROLE_ARN,
  P_TOKEN_FILE,
  P_SESSION_NAME,
  P_SOURCE_PROFILE,
  P_CREDENTIAL_SOURCE,
  P_SSO_START_URL,
  P_SSO_SESSION,
  P_REGION,
  P__COUNT
};

static const char *const prop_names[P__COUNT] = {
    [P_AKID] = "aws_access_key_id",
    [P_SECRET] = "aws_secret_access_key",
    [P_TOKEN] = "aws_session_token",
    [P_PROCESS] = "credential_process",
    [P_ROLE_ARN] = "role_arn",
    [P_TOKEN_FILE] = "web_identity_token_file",
    [P_SESSION_NAME] = "role_session_name",
    [P_SOURCE_PROFILE] = "source_profile",
    [P_CREDENTIAL_SOURCE] = "credential_source",
    [P_SSO_START_URL] = "sso_start_url",
    [P_SSO_SESSION] = "sso_session",
    [P_REGION] = "region",
};

struct props {
  char *v[P__COUNT]; /* malloc'd values; wiped on free */
  size_t len[P__COUNT];
  bool found; /* the profile's section exists in some file */
};

static void props_free(struct props *p) {
  for (int i = 0; i < P__COUNT; i++) {
    creds_free_secret(p->v[i], p->len[i] + 1);
    p->v[i] = NULL;
  }
}

static bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static void trim(const char **s, const char **e) {
  while (*s < *e && is_space(**s))
    (*s)++;
  while (*e > *s && is_space((*e)[-1]))
    (*e)--;
}

static bool span_eq(const char *s, const char *e, const char *lit) {
  size_t n = strlen(lit);
  return (size_t)(e - s) == n && memcmp(s, lit, n) == 0;
}

/* Whether a section header [s, e) (brackets stripped, trimmed) names
 * `profile`: "[profile x]" (or "[default]") in config, "[x]" in
 * credentials. */
static bool section_matches(const char *s, const char *e, bool config, const char *profile) {
  if (!config)
    return span_eq(s, e, profile);
  if (strcmp(profile, "default") == 0 && span_eq(s, e, "default"))
    return true;
  if (e - s > 7 && memcmp(s, "profile", 7) == 0 && is_space(s[7])) {
    s += 7;
    trim(&s, &e);
    return span_eq(s, e, profile);
  }
  return false;
}

/* Scans one file's text for the profile's sections. Later values win, so
 * the credentials file (scanned second) overrides the config file. */
static int scan(const char *text, size_t len, bool config, const char *profile,
                struct props *p) {
  const char *end = text + len;
  bool in_profile = false;
  for (const char *line = text; line < end;) {
    const char *eol = memchr(line, '\n', (size_t)(end - line));
    if (eol == NULL)
      eol = end;
    const char *s = line, *e = eol;
    bool indented = s < e && is_space(*s);
    line = eol < end ? eol + 1 : end;
    trim(&s, &e);
    if (s == e || *s == '#' || *s == ';')
      continue;
    if (*s == '[') {
      const char *close = memchr(s, ']', (size_t)(e - s));
      if (close == NULL) {
        in_profile = false; /* malformed header: ignore what follows */
        continue;
      }
      const char *ns = s + 1, *ne = close;
      trim(&ns, &ne);
      in_profile = section_matches(ns, ne, config, profile);
      if (in_profile)
        p->found = true;
      continue;
    }
    /* Indented lines continue a value or hold sub-properties ("s3 =\n
     * max_concurrent_requests = 10"); none of our settings use them. */
    if (!in_profile || indented)
      continue;
    const char *eq = memchr(s, '=', (size_t)(e - s));
    if (eq == NULL)
      continue;
    const char *ks = s, *ke = eq, *vs = eq + 1, *ve = e;
    trim(&ks, &ke);
    /* Inline comments start at whitespace + '#' or ';'. */
    for (const char *q = vs; q < ve; q++) {
      if ((*q == '#' || *q == ';') && q > vs && is_space(q[-1])) {
        ve = q;
        break;
      }
    }
    trim(&vs, &ve);
    for (int i = 0; i < P__COUNT; i++) {
      size_t kn = (size_t)(ke - ks);
      if (kn == strlen(prop_names[i]) && strncasecmp(ks, prop_names[i], kn) == 0) {
        char *v = malloc((size_t)(ve - vs) + 1);
        if (v == NULL)
          return -1;
        memcpy(v, vs, (size_t)(ve - vs));
        v[ve - vs] = '\0';
        creds_free_secret(p->v[i], p->len[i] + 1);
        p->v[i] = v;
        p->len[i] = (size_t)(ve - vs);
        break;
      }
    }
  }
  return 0;
}

/* Expands a leading "~/" with the home directory into buf. */
static int expand_path(const struct creds_chain *ch, const char *path, char *buf, size_t n) {
  int w;
  if (path[0] == '~' && (path[1] == '/' || path[1] == '\0')) {
    if (ch->home == NULL)
      return -1;
    w = snprintf(buf, n, "%s%s", ch->home, path + 1);
  } else {
    w = snprintf(buf, n, "%s", path);
  }
  return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* Path of the config (config=true) or credentials file; -1 when there is
 * no home directory to find it in. */
int creds_profile_file_path(const struct creds_chain *ch, bool config, char *buf, size_t n) {
  const char *env = creds_env(ch, config ? "AWS_CONFIG_FILE" : "AWS_SHARED_CREDENTIALS_FILE");
  if (env)
    return expand_path(ch, env, buf, n);
  return expand_path(ch, config ? "~/.aws/config" : "~/.aws/credentials", buf, n);
}

static const char *profile_name(const struct creds_chain *ch) {
  const char *p = creds_env(ch, "AWS_PROFILE");
  return p ? p : "default";
}

/* Reads one file into props. Returns 0 (a missing file is not an error) or
 * -1 with *why. */
static int load_file(const struct creds_chain *ch, bool config, const char *profile,
                     struct props *p, const char **why) {
  char path[4096];
  char *text = NULL;
  size_t len = 0;
  if (creds_profile_file_path(ch, config, path, sizeof(path)) != 0)
    return 0; /* no home directory and no explicit path: nothing to read */
  if (creds_read_file(ch, path, PROFILE_FILE_CAP, &text, &len) != 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      return 0;
    *why = errno == EFBIG ? (config ? "the shared config file is larger than 1 MiB"
                                    : "the shared credentials file is larger than 1 MiB")
                          : (config ? "the shared config file cannot be read"
                                    : "the shared credentials file cannot be read");
    return -1;
  }
  int rc = scan(text, len, config, profile, p);
  creds_free_secret(text, len + 1);
  if (rc != 0)
    *why = "out of memory";
  return rc;
}

static int load(const struct creds_chain *ch, const char *profile, struct props *p,
                const char **why) {
  memset(p, 0, sizeof(*p));
  if (load_file(ch, true, profile, p, why) != 0 || load_file(ch, false, profile, p, why) != 0) {
    props_free(p);
    return -1;
  }
  return 0;
}

void creds_profile_token_file(const struct creds_chain *ch, const char *cfg, size_t cfg_len,
                              const char *cred, size_t cred_len, char *buf, size_t n) {
  struct props p;
  memset(&p, 0, sizeof(p));
  const char *profile = profile_name(ch);
  buf[0] = '\0';
  /* Same order as load(): the credentials file overrides config. */
  if ((cfg == NULL || scan(cfg, cfg_len, true, profile, &p) == 0) &&
      (cred == NULL || scan(cred, cred_len, false, profile, &p) == 0) && p.v[P_ROLE_ARN] &&
      p.v[P_TOKEN_FILE])
    snprintf(buf, n, "%s", p.v[P_TOKEN_FILE]);
  props_free(&p);
}

void creds_profile_region(const struct creds_chain *ch, char *buf, size_t n) {
  struct props p;
  const char *why;
  buf[0] = '\0';
  if (load(ch, profile_name(ch), &p, &why) != 0)
    return;
  if (p.v[P_REGION])
    snprintf(buf, n, "%s", p.v[P_REGION]);
  props_free(&p);
}

int creds_profile_start(struct creds_job *job) {
  const struct creds_chain *ch = job->ch;
  const char *profile = profile_name(ch);
  bool explicit = creds_env(ch, "AWS_PROFILE") != NULL;
  const char *why = NULL;
  struct props p;
  int rc;
  if (load(ch, profile, &p, &why) != 0)
    return creds_job_fail(job, "%s", why);
  if (!p.found)
    rc = explicit ? creds_job_fail(job, "profile '%.*s' was not found in the shared config or "
                                        "credentials file",
                                   tt_utf8_prefix(profile, 64), profile)
                  : CREDS_SKIP;
  else if (p.v[P_ROLE_ARN] && p.v[P_TOKEN_FILE])
    rc = creds_sts_start(job, p.v[P_ROLE_ARN], p.v[P_SESSION_NAME], p.v[P_TOKEN_FILE], "profile");
  else if (p.v[P_ROLE_ARN])
    rc = creds_job_fail(job, "profile '%.*s': role_arn with source_profile or "
                             "credential_source (AssumeRole) is not supported; use "
                             "credential_process",
                        tt_utf8_prefix(profile, 64), profile);
  else if (p.v[P_AKID] && p.v[P_SECRET] &&
           creds_fill(&job->out, p.v[P_AKID], p.len[P_AKID], p.v[P_SECRET], p.len[P_SECRET],
                      p.v[P_TOKEN], p.len[P_TOKEN], 0, "profile", &why) != 0)
    rc = creds_job_fail(job, "profile '%.*s': %s", tt_utf8_prefix(profile, 64), profile, why);
  else if (p.v[P_AKID] && p.v[P_SECRET])
    rc = CREDS_DONE;
  else if (p.v[P_AKID] || p.v[P_SECRET])
    rc = creds_job_fail(job, "profile '%.*s': %s is missing", tt_utf8_prefix(profile, 64),
                        profile, p.v[P_AKID] ? "aws_secret_access_key" : "aws_access_key_id");
  else if (p.v[P_PROCESS])
    rc = creds_process_start(job, p.v[P_PROCESS]);
  else if (p.v[P_SSO_START_URL] || p.v[P_SSO_SESSION])
    rc = creds_job_fail(job, "profile '%.*s': SSO is not supported; use credential_process",
                        tt_utf8_prefix(profile, 64), profile);
  else
    rc = CREDS_SKIP; /* a profile that only sets a region or other options: not ours */
  props_free(&p);
  return rc;
}
