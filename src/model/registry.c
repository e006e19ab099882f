/* SPDX-License-Identifier: Apache-2.0 */
/* registry.c -- the set of loaded models, by name: files, directories, run-time registration. */
#include "model/registry.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/dms_parse.h"
#include "model/model_priv.h"
#include "util/text.h"
#include "value/json_exact.h"

/* Models sorted by name: lookups are a binary search, iteration is in name
 * order (GET /v1/models answers in a stable order). */
struct tt_model_registry {
  struct tt_model_list list;
  /* The job ledger's table: its models are served only by their owner,
   * and no other model may be placed on it (docs/ledger.md). */
  char *reserved_table;
  char *reserved_owner;
};

struct tt_model_registry *tt_model_registry_new(void) {
  return calloc(1, sizeof(struct tt_model_registry));
}

void tt_model_registry_free(struct tt_model_registry *r) {
  if (r == NULL)
    return;
  tt_model_list_clear(&r->list);
  free(r->reserved_table);
  free(r->reserved_owner);
  free(r);
}

static const char *src_of(const struct tt_model *m);

/* Binary search; returns the model or NULL, and the insertion position. */
static struct tt_model *find(const struct tt_model_registry *r, const char *name, size_t *pos) {
  size_t lo = 0, hi = r->list.n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(r->list.items[mid]->name, name);
    if (c == 0) {
      if (pos)
        *pos = mid;
      return r->list.items[mid];
    }
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (pos)
    *pos = lo;
  return NULL;
}

bool tt_model_registry_is_reserved(const struct tt_model_registry *r, const struct tt_model *m) {
  return r->reserved_table != NULL && m != NULL && strcmp(m->table, r->reserved_table) == 0;
}

const struct tt_model *tt_model_registry_get_internal(const struct tt_model_registry *r,
                                                      const char *name) {
  return find(r, name, NULL);
}

const struct tt_model *tt_model_registry_get(const struct tt_model_registry *r,
                                             const char *name) {
  const struct tt_model *m = find(r, name, NULL);
  return tt_model_registry_is_reserved(r, m) ? NULL : m;
}

const struct tt_model *tt_model_registry_lookup(const struct tt_model_registry *r,
                                                const char *name, const char *field,
                                                struct tt_error *err) {
  const struct tt_model *m = find(r, name, NULL);
  if (m == NULL) {
    tt_error_set(err, TT_ERR_MODEL_NOT_FOUND, field,
                 "no model is called so; list them with GET /v1/models");
    return NULL;
  }
  if (tt_model_registry_is_reserved(r, m)) {
    tt_error_set(err, TT_ERR_RESERVED_MODEL, field,
                 "model %s belongs to %s (table \"%s\"): it cannot be read or written through "
                 "the model API; use /v1/jobs",
                 m->name, r->reserved_owner, r->reserved_table);
    return NULL;
  }
  return m;
}

int tt_model_registry_reserve_table(struct tt_model_registry *r, const char *table,
                                    const char *owner, struct tt_error *err) {
  if (r->reserved_table != NULL)
    return tt_error_set(err, TT_ERR_INTERNAL, NULL, "table \"%s\" is already reserved",
                        r->reserved_table);
  char *t = strdup(table);
  char *o = strdup(owner);
  if (t == NULL || o == NULL) {
    free(t);
    free(o);
    return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
  }
  r->reserved_table = t;
  r->reserved_owner = o;
  return 0;
}

/* Refuses a model that a client or a user file would add to the reserved
 * table, or that would take a reserved model's name. */
static int check_reserved(const struct tt_model_registry *r, const struct tt_model *m,
                          struct tt_error *err) {
  if (r->reserved_table == NULL)
    return 0;
  const struct tt_model *old = find(r, m->name, NULL);
  if (tt_model_registry_is_reserved(r, old))
    return tt_error_set(err, TT_ERR_RESERVED_MODEL, "name",
                        "%s: model %s is a built-in model of %s and cannot be redefined",
                        src_of(m), m->name, r->reserved_owner);
  if (strcmp(m->table, r->reserved_table) == 0)
    return tt_error_set(err, TT_ERR_RESERVED_MODEL, "table",
                        "%s: model %s: table \"%s\" is reserved for %s; choose another "
                        "table name",
                        src_of(m), m->name, r->reserved_table, r->reserved_owner);
  return 0;
}

