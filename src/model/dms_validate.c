/* SPDX-License-Identifier: Apache-2.0 */
/* dms_validate.c -- checks parsed DMS documents (v0.1/v0.2) and builds struct tt_model. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/model_priv.h"
#include "util/text.h"
#include "value/json_exact.h"

/* Limits: DynamoDB's own (20 GSIs, 5 LSIs, 100 projected non-key attributes
 * over all indexes, 255-byte key attribute names) and sane bounds for the
 * rest so that a hostile model cannot make lookups slow. */
#define MAX_ATTRS 1000
#define MAX_GSI 20
#define MAX_LSI 5
#define MAX_PROJECTED 100
#define MAX_NAME_BYTES 255
#define MAX_MODELS_PER_DOC 1000

/* Validation context: who is being checked, for messages and field paths. */
struct vctx {
  const char *source;    /* "models/user.yml" or NULL */
  char label[300];       /* "model User", "models[2]" or "" */
  char base[48];         /* field path prefix: "models[2]." or "" */
  const char *doc_version; /* dms_version of the enclosing document, or NULL */
  const char *doc_namespace;
  struct tt_error *err;
};

/* Where a member lives, for messages: `what` is printed before the member
 * name ("attribute \"email\": "), `path` prefixes the field path. */
struct where {
  const char *what;
  const char *path;
};

/* Joins a path and a member name into buf ("attributes[2]" + "type"). */
static const char *join(char *buf, size_t cap, const char *path, const char *key) {
  if (path == NULL || path[0] == '\0')
    snprintf(buf, cap, "%s", key);
  else
    snprintf(buf, cap, "%s.%s", path, key);
  return buf;
}

/* A ValidationError about member `key` of the object at field path `path`
 * (relative to c->base), or about `path` itself when key is NULL. */
static int vfail(struct vctx *c, const char *path, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int vfail(struct vctx *c, const char *path, const char *key, const char *fmt, ...) {
  char body[256], fb[160], field[sizeof(c->base) + sizeof(fb)];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(body, sizeof(body), fmt, ap);
  va_end(ap);
  snprintf(field, sizeof(field), "%s%s", c->base,
           key ? join(fb, sizeof(fb), path, key) : path ? path : "");
  /* Strip a trailing '.' left when the path is empty. */
  size_t pl = strlen(field);
  if (pl > 0 && field[pl - 1] == '.')
    field[pl - 1] = '\0';
  return tt_error_set(c->err, TT_ERR_VALIDATION, field, "%s%s%s%s%s", c->source ? c->source : "",
                      c->source ? ": " : "", c->label, c->label[0] ? ": " : "", body);
}

/* Members whose names start with "x-" are extension points: ignored. */
static int check_members(struct vctx *c, const struct where *w, const json_t *obj,
                         const char *const *allowed) {
  const char *key;
  json_t *val;
  json_object_foreach((json_t *)obj, key, val) {
    if (strncmp(key, "x-", 2) == 0)
      continue;
    bool ok = false;
    for (const char *const *a = allowed; *a; a++)
      if (strcmp(*a, key) == 0) {
        ok = true;
        break;
      }
    if (!ok) {
      return vfail(c, w->path, key, "%sunknown field \"%.*s\"", w->what,
                   tt_utf8_prefix(key, 64), key);
    }
  }
  return 0;
}

/* Gets an optional member; JSON null counts as absent (YAML `key:`). */
static const json_t *member(const json_t *obj, const char *key) {
  const json_t *v = json_object_get(obj, key);
  return json_is_null(v) ? NULL : v;
}

/* A string without NUL bytes or control characters: names and enums are
 * printed in messages and logs, where such bytes would do harm. */
static bool clean_string(const json_t *v) {
  const char *s = json_string_value(v);
  size_t n = json_string_length(v);
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch < 0x20u || ch == 0x7fu)
      return false;
  }
  return true;
}

/* Gets member `key` of `type` ("a string", "a map", "a list" in the
 * message): *out NULL when absent (an error when `required`). */
static int get_typed(struct vctx *c, const struct where *w, const json_t *obj, const char *key,
                     bool required, json_type type, const char *what, const json_t **out) {
  const json_t *v = member(obj, key);
  *out = NULL;
  if (v == NULL) {
    if (required)
      return vfail(c, w->path, key, "%s%s is required", w->what, key);
    return 0;
  }
  if (json_typeof(v) != type)
    return vfail(c, w->path, key, "%s%s must be %s", w->what, key, what);
  *out = v;
  return 0;
}

static int get_string(struct vctx *c, const struct where *w, const json_t *obj, const char *key,
                      bool required, const char **out) {
  const json_t *v;
  *out = NULL;
  if (get_typed(c, w, obj, key, required, JSON_STRING, "a string", &v) != 0)
    return -1;
  if (v == NULL)
    return 0;
  if (json_string_length(v) == 0)
    return vfail(c, w->path, key, "%s%s must not be empty", w->what, key);
  if (!clean_string(v))
    return vfail(c, w->path, key, "%s%s must not contain control characters", w->what, key);
  *out = json_string_value(v);
  return 0;
}

static int get_bool(struct vctx *c, const struct where *w, const json_t *obj, const char *key,
                    bool *out) {
  const json_t *v = member(obj, key);
  *out = false;
  if (v == NULL)
    return 0;
  if (!json_is_boolean(v))
    return vfail(c, w->path, key, "%s%s must be true or false (unquoted)", w->what, key);
  *out = json_is_true(v);
  return 0;
}

/* Gets map member `key` and, when `allowed` is not NULL, checks the map's
 * members (`in` places them in messages). */
