/* SPDX-License-Identifier: Apache-2.0 */
/* store.c -- items as compact blobs, partitions ordered by sort key, and the
 * table/index maintenance done on every write. */
#include <stdlib.h>
#include <string.h>

#include "backend/memory/internal.h"
#include "value/number.h"

/* ---- compact encoding ----
 * value := type byte, then S/N/B: varint length + bytes; BOOL: one byte;
 * NULL: nothing; SS/NS/BS/L: varint count + values; M: varint count +
 * (varint name length, name, value)*. An item is an M without its type
 * byte. Members stay sorted (they are encoded from sorted M values), so
 * decoding rebuilds valid tt_av maps without sorting. A key value is
 * type byte, varint length, bytes and a NUL. */

static int put_varint(struct tt_buf *b, size_t v) {
  unsigned char tmp[10];
  size_t n = 0;
  do {
    unsigned char c = v & 0x7f;
    v >>= 7;
    tmp[n++] = c | (v ? 0x80 : 0);
  } while (v);
  return tt_buf_append(b, tmp, n);
}

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

static int enc_value(struct tt_buf *b, const struct tt_av *v);

static int enc_members(struct tt_buf *b, const struct tt_av *m) {
  if (put_varint(b, m->len) != 0)
    return -1;
  for (size_t i = 0; i < m->len; i++) {
    const struct tt_av_member *mb = &m->u.members[i];
    if (put_varint(b, mb->name_len) != 0 || tt_buf_append(b, mb->name, mb->name_len) != 0 ||
        enc_value(b, &mb->value) != 0)
      return -1;
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
    return put_varint(b, v->len) != 0 ? -1 : tt_buf_append(b, v->u.bytes, v->len);
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
    if (put_varint(b, v->len) != 0)
      return -1;
    for (size_t i = 0; i < v->len; i++)
      if (enc_value(b, &v->u.elems[i]) != 0)
        return -1;
    return 0;
  case TT_AV_M:
    return enc_members(b, v);
  }
  return -1;
}

static int enc_key(struct tt_buf *b, const struct tt_av *v) {
  unsigned char t = (unsigned char)v->type, z = 0;
  if (tt_buf_append(b, &t, 1) != 0 || put_varint(b, v->len) != 0 ||
      tt_buf_append(b, v->u.bytes, v->len) != 0 || tt_buf_append(b, &z, 1) != 0)
    return -1;
  return 0;
}

static struct memdb_kv dec_key(const unsigned char **p) {
  struct memdb_kv k;
  k.type = (enum tt_av_type) * (*p)++;
  k.len = get_varint(p);
  k.p = (const char *)*p;
  *p += k.len + 1;
  return k;
}

static int dec_value(const unsigned char **p, struct tt_av *out);

static int dec_members(const unsigned char **p, struct tt_av *out) {
  size_t n = get_varint(p);
  if (tt_av_map(out, n) != 0)
    return -1;
  for (size_t i = 0; i < n; i++) {
    struct tt_av_member *mb = &out->u.members[i];
    size_t len = get_varint(p);
    if ((mb->name = malloc(len + 1)) == NULL)
      return -1;
    memcpy(mb->name, *p, len);
    mb->name[len] = '\0';
    mb->name_len = len;
    *p += len;
    if (dec_value(p, &mb->value) != 0)
      return -1;
  }
  return 0;
}

static int dec_value(const unsigned char **p, struct tt_av *out) {
  enum tt_av_type t = (enum tt_av_type) * (*p)++;
  memset(out, 0, sizeof(*out));
  out->type = TT_AV_NULL;
  switch (t) {
  case TT_AV_S:
  case TT_AV_N:
  case TT_AV_B: {
    size_t len = get_varint(p);
    char *s = malloc(len + 1);
    if (s == NULL)
      return -1;
    memcpy(s, *p, len);
    s[len] = '\0';
    *p += len;
    out->type = t; /* stored values are already canonical: no re-parse */
    out->len = len;
    out->u.bytes = s;
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
    if (tt_av_list(out, t, n) != 0)
      return -1;
    for (size_t i = 0; i < n; i++)
      if (dec_value(p, &out->u.elems[i]) != 0)
        return -1;
    return 0;
  }
  case TT_AV_M:
    return dec_members(p, out);
  }
  return -1;
}

