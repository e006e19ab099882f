/* SPDX-License-Identifier: Apache-2.0 */
/* model.c -- model lifetime, canonical JSON form, and the lookups the ORM uses. */
#include "model/model.h"

#include <assert.h>
#include <endian.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_priv.h"
#include "util/buf.h"
#include "util/text.h"

#ifndef NDEBUG
#define CHECK_MODEL(m) assert((m) != NULL && (m)->magic == TT_MODEL_MAGIC)
#else
#define CHECK_MODEL(m) ((void)0)
#endif

/* DMS spells types as DynamoDB does. */
const char *tt_model_type_name(enum tt_av_type t) {
  return tt_av_type_name(t);
}

const struct tt_model_word tt_model_formats[] = {{"rfc3339nano", TT_FORMAT_RFC3339NANO},
                                                  {"unix_seconds", TT_FORMAT_UNIX_SECONDS},
                                                  {"int", TT_FORMAT_INT},
                                                  {"decimal_string", TT_FORMAT_DECIMAL_STRING},
                                                  {NULL, 0}};
/* In the order the canonical form lists an attribute's roles. */
const struct tt_model_word tt_model_roles[] = {{"pk", TT_ROLE_PK},
                                                {"sk", TT_ROLE_SK},
                                                {"created_at", TT_ROLE_CREATED_AT},
                                                {"updated_at", TT_ROLE_UPDATED_AT},
                                                {"version", TT_ROLE_VERSION},
                                                {"ttl", TT_ROLE_TTL},
                                                {NULL, 0}};
const struct tt_model_word tt_model_projections[] = {{"ALL", TT_PROJECTION_ALL},
                                                      {"KEYS_ONLY", TT_PROJECTION_KEYS_ONLY},
                                                      {"INCLUDE", TT_PROJECTION_INCLUDE},
                                                      {NULL, 0}};
const struct tt_model_word tt_model_conventions[] = {{"camelCase", TT_NAMING_CAMEL_CASE},
                                                      {"snake_case", TT_NAMING_SNAKE_CASE},
                                                      {"dynamorm", TT_NAMING_DYNAMORM},
                                                      {NULL, 0}};

int tt_model_word_parse(const struct tt_model_word *tab, const char *s) {
  for (; tab->word; tab++)
    if (strcmp(tab->word, s) == 0)
      return (int)tab->value;
  return -1;
}

const char *tt_model_word_of(const struct tt_model_word *tab, unsigned value) {
  for (; tab->word; tab++)
    if (tab->value == value)
      return tab->word;
  return NULL;
}

/* --- lifetime ------------------------------------------------------------ */

struct tt_model *tt_model_priv_alloc(void) {
  struct tt_model *m = calloc(1, sizeof(*m));
  if (m == NULL)
    return NULL;
  m->magic = TT_MODEL_MAGIC;
  m->refs = 1;
  m->dms_version = TT_DMS_V0_2;
  return m;
}

static void model_free(struct tt_model *m) {
  for (size_t i = 0; i < m->n_attrs; i++) {
    free(m->attrs[i].name);
    free(m->attrs[i].json_key);
    json_decref(m->attrs[i].tags);
    json_decref(m->attrs[i].index_roles);
  }
  free(m->attrs);
  free(m->by_name);
  free(m->by_name_key8);
  for (size_t i = 0; i < m->n_indexes; i++) {
    free(m->indexes[i].name);
    for (size_t k = 0; k < m->indexes[i].n_include; k++)
      free(m->indexes[i].include[k]);
    free(m->indexes[i].include);
  }
  free(m->indexes);
  free(m->name);
  free(m->table);
  free(m->namespace_name);
  free(m->source);
  json_decref(m->tags);
  json_decref(m->normal);
  m->magic = 0;
  free(m);
}

struct tt_model *tt_model_ref(struct tt_model *m) {
  CHECK_MODEL(m);
  m->refs++;
  return m;
}