static int get_object(struct vctx *c, const struct where *w, const json_t *obj, const char *key,
                      bool required, const struct where *in, const char *const *allowed,
                      const json_t **out) {
  if (get_typed(c, w, obj, key, required, JSON_OBJECT, "a map", out) != 0)
    return -1;
  return *out != NULL && allowed != NULL ? check_members(c, in, *out, allowed) : 0;
}

static int get_array(struct vctx *c, const struct where *w, const json_t *obj, const char *key,
                     bool required, const json_t **out) {
  return get_typed(c, w, obj, key, required, JSON_ARRAY, "a list", out);
}

static bool is_lower(char ch) { return ch >= 'a' && ch <= 'z'; }
static bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }
static bool is_upper(char ch) { return ch >= 'A' && ch <= 'Z'; }

/* Whether s[from..n) is all [A-Za-z0-9_.-]. */
static bool name_chars(const char *s, size_t from, size_t n) {
  for (size_t i = from; i < n; i++)
    if (!is_lower(s[i]) && !is_upper(s[i]) && !is_digit(s[i]) && !strchr("_.-", s[i]))
      return false;
  return true;
}

/* DynamoDB table and index names: 3-255 of [A-Za-z0-9_.-]. */
static bool valid_resource_name(const char *s) {
  size_t n = strlen(s);
  return n >= 3 && n <= 255 && name_chars(s, 0, n);
}

/* Model names appear in URL paths, metric labels and log lines:
 * [A-Za-z_][A-Za-z0-9_.-]{0,254}. */
static bool valid_model_name(const char *s) {
  size_t n = strlen(s);
  return n >= 1 && n <= 255 && (is_lower(s[0]) || is_upper(s[0]) || s[0] == '_') &&
         name_chars(s, 1, n);
}

/* DMS naming rules (spec "Attribute naming"). */
static bool matches_naming(enum tt_model_naming conv, const char *s) {
  size_t n = strlen(s);
  switch (conv) {
  case TT_NAMING_NONE:
    return true;
  case TT_NAMING_CAMEL_CASE:
  case TT_NAMING_DYNAMORM:
    if (strcmp(s, "PK") == 0 || strcmp(s, "SK") == 0)
      return true;
    if (n == 0 || !is_lower(s[0]))
      return false;
    for (size_t i = 1; i < n; i++)
      if (!is_lower(s[i]) && !is_upper(s[i]) && !is_digit(s[i]))
        return false;
    return true;
  case TT_NAMING_SNAKE_CASE:
    if (n == 0 || !is_lower(s[0]))
      return false;
    for (size_t i = 1; i < n; i++) {
      if (s[i] == '_') {
        /* `_` must be followed by at least one [a-z0-9]. */
        if (i + 1 >= n || !(is_lower(s[i + 1]) || is_digit(s[i + 1])))
          return false;
      } else if (!is_lower(s[i]) && !is_digit(s[i])) {
        return false;
      }
    }
    return true;
  }
  return false;
}

static int parse_version(const char *s, enum tt_dms_version *out) {
  if (strcmp(s, "0.1") == 0)
    *out = TT_DMS_V0_1;
  else if (strcmp(s, "0.2") == 0)
    *out = TT_DMS_V0_2;
  else
    return -1;
  return 0;
}

/* dms_version must be the string "0.1" or "0.2"; an unquoted 0.1 arrives as
 * text from YAML but as a number from JSON, and both are refused so that
 * one file means the same thing to every TableTheory runtime. */
static int get_version(struct vctx *c, const struct where *w, const json_t *obj, bool required,
                       const char **text, enum tt_dms_version *ver) {
  const json_t *v = member(obj, "dms_version");
  *text = NULL;
  if (v == NULL) {
    if (required)
      return vfail(c, w->path, "dms_version",
                   "%sdms_version is required (\"0.1\" or \"0.2\")", w->what);
    return 0;
  }
  if (!json_is_string(v))
    return vfail(c, w->path, "dms_version",
                 "%sdms_version must be a quoted string: \"0.1\" or \"0.2\"", w->what);
  if (!clean_string(v) || parse_version(json_string_value(v), ver) != 0) {
    const char *shown = clean_string(v) ? json_string_value(v) : "?";
    return vfail(c, w->path, "dms_version",
                 "%sunsupported dms_version \"%.*s\" (this daemon reads \"0.1\" and \"0.2\")",
                 w->what, tt_utf8_prefix(shown, 16), shown);
  }
  *text = json_string_value(v);
  return 0;
}

static int oom(struct vctx *c) {
  return tt_error_set(c->err, TT_ERR_INTERNAL, NULL, "out of memory while loading models");
}

/* --- attributes ------------------------------------------------------- */

static const char *const attr_members[] = {"attribute", "type",   "required",   "optional",
                                           "omit_empty", "roles",  "format",     "json",
                                           "binary",    "encryption", "tags",    NULL};

static const struct tt_model_word index_kinds[] = {
    {"GSI", TT_INDEX_GSI}, {"LSI", TT_INDEX_LSI}, {NULL, 0}};

/* Parses attributes[i] into *a (zeroed by the caller). Index roles are
 * checked later, once the indexes are known. */