size_t tt_model_registry_count(const struct tt_model_registry *r) { return r->list.n; }

const struct tt_model *tt_model_registry_at(const struct tt_model_registry *r, size_t i) {
  return i < r->list.n ? r->list.items[i] : NULL;
}

size_t tt_model_registry_count_user(const struct tt_model_registry *r) {
  size_t n = 0;
  for (size_t i = 0; i < r->list.n; i++)
    if (!tt_model_registry_is_reserved(r, r->list.items[i]))
      n++;
  return n;
}

static const char *src_of(const struct tt_model *m) {
  return m->source ? m->source : "(registered at run time)";
}

/* The normal form of index `name` of m, or NULL. */
static const json_t *index_normal(const struct tt_model *m, const char *name) {
  size_t i;
  const json_t *e;
  json_array_foreach(json_object_get(m->normal, "indexes"), i, e) {
    const char *s = json_string_value(json_object_get(e, "name"));
    if (s && strcmp(s, name) == 0)
      return e;
  }
  return NULL;
}

/* Two models that use one table must describe it the same way: the memory
 * backend and PUT .../table create it from whichever model comes first. */
static int check_table_share(const struct tt_model *a, const struct tt_model *b,
                             struct tt_error *err) {
  if (strcmp(a->table, b->table) != 0)
    return 0;
  if (!json_equal(json_object_get(a->normal, "keys"), json_object_get(b->normal, "keys")))
    return tt_error_set(err, TT_ERR_VALIDATION, "keys",
                        "%s: model %s: table \"%s\" is also used by model %s (%s) with a "
                        "different key schema",
                        src_of(a), a->name, a->table, b->name, src_of(b));
  for (size_t i = 0; i < a->n_indexes; i++) {
    const json_t *other = index_normal(b, a->indexes[i].name);
    if (other != NULL && !json_equal(other, index_normal(a, a->indexes[i].name)))
      return tt_error_set(err, TT_ERR_VALIDATION, "indexes",
                          "%s: model %s: index \"%s\" of table \"%s\" is defined differently "
                          "by model %s (%s)",
                          src_of(a), a->name, a->indexes[i].name, a->table, b->name,
                          src_of(b));
  }
  return 0;
}

/* Checks one incoming model against the registry (skipping a model of the
 * same name, which the caller handles) and against the first `before`
 * models staged in the same load, so that the later file is the one
 * blamed. */
static int check_shares(const struct tt_model_registry *r, const struct tt_model_list *staged,
                        size_t before, const struct tt_model *m, struct tt_error *err) {
  for (size_t i = 0; i < r->list.n; i++)
    if (strcmp(r->list.items[i]->name, m->name) != 0 &&
        check_table_share(m, r->list.items[i], err) != 0)
      return -1;
  for (size_t i = 0; staged != NULL && i < before; i++)
    if (check_table_share(m, staged->items[i], err) != 0)
      return -1;
  return 0;
}

static int insert(struct tt_model_registry *r, struct tt_model *m) {
  size_t pos;
  if (find(r, m->name, &pos) != NULL)
    return -1;
  if (tt_model_list_reserve(&r->list, 1) != 0)
    return -1;
  memmove(&r->list.items[pos + 1], &r->list.items[pos],
          (r->list.n - pos) * sizeof(r->list.items[0]));
  r->list.items[pos] = m;
  r->list.n++;
  return 0;
}

/* Another model `o` (may be NULL) of m's name, earlier in the load or
 * already registered: fine when identical (a file listed twice, or v0.2
 * copies; *dup set), an error otherwise. */
static int check_same_name(const struct tt_model *m, const struct tt_model *o, bool *dup,
                           struct tt_error *err) {
  if (o == NULL || strcmp(o->name, m->name) != 0)
    return 0;
  if (!tt_model_equal(o, m))
    return tt_error_set(err, TT_ERR_VALIDATION, "name",
                        "%s: model %s is also defined, differently, in %s", src_of(m), m->name,
                        src_of(o));
  *dup = true;
  return 0;
}

/* Validates what was staged by one load call and moves it in, unless the
 * staging failed (staged_rc not 0); drops the staged list in every case. */