/* Skips the key section of an item to reach its blob. The type byte of the
 * first key carries 0x80 when a sort key follows. */
static const unsigned char *item_blob(const struct memdb_item *it) {
  const unsigned char *p = it->data;
  bool has_sk = (p[0] & 0x80) != 0;
  (void)dec_key(&p);
  if (has_sk)
    (void)dec_key(&p);
  return p;
}

int memdb_item_decode(const struct memdb_item *it, struct tt_av *out) {
  const unsigned char *p = item_blob(it);
  if (dec_members(&p, out) != 0) {
    tt_av_free(out);
    return -1;
  }
  return 0;
}

struct memdb_item *memdb_item_encode(const struct memdb_table *t, const struct tt_av *item) {
  struct tt_buf b;
  struct memdb_item *it = NULL;
  tt_buf_init(&b, 0);
  if (enc_key(&b, tt_av_map_get(item, t->pk.name)) != 0)
    goto fail;
  if (t->sk.name) {
    b.data[0] |= (char)0x80; /* flag: a sort key follows */
    if (enc_key(&b, tt_av_map_get(item, t->sk.name)) != 0)
      goto fail;
  }
  if (enc_members(&b, item) != 0)
    goto fail;
  if ((it = malloc(sizeof(*it) + b.len)) == NULL)
    goto fail;
  it->blob_len = (uint32_t)b.len;
  it->size = (uint32_t)tt_av_item_size(item);
  memcpy(it->data, b.data, b.len);
fail:
  tt_buf_free(&b);
  return it;
}

void memdb_item_keys(const struct memdb_table *t, const struct memdb_item *it,
                     struct memdb_kv *pk, struct memdb_kv *sk) {
  const unsigned char *p = it->data;
  *pk = dec_key(&p);
  pk->type = (enum tt_av_type)(it->data[0] & 0x7f);
  if (t->sk.name && sk)
    *sk = dec_key(&p);
  else if (sk)
    memset(sk, 0, sizeof(*sk));
}

void memdb_entry_keys(const struct memdb_store *s, const void *e, struct memdb_kv *pk,
                      struct memdb_kv *sk) {
  if (!s->is_index) {
    memdb_item_keys(s->table, e, pk, sk);
    return;
  }
  const unsigned char *p = ((const struct memdb_ientry *)e)->keys;
  *pk = dec_key(&p);
  if (s->has_sk)
    *sk = dec_key(&p);
  else
    memset(sk, 0, sizeof(*sk));
}

const struct memdb_item *memdb_entry_item(const struct memdb_store *s, const void *e) {
  return s->is_index ? ((const struct memdb_ientry *)e)->item : e;
}

/* ---- ordering ---- */