static int load_attr(struct vctx *c, const json_t *obj, size_t i, enum tt_model_naming naming,
                     struct tt_model_attr *a) {
  char path[48], what[300];
  snprintf(path, sizeof(path), "attributes[%zu]", i);
  if (!json_is_object(obj))
    return vfail(c, path, NULL, "attributes[%zu] must be a map", i);
  const char *name;
  char prefix[40];
  snprintf(prefix, sizeof(prefix), "attributes[%zu]: ", i);
  struct where wn = {prefix, path};
  if (get_string(c, &wn, obj, "attribute", true, &name) != 0)
    return -1;
  if (strlen(name) > MAX_NAME_BYTES)
    return vfail(c, path, "attribute",
                 "attributes[%zu]: attribute name is longer than %d bytes", i, MAX_NAME_BYTES);
  /* select, set and filter read '.' and '[...]' as steps into nested values,
   * so an attribute named with them could be stored but never addressed. */
  size_t bad = strcspn(name, ".[]");
  if (name[bad] != '\0')
    return vfail(c, path, "attribute",
                 "attribute \"%s\": a name may not contain '%c' (paths use '.' and '[n]' to "
                 "reach nested values, so the attribute could not be selected, set or filtered)",
                 name, name[bad]);
  snprintf(what, sizeof(what), "attribute \"%s\": ", name);
  struct where w = {what, path};
  if (check_members(c, &w, obj, attr_members) != 0)
    return -1;
  if (naming != TT_NAMING_NONE && !matches_naming(naming, name))
    return vfail(c, path, "attribute",
                 "%sname does not follow the %s naming convention", what, tt_model_word_of(tt_model_conventions, naming));
  a->name = strdup(name);
  if (a->name == NULL)
    return oom(c);
  a->name_len = strlen(name);
  struct tt_buf key;
  tt_buf_init(&key, 0);
  if (tt_json_write_string(&key, a->name, a->name_len, 0) != 0 || tt_buf_append(&key, ":", 1) != 0) {
    tt_buf_free(&key);
    return oom(c);
  }
  a->json_key = tt_buf_steal(&key, &a->json_key_len);

  const char *type;
  if (get_string(c, &w, obj, "type", true, &type) != 0)
    return -1;
  if ((a->type = tt_av_type_parse(type, strlen(type))) == 0)
    return vfail(c, path, "type",
                 "%sunknown type \"%.*s\" (S, N, B, BOOL, NULL, SS, NS, BS, M or L)", what,
                 tt_utf8_prefix(type, 16), type);

  if (get_bool(c, &w, obj, "required", &a->required) != 0 ||
      get_bool(c, &w, obj, "optional", &a->optional) != 0 ||
      get_bool(c, &w, obj, "omit_empty", &a->omit_empty) != 0 ||
      get_bool(c, &w, obj, "json", &a->json) != 0 ||
      get_bool(c, &w, obj, "binary", &a->binary) != 0)
    return -1;
  if (a->required && a->optional)
    return vfail(c, path, "optional", "%scannot be both required and optional", what);
  /* v0.2 lets json ride on S, N, BOOL, NULL, L and M. The v0.1 text said S
   * only, but the v0.1 release-state fixture uses json with M, and every
   * runtime loads it, so both versions get the v0.2 rule. */
  if (a->json && !(a->type == TT_AV_S || a->type == TT_AV_N || a->type == TT_AV_BOOL ||
                   a->type == TT_AV_NULL || a->type == TT_AV_L || a->type == TT_AV_M))
    return vfail(c, path, "json", "%sjson needs type S, N, BOOL, NULL, L or M, not %s", what,
                 tt_model_type_name(a->type));
  if (a->binary && a->type != TT_AV_B)
    return vfail(c, path, "binary", "%sbinary needs type B, not %s", what,
                 tt_model_type_name(a->type));
  if (a->binary && a->json)
    return vfail(c, path, "json", "%scannot be both json and binary", what);

  const char *format;
  if (get_string(c, &w, obj, "format", false, &format) != 0)
    return -1;
  if (format != NULL) {
    int f = tt_model_word_parse(tt_model_formats, format);
    if (f < 0)
      return vfail(c, path, "format",
                   "%sunknown format \"%.*s\" (rfc3339nano, unix_seconds, int or "
                   "decimal_string)", what, tt_utf8_prefix(format, 32), format);
    a->format = (enum tt_model_format)f;
    enum tt_av_type need = a->format == TT_FORMAT_RFC3339NANO ? TT_AV_S : TT_AV_N;
    if (a->type != need)
      return vfail(c, path, "format", "%sformat %s needs type %s, not %s",
                   what, format, tt_model_type_name(need), tt_model_type_name(a->type));
  }

  const json_t *roles;
  if (get_array(c, &w, obj, "roles", false, &roles) != 0)
    return -1;
  if (roles != NULL) {
    size_t j;
    const json_t *r;
    json_array_foreach(roles, j, r) {
      char rp[96];
      snprintf(rp, sizeof(rp), "%s.roles[%zu]", path, j);
      if (!json_is_string(r) || !clean_string(r) || json_string_length(r) == 0)
        return vfail(c, rp, NULL, "%sroles must be a list of role names", what);
      const char *rs = json_string_value(r);
      if (strncmp(rs, "index_pk:", 9) == 0 || strncmp(rs, "index_sk:", 9) == 0) {
        if (rs[9] == '\0')
          return vfail(c, rp, NULL, "%srole %.*s needs an index name", what,
                       tt_utf8_prefix(rs, 9), rs);
        /* Checked against the indexes once they are loaded. */
        for (size_t k = 0; k < j; k++)
          if (json_equal(json_array_get(roles, k), r))
            return vfail(c, rp, NULL, "%srole \"%.*s\" is listed twice", what,
                         tt_utf8_prefix(rs, 80), rs);
        if (a->index_roles == NULL && (a->index_roles = json_array()) == NULL)
          return oom(c);
        if (json_array_append_new(a->index_roles, json_string(rs)) != 0)
          return oom(c);
        continue;
      }
      int bit = tt_model_word_parse(tt_model_roles, rs);
      if (bit < 0)
        return vfail(c, rp, NULL,
                     "%sunknown role \"%.*s\" (pk, sk, created_at, updated_at, version, ttl, "
                     "index_pk:<index>, index_sk:<index>)",
                     what, tt_utf8_prefix(rs, 32), rs);
      if (a->roles & bit)
        return vfail(c, rp, NULL, "%srole %s is listed twice", what, rs);
      a->roles |= bit;
    }
  }

  const json_t *enc;
  char ep[64];
  snprintf(ep, sizeof(ep), "%s.encryption", path);
  struct where we = {what, ep};
  static const char *const enc_members[] = {"v", NULL};
  if (get_object(c, &w, obj, "encryption", false, &we, enc_members, &enc) != 0)
    return -1;
  if (enc != NULL) {
    const json_t *v = member(enc, "v");
    if (v != NULL && !(json_is_integer(v) && json_integer_value(v) == 1))
      return vfail(c, ep, "v", "%sencryption.v must be 1 (the only envelope version)", what);
    a->encrypted = true;
  }

  const json_t *tags;
  if (get_object(c, &w, obj, "tags", false, NULL, NULL, &tags) != 0)
    return -1;
  if (tags != NULL) {
    char tp[64];
    snprintf(tp, sizeof(tp), "%s.tags", path);
    char tw[320];
    snprintf(tw, sizeof(tw), "%stags.", what);
    struct where wt = {tw, tp};
    if (get_bool(c, &wt, tags, "unique", &a->unique) != 0)
      return -1;
    /* A unique value is kept by a guard item keyed by the value itself
     * (docs/batch.md): the plain value of an encrypted attribute would sit
     * in a key, and envelopes cannot be compared. */
    if (a->unique && a->encrypted)
      return vfail(c, tp, "unique",
                   "%san encrypted attribute cannot be unique (its guard item would be keyed "
                   "by the plain value)", what);
    if (json_object_size(tags) > 0) {
      a->tags = json_deep_copy(tags);
      if (a->tags == NULL)
        return oom(c);
    }
  }
  return 0;
}