static int commit_staged(struct tt_model_registry *r, struct tt_model_list *staged,
                         int staged_rc, struct tt_error *err) {
  int rc = -1;
  struct tt_model_list keep = {0};
  if (staged_rc != 0)
    goto fail;
  for (size_t i = 0; i < staged->n; i++) {
    struct tt_model *m = staged->items[i];
    bool dup = false;
    for (size_t k = 0; k < i; k++)
      if (check_same_name(m, staged->items[k], &dup, err) != 0)
        goto fail;
    if (check_same_name(m, find(r, m->name, NULL), &dup, err) != 0 ||
        check_reserved(r, m, err) != 0 || check_shares(r, staged, i, m, err) != 0)
      goto fail;
    if (!dup && tt_model_list_push(&keep, tt_model_ref(m)) != 0)
      goto oom;
  }
  if (tt_model_list_reserve(&r->list, keep.n) != 0)
    goto oom;
  for (size_t i = 0; i < keep.n; i++) {
    insert(r, keep.items[i]); /* cannot fail: room reserved, names unique */
    keep.items[i] = NULL;
  }
  keep.n = 0;
  rc = 0;
  goto fail;
oom:
  tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory while loading models");
fail:
  tt_model_list_clear(&keep);
  tt_model_list_clear(staged);
  return rc;
}

static int stage_docs(const json_t *docs, const char *source, struct tt_model_list *staged,
                      struct tt_error *err) {
  size_t i;
  const json_t *doc;
  json_array_foreach(docs, i, doc) {
    if (tt_model_doc_load(doc, source, staged, err) != 0)
      return -1;
  }
  return 0;
}

static int stage_file(const char *path, struct tt_model_list *staged, struct tt_error *err) {
  json_t *docs = NULL;
  if (tt_dms_parse_file(path, &docs, err) != 0)
    return -1;
  int rc = stage_docs(docs, path, staged, err);
  json_decref(docs);
  return rc;
}

/* scandir's filter and order: the names a DMS file can have, by bytes. */
static int dms_name(const struct dirent *e) {
  enum tt_dms_syntax syn;
  return e->d_name[0] != '.' && tt_dms_syntax_from_path(e->d_name, &syn) == 0;
}

static int by_name(const struct dirent **a, const struct dirent **b) {
  return strcmp((*a)->d_name, (*b)->d_name);
}

static int stage_dir(const char *dir, struct tt_model_list *staged, struct tt_error *err) {
  struct dirent **ents;
  int n = scandir(dir, &ents, dms_name, by_name), rc = 0;
  size_t files = 0;
  if (n < 0)
    return errno == ENOMEM ? tt_error_set(err, TT_ERR_INTERNAL, NULL,
                                          "out of memory while loading models")
                           : tt_error_set(err, TT_ERR_VALIDATION, NULL,
                                          "%s: cannot open directory: %s", dir, strerror(errno));
  for (int i = 0; i < n; i++) {
    char *full = NULL;
    struct stat sb;
    if (rc == 0 && asprintf(&full, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/",
                            ents[i]->d_name) < 0) {
      full = NULL;
      rc = tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory while loading models");
    } else if (rc == 0 && stat(full, &sb) == 0 && S_ISREG(sb.st_mode)) {
      files++;
      rc = stage_file(full, staged, err);
    }
    free(full);
    free(ents[i]);
  }
  free(ents);
  if (rc == 0 && files == 0)
    rc = tt_error_set(err, TT_ERR_VALIDATION, NULL,
                      "%s: the directory holds no .yml, .yaml or .json model files", dir);
  return rc;
}

int tt_model_registry_load_path(struct tt_model_registry *r, const char *path,
                                struct tt_error *err) {
  struct tt_model_list staged = {0};
  struct stat sb;
  if (stat(path, &sb) != 0)
    return tt_error_set(err, TT_ERR_VALIDATION, NULL, "%s: cannot read models: %s", path,
                        strerror(errno));
  int rc = S_ISDIR(sb.st_mode) ? stage_dir(path, &staged, err) : stage_file(path, &staged, err);
  return commit_staged(r, &staged, rc, err);
}

