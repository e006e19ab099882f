/* SPDX-License-Identifier: Apache-2.0 */
/* store.c -- items as compact blobs, partitions ordered by sort key, and the
 * table/index maintenance done on every write. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "backend/memory/internal.h"
#include "value/number.h"

/* ---- compact encoding ----
 * value := type byte, then S/N/B: varint length + bytes; BOOL: one byte;
 * NULL: nothing; SS/NS/BS/L: varint count + values; M: varint count +
 * (name, value)*, where a name is a varint v: v even, the name with id v/2
 * in the table's dictionary; v odd, (v-1)/2 bytes of name follow. An item
 * is its key values, then an M without its type byte, in which the values
 * of the table's key attributes are the type bytes KEY_PK/KEY_SK alone (they
 * are read from the key values). Members stay sorted (they are encoded from
 * sorted M values), so decoding rebuilds valid tt_av maps without sorting.
 * A key value is type byte, varint length, bytes and a NUL. */

enum { KEY_PK = 0x20, KEY_SK = 0x21 };

static size_t get_varint(const unsigned char **p) {
  size_t v = 0;
  unsigned shift = 0;
  for (;;) {
    unsigned char c = *(*p)++;
    v |= (size_t)(c & 0x7f) << shift;
    if (!(c & 0x80))
      return v;
    shift += 7;
  }
}

/* What encoding the members of the item itself needs: the dictionary and
 * the key values to leave out. NULL for nested maps. */
struct enc_top {
  struct memdb_names *names;
  const struct tt_av *pk, *sk;
};

static int enc_value(struct tt_buf *b, const struct tt_av *v);

static int enc_members(struct tt_buf *b, const struct tt_av *m, const struct enc_top *top) {
  if (memdb_put_varint(b, m->len) != 0)
    return -1;
  for (size_t i = 0; i < m->len; i++) {
    const struct tt_av_member *mb = &m->u.members[i];
    int64_t id = top ? memdb_names_id(top->names, mb->name, mb->name_len) : -1;
    if (id >= 0) {
      if (memdb_put_varint(b, (size_t)id << 1) != 0)
        return -1;
    } else if (memdb_put_varint(b, (mb->name_len << 1) | 1) != 0 ||
               tt_buf_append(b, mb->name, mb->name_len) != 0) {
      return -1;
    }
    if (top && (&mb->value == top->pk || &mb->value == top->sk)) {
      unsigned char t = &mb->value == top->pk ? KEY_PK : KEY_SK;
      if (tt_buf_append(b, &t, 1) != 0)
        return -1;
    } else if (enc_value(b, &mb->value) != 0) {
      return -1;
    }
  }
  return 0;
}

static int enc_value(struct tt_buf *b, const struct tt_av *v) {
  unsigned char t = (unsigned char)v->type;
  if (tt_buf_append(b, &t, 1) != 0)
    return -1;
  switch (v->type) {
  case TT_AV_S:
  case TT_AV_N:
  case TT_AV_B:
    return memdb_put_varint(b, v->len) != 0 ? -1 : tt_buf_append(b, v->u.bytes, v->len);
  case TT_AV_BOOL: {
    unsigned char c = v->u.boolean ? 1 : 0;
    return tt_buf_append(b, &c, 1);
  }
  case TT_AV_NULL:
    return 0;
  case TT_AV_SS:
  case TT_AV_NS:
  case TT_AV_BS:
  case TT_AV_L:
    if (memdb_put_varint(b, v->len) != 0)
      return -1;
    for (size_t i = 0; i < v->len; i++)
      if (enc_value(b, &v->u.elems[i]) != 0)
        return -1;
    return 0;
  case TT_AV_M:
    return enc_members(b, v, NULL);
  }
  return -1;
}

static int enc_key(struct tt_buf *b, const struct tt_av *v) {
  unsigned char t = (unsigned char)v->type, z = 0;
  if (tt_buf_append(b, &t, 1) != 0 || memdb_put_varint(b, v->len) != 0 ||
      tt_buf_append(b, v->u.bytes, v->len) != 0 || tt_buf_append(b, &z, 1) != 0)
    return -1;
  return 0;
}

static struct memdb_kv dec_key(const unsigned char **p) {
  struct memdb_kv k;
  k.type = (enum tt_av_type)(*(*p)++ & 0x7f);
  k.len = get_varint(p);
  k.p = (const char *)*p;
  *p += k.len + 1;
  return k;
}

/* The key values at *p, moved past them: the sort key's when has_sk, else
 * sk zeroed. */
static void dec_keys(const unsigned char **p, bool has_sk, struct memdb_kv *pk,
                     struct memdb_kv *sk) {
  *pk = dec_key(p);
  if (has_sk)
    *sk = dec_key(p);
  else
    memset(sk, 0, sizeof(*sk));
}