/* --- keys --------------------------------------------------------------- */

/* Parses {attribute, type} at obj.key and resolves it against the declared
 * attributes. `outer` prefixes messages about the member itself ("keys." or
 * "index \"x\": "); `path` is the field path of obj. */
static int load_key(struct vctx *c, struct tt_model *m, const json_t *obj, const char *key,
                    const char *path, const char *outer, bool required,
                    const struct tt_model_attr **out) {
  char kp[96], what[320];
  const json_t *k;
  *out = NULL;
  struct where w = {outer, path};
  snprintf(what, sizeof(what), "%s%s: ", outer, key);
  join(kp, sizeof(kp), path, key);
  struct where wk = {what, kp};
  static const char *const key_members[] = {"attribute", "type", NULL};
  if (get_object(c, &w, obj, key, required, &wk, key_members, &k) != 0)
    return -1;
  if (k == NULL)
    return 0;
  const char *attr, *type;
  if (get_string(c, &wk, k, "attribute", true, &attr) != 0 ||
      get_string(c, &wk, k, "type", true, &type) != 0)
    return -1;
  enum tt_av_type t = tt_av_type_parse(type, strlen(type));
  if (t != TT_AV_S && t != TT_AV_N && t != TT_AV_B)
    return vfail(c, kp, "type", "%stype must be S, N or B, not \"%.*s\"",
                 what, tt_utf8_prefix(type, 16), type);
  const struct tt_model_attr *a = tt_model_attr_find(m, attr, strlen(attr));
  if (a == NULL)
    return vfail(c, kp, "attribute", "%sattribute \"%.*s\" is not declared in attributes", what,
                 tt_utf8_prefix(attr, 64), attr);
  if (a->type != t)
    return vfail(c, kp, "type", "%sattribute \"%.*s\" is declared with type %s, not %s", what,
                 tt_utf8_prefix(attr, 64), attr,
                 tt_model_type_name(a->type), tt_model_type_name(t));
  if (a->encrypted)
    return vfail(c, kp, "attribute",
                 "%sattribute \"%.*s\" is encrypted and cannot be a key", what,
                 tt_utf8_prefix(attr, 64), attr);
  if (a->json)
    return vfail(c, kp, "attribute", "%sattribute \"%.*s\" is json and cannot be a key", what,
                 tt_utf8_prefix(attr, 64), attr);
  *out = a;
  return 0;
}

/* --- write policy, tags -------------------------------------------------- */

static int load_write_policy(struct vctx *c, struct tt_model *m, const json_t *model) {
  const json_t *wp;
  struct where w = {"", ""}, ww = {"write_policy: ", "write_policy"};
  static const char *const wp_members[] = {"mode", "protected_attributes", NULL};
  if (get_object(c, &w, model, "write_policy", false, &ww, wp_members, &wp) != 0)
    return -1;
  if (wp == NULL)
    return 0;
  const char *mode;
  if (get_string(c, &ww, wp, "mode", false, &mode) != 0)
    return -1;
  if (mode != NULL) {
    if (strcmp(mode, "write_once") == 0)
      m->write_once = true;
    else if (strcmp(mode, "mutable") != 0)
      return vfail(c, "write_policy.mode", NULL,
                   "write_policy: unknown mode \"%.*s\" (mutable or write_once)",
                   tt_utf8_prefix(mode, 32), mode);
  }
  const json_t *prot;
  if (get_array(c, &ww, wp, "protected_attributes", false, &prot) != 0)
    return -1;
  if (prot != NULL) {
    size_t i;
    const json_t *p;
    json_array_foreach(prot, i, p) {
      char pp[64];
      snprintf(pp, sizeof(pp), "write_policy.protected_attributes[%zu]", i);
      if (!json_is_string(p) || json_string_length(p) == 0 || !clean_string(p))
        return vfail(c, pp, NULL, "write_policy: protected_attributes must be a list of attribute "
                     "names");
      const struct tt_model_attr *a =
          tt_model_attr_find(m, json_string_value(p), json_string_length(p));
      if (a == NULL)
        return vfail(c, pp, NULL, "write_policy: protected attribute \"%.*s\" is not declared",
                     tt_utf8_prefix(json_string_value(p), 64), json_string_value(p));
      /* Listing one twice is harmless; the flag is idempotent. */
      ((struct tt_model_attr *)a)->is_protected = true;
    }
  }
  return 0;
}