uint32_t memdb_hash(const struct memdb_kv *k) {
  uint32_t h = 2166136261u;
  h = (h ^ (uint32_t)k->type) * 16777619u;
  for (size_t i = 0; i < k->len; i++)
    h = (h ^ (unsigned char)k->p[i]) * 16777619u;
  /* FNV-1a's top bits hardly move with a key's last bytes, and scan
   * segments split the hash range by its top bits: "P#000001".."P#000099"
   * fell into two of eight segments. MurmurHash3's finalizer spreads them. */
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

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
  bool upper; /* pred is entry <= probe, else entry < probe */
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
  struct memdb_kv tpk, tsk;
  memdb_item_keys(s->table, ((const struct memdb_ientry *)e)->item, &tpk, &tsk);
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

struct memdb_part *memdb_store_part(const struct memdb_store *s, const struct memdb_kv *pk,
                                    struct memdb_pos *pos) {
  struct part_probe pp = {s, memdb_hash(pk), pk};
  struct memdb_pos p = memdb_seq_point(&s->parts, part_pred, &pp);
  if (pos)
    *pos = p;
  struct memdb_part *pt = memdb_seq_at(&s->parts, p);
  if (pt == NULL || pt->hash != pp.hash)
    return NULL;
  struct memdb_kv k, sk;
  memdb_entry_keys(s, memdb_seq_at(&pt->entries, memdb_seq_begin(&pt->entries)), &k, &sk);
  return memdb_kv_cmp(&k, pk) == 0 ? pt : NULL;
}

/* Position of the entry with exactly these keys (or where it would go). */
static struct memdb_pos entry_pos(const struct memdb_store *s, const struct memdb_part *pt,
                                  const struct memdb_kv *sk, const struct memdb_kv *tpk,
                                  const struct memdb_kv *tsk) {
  struct probe pr = {s, sk, tpk, tsk, false};
  return memdb_seq_point(&pt->entries, probe_pred, &pr);
}

struct memdb_item *memdb_table_find(const struct memdb_table *t, const struct memdb_kv *pk,
                                    const struct memdb_kv *sk) {
  const struct memdb_store *s = &t->store;
  struct memdb_part *pt = memdb_store_part(s, pk, NULL);
  if (pt == NULL)
    return NULL;
  struct memdb_pos p = entry_pos(s, pt, sk, NULL, NULL);
  struct memdb_item *it = memdb_seq_at(&pt->entries, p);
  if (it == NULL)
    return NULL;
  if (t->sk.name) {
    struct memdb_kv a, b;
    memdb_item_keys(t, it, &a, &b);
    if (memdb_kv_cmp(&b, sk) != 0)
      return NULL;
  }
  return it;
}

/* Inserts an entry whose keys are pk/sk (table keys tpk/tsk for indexes). */
static int store_insert(struct memdb_store *s, void *e, const struct memdb_kv *pk,
                        const struct memdb_kv *sk, const struct memdb_kv *tpk,
                        const struct memdb_kv *tsk) {
  struct memdb_pos pp;
  struct memdb_part *pt = memdb_store_part(s, pk, &pp);
  if (pt == NULL) {
    if ((pt = calloc(1, sizeof(*pt))) == NULL)
      return -1;
    pt->hash = memdb_hash(pk);
    if (memdb_seq_insert(&pt->entries, memdb_seq_begin(&pt->entries), e) != 0) {
      free(pt);
      return -1;
    }
    if (memdb_seq_insert(&s->parts, pp, pt) != 0) {
      memdb_seq_free(&pt->entries);
      free(pt);
      return -1;
    }
    s->count++;
    return 0;
  }
  if (memdb_seq_insert(&pt->entries, entry_pos(s, pt, sk, tpk, tsk), e) != 0)
    return -1;
  s->count++;
  return 0;
}

/* Removes the entry with these keys; returns it (NULL when absent). */
static void *store_remove(struct memdb_store *s, const struct memdb_kv *pk,
                          const struct memdb_kv *sk, const struct memdb_kv *tpk,
                          const struct memdb_kv *tsk) {
  struct memdb_pos pp;
  struct memdb_part *pt = memdb_store_part(s, pk, &pp);
  if (pt == NULL)
    return NULL;
  struct memdb_pos p = entry_pos(s, pt, sk, tpk, tsk);
  void *e = memdb_seq_at(&pt->entries, p);
  if (e == NULL)
    return NULL;
  memdb_seq_remove(&pt->entries, p);
  s->count--;
  if (pt->entries.count == 0) {
    memdb_seq_free(&pt->entries);
    free(pt);
    memdb_seq_remove(&s->parts, pp);
  }
  return e;
}

/* The slot holding the entry with these keys, for replacement in place. */
static void **store_slot(struct memdb_store *s, const struct memdb_kv *pk,
                         const struct memdb_kv *sk, const struct memdb_kv *tpk,
                         const struct memdb_kv *tsk) {
  struct memdb_part *pt = memdb_store_part(s, pk, NULL);
  if (pt == NULL)
    return NULL;
  struct memdb_pos p = entry_pos(s, pt, sk, tpk, tsk);
  if (memdb_seq_is_end(&pt->entries, p))
    return NULL;
  return &pt->entries.c[p.c]->e[p.i];
}

/* Index key values of an item: false when the item is not in the index
 * (sparse index: a key attribute is missing or has another type). */
static bool index_keys(const struct memdb_index *ix, const struct tt_av *item,
                       struct memdb_kv *pk, struct memdb_kv *sk) {
  const struct tt_av *a = tt_av_map_get(item, ix->pk.name);
  if (a == NULL || a->type != ix->pk.type)
    return false;
  *pk = memdb_kv_of(a);
  memset(sk, 0, sizeof(*sk));
  if (ix->sk.name) {
    const struct tt_av *b = tt_av_map_get(item, ix->sk.name);
    if (b == NULL || b->type != ix->sk.type)
      return false;
    *sk = memdb_kv_of(b);
  }
  return true;
}

static struct memdb_ientry *ientry_new(const struct memdb_index *ix, const struct tt_av *item,
                                       struct memdb_item *it) {
  struct tt_buf b;
  struct memdb_ientry *e = NULL;
  tt_buf_init(&b, 0);
  if (enc_key(&b, tt_av_map_get(item, ix->pk.name)) != 0)
    goto fail;
  if (ix->sk.name && enc_key(&b, tt_av_map_get(item, ix->sk.name)) != 0)
    goto fail;
  if ((e = malloc(sizeof(*e) + b.len)) == NULL)
    goto fail;
  e->item = it;
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
  if (item) {
    if ((it = memdb_item_encode(t, item)) == NULL)
      goto fail;
    memdb_item_keys(t, it, &tpk, &tsk);
  } else {
    memdb_item_keys(t, old, &tpk, &tsk);
  }
  const struct memdb_kv *tskp = t->sk.name ? &tsk : NULL;
  if (old && t->nidx && memdb_item_decode(old, &oldav) != 0)
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
    if ((fresh[i] = ientry_new(&t->idx[i], item, it)) == NULL)
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
      void **slot = store_slot(&ix->store, &opk, ix->sk.name ? &osk : NULL, &tpk, tskp);
      if (slot)
        ((struct memdb_ientry *)*slot)->item = it;
    } else {
      /* The old entry sorts by the old index keys; the fresh one (if any)
       * by different keys, so the lookup finds the old one. */
      free(store_remove(&ix->store, &opk, ix->sk.name ? &osk : NULL, &tpk, tskp));
    }
  }
  if (old) {
    if (it) {
      void **slot = store_slot(&t->store, &tpk, tskp, NULL, NULL);
      if (slot)
        *slot = it;
    } else {
      store_remove(&t->store, &tpk, tskp, NULL, NULL);
    }
    t->bytes -= old->size;
    free(old);
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
        store_remove(&ix->store, &npk, ix->sk.name ? &nsk : NULL, &tpk, t->sk.name ? &tsk : NULL);
    }
    if (table_inserted)
      store_remove(&t->store, &tpk, t->sk.name ? &tsk : NULL, NULL, NULL);
  }
  for (size_t i = 0; fresh && i < t->nidx; i++)
    free(fresh[i]);
  free(fresh);
  free(it);
  tt_av_free(&oldav);
  return rc;
}