/* What decoding the item's own members needs: the dictionary and the key
 * values the KEY_PK/KEY_SK markers stand for. NULL for nested maps. */
struct dec_top {
  const struct memdb_names *names;
  struct memdb_kv pk, sk;
};

/* The dec_top of an item stored in t; returns where its members begin. */
static const unsigned char *item_top(const struct memdb_table *t, const struct memdb_item *it,
                                     struct dec_top *top) {
  const unsigned char *p = it->data;
  top->names = &t->names;
  dec_keys(&p, (p[0] & 0x80) != 0, &top->pk, &top->sk); /* the flag of enc_key's caller */
  return p;
}

/* Where decoded values get their memory: malloc (each node owned, freed by
 * tt_av_free) or an arena (freed with it: a read page decodes thousands of
 * items and would otherwise spend more in malloc and free than in reading
 * them). */
static void *dec_alloc(struct tt_arena *a, size_t n) {
  return a ? tt_arena_alloc(a, n) : calloc(1, n);
}

static char *dec_text(struct tt_arena *a, const void *src, size_t len) {
  char *s = a ? tt_arena_bytes(a, len + 1) : malloc(len + 1);
  if (s) {
    memcpy(s, src, len);
    s[len] = '\0';
  }
  return s;
}

static int dec_value(const unsigned char **p, struct tt_av *out, struct tt_arena *a);

static int dec_bytes(struct tt_av *out, enum tt_av_type t, const void *src, size_t len,
                     struct tt_arena *a) {
  char *s = dec_text(a, src, len);
  if (s == NULL)
    return -1;
  out->type = t; /* stored values are already canonical: no re-parse */
  out->len = len;
  out->u.bytes = s;
  return 0;
}

static int dec_members(const unsigned char **p, struct tt_av *out, const struct dec_top *top,
                       struct tt_arena *a) {
  size_t n = get_varint(p);
  memset(out, 0, sizeof(*out));
  out->type = TT_AV_NULL;
  if (n && (out->u.members = dec_alloc(a, n * sizeof(*out->u.members))) == NULL)
    return -1;
  out->type = TT_AV_M;
  out->len = n;
  for (size_t i = 0; i < n; i++) {
    struct tt_av_member *mb = &out->u.members[i];
    size_t v = get_varint(p), len = v >> 1;
    const char *name = (const char *)*p;
    mb->value.type = TT_AV_NULL;
    if (v & 1)
      *p += len;
    else
      name = memdb_names_get(top->names, (uint32_t)len, &len);
    if ((mb->name = dec_text(a, name, len)) == NULL)
      return -1;
    mb->name_len = len;
    if (top && (**p == KEY_PK || **p == KEY_SK)) {
      const struct memdb_kv *k = *(*p)++ == KEY_PK ? &top->pk : &top->sk;
      if (dec_bytes(&mb->value, k->type, k->p, k->len, a) != 0)
        return -1;
    } else if (dec_value(p, &mb->value, a) != 0) {
      return -1;
    }
  }
  return 0;
}

static int dec_value(const unsigned char **p, struct tt_av *out, struct tt_arena *a) {
  enum tt_av_type t = (enum tt_av_type) * (*p)++;
  memset(out, 0, sizeof(*out));
  out->type = TT_AV_NULL;
  switch (t) {
  case TT_AV_S:
  case TT_AV_N:
  case TT_AV_B: {
    size_t len = get_varint(p);
    if (dec_bytes(out, t, *p, len, a) != 0)
      return -1;
    *p += len;
    return 0;
  }
  case TT_AV_BOOL:
    tt_av_bool(out, *(*p)++ != 0);
    return 0;
  case TT_AV_NULL:
    return 0;
  case TT_AV_SS:
  case TT_AV_NS:
  case TT_AV_BS:
  case TT_AV_L: {
    size_t n = get_varint(p);
    if (n && (out->u.elems = dec_alloc(a, n * sizeof(*out->u.elems))) == NULL)
      return -1;
    out->type = t;
    out->len = n;
    for (size_t i = 0; i < n; i++)
      out->u.elems[i].type = TT_AV_NULL;
    for (size_t i = 0; i < n; i++)
      if (dec_value(p, &out->u.elems[i], a) != 0)
        return -1;
    return 0;
  }
  case TT_AV_M:
    return dec_members(p, out, NULL, a);
  }
  return -1;
}

int memdb_item_decode(const struct memdb_table *t, const struct memdb_item *it,
                      struct tt_av *out, struct tt_arena *a) {
  struct dec_top top;
  const unsigned char *p = item_top(t, it, &top);
  if (dec_members(&p, out, &top, a) != 0) {
    if (a == NULL)
      tt_av_free(out);
    memset(out, 0, sizeof(*out));
    return -1;
  }
  return 0;
}