static int load_model_tags(struct vctx *c, struct tt_model *m, const json_t *model) {
  const json_t *tags;
  struct where w = {"", ""};
  if (get_object(c, &w, model, "tags", false, NULL, NULL, &tags) != 0)
    return -1;
  if (tags == NULL)
    return 0;
  struct where wt = {"tags.", "tags"};
  if (get_bool(c, &wt, tags, "additional_attributes", &m->additional_attributes) != 0)
    return -1;
  if (json_object_size(tags) > 0) {
    m->tags = json_deep_copy(tags);
    if (m->tags == NULL)
      return oom(c);
  }
  return 0;
}

/* --- indexes -------------------------------------------------------------- */

static int load_projection(struct vctx *c, struct tt_model *m, const json_t *obj,
                           const char *path, const char *what, struct tt_model_index *ix,
                           size_t *projected_total) {
  char pp[96];
  const json_t *p;
  struct where w = {what, path};
  ix->projection = TT_PROJECTION_ALL;
  join(pp, sizeof(pp), path, "projection");
  char pw[340];
  snprintf(pw, sizeof(pw), "%sprojection.", what);
  struct where wp = {pw, pp};
  static const char *const proj_members[] = {"type", "fields", NULL};
  if (get_object(c, &w, obj, "projection", false, &wp, proj_members, &p) != 0)
    return -1;
  if (p == NULL)
    return 0;
  const char *type;
  if (get_string(c, &wp, p, "type", true, &type) != 0)
    return -1;
  int proj = tt_model_word_parse(tt_model_projections, type);
  if (proj < 0)
    return vfail(c, pp, "type",
                 "%sunknown projection type \"%.*s\" (ALL, KEYS_ONLY or INCLUDE)", what,
                 tt_utf8_prefix(type, 32), type);
  ix->projection = (enum tt_model_projection)proj;
  const json_t *fields;
  if (get_array(c, &wp, p, "fields", false, &fields) != 0)
    return -1;
  if (ix->projection != TT_PROJECTION_INCLUDE) {
    if (fields != NULL && json_array_size(fields) > 0)
      return vfail(c, pp, "fields",
                   "%sprojection fields are only allowed with type INCLUDE", what);
    return 0;
  }
  if (fields == NULL || json_array_size(fields) == 0)
    return vfail(c, pp, "fields",
                 "%sprojection type INCLUDE needs a non-empty fields list", what);
  size_t n = json_array_size(fields);
  if (*projected_total + n > MAX_PROJECTED)
    return vfail(c, pp, "fields",
                 "%smore than %d projected attributes over all indexes (DynamoDB's limit)", what,
                 MAX_PROJECTED);
  *projected_total += n;
  ix->include = calloc(n, sizeof(char *));
  if (ix->include == NULL)
    return oom(c);
  for (size_t i = 0; i < n; i++) {
    const json_t *f = json_array_get(fields, i);
    char fp[160];
    snprintf(fp, sizeof(fp), "%s.fields[%zu]", pp, i);
    if (!json_is_string(f) || json_string_length(f) == 0 || !clean_string(f))
      return vfail(c, fp, NULL, "%sprojection fields must be a list of attribute names", what);
    const char *fs = json_string_value(f);
    if (!m->additional_attributes && tt_model_attr_find(m, fs, json_string_length(f)) == NULL)
      return vfail(c, fp, NULL, "%sprojected attribute \"%.*s\" is not declared", what,
                   tt_utf8_prefix(fs, 64), fs);
    for (size_t k = 0; k < ix->n_include; k++)
      if (strcmp(ix->include[k], fs) == 0)
        return vfail(c, fp, NULL, "%sprojected attribute \"%.*s\" is listed twice", what,
                     tt_utf8_prefix(fs, 64), fs);
    ix->include[i] = strdup(fs);
    if (ix->include[i] == NULL)
      return oom(c);
    ix->n_include = i + 1;
  }
  return 0;
}