void tt_model_unref(struct tt_model *m) {
  if (m == NULL)
    return;
  CHECK_MODEL(m);
  if (--m->refs == 0)
    model_free(m);
}

/* --- lists ------------------------------------------------------------------ */

int tt_model_list_reserve(struct tt_model_list *l, size_t extra) {
  if (l->cap - l->n >= extra)
    return 0;
  size_t want = l->n + extra;
  size_t cap = l->cap ? l->cap : 8;
  while (cap < want) {
    if (cap > SIZE_MAX / 2 / sizeof(*l->items))
      return -1;
    cap *= 2;
  }
  struct tt_model **p = realloc(l->items, cap * sizeof(*p));
  if (p == NULL)
    return -1;
  l->items = p;
  l->cap = cap;
  return 0;
}

int tt_model_list_push(struct tt_model_list *l, struct tt_model *m) {
  if (tt_model_list_reserve(l, 1) != 0) {
    tt_model_unref(m);
    return -1;
  }
  l->items[l->n++] = m;
  return 0;
}

void tt_model_list_clear(struct tt_model_list *l) {
  for (size_t i = 0; i < l->n; i++)
    tt_model_unref(l->items[i]);
  free(l->items);
  l->items = NULL;
  l->n = l->cap = 0;
}

/* --- name index ------------------------------------------------------------ */

static int cmp_pos(const void *a, const void *b, void *ctx) {
  const struct tt_model *m = ctx;
  return strcmp(m->attrs[*(const size_t *)a].name, m->attrs[*(const size_t *)b].name);
}

/* A name's first 8 bytes as a big-endian number, zero-padded: since names
 * hold no NUL, two names compare as these numbers do unless both are equal,
 * and equal numbers of names no longer than 8 bytes mean equal names. */
static uint64_t key8(const char *name, size_t n) {
  uint64_t k = 0;
  memcpy(&k, name, n < 8 ? n : 8); /* one copy: a byte loop here mispredicted */
  return be64toh(k);
}

int tt_model_priv_index_names(struct tt_model *m, size_t *dup_a, size_t *dup_b) {
  for (size_t i = 0; i < m->n_attrs; i++)
    m->by_name[i] = i;
  qsort_r(m->by_name, m->n_attrs, sizeof(size_t), cmp_pos, m);
  for (size_t i = 0; i < m->n_attrs; i++) {
    const struct tt_model_attr *a = &m->attrs[m->by_name[i]];
    m->by_name_key8[i] = key8(a->name, a->name_len);
  }
  for (size_t i = 1; i < m->n_attrs; i++) {
    size_t x = m->by_name[i - 1], y = m->by_name[i];
    if (strcmp(m->attrs[x].name, m->attrs[y].name) == 0) {
      *dup_a = x < y ? x : y;
      *dup_b = x < y ? y : x;
      return -1;
    }
  }
  return 0;
}

/* Byte order of two names, shorter first on a tie (by_name's order): a
 * loop, since names are short and most comparisons settle on their first
 * bytes. */
static int name_cmp(const char *a, size_t an, const char *b, size_t bn) {
  size_t k = an < bn ? an : bn;
  for (size_t i = 0; i < k; i++)
    if (a[i] != b[i])
      return (int)(unsigned char)a[i] - (int)(unsigned char)b[i];
  return an < bn ? -1 : (an > bn ? 1 : 0);
}