int tt_model_registry_load_text(struct tt_model_registry *r, const char *data, size_t len,
                                const char *source, struct tt_error *err) {
  struct tt_model_list staged = {0};
  enum tt_dms_syntax syn = TT_DMS_SYNTAX_YAML;
  if (source != NULL)
    tt_dms_syntax_from_path(source, &syn);
  json_t *docs = NULL;
  if (tt_dms_parse(data, len, syn, source, &docs, err) != 0)
    return -1;
  int rc = stage_docs(docs, source, &staged, err);
  json_decref(docs);
  return commit_staged(r, &staged, rc, err);
}

/* ---- replaces: what stored items do not survive ------------------------- */

static bool same_attr_type(const struct tt_model_attr *a, const struct tt_model_attr *b) {
  if (a == NULL || b == NULL)
    return a == b;
  return a->name_len == b->name_len && memcmp(a->name, b->name, a->name_len) == 0 &&
         a->type == b->type;
}

static size_t note(struct tt_model_change *out, size_t cap, size_t n,
                   enum tt_model_change_kind kind, const char *name) {
  if (n < cap) {
    out[n].kind = kind;
    out[n].name = name;
  }
  return n + 1;
}

size_t tt_model_unsafe_changes(const struct tt_model *old, const struct tt_model *m,
                               struct tt_model_change *out, size_t cap) {
  size_t n = 0;
  if (!same_attr_type(old->pk, m->pk) || !same_attr_type(old->sk, m->sk))
    n = note(out, cap, n, TT_MODEL_CHANGE_KEYS, NULL);
  for (size_t i = 0; i < old->n_attrs; i++) {
    const struct tt_model_attr *a = &old->attrs[old->by_name[i]];
    const struct tt_model_attr *b = tt_model_attr_find(m, a->name, a->name_len);
    if (b == NULL) {
      /* A plain attribute left out is read as an undeclared one; an
       * encrypted one would show its envelopes. */
      if (a->encrypted)
        n = note(out, cap, n, TT_MODEL_CHANGE_ENCRYPTED_DROPPED, a->name);
    } else if (a->encrypted && !b->encrypted) {
      n = note(out, cap, n, TT_MODEL_CHANGE_ENCRYPTION_REMOVED, a->name);
    } else if (!a->encrypted && b->encrypted) {
      n = note(out, cap, n, TT_MODEL_CHANGE_ENCRYPTION_ADDED, a->name);
    } else if (a->type != b->type || a->json != b->json) {
      n = note(out, cap, n, TT_MODEL_CHANGE_TYPE, a->name);
    }
  }
  /* A new encrypted attribute is safe unless items may already hold it:
   * with additional attributes they may, in plaintext. */
  for (size_t i = 0; old->additional_attributes && i < m->n_attrs; i++) {
    const struct tt_model_attr *b = &m->attrs[m->by_name[i]];
    if (b->encrypted && tt_model_attr_find(old, b->name, b->name_len) == NULL)
      n = note(out, cap, n, TT_MODEL_CHANGE_ENCRYPTION_ADDED, b->name);
  }
  for (size_t i = 0; i < old->n_indexes; i++) {
    const struct tt_model_index *x = &old->indexes[i];
    const struct tt_model_index *y = tt_model_index_find(m, x->name);
    if (y != NULL && (x->kind != y->kind || !same_attr_type(x->partition, y->partition) ||
                      !same_attr_type(x->sort, y->sort)))
      n = note(out, cap, n, TT_MODEL_CHANGE_INDEX_KEYS, x->name);
  }
  return n;
}

const char *tt_model_change_label(enum tt_model_change_kind kind) {
  static const char *const names[] = {[TT_MODEL_CHANGE_KEYS] = "keys_changed",
      [TT_MODEL_CHANGE_INDEX_KEYS] = "index_keys_changed",
      [TT_MODEL_CHANGE_ENCRYPTION_REMOVED] = "encryption_removed",
      [TT_MODEL_CHANGE_ENCRYPTED_DROPPED] = "encrypted_attribute_dropped",
      [TT_MODEL_CHANGE_ENCRYPTION_ADDED] = "encryption_added",
      [TT_MODEL_CHANGE_TYPE] = "type_changed"};
  return TT_NAME_OF(names, kind, "?");
}

