/* SPDX-License-Identifier: Apache-2.0 */
/* av.c -- AttributeValue ownership, equality, ordering, DynamoDB item sizes
 * and constructors. */
#include "value/av.h"

#include <stdlib.h>
#include <string.h>

#include "value/number.h"

void tt_av_free(struct tt_av *v) {
  if (v == NULL)
    return;
  switch (v->type) {
  case TT_AV_S:
  case TT_AV_N:
  case TT_AV_B:
    free(v->u.bytes);
    break;
  case TT_AV_SS:
  case TT_AV_NS:
  case TT_AV_BS:
  case TT_AV_L:
    for (size_t i = 0; i < v->len; i++)
      tt_av_free(&v->u.elems[i]);
    free(v->u.elems);
    break;
  case TT_AV_M:
    for (size_t i = 0; i < v->len; i++) {
      free(v->u.members[i].name);
      tt_av_free(&v->u.members[i].value);
    }
    free(v->u.members);
    break;
  default:
    break;
  }
  tt_av_null(v);
}

static char *dup_bytes(const void *p, size_t len) {
  char *s = malloc(len + 1);
  if (s == NULL)
    return NULL;
  if (len)
    memcpy(s, p, len);
  s[len] = '\0';
  return s;
}

int tt_av_clone(struct tt_av *dst, const struct tt_av *src) {
  memset(dst, 0, sizeof(*dst));
  dst->type = src->type;
  switch (src->type) {
  case TT_AV_S:
  case TT_AV_N:
  case TT_AV_B:
    if ((dst->u.bytes = dup_bytes(src->u.bytes, src->len)) == NULL)
      goto fail;
    dst->len = src->len;
    return 0;
  case TT_AV_BOOL:
    dst->u.boolean = src->u.boolean;
    return 0;
  case TT_AV_SS:
  case TT_AV_NS:
  case TT_AV_BS:
  case TT_AV_L:
    if (src->len == 0)
      return 0;
    if ((dst->u.elems = calloc(src->len, sizeof(struct tt_av))) == NULL)
      goto fail;
    for (size_t i = 0; i < src->len; i++) {
      dst->len = i + 1; /* so a failure frees exactly what was copied */
      if (tt_av_clone(&dst->u.elems[i], &src->u.elems[i]) != 0)
        goto fail;
    }
    return 0;
  case TT_AV_M:
    if (src->len == 0)
      return 0;
    if ((dst->u.members = calloc(src->len, sizeof(struct tt_av_member))) == NULL)
      goto fail;
    for (size_t i = 0; i < src->len; i++) {
      struct tt_av_member *d = &dst->u.members[i];
      const struct tt_av_member *s = &src->u.members[i];
      dst->len = i + 1;
      if ((d->name = dup_bytes(s->name, s->name_len)) == NULL)
        goto fail;
      d->name_len = s->name_len;
      if (tt_av_clone(&d->value, &s->value) != 0)
        goto fail;
    }
    return 0;
  default:
    return 0;
  }
fail:
  tt_av_free(dst);
  memset(dst, 0, sizeof(*dst));
  return -1;
}

static int cmp_bytes(const char *a, size_t alen, const char *b, size_t blen) {
  size_t m = alen < blen ? alen : blen;
  int c = m ? memcmp(a, b, m) : 0;
  if (c != 0)
    return c < 0 ? -1 : 1;
  return (alen > blen) - (alen < blen);
}

int tt_av_compare(const struct tt_av *a, const struct tt_av *b) {
  if (a->type == TT_AV_N && b->type == TT_AV_N)
    return tt_number_compare(a->u.bytes, b->u.bytes);
  if ((a->type == TT_AV_S || a->type == TT_AV_B) && a->type == b->type)
    return cmp_bytes(a->u.bytes, a->len, b->u.bytes, b->len);
  /* Not comparable: order by type so callers sorting mixed input stay
   * deterministic. */
  return (a->type > b->type) - (a->type < b->type);
}

/* Element order inside a set: numbers numerically, the rest by bytes. */
static int set_elem_cmp(const void *pa, const void *pb) {
  return tt_av_compare(pa, pb);
}

static bool set_sorted(const struct tt_av *s) {
  for (size_t i = 1; i < s->len; i++)
    if (tt_av_compare(&s->u.elems[i - 1], &s->u.elems[i]) >= 0)
      return false;
  return true;
}

