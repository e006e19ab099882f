/* SPDX-License-Identifier: Apache-2.0 */
/* provenance.c -- deploy-authority check of release-state provenance and
 * confidence, the rules of TableTheory's release-state helper
 * (ValidateDeployAuthorityMetadata): low-confidence, conflicting or
 * unrecognised evidence is refused so that it is never stored as the
 * authoritative "actual" row (it belongs in write-once event rows). */
#include "orm/provenance.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "value/json_exact.h"

/* The vocabulary. Keys outside these lists are a malformed document, not
 * free-form notes: TableTheory refuses them the same way. */
static const char *const prov_keys[] = {"mode",        "system",      "kind",
                                        "ref",         "commit_sha",  "observed_at",
                                        "recorded_at", "import_run_id", "digest",
                                        "evidence",    NULL};
static const char *const evidence_keys[] = {"kind", "source", "ref", "observed_at", "digest",
                                            NULL};
static const char *const confidence_keys[] = {"level", "reasons", NULL};
static const char *const modes[] = {"native", "imported", "inferred", NULL};

/* Which (source, kind) pairs can authorize a deploy, and the one
 * confidence reason each implies. */
static const struct {
  const char *kind, *source, *reason;
} authorities[] = {
    {"operator_command", "release-control-plane", "operator_command_authority"},
    {"factory_batch_manifest", "partner-factory", "unique_factory_manifest_match"},
    {"codepipeline_execution", "service-ci", "codepipeline_execution_authority"},
    {"submodule_pin", "service-ci", "unique_submodule_pin_match"},
};

/* Error fields are "<prefix>.<path>", or "<path>" without a prefix. */
struct where {
  const char *prefix;
  struct tt_error *err;
};

static void path_of(const struct where *w, const char *path, char *out, size_t cap) {
  const char *p = w->prefix ? w->prefix : "";
  snprintf(out, cap, "%.*s%s%s", tt_utf8_prefix(p, 96), p, p[0] ? "." : "", path);
}

static int invalid(const struct where *w, const char *path, const char *what) {
  char f[128];
  path_of(w, path, f, sizeof(f));
  return tt_error_set(w->err, TT_ERR_VALIDATION, f, "%s %s", path, what);
}

static int rejected(const struct where *w, const char *path, const char *why) {
  char f[128];
  path_of(w, path, f, sizeof(f));
  return tt_error_set(w->err, TT_ERR_REJECTED_DEPLOY_AUTHORITY_EVIDENCE, f,
                      "%s cannot be stored as deploy authority: %s; keep such evidence in a "
                      "write-once event row instead",
                      path, why);
}

static bool in_list(const char *const *list, const char *s, size_t n) {
  for (; *list; list++)
    if (strlen(*list) == n && memcmp(*list, s, n) == 0)
      return true;
  return false;
}

static int allowed_keys(const struct where *w, const char *path, const json_t *obj,
                        const char *const *allowed) {
  const char *k;
  const json_t *v;
  json_object_foreach((json_t *)obj, k, v) {
    if (!in_list(allowed, k, strlen(k))) {
      char sub[96];
      snprintf(sub, sizeof(sub), "%s.%.*s", path, tt_utf8_prefix(k, 48), k);
      return invalid(w, sub, "is not a known key (the vocabulary is fixed)");
    }
  }
  return 0;
}

/* A member that must be a non-empty string: its text, or NULL with *err set. */
static const char *required_string(const struct where *w, const char *path, const json_t *obj,
                                   const char *key) {
  char sub[96];
  snprintf(sub, sizeof(sub), "%s.%s", path, key);
  size_t n = 0;
  const char *s = tt_json_string_text(json_object_get(obj, key), &n);
  if (s == NULL || n == 0 || memchr(s, '\0', n) != NULL) {
    invalid(w, sub, "must be a non-empty string");
    return NULL;
  }
  return s;
}

/* An optional member that must be a string when present. */
static int optional_string(const struct where *w, const char *path, const json_t *obj,
                           const char *key) {
  const json_t *v = json_object_get(obj, key);
  size_t n;
  if (v == NULL || tt_json_string_text(v, &n) != NULL)
    return 0;
  char sub[96];
  snprintf(sub, sizeof(sub), "%s.%s", path, key);
  return invalid(w, sub, "must be a string");
}