/* ---- the data dir's form of a stored item ----
 * wal_codec.c's value: type byte, then S/N/B: varint length + bytes; BOOL:
 * one byte; NULL: nothing; SS/NS/BS: varint count + (varint length +
 * bytes)*; L: varint count + values; M: varint count + (varint length +
 * name, value)*. The same as the encoding above but for the names (spelled
 * out), the key markers (the key values) and the sets (no type byte per
 * element). */

static int wal_str(struct tt_buf *b, const void *s, size_t n) {
  return memdb_put_varint(b, n) != 0 || tt_buf_append(b, s, n) != 0 ? -1 : 0;
}

static int wal_members(struct tt_buf *b, const unsigned char **p, const struct dec_top *top);

static int wal_value(struct tt_buf *b, const unsigned char **p) {
  unsigned char t = *(*p)++;
  if (tt_buf_append(b, &t, 1) != 0)
    return -1;
  switch ((enum tt_av_type)t) {
  case TT_AV_S:
  case TT_AV_N:
  case TT_AV_B: {
    size_t len = get_varint(p);
    const unsigned char *s = *p;
    *p += len;
    return wal_str(b, s, len);
  }
  case TT_AV_BOOL:
    return tt_buf_append(b, (*p)++, 1);
  case TT_AV_NULL:
    return 0;
  case TT_AV_SS:
  case TT_AV_NS:
  case TT_AV_BS: {
    size_t n = get_varint(p);
    if (memdb_put_varint(b, n) != 0)
      return -1;
    for (size_t i = 0; i < n; i++) {
      (*p)++; /* the element's type byte: the set's */
      size_t len = get_varint(p);
      const unsigned char *s = *p;
      *p += len;
      if (wal_str(b, s, len) != 0)
        return -1;
    }
    return 0;
  }
  case TT_AV_L: {
    size_t n = get_varint(p);
    if (memdb_put_varint(b, n) != 0)
      return -1;
    for (size_t i = 0; i < n; i++)
      if (wal_value(b, p) != 0)
        return -1;
    return 0;
  }
  case TT_AV_M:
    return wal_members(b, p, NULL);
  }
  return -1;
}

static int wal_members(struct tt_buf *b, const unsigned char **p, const struct dec_top *top) {
  size_t n = get_varint(p);
  if (memdb_put_varint(b, n) != 0)
    return -1;
  for (size_t i = 0; i < n; i++) {
    size_t v = get_varint(p), len = v >> 1;
    const char *name = (const char *)*p;
    if (v & 1)
      *p += len;
    else
      name = memdb_names_get(top->names, (uint32_t)len, &len);
    if (wal_str(b, name, len) != 0)
      return -1;
    if (top && (**p == KEY_PK || **p == KEY_SK)) {
      const struct memdb_kv *k = *(*p)++ == KEY_PK ? &top->pk : &top->sk;
      unsigned char kt = (unsigned char)k->type;
      if (tt_buf_append(b, &kt, 1) != 0 || wal_str(b, k->p, k->len) != 0)
        return -1;
    } else if (wal_value(b, p) != 0) {
      return -1;
    }
  }
  return 0;
}

int memdb_item_put_wal(const struct memdb_table *t, const struct memdb_item *it,
                       struct tt_buf *b) {
  struct dec_top top;
  const unsigned char *p = item_top(t, it, &top);
  unsigned char m = TT_AV_M;
  return tt_buf_append(b, &m, 1) != 0 || wal_members(b, &p, &top) != 0 ? -1 : 0;
}

/* Encodes a validated item (an M holding the table's keys) into t's slab
 * (which must exist); adds its attribute names to t's dictionary. NULL on
 * OOM. */
static struct memdb_item *memdb_item_encode(struct memdb_table *t, const struct tt_av *item) {
  struct tt_buf b;
  struct memdb_item *it = NULL;
  struct enc_top top = {&t->names, tt_av_map_get(item, t->pk.name), NULL};
  tt_buf_init(&b, 0);
  if (enc_key(&b, top.pk) != 0)
    goto fail;
  if (t->sk.name) {
    b.data[0] |= (char)0x80; /* flag: a sort key follows */
    top.sk = tt_av_map_get(item, t->sk.name);
    if (enc_key(&b, top.sk) != 0)
      goto fail;
  }
  if (enc_members(&b, item, &top) != 0)
    goto fail;
  if ((it = memdb_slab_alloc(t->slab, sizeof(*it) + b.len)) == NULL)
    goto fail;
  it->blob_len = (uint32_t)b.len;
  it->size = (uint32_t)tt_av_item_size(item);
  memcpy(it->data, b.data, b.len);
fail:
  tt_buf_free(&b);
  return it;
}