/* Binary search for member `name`, or NULL; *pos (when not NULL) is where
 * it is or would go. */
static const struct tt_av_member *find_member(const struct tt_av *map, const char *name,
                                              size_t name_len, size_t *pos) {
  size_t lo = 0, hi = map->len;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const struct tt_av_member *m = &map->u.members[mid];
    int c = cmp_bytes(m->name, m->name_len, name, name_len);
    if (c == 0) {
      if (pos)
        *pos = mid;
      return m;
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

bool tt_av_equal(const struct tt_av *a, const struct tt_av *b) {
  if (a->type != b->type)
    return false;
  switch (a->type) {
  case TT_AV_S:
  case TT_AV_B:
    return a->len == b->len && memcmp(a->u.bytes, b->u.bytes, a->len) == 0;
  case TT_AV_N:
    return tt_number_compare(a->u.bytes, b->u.bytes) == 0;
  case TT_AV_BOOL:
    return a->u.boolean == b->u.boolean;
  case TT_AV_NULL:
    return true;
  case TT_AV_L:
    if (a->len != b->len)
      return false;
    for (size_t i = 0; i < a->len; i++)
      if (!tt_av_equal(&a->u.elems[i], &b->u.elems[i]))
        return false;
    return true;
  case TT_AV_SS:
  case TT_AV_NS:
  case TT_AV_BS:
    if (a->len != b->len)
      return false;
    if (set_sorted(a) && set_sorted(b)) {
      for (size_t i = 0; i < a->len; i++)
        if (tt_av_compare(&a->u.elems[i], &b->u.elems[i]) != 0)
          return false;
      return true;
    }
    /* Unsorted input (built by hand): members of a set are distinct, so
     * equal sizes plus a ⊆ b means equal sets. */
    for (size_t i = 0; i < a->len; i++) {
      bool found = false;
      for (size_t j = 0; j < b->len && !found; j++)
        found = tt_av_compare(&a->u.elems[i], &b->u.elems[j]) == 0;
      if (!found)
        return false;
    }
    return true;
  case TT_AV_M:
    if (a->len != b->len)
      return false;
    for (size_t i = 0; i < a->len; i++) {
      const struct tt_av_member *ma = &a->u.members[i];
      const struct tt_av_member *mb = &b->u.members[i];
      if (ma->name_len != mb->name_len || memcmp(ma->name, mb->name, ma->name_len) != 0)
        mb = find_member(b, ma->name, ma->name_len, NULL);
      if (mb == NULL || !tt_av_equal(&ma->value, &mb->value))
        return false;
    }
    return true;
  default:
    return false;
  }
}

/* Sizes follow "Item sizes and formats" of the DynamoDB Developer Guide
 * (CapacityUnitCalculations): a string is its UTF-8 bytes; a number about
 * one byte per two significant digits plus one (leading and trailing zeros
 * trimmed); a binary its raw bytes; null and Boolean 1 byte; a List or Map
 * 3 bytes of overhead regardless of contents, plus the sum of its nested
 * elements, plus 1 byte per element; attribute names count their UTF-8
 * bytes. Sets count the sum of their members (the guide gives no set
 * overhead; dynalite, tested against DynamoDB, counts none either). */
static size_t value_size(const struct tt_av *v) {
  size_t n = 0;
  switch (v->type) {
  case TT_AV_S:
  case TT_AV_B:
    return v->len;
  case TT_AV_N:
    return tt_number_size(v->u.bytes);
  case TT_AV_BOOL:
  case TT_AV_NULL:
    return 1;
  case TT_AV_SS:
  case TT_AV_BS:
  case TT_AV_NS:
    for (size_t i = 0; i < v->len; i++)
      n += value_size(&v->u.elems[i]);
    return n;
  case TT_AV_L:
    n = 3;
    for (size_t i = 0; i < v->len; i++)
      n += 1 + value_size(&v->u.elems[i]);
    return n;
  case TT_AV_M:
    n = 3;
    for (size_t i = 0; i < v->len; i++)
      n += 1 + v->u.members[i].name_len + value_size(&v->u.members[i].value);
    return n;
  default:
    return 0;
  }
}

size_t tt_av_attr_size(const char *name, size_t name_len, const struct tt_av *v) {
  (void)name;
  return name_len + value_size(v);
}

size_t tt_av_item_size(const struct tt_av *item) {
  size_t n = 0;
  if (item->type != TT_AV_M)
    return 0;
  for (size_t i = 0; i < item->len; i++) {
    const struct tt_av_member *m = &item->u.members[i];
    n += tt_av_attr_size(m->name, m->name_len, &m->value);
  }
  return n;
}

const struct tt_av *tt_av_map_getn(const struct tt_av *map, const char *name,
                                   size_t name_len) {
  if (map == NULL || map->type != TT_AV_M)
    return NULL;
  const struct tt_av_member *m = find_member(map, name, name_len, NULL);
  return m ? &m->value : NULL;
}

const struct tt_av *tt_av_map_get(const struct tt_av *map, const char *name) {
  return tt_av_map_getn(map, name, strlen(name));
}

/* ---- constructors ---- */

static int set_bytes(struct tt_av *v, enum tt_av_type type, const void *p, size_t len) {
  tt_av_null(v);
  char *s = dup_bytes(p, len);
  if (s == NULL)
    return -1;
  v->type = type;
  v->len = len;
  v->u.bytes = s;
  return 0;
}

int tt_av_string(struct tt_av *v, const char *s, size_t len) {
  return set_bytes(v, TT_AV_S, s, len);
}

int tt_av_binary(struct tt_av *v, const void *p, size_t len) {
  return set_bytes(v, TT_AV_B, p, len);
}

int tt_av_number_text(struct tt_av *v, const char *text, size_t len, const char *field,
                      struct tt_error *err) {
  char canon[TT_NUMBER_TEXT_MAX];
  tt_av_null(v);
  if (tt_number_canonical(text, len, canon, sizeof(canon), field, err) != 0)
    return -1;
  if (set_bytes(v, TT_AV_N, canon, strlen(canon)) != 0)
    return tt_error_set(err, TT_ERR_INTERNAL, field, "out of memory");
  return 0;
}

int tt_av_number_int(struct tt_av *v, long long n) {
  char text[32];
  int len = tt_number_from_int64((int64_t)n, text, sizeof(text));
  return set_bytes(v, TT_AV_N, text, (size_t)len);
}

void tt_av_bool(struct tt_av *v, bool b) {
  memset(v, 0, sizeof(*v));
  v->type = TT_AV_BOOL;
  v->u.boolean = b;
}

void tt_av_null(struct tt_av *v) {
  memset(v, 0, sizeof(*v));
  v->type = TT_AV_NULL;
}

int tt_av_list(struct tt_av *v, enum tt_av_type type, size_t n) {
  tt_av_null(v);
  struct tt_av *e = NULL;
  if (n) {
    if ((e = calloc(n, sizeof(*e))) == NULL)
      return -1;
    for (size_t i = 0; i < n; i++)
      e[i].type = TT_AV_NULL;
  }
  v->type = type;
  v->len = n;
  v->u.elems = e;
  return 0;
}

int tt_av_map(struct tt_av *v, size_t n) {
  tt_av_null(v);
  struct tt_av_member *m = NULL;
  if (n) {
    if ((m = calloc(n, sizeof(*m))) == NULL)
      return -1;
    for (size_t i = 0; i < n; i++)
      m[i].value.type = TT_AV_NULL;
  }
  v->type = TT_AV_M;
  v->len = n;
  v->u.members = m;
  return 0;
}

static int member_cmp(const void *pa, const void *pb) {
  const struct tt_av_member *a = pa, *b = pb;
  return cmp_bytes(a->name, a->name_len, b->name, b->name_len);
}

int tt_av_member_name(struct tt_av_member *m, const char *name, size_t len) {
  if ((m->name = dup_bytes(name, len)) == NULL)
    return -1;
  m->name_len = len;
  return 0;
}

int tt_av_map_finish(struct tt_av *map, const char *field, struct tt_error *err) {
  if (map->len < 2)
    return 0;
  /* Input usually arrives sorted (our own output, DynamoDB's JSON is not,
   * but small); check first, since qsort on sorted input is not free. */
  bool sorted = true;
  for (size_t i = 1; i < map->len && sorted; i++)
    sorted = member_cmp(&map->u.members[i - 1], &map->u.members[i]) < 0;
  if (sorted)
    return 0;
  qsort(map->u.members, map->len, sizeof(struct tt_av_member), member_cmp);
  for (size_t i = 1; i < map->len; i++)
    if (member_cmp(&map->u.members[i - 1], &map->u.members[i]) == 0)
      return tt_error_set(err, TT_ERR_VALIDATION, field, "%s: duplicate map key",
                          field && *field ? field : "map");
  return 0;
}

int tt_av_map_put(struct tt_av *map, const char *name, size_t name_len, struct tt_av *value) {
  if (map->type != TT_AV_M)
    return -1;
  size_t lo;
  struct tt_av_member *found = (struct tt_av_member *)find_member(map, name, name_len, &lo);
  if (found != NULL) {
    tt_av_free(&found->value);
    found->value = *value;
    memset(value, 0, sizeof(*value));
    return 0;
  }
  char *nm = dup_bytes(name, name_len);
  if (nm == NULL)
    return -1;
  struct tt_av_member *m = realloc(map->u.members, (map->len + 1) * sizeof(*m));
  if (m == NULL) {
    free(nm);
    return -1;
  }
  memmove(&m[lo + 1], &m[lo], (map->len - lo) * sizeof(*m));
  m[lo].name = nm;
  m[lo].name_len = name_len;
  m[lo].value = *value;
  memset(value, 0, sizeof(*value));
  map->u.members = m;
  map->len++;
  return 0;
}

int tt_av_map_remove(struct tt_av *map, const char *name) {
  if (map->type != TT_AV_M)
    return 0;
  const struct tt_av_member *found = find_member(map, name, strlen(name), NULL);
  if (found == NULL)
    return 0;
  size_t i = (size_t)(found - map->u.members);
  free(map->u.members[i].name);
  tt_av_free(&map->u.members[i].value);
  memmove(&map->u.members[i], &map->u.members[i + 1],
          (map->len - i - 1) * sizeof(struct tt_av_member));
  map->len--;
  return 1;
}

int tt_av_set_finish(struct tt_av *set, const char *field, struct tt_error *err) {
  const char *f = field && *field ? field : "set";
  if (set->len == 0)
    return tt_error_set(err, TT_ERR_VALIDATION, field, "%s: a set cannot be empty", f);
  if (!set_sorted(set)) {
    qsort(set->u.elems, set->len, sizeof(struct tt_av), set_elem_cmp);
    for (size_t i = 1; i < set->len; i++)
      if (tt_av_compare(&set->u.elems[i - 1], &set->u.elems[i]) == 0)
        return tt_error_set(err, TT_ERR_VALIDATION, field,
                            "%s: a set cannot contain duplicate members", f);
  }
  return 0;
}

static const char *const type_names[] = {
    [TT_AV_S] = "S",       [TT_AV_N] = "N",   [TT_AV_B] = "B",   [TT_AV_BOOL] = "BOOL",
    [TT_AV_NULL] = "NULL", [TT_AV_SS] = "SS", [TT_AV_NS] = "NS", [TT_AV_BS] = "BS",
    [TT_AV_M] = "M",       [TT_AV_L] = "L",
};

const char *tt_av_type_name(enum tt_av_type type) {
  if ((unsigned)type < sizeof(type_names) / sizeof(type_names[0]) && type_names[type])
    return type_names[type];
  return "?";
}

/* A switch on the length, not a compare per name: the wire reader calls
 * it for every value. */
enum tt_av_type tt_av_type_parse(const char *s, size_t n) {
  switch (n) {
  case 1:
    return s[0] == 'S'   ? TT_AV_S
           : s[0] == 'N' ? TT_AV_N
           : s[0] == 'B' ? TT_AV_B
           : s[0] == 'M' ? TT_AV_M
           : s[0] == 'L' ? TT_AV_L
                         : 0;
  case 2:
    if (s[1] != 'S')
      return 0;
    return s[0] == 'S' ? TT_AV_SS : s[0] == 'N' ? TT_AV_NS : s[0] == 'B' ? TT_AV_BS : 0;
  case 4:
    return memcmp(s, "BOOL", 4) == 0 ? TT_AV_BOOL : memcmp(s, "NULL", 4) == 0 ? TT_AV_NULL : 0;
  default:
    return 0;
  }
}