static void store_free(struct memdb_store *s, bool free_entries) {
  for (uint32_t c = 0; c < s->parts.nc; c++) {
    struct memdb_chunk *ch = s->parts.c[c];
    for (uint32_t i = 0; i < ch->n; i++) {
      struct memdb_part *pt = ch->e[i];
      for (uint32_t d = 0; free_entries && d < pt->entries.nc; d++)
        for (uint32_t j = 0; j < pt->entries.c[d]->n; j++)
          free(pt->entries.c[d]->e[j]);
      memdb_seq_free(&pt->entries);
      free(pt);
    }
  }
  memdb_seq_free(&s->parts);
}

static size_t store_mem(const struct memdb_store *s) {
  size_t n = memdb_seq_bytes(&s->parts);
  for (uint32_t c = 0; c < s->parts.nc; c++) {
    struct memdb_chunk *ch = s->parts.c[c];
    for (uint32_t i = 0; i < ch->n; i++) {
      struct memdb_part *pt = ch->e[i];
      n += sizeof(*pt) + memdb_seq_bytes(&pt->entries);
      for (uint32_t d = 0; d < pt->entries.nc; d++)
        for (uint32_t j = 0; j < pt->entries.c[d]->n; j++) {
          const void *e = pt->entries.c[d]->e[j];
          if (s->is_index) {
            const unsigned char *p = ((const struct memdb_ientry *)e)->keys;
            (void)dec_key(&p);
            if (s->has_sk)
              (void)dec_key(&p);
            n += sizeof(struct memdb_ientry) +
                 (size_t)(p - ((const struct memdb_ientry *)e)->keys);
          } else {
            n += sizeof(struct memdb_item) + ((const struct memdb_item *)e)->blob_len;
          }
        }
    }
  }
  return n;
}

size_t memdb_table_mem(const struct memdb_table *t) {
  size_t n = store_mem(&t->store);
  for (size_t i = 0; i < t->nidx; i++)
    n += store_mem(&t->idx[i].store);
  return n;
}