void memdb_entry_keys(const struct memdb_store *s, const void *e, struct memdb_kv *pk,
                      struct memdb_kv *sk) {
  const unsigned char *p = s->is_index ? ((const struct memdb_ientry *)e)->keys
                                       : ((const struct memdb_item *)e)->data;
  dec_keys(&p, s->has_sk, pk, sk);
}

const struct memdb_item *memdb_entry_item(const struct memdb_store *s, const void *e) {
  return s->is_index ? ((const struct memdb_ientry *)e)->item : e;
}

int memdb_table_each(const struct memdb_table *t,
                     int (*fn)(const struct memdb_table *t, struct memdb_item *it, void *arg),
                     void *arg) {
  const struct memdb_store *s = &t->store;
  for (struct memdb_pos p = memdb_seq_begin(&s->parts); !memdb_seq_is_end(&s->parts, p);
       memdb_seq_next(&s->parts, &p)) {
    const struct memdb_part *pt = memdb_seq_at(&s->parts, p);
    for (struct memdb_pos q = memdb_seq_begin(&pt->entries); !memdb_seq_is_end(&pt->entries, q);
         memdb_seq_next(&pt->entries, &q)) {
      /* A table's entries are its items (an index's point at them). */
      int rc = fn(t, memdb_seq_at(&pt->entries, q), arg);
      if (rc != 0)
        return rc;
    }
  }
  return 0;
}

/* Bytes an entry of s was allocated with (the slab needs them to free it). */
static size_t entry_alloc_size(const struct memdb_store *s, const void *e) {
  if (!s->is_index)
    return sizeof(struct memdb_item) + ((const struct memdb_item *)e)->blob_len;
  const unsigned char *p = ((const struct memdb_ientry *)e)->keys;
  struct memdb_kv pk, sk;
  dec_keys(&p, s->has_sk, &pk, &sk);
  return offsetof(struct memdb_ientry, keys) +
         (size_t)(p - ((const struct memdb_ientry *)e)->keys);
}

static void entry_free(const struct memdb_store *s, void *e) {
  if (e)
    memdb_slab_free(s->table->slab, e, entry_alloc_size(s, e));
}

/* ---- ordering ---- */

int memdb_kv_cmp(const struct memdb_kv *a, const struct memdb_kv *b) {
  if (a->type == TT_AV_N && b->type == TT_AV_N)
    return tt_number_compare(a->p, b->p);
  size_t n = a->len < b->len ? a->len : b->len;
  int c = n ? memcmp(a->p, b->p, n) : 0;
  if (c != 0)
    return c;
  return a->len < b->len ? -1 : a->len > b->len ? 1 : 0;
}

struct memdb_kv memdb_kv_of(const struct tt_av *v) {
  struct memdb_kv k = {v->type, v->u.bytes, v->len};
  return k;
}

/* Target of a search inside a partition: sort key, then (indexes only) the
 * table keys. A NULL level ends the comparison (prefix match). */
struct probe {
  const struct memdb_store *s;
  const struct memdb_kv *sk, *tpk, *tsk;
  bool upper;     /* pred is entry <= probe, else entry < probe */
  uint32_t thash; /* memdb_hash2(tpk, tsk) when tpk is set in an index */
};

static int entry_cmp(const void *e, const struct probe *pr) {
  const struct memdb_store *s = pr->s;
  struct memdb_kv pk, sk;
  int c;
  memdb_entry_keys(s, e, &pk, &sk);
  if (s->has_sk) {
    if (pr->sk == NULL)
      return 0;
    if ((c = memdb_kv_cmp(&sk, pr->sk)) != 0)
      return c;
  }
  if (!s->is_index || pr->tpk == NULL)
    return 0;
  uint32_t th = ((const struct memdb_ientry *)e)->thash;
  if (th != pr->thash)
    return th < pr->thash ? -1 : 1;
  struct memdb_kv tpk, tsk;
  memdb_entry_keys(&s->table->store, ((const struct memdb_ientry *)e)->item, &tpk, &tsk);
  if ((c = memdb_kv_cmp(&tpk, pr->tpk)) != 0)
    return c;
  if (s->table->sk.name == NULL || pr->tsk == NULL)
    return 0;
  return memdb_kv_cmp(&tsk, pr->tsk);
}

static bool probe_pred(const void *e, const void *ctx) {
  const struct probe *pr = ctx;
  int c = entry_cmp(e, pr);
  return pr->upper ? c <= 0 : c < 0;
}