static int digits(const char *s, int n) {
  int v = 0;
  for (int i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

/* RFC 3339 date-time: YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM), with
 * real calendar dates and no leap second (as Go's time.Parse and Python's
 * fromisoformat, which TableTheory uses, both read it). */
static bool rfc3339(const char *s) {
  size_t n = strlen(s);
  if (n < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':')
    return false;
  int y = digits(s, 4), mo = digits(s + 5, 2), d = digits(s + 8, 2);
  int h = digits(s + 11, 2), mi = digits(s + 14, 2), sec = digits(s + 17, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 ||
      sec > 59)
    return false;
  static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (d > mdays[mo - 1] + (mo == 2 && leap))
    return false;
  const char *p = s + 19;
  if (*p == '.') {
    const char *q = ++p;
    while (*p >= '0' && *p <= '9')
      p++;
    if (p == q)
      return false;
  }
  if (p[0] == 'Z')
    return p[1] == '\0';
  if ((p[0] != '+' && p[0] != '-') || strlen(p) != 6 || p[3] != ':')
    return false;
  int oh = digits(p + 1, 2), om = digits(p + 4, 2);
  return oh >= 0 && oh <= 23 && om >= 0 && om <= 59;
}

static int required_time(const struct where *w, const char *path, const json_t *obj,
                         const char *key) {
  const char *s = required_string(w, path, obj, key);
  if (s == NULL)
    return -1;
  if (rfc3339(s))
    return 0;
  char sub[96];
  snprintf(sub, sizeof(sub), "%s.%s", path, key);
  return invalid(w, sub, "must be an RFC 3339 time");
}

static int check_provenance_shape(const struct where *w, const json_t *prov) {
  const char *mode = required_string(w, "provenance", prov, "mode");
  if (mode == NULL)
    return -1;
  if (!in_list(modes, mode, strlen(mode)))
    return invalid(w, "provenance.mode", "must be native, imported or inferred");
  if (required_string(w, "provenance", prov, "system") == NULL ||
      required_string(w, "provenance", prov, "kind") == NULL ||
      required_string(w, "provenance", prov, "ref") == NULL ||
      required_time(w, "provenance", prov, "observed_at") != 0 ||
      required_time(w, "provenance", prov, "recorded_at") != 0 ||
      optional_string(w, "provenance", prov, "commit_sha") != 0 ||
      optional_string(w, "provenance", prov, "import_run_id") != 0 ||
      optional_string(w, "provenance", prov, "digest") != 0)
    return -1;
  return 0;
}

/* The digest of an evidence entry (or provenance), "" when absent. */
static const char *digest_of(const json_t *obj) {
  size_t n;
  const char *s = tt_json_string_text(json_object_get(obj, "digest"), &n);
  return s ? s : "";
}

/* Every entry must name the same artifact (kind, source, ref, digest); the
 * first one is the authority. Sets *authority and *reason. */
static int derive_authority(const struct where *w, const json_t *prov, const json_t **authority,
                            const char **reason) {
  const json_t *ev = json_object_get(prov, "evidence");
  if (!json_is_array(ev))
    return invalid(w, "provenance.evidence", "must be a list of evidence objects");
  if (json_array_size(ev) == 0)
    return rejected(w, "provenance.evidence", "deploy authority requires evidence");
  const json_t *first = NULL;
  size_t i;
  const json_t *e;
  json_array_foreach(ev, i, e) {
    char path[64];
    snprintf(path, sizeof(path), "provenance.evidence[%zu]", i);
    if (!json_is_object(e))
      return invalid(w, path, "must be an object");
    if (allowed_keys(w, path, e, evidence_keys) != 0 ||
        required_string(w, path, e, "kind") == NULL ||
        required_string(w, path, e, "source") == NULL ||
        required_string(w, path, e, "ref") == NULL || required_time(w, path, e, "observed_at") != 0 ||
        optional_string(w, path, e, "digest") != 0)
      return -1;
    if (first == NULL) {
      first = e;
      continue;
    }
    static const char *const same[] = {"kind", "source", "ref"};
    bool differs = strcmp(digest_of(e), digest_of(first)) != 0;
    for (size_t k = 0; k < 3 && !differs; k++) {
      size_t n;
      differs = strcmp(tt_json_string_text(json_object_get(e, same[k]), &n),
                       tt_json_string_text(json_object_get(first, same[k]), &n)) != 0;
    }
    if (differs)
      return rejected(w, path, "conflicting deploy authority evidence");
  }
  size_t n;
  const char *kind = tt_json_string_text(json_object_get(first, "kind"), &n);
  const char *source = tt_json_string_text(json_object_get(first, "source"), &n);
  for (size_t k = 0; k < sizeof(authorities) / sizeof(authorities[0]); k++) {
    if (strcmp(kind, authorities[k].kind) == 0 && strcmp(source, authorities[k].source) == 0) {
      *authority = first;
      *reason = authorities[k].reason;
      return 0;
    }
  }
  return rejected(w, "provenance.evidence[0]",
                  "its source and kind are not a recognised deploy authority");
}

/* The top-level provenance must describe the artifact the authority is
 * about: unrelated evidence must not bless another artifact. */
static int check_alignment(const struct where *w, const json_t *prov, const json_t *authority) {
  static const char *const pairs[][2] = {{"kind", "kind"}, {"system", "source"}, {"ref", "ref"}};
  for (size_t k = 0; k < 3; k++) {
    size_t n;
    const char *a = tt_json_string_text(json_object_get(prov, pairs[k][0]), &n);
    const char *b = tt_json_string_text(json_object_get(authority, pairs[k][1]), &n);
    if (strcmp(a, b) != 0)
      return rejected(w, "provenance",
                      "its kind, system and ref differ from the authorizing evidence");
  }
  if (json_object_get(prov, "digest") != NULL) {
    const char *d = digest_of(prov);
    if (d[0] == '\0' || strcmp(d, digest_of(authority)) != 0)
      return rejected(w, "provenance.digest", "it differs from the authorizing evidence");
  }
  return 0;
}

static int check_confidence(const struct where *w, const json_t *conf, const char *reason) {
  const char *level = required_string(w, "confidence", conf, "level");
  if (level == NULL)
    return -1;
  if (strcmp(level, "high") != 0)
    return rejected(w, "confidence.level", "only high confidence authorizes deploy state");
  const json_t *reasons = json_object_get(conf, "reasons");
  if (!json_is_array(reasons))
    return invalid(w, "confidence.reasons", "must be a list of strings");
  size_t i;
  const json_t *r;
  json_array_foreach(reasons, i, r) {
    size_t n = 0;
    const char *s = tt_json_string_text(r, &n);
    if (s == NULL || n == 0 || memchr(s, '\0', n) != NULL) {
      char path[64];
      snprintf(path, sizeof(path), "confidence.reasons[%zu]", i);
      return invalid(w, path, "must be a non-empty string");
    }
  }
  size_t n;
  if (json_array_size(reasons) != 1 ||
      strcmp(tt_json_string_text(json_array_get(reasons, 0), &n), reason) != 0) {
    char why[128];
    snprintf(why, sizeof(why), "the reasons must be exactly [\"%s\"], which the evidence implies",
             reason);
    return rejected(w, "confidence.reasons", why);
  }
  return 0;
}

int tt_orm_provenance_check(const json_t *item, const char *field, struct tt_error *err) {
  struct where w = {field, err};
  const json_t *prov = json_object_get(item, "provenance");
  const json_t *conf = json_object_get(item, "confidence");
  if (prov == NULL && conf == NULL)
    return 0;
  if (prov == NULL || conf == NULL)
    return invalid(&w, prov ? "confidence" : "provenance",
                   "is required: provenance and confidence go together");
  if (!json_is_object(prov))
    return invalid(&w, "provenance", "must be an object");
  if (!json_is_object(conf))
    return invalid(&w, "confidence", "must be an object");
  const json_t *authority = NULL;
  const char *reason = NULL;
  if (allowed_keys(&w, "provenance", prov, prov_keys) != 0 ||
      allowed_keys(&w, "confidence", conf, confidence_keys) != 0 ||
      check_provenance_shape(&w, prov) != 0 || derive_authority(&w, prov, &authority, &reason) != 0 ||
      check_alignment(&w, prov, authority) != 0 || check_confidence(&w, conf, reason) != 0)
    return -1;
  return 0;
}