void memdb_table_free(struct memdb_table *t) {
  if (t == NULL)
    return;
  for (size_t i = 0; i < t->nidx; i++)
    memdb_index_free(&t->idx[i]);
  free(t->idx);
  store_free(&t->store, true);
  free(t->name);
  free(t->pk.name);
  free(t->sk.name);
  free(t->ttl_attr);
  json_decref(t->attr_defs);
  json_decref(t->key_schema);
  free(t);
}

void memdb_index_free(struct memdb_index *ix) {
  store_free(&ix->store, true);
  free(ix->name);
  free(ix->pk.name);
  free(ix->sk.name);
  for (size_t j = 0; j < ix->ninclude; j++)
    free(ix->include[j]);
  free(ix->include);
  json_decref(ix->key_schema);
  json_decref(ix->projection);
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

int memdb_index_backfill(const struct memdb_table *t, struct memdb_index *ix) {
  const struct memdb_store *ts = &t->store;
  for (uint32_t c = 0; c < ts->parts.nc; c++) {
    const struct memdb_chunk *ch = ts->parts.c[c];
    for (uint32_t i = 0; i < ch->n; i++) {
      const struct memdb_part *pt = ch->e[i];
      for (uint32_t d = 0; d < pt->entries.nc; d++)
        for (uint32_t j = 0; j < pt->entries.c[d]->n; j++) {
          struct memdb_item *it = pt->entries.c[d]->e[j];
          struct tt_av item = {.type = TT_AV_NULL};
          struct memdb_kv tpk, tsk, ipk, isk;
          struct memdb_ientry *e = NULL;
          int rc = 0;
          if (memdb_item_decode(it, &item) != 0) {
            rc = -1;
          } else if (index_keys(ix, &item, &ipk, &isk) &&
                     backfill_key_ok(tt_av_map_get(&item, ix->pk.name), true) &&
                     (ix->sk.name == NULL ||
                      backfill_key_ok(tt_av_map_get(&item, ix->sk.name), false))) {
            memdb_item_keys(t, it, &tpk, &tsk);
            e = ientry_new(ix, &item, it);
            if (e == NULL ||
                store_insert(&ix->store, e, &ipk, ix->sk.name ? &isk : NULL, &tpk,
                             t->sk.name ? &tsk : NULL) != 0) {
              free(e);
              rc = -1;
            }
          }
          tt_av_free(&item);
          if (rc != 0) {
            /* All or nothing: UpdateTable fails and the table keeps its
             * indexes as they were. */
            store_free(&ix->store, true);
            memset(&ix->store.parts, 0, sizeof(ix->store.parts));
            ix->store.count = 0;
            return -1;
          }
        }
    }
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

static int put_clone(struct tt_av *out, const struct tt_av *item, const char *name) {
  const struct tt_av *v = name ? tt_av_map_get(item, name) : NULL;
  if (v == NULL || tt_av_map_get(out, name) != NULL)
    return 0;
  struct tt_av c;
  if (tt_av_clone(&c, v) != 0)
    return -1;
  if (tt_av_map_put(out, name, strlen(name), &c) != 0) {
    tt_av_free(&c);
    return -1;
  }
  return 0;
}

int memdb_index_project(const struct memdb_table *t, const struct memdb_index *ix,
                        const struct tt_av *item, struct tt_av *out) {
  if (ix == NULL || ix->proj == MEMDB_PROJ_ALL)
    return tt_av_clone(out, item);
  if (tt_av_map(out, 0) != 0)
    return -1;
  if (put_clone(out, item, t->pk.name) != 0 || put_clone(out, item, t->sk.name) != 0 ||
      put_clone(out, item, ix->pk.name) != 0 || put_clone(out, item, ix->sk.name) != 0)
    goto fail;
  for (size_t i = 0; i < ix->ninclude; i++)
    if (put_clone(out, item, ix->include[i]) != 0)
      goto fail;
  return 0;
fail:
  tt_av_free(out);
  return -1;
}

struct memdb_pos memdb_store_seek(const struct memdb_store *s, const struct memdb_part *pt,
                                  const struct memdb_kv *sk, const struct memdb_kv *tpk,
                                  const struct memdb_kv *tsk, bool after) {
  struct probe pr = {s, sk, tpk, tsk, after};
  return memdb_seq_point(&pt->entries, probe_pred, &pr);
}