struct part_probe {
  const struct memdb_store *s;
  uint32_t hash;
  const struct memdb_kv *pk;
};

static bool part_pred(const void *e, const void *ctx) {
  const struct memdb_part *pt = e;
  const struct part_probe *pp = ctx;
  if (pt->hash != pp->hash)
    return pt->hash < pp->hash;
  struct memdb_kv pk, sk;
  memdb_entry_keys(pp->s, memdb_seq_at(&pt->entries, memdb_seq_begin(&pt->entries)), &pk, &sk);
  return memdb_kv_cmp(&pk, pp->pk) < 0;
}

/* The partitions of a store are keyed by hash (memdb_seq_point_key). */
static uint32_t part_key(const void *e) { return ((const struct memdb_part *)e)->hash; }

/* memdb_store_part for a key whose hash is known. */
static struct memdb_part *store_part_h(const struct memdb_store *s, const struct memdb_kv *pk,
                                       uint32_t hash, struct memdb_pos *pos) {
  struct part_probe pp = {s, hash, pk};
  struct memdb_pos p = memdb_seq_point_key(&s->parts, pp.hash, part_pred, &pp);
  if (pos)
    *pos = p;
  struct memdb_part *pt = memdb_seq_at(&s->parts, p);
  if (pt == NULL || pt->hash != pp.hash)
    return NULL;
  struct memdb_kv k, sk;
  memdb_entry_keys(s, memdb_seq_at(&pt->entries, memdb_seq_begin(&pt->entries)), &k, &sk);
  return memdb_kv_cmp(&k, pk) == 0 ? pt : NULL;
}

struct memdb_part *memdb_store_part(const struct memdb_store *s, const struct memdb_kv *pk,
                                    struct memdb_pos *pos) {
  return store_part_h(s, pk, memdb_hash(pk), pos);
}

/* Position of the entry with exactly these keys (or where it would go);
 * th is memdb_hash2(tpk, tsk) in an index. */
static struct memdb_pos entry_pos(const struct memdb_store *s, const struct memdb_part *pt,
                                  const struct memdb_kv *sk, const struct memdb_kv *tpk,
                                  const struct memdb_kv *tsk, uint32_t th) {
  struct probe pr = {s, sk, tpk, tsk, false, th};
  return memdb_seq_point(&pt->entries, probe_pred, &pr);
}

struct memdb_item *memdb_table_find(const struct memdb_table *t, const struct memdb_kv *pk,
                                    const struct memdb_kv *sk) {
  const struct memdb_store *s = &t->store;
  struct memdb_part *pt = memdb_store_part(s, pk, NULL);
  if (pt == NULL)
    return NULL;
  struct memdb_pos p = entry_pos(s, pt, sk, NULL, NULL, 0);
  struct memdb_item *it = memdb_seq_at(&pt->entries, p);
  if (it == NULL)
    return NULL;
  if (t->sk.name) {
    struct memdb_kv a, b;
    memdb_entry_keys(&t->store, it, &a, &b);
    if (memdb_kv_cmp(&b, sk) != 0)
      return NULL;
  }
  return it;
}

/* Inserts an entry whose keys are pk/sk (table keys tpk/tsk for indexes,
 * whose entries hold the hash of tpk/tsk). */
static int store_insert(struct memdb_store *s, void *e, const struct memdb_kv *pk,
                        const struct memdb_kv *sk, const struct memdb_kv *tpk,
                        const struct memdb_kv *tsk) {
  struct memdb_slab *a = s->table->slab;
  struct memdb_pos pp;
  uint32_t h = memdb_hash(pk);
  struct memdb_part *pt = store_part_h(s, pk, h, &pp);
  if (pt == NULL) {
    if ((pt = memdb_slab_alloc(a, sizeof(*pt))) == NULL)
      return -1;
    memset(pt, 0, sizeof(*pt));
    pt->hash = h;
    /* Cannot fail: a one-entry sequence allocates nothing. */
    (void)memdb_seq_insert(a, &pt->entries, memdb_seq_begin(&pt->entries), e, NULL);
    if (memdb_seq_insert(a, &s->parts, pp, pt, part_key) != 0) {
      memdb_slab_free(a, pt, sizeof(*pt));
      return -1;
    }
    s->count++;
    return 0;
  }
  uint32_t th = s->is_index ? ((const struct memdb_ientry *)e)->thash : 0;
  if (memdb_seq_insert(a, &pt->entries, entry_pos(s, pt, sk, tpk, tsk, th), e, NULL) != 0)
    return -1;
  s->count++;
  return 0;
}