static int load_index(struct vctx *c, struct tt_model *m, const json_t *obj, size_t i,
                      size_t *projected_total) {
  char path[48], what[300];
  struct tt_model_index *ix = &m->indexes[i];
  snprintf(path, sizeof(path), "indexes[%zu]", i);
  if (!json_is_object(obj))
    return vfail(c, path, NULL, "indexes[%zu] must be a map", i);
  char pre[40];
  snprintf(pre, sizeof(pre), "indexes[%zu]: ", i);
  struct where wn = {pre, path};
  const char *name;
  if (get_string(c, &wn, obj, "name", true, &name) != 0)
    return -1;
  if (!valid_resource_name(name))
    return vfail(c, path, "name",
                 "indexes[%zu]: name must be 3-255 characters of A-Z a-z 0-9 _ . -", i);
  snprintf(what, sizeof(what), "index \"%s\": ", name);
  struct where w = {what, path};
  static const char *const index_members[] = {"name", "type", "partition", "sort", "projection",
                                              NULL};
  if (check_members(c, &w, obj, index_members) != 0)
    return -1;
  for (size_t k = 0; k < i; k++)
    if (strcmp(m->indexes[k].name, name) == 0)
      return vfail(c, path, "name", "index \"%s\" is declared twice", name);
  ix->name = strdup(name);
  if (ix->name == NULL)
    return oom(c);
  const char *type;
  if (get_string(c, &w, obj, "type", true, &type) != 0)
    return -1;
  int kind = tt_model_word_parse(index_kinds, type);
  if (kind < 0)
    return vfail(c, path, "type", "%stype must be GSI or LSI, not \"%.*s\"",
                 what, tt_utf8_prefix(type, 16), type);
  ix->kind = (enum tt_model_index_kind)kind;
  if (load_key(c, m, obj, "partition", path, what, true, &ix->partition) != 0 ||
      load_key(c, m, obj, "sort", path, what, false, &ix->sort) != 0)
    return -1;
  if (ix->sort == ix->partition)
    return vfail(c, path, "sort", "%sthe sort key must differ from the partition key", what);
  if (ix->kind == TT_INDEX_LSI) {
    /* DynamoDB: an LSI shares the table's partition key, has its own sort
     * key, and exists only on tables with a sort key. */
    if (m->sk == NULL)
      return vfail(c, path, "type",
                   "%sa local secondary index needs a table with a sort key", what);
    if (ix->partition != m->pk)
      return vfail(c, path, "partition",
                   "%sa local secondary index must use the table's partition key \"%s\"", what,
                   m->pk->name);
    if (ix->sort == NULL)
      return vfail(c, path, "sort", "%sa local secondary index needs a sort key", what);
  }
  return load_projection(c, m, obj, path, what, ix, projected_total);
}

static int load_indexes(struct vctx *c, struct tt_model *m, const json_t *model) {
  const json_t *arr;
  struct where w = {"", ""};
  if (get_array(c, &w, model, "indexes", false, &arr) != 0)
    return -1;
  size_t n = arr ? json_array_size(arr) : 0;
  if (n == 0)
    return 0;
  m->indexes = calloc(n, sizeof(*m->indexes));
  if (m->indexes == NULL)
    return oom(c);
  size_t gsi = 0, lsi = 0, projected = 0;
  for (size_t i = 0; i < n; i++) {
    m->n_indexes = i + 1; /* so that a partial index is freed */
    if (load_index(c, m, json_array_get(arr, i), i, &projected) != 0)
      return -1;
    if (m->indexes[i].kind == TT_INDEX_GSI && ++gsi > MAX_GSI)
      return vfail(c, "indexes", NULL, "more than %d global secondary indexes (DynamoDB's limit)",
                   MAX_GSI);
    if (m->indexes[i].kind == TT_INDEX_LSI && ++lsi > MAX_LSI)
      return vfail(c, "indexes", NULL, "more than %d local secondary indexes (DynamoDB's limit)",
                   MAX_LSI);
  }
  return 0;
}

/* --- roles ---------------------------------------------------------------- */

static int check_roles(struct vctx *c, struct tt_model *m, const json_t *attrs_json) {
  static const struct {
    unsigned bit;
    enum tt_model_lifecycle lc;
    const char *name;
    enum tt_av_type type;
    enum tt_model_format format;
  } lc_roles[] = {
      {TT_ROLE_CREATED_AT, TT_LC_CREATED_AT, "created_at", TT_AV_S, TT_FORMAT_RFC3339NANO},
      {TT_ROLE_UPDATED_AT, TT_LC_UPDATED_AT, "updated_at", TT_AV_S, TT_FORMAT_RFC3339NANO},
      {TT_ROLE_VERSION, TT_LC_VERSION, "version", TT_AV_N, TT_FORMAT_INT},
      {TT_ROLE_TTL, TT_LC_TTL, "ttl", TT_AV_N, TT_FORMAT_UNIX_SECONDS},
  };
  for (size_t i = 0; i < m->n_attrs; i++) {
    struct tt_model_attr *a = &m->attrs[i];
    char rp[64];
    snprintf(rp, sizeof(rp), "attributes[%zu].roles", i);
    if ((a->roles & TT_ROLE_PK) && a != m->pk)
      return vfail(c, rp, NULL, "attribute \"%s\": has role pk but keys.partition is \"%s\"",
                   a->name, m->pk->name);
    if ((a->roles & TT_ROLE_SK) && a != m->sk)
      return vfail(c, rp, NULL, "attribute \"%s\": has role sk but %s", a->name,
                   m->sk ? "keys.sort names another attribute" : "the model has no keys.sort");
    bool is_key = a == m->pk || a == m->sk;
    char kf[64];
    snprintf(kf, sizeof(kf), "attributes[%zu].%s", i, a->optional ? "optional" : "omit_empty");
    if (is_key && (a->optional || a->omit_empty))
      return vfail(c, kf, NULL,
                   "attribute \"%s\": a key attribute cannot be %s", a->name,
                   a->optional ? "optional" : "omit_empty");
    for (size_t r = 0; r < sizeof(lc_roles) / sizeof(lc_roles[0]); r++) {
      if (!(a->roles & lc_roles[r].bit))
        continue;
      if (m->lifecycle[lc_roles[r].lc] != NULL)
        return vfail(c, rp, NULL, "attribute \"%s\": role %s is already held by attribute \"%s\"",
                     a->name, lc_roles[r].name, m->lifecycle[lc_roles[r].lc]->name);
      if (a->type != lc_roles[r].type)
        return vfail(c, rp, NULL, "attribute \"%s\": role %s needs type %s, not %s", a->name,
                     lc_roles[r].name, tt_model_type_name(lc_roles[r].type),
                     tt_model_type_name(a->type));
      if (a->format != TT_FORMAT_NONE && a->format != lc_roles[r].format)
        return vfail(c, rp, NULL, "attribute \"%s\": role %s does not fit its format", a->name,
                     lc_roles[r].name);
      /* The library writes these attributes itself; a key comes from the
       * caller, and DynamoDB cannot update key attributes. */
      if (is_key)
        return vfail(c, rp, NULL, "attribute \"%s\": a key attribute cannot have role %s", a->name,
                     lc_roles[r].name);
      if (a->encrypted || a->json)
        return vfail(c, rp, NULL, "attribute \"%s\": role %s cannot be %s", a->name,
                     lc_roles[r].name, a->encrypted ? "encrypted" : "json");
      m->lifecycle[lc_roles[r].lc] = a;
    }
    /* index_pk:/index_sk: roles name an index key this attribute must be. */
    const json_t *roles = member(json_array_get(attrs_json, i), "roles");
    size_t j;
    const json_t *r;
    json_array_foreach(roles, j, r) {
      const char *rs = json_string_value(r);
      bool ipk = strncmp(rs, "index_pk:", 9) == 0, isk = strncmp(rs, "index_sk:", 9) == 0;
      if (!ipk && !isk)
        continue;
      char rjp[80];
      snprintf(rjp, sizeof(rjp), "attributes[%zu].roles[%zu]", i, j);
      const struct tt_model_index *ix = tt_model_index_find(m, rs + 9);
      if (ix == NULL)
        return vfail(c, rjp, NULL, "attribute \"%s\": role \"%.*s\" names an undeclared index",
                     a->name, tt_utf8_prefix(rs, 80), rs);
      if ((ipk && ix->partition != a) || (isk && ix->sort != a))
        return vfail(c, rjp, NULL,
                     "attribute \"%s\": role \"%.*s\" but it is not that index's %s key", a->name,
                     tt_utf8_prefix(rs, 80), rs, ipk ? "partition" : "sort");
    }
  }
  return 0;
}