const struct tt_model_attr *tt_model_attr_find(const struct tt_model *m, const char *name,
                                               size_t n) {
  CHECK_MODEL(m);
  size_t lo = 0, hi = m->n_attrs;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const struct tt_model_attr *a = &m->attrs[m->by_name[mid]];
    int c = name_cmp(a->name, a->name_len, name, n);
    if (c == 0)
      return a;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

const struct tt_model_attr *tt_model_attr_seek(const struct tt_model *m, const char *name,
                                               size_t n, size_t *pos) {
  CHECK_MODEL(m);
  /* Most steps settle on the 8-byte keys, which sit together in one or two
   * cache lines; the names themselves are read only on a tie. */
  const uint64_t k = key8(name, n);
  for (; *pos < m->n_attrs; ++*pos) {
    uint64_t ak = m->by_name_key8[*pos];
    if (ak != k) {
      if (ak > k)
        return NULL;
      continue;
    }
    const struct tt_model_attr *a = &m->attrs[m->by_name[*pos]];
    int c = n <= 8 && a->name_len <= 8 ? 0 : name_cmp(a->name, a->name_len, name, n);
    if (c == 0)
      return a;
    if (c > 0)
      return NULL;
  }
  return NULL;
}

/* --- canonical form ---------------------------------------------------------- */

/* json_object_set_new that remembers the first failure in *ok, so that the
 * builder below reads as a list of members. Steals v. */
static void put(json_t *obj, const char *key, json_t *v, int *ok) {
  if (v == NULL || json_object_set_new(obj, key, v) != 0)
    *ok = 0;
}

/* o when every member went in, else NULL (o released). */
static json_t *built(json_t *o, int ok) {
  if (ok)
    return o;
  json_decref(o);
  return NULL;
}

static json_t *key_json(const struct tt_model_attr *a) {
  return json_pack("{s:s, s:s}", "attribute", a->name, "type", tt_model_type_name(a->type));
}

static int cmp_json_str(const void *a, const void *b) {
  return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}

/* Sorts an array of strings in place. */
static int sort_strings(json_t *arr) {
  size_t n = json_array_size(arr);
  if (n < 2)
    return 0;
  json_t **v = malloc(n * sizeof(*v));
  if (v == NULL)
    return -1;
  for (size_t i = 0; i < n; i++)
    v[i] = json_incref(json_array_get(arr, i));
  qsort(v, n, sizeof(*v), cmp_json_str);
  json_array_clear(arr);
  int rc = 0;
  for (size_t i = 0; i < n; i++)
    if (json_array_append_new(arr, v[i]) != 0)
      rc = -1;
  free(v);
  return rc;
}

static json_t *attr_json(const struct tt_model_attr *a) {
  int ok = 1;
  json_t *o = key_json(a);
  if (o == NULL)
    return NULL;
  if (a->required)
    put(o, "required", json_true(), &ok);
  if (a->optional)
    put(o, "optional", json_true(), &ok);
  if (a->omit_empty)
    put(o, "omit_empty", json_true(), &ok);
  if (a->roles != 0 || a->index_roles != NULL) {
    json_t *r = json_array();
    for (const struct tt_model_word *w = tt_model_roles; r != NULL && w->word; w++)
      if ((a->roles & w->value) && json_array_append_new(r, json_string(w->word)) != 0)
        ok = 0;
    if (r != NULL && a->index_roles != NULL) {
      json_t *ir = json_deep_copy(a->index_roles);
      if (ir == NULL || sort_strings(ir) != 0 || json_array_extend(r, ir) != 0)
        ok = 0;
      json_decref(ir);
    }
    put(o, "roles", r, &ok);
  }
  if (a->format != TT_FORMAT_NONE)
    put(o, "format", json_string(tt_model_word_of(tt_model_formats, a->format)), &ok);
  if (a->json)
    put(o, "json", json_true(), &ok);
  if (a->binary)
    put(o, "binary", json_true(), &ok);
  if (a->encrypted)
    put(o, "encryption", json_pack("{s:i}", "v", 1), &ok);
  if (a->tags != NULL)
    put(o, "tags", json_deep_copy(a->tags), &ok);
  return built(o, ok);
}

static int cmp_index_name(const void *a, const void *b) {
  return strcmp((*(const struct tt_model_index *const *)a)->name,
                (*(const struct tt_model_index *const *)b)->name);
}

static json_t *index_json(const struct tt_model_index *ix) {
  int ok = 1;
  json_t *o = json_object();
  if (o == NULL)
    return NULL;
  put(o, "name", json_string(ix->name), &ok);
  put(o, "type", json_string(ix->kind == TT_INDEX_LSI ? "LSI" : "GSI"), &ok);
  put(o, "partition", key_json(ix->partition), &ok);
  if (ix->sort != NULL)
    put(o, "sort", key_json(ix->sort), &ok);
  json_t *p = json_pack("{s:s}", "type", tt_model_word_of(tt_model_projections, ix->projection));
  if (p != NULL && ix->projection == TT_PROJECTION_INCLUDE) {
    json_t *f = json_array();
    for (size_t i = 0; f != NULL && i < ix->n_include; i++)
      if (json_array_append_new(f, json_string(ix->include[i])) != 0)
        ok = 0;
    if (f == NULL || sort_strings(f) != 0)
      ok = 0;
    put(p, "fields", f, &ok);
  }
  put(o, "projection", p, &ok);
  return built(o, ok);
}

static json_t *build_normal(const struct tt_model *m) {
  int ok = 1;
  json_t *o = json_object();
  if (o == NULL)
    return NULL;
  put(o, "dms_version", json_string(m->dms_version == TT_DMS_V0_1 ? "0.1" : "0.2"), &ok);
  if (m->namespace_name != NULL)
    put(o, "namespace", json_string(m->namespace_name), &ok);
  put(o, "name", json_string(m->name), &ok);
  put(o, "table", json_pack("{s:s}", "name", m->table), &ok);
  if (m->naming != TT_NAMING_NONE)
    put(o, "naming",
        json_pack("{s:s}", "convention", tt_model_word_of(tt_model_conventions, m->naming)), &ok);
  json_t *keys = json_object();
  if (keys != NULL) {
    put(keys, "partition", key_json(m->pk), &ok);
    if (m->sk != NULL)
      put(keys, "sort", key_json(m->sk), &ok);
  }
  put(o, "keys", keys, &ok);
  json_t *prot = json_array();
  json_t *attrs = json_array();
  /* Attributes in name order (by_name), so that declaration order does not
   * make two otherwise equal models differ. */
  for (size_t i = 0; attrs != NULL && prot != NULL && i < m->n_attrs; i++) {
    const struct tt_model_attr *a = &m->attrs[m->by_name[i]];
    if (json_array_append_new(attrs, attr_json(a)) != 0)
      ok = 0;
    if (a->is_protected && json_array_append_new(prot, json_string(a->name)) != 0)
      ok = 0;
  }
  put(o, "write_policy",
      prot ? json_pack("{s:s, s:o}", "mode", m->write_once ? "write_once" : "mutable",
                       "protected_attributes", prot)
           : NULL,
      &ok);
  if (m->tags != NULL)
    put(o, "tags", json_deep_copy(m->tags), &ok);
  put(o, "attributes", attrs, &ok);
  json_t *idx = json_array();
  if (idx != NULL && m->n_indexes > 0) {
    const struct tt_model_index **sorted = malloc(m->n_indexes * sizeof(*sorted));
    if (sorted == NULL) {
      ok = 0;
    } else {
      for (size_t i = 0; i < m->n_indexes; i++)
        sorted[i] = &m->indexes[i];
      qsort(sorted, m->n_indexes, sizeof(*sorted), cmp_index_name);
      for (size_t i = 0; i < m->n_indexes; i++)
        if (json_array_append_new(idx, index_json(sorted[i])) != 0)
          ok = 0;
      free(sorted);
    }
  }
  put(o, "indexes", idx, &ok);
  return built(o, ok);
}

int tt_model_priv_finish(struct tt_model *m) {
  m->normal = build_normal(m);
  return m->normal ? 0 : -1;
}

json_t *tt_model_to_json(const struct tt_model *m) {
  CHECK_MODEL(m);
  /* A deep copy: callers may add members (the API adds nothing today, but a
   * shared mutable tree would make that a silent bug). */
  return json_deep_copy(m->normal);
}

bool tt_model_equal(const struct tt_model *a, const struct tt_model *b) {
  CHECK_MODEL(a);
  CHECK_MODEL(b);
  return json_equal(a->normal, b->normal) != 0;
}

/* --- lookups --------------------------------------------------------------- */

const struct tt_model_attr *tt_model_pk(const struct tt_model *m) {
  CHECK_MODEL(m);
  return m->pk;
}

const struct tt_model_attr *tt_model_sk(const struct tt_model *m) {
  CHECK_MODEL(m);
  return m->sk;
}

bool tt_model_attr_is_key(const struct tt_model *m, const struct tt_model_attr *a) {
  CHECK_MODEL(m);
  return a != NULL && (a == m->pk || a == m->sk);
}

const struct tt_model_attr *tt_model_lifecycle(const struct tt_model *m,
                                               enum tt_model_lifecycle which) {
  CHECK_MODEL(m);
  if ((unsigned)which >= TT_LC__COUNT)
    return NULL;
  return m->lifecycle[which];
}

const struct tt_model_index *tt_model_index_find(const struct tt_model *m, const char *name) {
  CHECK_MODEL(m);
  for (size_t i = 0; i < m->n_indexes; i++)
    if (m->indexes[i].name != NULL && strcmp(m->indexes[i].name, name) == 0)
      return &m->indexes[i];
  return NULL;
}

static bool target_matches(const struct tt_model_attr *p, const struct tt_model_attr *s,
                           const char *pk_attr, const char *sk_attr) {
  if (strcmp(p->name, pk_attr) != 0)
    return false;
  if (sk_attr == NULL)
    return true;
  return s != NULL && strcmp(s->name, sk_attr) == 0;
}

/* Appends "name (pk, sk)" for one target to a candidate list. */
static void describe_target(struct tt_buf *b, const char *name, const struct tt_model_attr *p,
                            const struct tt_model_attr *s) {
  if (b->len > 0)
    tt_buf_puts(b, ", ");
  tt_buf_printf(b, "%s (%s%s%s)", name, p->name, s ? ", " : "", s ? s->name : "");
}

int tt_model_choose_index(const struct tt_model *m, const char *pk_attr, const char *sk_attr,
                          const struct tt_model_index **out, struct tt_error *err) {
  CHECK_MODEL(m);
  *out = NULL;
  if (target_matches(m->pk, m->sk, pk_attr, sk_attr))
    return 0;
  const struct tt_model_index *found = NULL;
  size_t matches = 0;
  for (size_t i = 0; i < m->n_indexes; i++)
    if (target_matches(m->indexes[i].partition, m->indexes[i].sort, pk_attr, sk_attr)) {
      if (matches++ == 0)
        found = &m->indexes[i];
    }
  if (matches == 1) {
    *out = found;
    return 0;
  }
  /* Name the candidates: the ones that matched, or every target. */
  struct tt_buf b;
  tt_buf_init(&b, 200);
  if (matches == 0)
    describe_target(&b, "table", m->pk, m->sk);
  for (size_t i = 0; i < m->n_indexes; i++)
    if (matches == 0 ||
        target_matches(m->indexes[i].partition, m->indexes[i].sort, pk_attr, sk_attr))
      describe_target(&b, m->indexes[i].name, m->indexes[i].partition, m->indexes[i].sort);
  if (matches == 0)
    tt_error_set(err, TT_ERR_VALIDATION, "index",
                 "model %s: no table or index has partition key \"%s\"%s%s%s; keys are: %s",
                 m->name, pk_attr, sk_attr ? " and sort key \"" : "", sk_attr ? sk_attr : "",
                 sk_attr ? "\"" : "", b.len ? b.data : "");
  else
    tt_error_set(err, TT_ERR_VALIDATION, "index",
                 "model %s: several indexes fit these keys, name one in \"index\": %s",
                 m->name, b.len ? b.data : "");
  tt_buf_free(&b);
  return -1;
}