/* Removes the entry with these keys; returns it (NULL when absent). */
static void *store_remove(struct memdb_store *s, const struct memdb_kv *pk,
                          const struct memdb_kv *sk, const struct memdb_kv *tpk,
                          const struct memdb_kv *tsk, uint32_t th) {
  struct memdb_pos pp;
  struct memdb_part *pt = memdb_store_part(s, pk, &pp);
  if (pt == NULL)
    return NULL;
  struct memdb_pos p = entry_pos(s, pt, sk, tpk, tsk, th);
  void *e = memdb_seq_at(&pt->entries, p);
  if (e == NULL)
    return NULL;
  struct memdb_slab *a = s->table->slab;
  memdb_seq_remove(a, &pt->entries, p);
  s->count--;
  if (pt->entries.nc == 0) {
    memdb_slab_free(a, pt, sizeof(*pt));
    memdb_seq_remove(a, &s->parts, pp);
  }
  return e;
}

/* The slot holding the entry with these keys, for replacement in place. */
static void **store_slot(struct memdb_store *s, const struct memdb_kv *pk,
                         const struct memdb_kv *sk, const struct memdb_kv *tpk,
                         const struct memdb_kv *tsk, uint32_t th) {
  struct memdb_part *pt = memdb_store_part(s, pk, NULL);
  if (pt == NULL)
    return NULL;
  struct memdb_pos p = entry_pos(s, pt, sk, tpk, tsk, th);
  if (memdb_seq_is_end(&pt->entries, p))
    return NULL;
  return memdb_seq_slot(&pt->entries, p);
}

/* Index key values of an item: false when the item is not in the index
 * (sparse index: a key attribute is missing or has another type). */
static bool index_keys(const struct memdb_index *ix, const struct tt_av *item,
                       struct memdb_kv *pk, struct memdb_kv *sk) {
  const struct memdb_keydef *defs[2] = {&ix->pk, &ix->sk};
  struct memdb_kv *out[2] = {pk, sk};
  memset(sk, 0, sizeof(*sk));
  for (int i = 0; i < 2 && defs[i]->name; i++) {
    const struct tt_av *v = tt_av_map_get(item, defs[i]->name);
    if (v == NULL || v->type != defs[i]->type)
      return false;
    *out[i] = memdb_kv_of(v);
  }
  return true;
}

static struct memdb_ientry *ientry_new(const struct memdb_index *ix, const struct tt_av *item,
                                       struct memdb_item *it, uint32_t thash) {
  struct tt_buf b;
  struct memdb_ientry *e = NULL;
  tt_buf_init(&b, 0);
  if (enc_key(&b, tt_av_map_get(item, ix->pk.name)) != 0)
    goto fail;
  if (ix->sk.name && enc_key(&b, tt_av_map_get(item, ix->sk.name)) != 0)
    goto fail;
  if ((e = memdb_slab_alloc(ix->store.table->slab, offsetof(struct memdb_ientry, keys) + b.len)) ==
      NULL)
    goto fail;
  e->item = it;
  e->thash = thash;
  memcpy(e->keys, b.data, b.len);
fail:
  tt_buf_free(&b);
  return e;
}