/* --- model ---------------------------------------------------------------- */

static const char *const model_members[] = {"name",       "table",      "naming",  "keys",
                                            "write_policy", "attributes", "indexes", "tags",
                                            "dms_version", "namespace",  NULL};

/* Fills m from the model object obj, whose name and members are checked. */
static int fill_model(struct vctx *c, const json_t *obj, const char *name, struct tt_model *m) {
  char fb[160];
  struct where w0 = {"", ""};
  if ((m->name = strdup(name)) == NULL || (c->source && (m->source = strdup(c->source)) == NULL))
    return oom(c);

  /* dms_version / namespace on a model: the run-time form carries them;
   * inside a document they must agree with the document's. */
  const char *ver_text;
  enum tt_dms_version ver = TT_DMS_V0_2;
  if (get_version(c, &w0, obj, false, &ver_text, &ver) != 0)
    return -1;
  if (c->doc_version != NULL) {
    enum tt_dms_version docv = TT_DMS_V0_2;
    parse_version(c->doc_version, &docv);
    if (ver_text != NULL && ver != docv)
      return vfail(c, "dms_version", NULL,
                   "dms_version \"%s\" differs from the document's \"%s\"", ver_text,
                   c->doc_version);
    ver = docv;
  }
  m->dms_version = ver;
  const char *ns;
  if (get_string(c, &w0, obj, "namespace", false, &ns) != 0)
    return -1;
  if (ns != NULL && c->doc_namespace != NULL && strcmp(ns, c->doc_namespace) != 0)
    return vfail(c, "namespace", NULL, "namespace differs from the document's");
  if (ns == NULL)
    ns = c->doc_namespace;
  if (ns != NULL && (m->namespace_name = strdup(ns)) == NULL)
    return oom(c);

  const json_t *table;
  struct where wt = {"table.", "table"};
  static const char *const table_members[] = {"name", NULL};
  if (get_object(c, &w0, obj, "table", true, &wt, table_members, &table) != 0)
    return -1;
  const char *tname;
  if (get_string(c, &wt, table, "name", true, &tname) != 0)
    return -1;
  if (!valid_resource_name(tname))
    return vfail(c, "table.name", NULL,
                 "table.name must be 3-255 characters of A-Z a-z 0-9 _ . -");
  if ((m->table = strdup(tname)) == NULL)
    return oom(c);

  const json_t *naming;
  struct where wnm = {"naming.", "naming"};
  static const char *const naming_members[] = {"convention", NULL};
  if (get_object(c, &w0, obj, "naming", false, &wnm, naming_members, &naming) != 0)
    return -1;
  if (naming != NULL) {
    const char *conv;
    if (get_string(c, &wnm, naming, "convention", true, &conv) != 0)
      return -1;
    int naming_conv = tt_model_word_parse(tt_model_conventions, conv);
    if (strcmp(conv, "pascalCase") == 0)
      return vfail(c, "naming.convention", NULL,
                   "naming.convention pascalCase is not a DMS convention (camelCase, "
                   "snake_case or dynamorm)");
    if (naming_conv < 0)
      return vfail(c, "naming.convention", NULL,
                   "unknown naming.convention \"%.*s\" (camelCase, snake_case or dynamorm)",
                   tt_utf8_prefix(conv, 32), conv);
    m->naming = (enum tt_model_naming)naming_conv;
  }

  /* Model tags first: additional_attributes changes how INCLUDE lists are
   * checked. */
  if (load_model_tags(c, m, obj) != 0)
    return -1;

  const json_t *attrs;
  if (get_array(c, &w0, obj, "attributes", true, &attrs) != 0)
    return -1;
  size_t n = json_array_size(attrs);
  if (n == 0)
    return vfail(c, "attributes", NULL, "attributes must list at least the key attributes");
  if (n > MAX_ATTRS)
    return vfail(c, "attributes", NULL, "more than %d attributes", MAX_ATTRS);
  m->attrs = calloc(n, sizeof(*m->attrs));
  m->by_name = calloc(n, sizeof(*m->by_name));
  m->by_name_key8 = calloc(n, sizeof(*m->by_name_key8));
  if (m->attrs == NULL || m->by_name == NULL || m->by_name_key8 == NULL)
    return oom(c);
  for (size_t i = 0; i < n; i++) {
    m->n_attrs = i + 1;
    if (load_attr(c, json_array_get(attrs, i), i, m->naming, &m->attrs[i]) != 0)
      return -1;
  }
  size_t dup_a, dup_b;
  if (tt_model_priv_index_names(m, &dup_a, &dup_b) != 0) {
    snprintf(fb, sizeof(fb), "attributes[%zu].attribute", dup_b);
    return vfail(c, fb, NULL, "attribute \"%s\" is declared twice (attributes[%zu] and [%zu])",
                 m->attrs[dup_b].name, dup_a, dup_b);
  }

  const json_t *keys;
  struct where wk = {"keys.", "keys"};
  static const char *const keys_members[] = {"partition", "sort", NULL};
  if (get_object(c, &w0, obj, "keys", true, &wk, keys_members, &keys) != 0)
    return -1;
  if (load_key(c, m, keys, "partition", "keys", "keys.", true, &m->pk) != 0 ||
      load_key(c, m, keys, "sort", "keys", "keys.", false, &m->sk) != 0)
    return -1;
  if (m->sk == m->pk)
    return vfail(c, "keys.sort", NULL, "keys.sort must differ from keys.partition");

  if (load_write_policy(c, m, obj) != 0 || load_indexes(c, m, obj) != 0 ||
      check_roles(c, m, attrs) != 0)
    return -1;

  return tt_model_priv_finish(m) != 0 ? oom(c) : 0;
}