/* The UnsafeModelChange error for the first of `n` unsafe changes. */
static int unsafe_error(const struct tt_model *m, const struct tt_model_change *c, size_t n,
                        struct tt_error *err) {
  static const struct {
    const char *field, *what, *after; /* what, then the quoted name and after */
  } texts[] = {
      [TT_MODEL_CHANGE_KEYS] = {"keys", "changes the table's keys, which stored items keep", ""},
      [TT_MODEL_CHANGE_INDEX_KEYS] = {"indexes.", "changes the keys of index", ""},
      [TT_MODEL_CHANGE_ENCRYPTION_REMOVED] = {"attributes.", "removes the encryption of attribute",
                                              " (new values in plaintext, stored envelopes read "
                                              "as maps)"},
      [TT_MODEL_CHANGE_ENCRYPTED_DROPPED] = {"attributes.", "drops the encrypted attribute",
                                             " (stored envelopes read as maps)"},
      [TT_MODEL_CHANGE_ENCRYPTION_ADDED] = {"attributes.", "encrypts attribute",
                                            ", which stored items may hold in plaintext"},
      [TT_MODEL_CHANGE_TYPE] = {"attributes.", "changes the type of attribute",
                                ", which stored items keep"},
  };
  char field[128], what[160];
  snprintf(field, sizeof(field), "%s%s", texts[c->kind].field, c->name ? c->name : "");
  if (c->name)
    snprintf(what, sizeof(what), "%s \"%s\"%s", texts[c->kind].what, c->name,
             texts[c->kind].after);
  else
    snprintf(what, sizeof(what), "%s", texts[c->kind].what);
  tt_utf8_scrub(field); /* drops a character a cut split */
  tt_utf8_scrub(what);
  char more[48] = "";
  if (n > 1)
    snprintf(more, sizeof(more), " (and %zu more unsafe change%s)", n - 1, n > 2 ? "s" : "");
  return tt_error_set(err, TT_ERR_UNSAFE_MODEL_CHANGE, field,
                      "replacing model %s %s%s; use a new model name, or "
                      "?replace=true&allow_unsafe=true",
                      m->name, what, more);
}

int tt_model_registry_check(const struct tt_model_registry *r, const struct tt_model *m,
                            unsigned flags, enum tt_model_put_result *result,
                            struct tt_error *err) {
  const struct tt_model *old = find(r, m->name, NULL);
  if (check_reserved(r, m, err) != 0)
    return -1;
  if (old != NULL && tt_model_equal(old, m)) {
    *result = TT_MODEL_PUT_IDENTICAL;
    return 0;
  }
  if (old != NULL && !(flags & TT_MODEL_PUT_REPLACE))
    return tt_error_set(err, TT_ERR_ALREADY_EXISTS, "name",
                        "model %s already exists with a different definition; use "
                        "?replace=true to replace it",
                        m->name);
  if (old != NULL && !(flags & TT_MODEL_PUT_ALLOW_UNSAFE)) {
    struct tt_model_change first;
    size_t n = tt_model_unsafe_changes(old, m, &first, 1);
    if (n > 0)
      return unsafe_error(m, &first, n, err);
  }
  if (check_shares(r, NULL, 0, m, err) != 0)
    return -1;
  *result = old != NULL ? TT_MODEL_PUT_REPLACED : TT_MODEL_PUT_CREATED;
  return 0;
}

int tt_model_registry_put(struct tt_model_registry *r, struct tt_model *m, unsigned flags,
                          enum tt_model_put_result *result, struct tt_error *err) {
  size_t pos;
  /* Validate everything, then change the registry: a refusal leaves it as
   * it was. */
  if (tt_model_registry_check(r, m, flags, result, err) != 0)
    goto out;
  if (*result == TT_MODEL_PUT_REPLACED) {
    struct tt_model *old = find(r, m->name, &pos);
    r->list.items[pos] = m;
    tt_model_unref(old);
  } else if (*result == TT_MODEL_PUT_CREATED) {
    if (insert(r, m) != 0) {
      tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory while registering a model");
      goto out;
    }
  } else {
    tt_model_unref(m);
  }
  return 0;
out:
  tt_model_unref(m);
  return -1;
}