int memdb_table_write(struct memdb_table *t, struct memdb_item *old, const struct tt_av *item) {
  struct memdb_item *it = NULL;
  struct tt_av oldav = {.type = TT_AV_NULL};
  struct memdb_ientry **fresh = NULL;
  bool table_inserted = false;
  size_t inserted = 0; /* fresh entries already in their index */
  int rc = -1;
  struct memdb_kv tpk, tsk;
  if (t->slab == NULL && (t->slab = memdb_slab_new()) == NULL)
    return -1;
  if (item && (it = memdb_item_encode(t, item)) == NULL)
    goto fail;
  memdb_entry_keys(&t->store, it ? it : old, &tpk, &tsk);
  const struct memdb_kv *tskp = t->sk.name ? &tsk : NULL;
  /* Index entries are ordered by this hash where their index keys are equal. */
  uint32_t th = t->nidx ? memdb_hash2(&tpk, tskp) : 0;
  if (old && t->nidx && memdb_item_decode(t, old, &oldav, NULL) != 0)
    goto fail;
  /* Phase 1, may fail: allocate the index entries whose keys change. */
  if (t->nidx && (fresh = calloc(t->nidx, sizeof(*fresh))) == NULL)
    goto fail;
  for (size_t i = 0; item && i < t->nidx; i++) {
    struct memdb_kv npk, nsk, opk, osk;
    if (!index_keys(&t->idx[i], item, &npk, &nsk))
      continue;
    if (old && index_keys(&t->idx[i], &oldav, &opk, &osk) && memdb_kv_cmp(&npk, &opk) == 0 &&
        (!t->idx[i].sk.name || memdb_kv_cmp(&nsk, &osk) == 0))
      continue; /* same index keys: the old entry is repointed in phase 3 */
    if ((fresh[i] = ientry_new(&t->idx[i], item, it, th)) == NULL)
      goto fail;
  }
  /* Phase 2, may fail and is then undone: insertions. */
  if (!old && it) {
    if (store_insert(&t->store, it, &tpk, tskp, NULL, NULL) != 0)
      goto fail;
    table_inserted = true;
  }
  for (; inserted < t->nidx; inserted++) {
    struct memdb_index *ix = &t->idx[inserted];
    struct memdb_kv npk, nsk;
    if (fresh[inserted] == NULL)
      continue;
    index_keys(ix, item, &npk, &nsk);
    if (store_insert(&ix->store, fresh[inserted], &npk, ix->sk.name ? &nsk : NULL, &tpk, tskp) !=
        0)
      goto fail;
  }
  /* Phase 3, cannot fail: removals and in-place replacements. */
  for (size_t i = 0; i < t->nidx; i++) {
    struct memdb_index *ix = &t->idx[i];
    struct memdb_kv opk, osk, npk, nsk;
    bool had = old && index_keys(ix, &oldav, &opk, &osk);
    bool has = item && index_keys(ix, item, &npk, &nsk);
    if (!had)
      continue;
    if (has && fresh[i] == NULL) {
      void **slot = store_slot(&ix->store, &opk, ix->sk.name ? &osk : NULL, &tpk, tskp, th);
      if (slot)
        ((struct memdb_ientry *)*slot)->item = it;
    } else {
      /* The old entry sorts by the old index keys; the fresh one (if any)
       * by different keys, so the lookup finds the old one. */
      entry_free(&ix->store,
                 store_remove(&ix->store, &opk, ix->sk.name ? &osk : NULL, &tpk, tskp, th));
    }
  }
  if (old) {
    if (it) {
      void **slot = store_slot(&t->store, &tpk, tskp, NULL, NULL, 0);
      if (slot)
        *slot = it;
    } else {
      store_remove(&t->store, &tpk, tskp, NULL, NULL, 0);
    }
    t->bytes -= old->size;
    entry_free(&t->store, old);
  }
  if (it)
    t->bytes += it->size;
  for (size_t i = 0; fresh && i < t->nidx; i++)
    fresh[i] = NULL; /* owned by their indexes now */
  it = NULL;
  rc = 0;
fail:
  if (rc != 0) {
    /* Undo phase 2 so the table and its indexes stay as they were. */
    for (size_t i = 0; i < inserted; i++) {
      struct memdb_index *ix = &t->idx[i];
      struct memdb_kv npk, nsk;
      if (fresh[i] && index_keys(ix, item, &npk, &nsk))
        store_remove(&ix->store, &npk, ix->sk.name ? &nsk : NULL, &tpk, tskp, th);
    }
    if (table_inserted)
      store_remove(&t->store, &tpk, tskp, NULL, NULL, 0);
  }
  for (size_t i = 0; fresh && i < t->nidx; i++)
    entry_free(&t->idx[i].store, fresh[i]);
  free(fresh);
  entry_free(&t->store, it);
  tt_av_free(&oldav);
  return rc;
}

/* Frees the entries (when asked), partitions and sequences of s. */
static void store_free(struct memdb_store *s, bool free_entries) {
  struct memdb_slab *a = s->table ? s->table->slab : NULL;
  if (a == NULL)
    return; /* nothing was ever allocated */
  for (struct memdb_pos pp = memdb_seq_begin(&s->parts); !memdb_seq_is_end(&s->parts, pp);
       memdb_seq_next(&s->parts, &pp)) {
    struct memdb_part *pt = memdb_seq_at(&s->parts, pp);
    for (struct memdb_pos p = memdb_seq_begin(&pt->entries);
         free_entries && !memdb_seq_is_end(&pt->entries, p); memdb_seq_next(&pt->entries, &p))
      entry_free(s, memdb_seq_at(&pt->entries, p));
    memdb_seq_free(a, &pt->entries);
    memdb_slab_free(a, pt, sizeof(*pt));
  }
  memdb_seq_free(a, &s->parts);
  s->count = 0;
}

size_t memdb_table_mem(const struct memdb_table *t) { return memdb_slab_live(t->slab); }

void memdb_table_free(struct memdb_table *t) {
  if (t == NULL)
    return;
  for (size_t i = 0; i < t->nidx; i++)
    memdb_index_free(&t->idx[i]);
  free(t->idx);
  store_free(&t->store, true);
  memdb_slab_destroy(t->slab);
  memdb_names_free(&t->names);
  free(t->name);
  free(t->pk.name);
  free(t->sk.name);
  free(t->ttl_attr);
  memdb_tags_free(t->tags, t->ntags);
  memdb_defs_free(t->defs, t->ndefs);
  free(t);
}