static int load_model(struct vctx *c, const json_t *obj, struct tt_model **out) {
  struct where w0 = {"", ""};
  *out = NULL;
  if (!json_is_object(obj))
    return vfail(c, NULL, NULL, "a model must be a map");
  const char *name;
  if (get_string(c, &w0, obj, "name", true, &name) != 0)
    return -1;
  if (!valid_model_name(name))
    return vfail(c, "name", NULL,
                 "model name must be 1-255 characters of A-Z a-z 0-9 _ . - starting with a "
                 "letter or _");
  snprintf(c->label, sizeof(c->label), "model %s", name);
  if (check_members(c, &w0, obj, model_members) != 0)
    return -1;
  struct tt_model *m = tt_model_priv_alloc();
  if (m == NULL)
    return oom(c);
  if (fill_model(c, obj, name, m) != 0) {
    tt_model_unref(m);
    return -1;
  }
  *out = m;
  return 0;
}

int tt_model_from_json(const json_t *obj, const char *source, struct tt_model **out,
                       struct tt_error *err) {
  struct vctx c;
  memset(&c, 0, sizeof(c));
  c.source = source;
  c.err = err;
  return load_model(&c, obj, out);
}

int tt_model_doc_load(const json_t *doc, const char *source, struct tt_model_list *out,
                      struct tt_error *err) {
  struct vctx c;
  struct tt_model_list got = {0};
  memset(&c, 0, sizeof(c));
  c.source = source;
  c.err = err;
  struct where w0 = {"", ""};
  if (!json_is_object(doc))
    return vfail(&c, NULL, NULL, "a DMS document must be a map with dms_version and models");
  static const char *const doc_members[] = {"dms_version", "namespace", "models", NULL};
  if (check_members(&c, &w0, doc, doc_members) != 0)
    return -1;
  enum tt_dms_version ver;
  if (get_version(&c, &w0, doc, true, &c.doc_version, &ver) != 0 ||
      get_string(&c, &w0, doc, "namespace", false, &c.doc_namespace) != 0)
    return -1;
  const json_t *models;
  if (get_array(&c, &w0, doc, "models", true, &models) != 0)
    return -1;
  size_t n = json_array_size(models);
  if (n == 0)
    return vfail(&c, "models", NULL, "models must list at least one model");
  if (n > MAX_MODELS_PER_DOC)
    return vfail(&c, "models", NULL, "more than %d models in one document", MAX_MODELS_PER_DOC);
  for (size_t i = 0; i < n; i++) {
    snprintf(c.label, sizeof(c.label), "models[%zu]", i);
    snprintf(c.base, sizeof(c.base), "models[%zu].", i);
    struct tt_model *m;
    if (load_model(&c, json_array_get(models, i), &m) != 0)
      goto fail;
    for (size_t k = 0; k < got.n; k++)
      if (strcmp(got.items[k]->name, m->name) == 0) {
        tt_model_unref(m);
        c.label[0] = '\0';
        vfail(&c, "name", NULL, "model %s is defined twice (models[%zu] and models[%zu])",
              got.items[k]->name, k, i);
        goto fail;
      }
    if (tt_model_list_push(&got, m) != 0) {
      oom(&c);
      goto fail;
    }
  }
  /* Reserve first so that the move cannot fail half-way. */
  if (tt_model_list_reserve(out, got.n) != 0) {
    oom(&c);
    goto fail;
  }
  for (size_t i = 0; i < got.n; i++)
    out->items[out->n++] = got.items[i];
  free(got.items);
  return 0;
fail:
  tt_model_list_clear(&got);
  return -1;
}