void memdb_tags_free(struct tt_ddb_tag *tags, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free((char *)tags[i].key);
    free((char *)tags[i].value);
  }
  free(tags);
}

void memdb_defs_free(struct tt_ddb_attr_def *defs, size_t n) {
  for (size_t i = 0; i < n; i++)
    free((char *)defs[i].name);
  free(defs);
}

void memdb_index_free(struct memdb_index *ix) {
  store_free(&ix->store, true);
  free(ix->name);
  free(ix->pk.name);
  free(ix->sk.name);
  for (size_t j = 0; j < ix->ninclude; j++)
    free(ix->include[j]);
  free(ix->include);
}

/* Whether an index key value may go into the index: DynamoDB's backfill
 * skips (and reports as violations) empty and oversized S/B values, which
 * writes to a table that already had the index would have refused. */
static bool backfill_key_ok(const struct tt_av *v, bool is_hash) {
  struct tt_backend_error e = {0};
  if ((v->type == TT_AV_S || v->type == TT_AV_B) && memdb_kv_of(v).len == 0)
    return false;
  return memdb_limit_key_value(v, is_hash, &e) == 0;
}

/* One item of a backfill (memdb_table_each): its index entry, when the
 * item has the index's keys. */
static int backfill_item(const struct memdb_table *t, struct memdb_item *it, void *arg) {
  struct memdb_index *ix = arg;
  struct tt_av item = {.type = TT_AV_NULL};
  struct memdb_kv tpk, tsk, ipk, isk;
  struct memdb_ientry *e = NULL;
  int rc = 0;
  if (memdb_item_decode(t, it, &item, NULL) != 0) {
    rc = -1;
  } else if (index_keys(ix, &item, &ipk, &isk) &&
             backfill_key_ok(tt_av_map_get(&item, ix->pk.name), true) &&
             (ix->sk.name == NULL || backfill_key_ok(tt_av_map_get(&item, ix->sk.name), false))) {
    memdb_entry_keys(&t->store, it, &tpk, &tsk);
    const struct memdb_kv *tskp = t->sk.name ? &tsk : NULL;
    e = ientry_new(ix, &item, it, memdb_hash2(&tpk, tskp));
    if (e == NULL ||
        store_insert(&ix->store, e, &ipk, ix->sk.name ? &isk : NULL, &tpk, tskp) != 0) {
      entry_free(&ix->store, e);
      rc = -1;
    }
  }
  tt_av_free(&item);
  return rc;
}

int memdb_index_backfill(const struct memdb_table *t, struct memdb_index *ix) {
  if (memdb_table_each(t, backfill_item, ix) != 0) {
    /* All or nothing: UpdateTable fails and the table keeps its indexes as
     * they were. */
    store_free(&ix->store, true);
    return -1;
  }
  return 0;
}

bool memdb_expired(const struct memdb_table *t, const struct tt_av *item, int64_t now) {
  if (t->ttl_attr == NULL || !t->hide_expired)
    return false;
  const struct tt_av *v = tt_av_map_get(item, t->ttl_attr);
  if (v == NULL || v->type != TT_AV_N)
    return false;
  /* DynamoDB ignores expiry times more than five years in the past. */
  char nowt[32], oldest[32];
  if (tt_number_from_int64(now, nowt, sizeof(nowt)) < 0 ||
      tt_number_from_int64(now - 5 * 365 * 86400LL, oldest, sizeof(oldest)) < 0)
    return false;
  return tt_number_compare(v->u.bytes, nowt) <= 0 && tt_number_compare(v->u.bytes, oldest) >= 0;
}

int memdb_index_project(const struct memdb_table *t, const struct memdb_index *ix,
                        const struct tt_av *item, struct tt_av *out) {
  if (ix == NULL || ix->proj == TT_DDB_PROJECT_ALL)
    return tt_av_clone(out, item);
  int rc = memdb_key_of(t, ix, item, out);
  for (size_t i = 0; rc == 0 && i < ix->ninclude; i++)
    if ((rc = memdb_copy_attr(out, item, ix->include[i])) != 0)
      tt_av_free(out);
  return rc;
}

struct memdb_pos memdb_store_seek(const struct memdb_store *s, const struct memdb_part *pt,
                                  const struct memdb_kv *sk, const struct memdb_kv *tpk,
                                  const struct memdb_kv *tsk, bool after) {
  uint32_t th = s->is_index && tpk ? memdb_hash2(tpk, s->table->sk.name ? tsk : NULL) : 0;
  struct probe pr = {s, sk, tpk, tsk, after, th};
  return memdb_seq_point(&pt->entries, probe_pred, &pr);
}
