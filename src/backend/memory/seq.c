/* SPDX-License-Identifier: Apache-2.0 */
/* seq.c -- sorted pointer sequences in bounded chunks (a one-level B+ tree):
 * O(log n) search, inserts and removals that move at most one chunk (and a
 * neighbour's slots when spilling into it). Memory comes from the table's
 * slab; a sequence of one entry allocates nothing. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "backend/memory/internal.h"

/* Entries in chunk c (< nc), whatever the shape. */
static uint32_t chunk_len(const struct memdb_seq *s, uint32_t c) {
  return s->capc ? s->u.c[c].c->n : 1;
}

/* The keys of a keyed chunk's entries. */
static uint32_t *keys(const struct memdb_chunk *ch) { return (uint32_t *)(ch->e + ch->cap); }

static size_t chunk_size(uint32_t cap, bool keyed) {
  return sizeof(struct memdb_chunk) + cap * (sizeof(void *) + (keyed ? sizeof(uint32_t) : 0));
}

static void chunk_free(struct memdb_slab *a, struct memdb_chunk *ch) {
  memdb_slab_free(a, ch, chunk_size(ch->cap, ch->keyed));
}

/* Chunk c's last entry may have changed: its fence follows. */
static void fence(struct memdb_seq *s, uint32_t c) {
  const struct memdb_chunk *ch = s->u.c[c].c;
  s->u.c[c].last = ch->keyed ? keys(ch)[ch->n - 1] : 0;
}

struct memdb_pos memdb_seq_begin(const struct memdb_seq *s) {
  (void)s;
  return (struct memdb_pos){0, 0};
}

struct memdb_pos memdb_seq_end(const struct memdb_seq *s) {
  return (struct memdb_pos){s->nc, 0};
}

bool memdb_seq_is_end(const struct memdb_seq *s, struct memdb_pos p) {
  return p.c >= s->nc;
}

int memdb_pos_cmp(struct memdb_pos a, struct memdb_pos b) {
  uint64_t x = (uint64_t)a.c << 32 | a.i, y = (uint64_t)b.c << 32 | b.i;
  return (x > y) - (x < y);
}

/* Whether an entry lies before the point: its key is below `key`, or equal
 * and pred holds (keyed), or pred holds (not keyed). */
static inline bool before(bool keyed, uint32_t k, uint32_t key, const void *e,
                          memdb_pred_fn pred, const void *ctx) {
  return keyed ? k < key || (k == key && pred(e, ctx)) : pred(e, ctx);
}

/* The first entry of a chunked sequence not before the point; inlined into
 * both callers with `keyed` a constant (each a search as tight as if
 * written alone). Keyed, the search reads the dense
 * fences and keys: in a table of a million partitions a few lines of one
 * chunk's keys and no partition, where comparing entries cost a cache miss
 * or two at each of its ~20 steps. */
__attribute__((always_inline)) static inline struct memdb_pos
point(const struct memdb_seq *s, bool keyed, uint32_t key, memdb_pred_fn pred, const void *ctx) {
  /* First chunk whose last entry is not before: the point lies in it. */
  uint32_t lo = 0, hi = s->nc;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    const struct memdb_fence *f = &s->u.c[mid];
    if (before(keyed, f->last, key, f->c->e[f->c->n - 1], pred, ctx))
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == s->nc)
    return memdb_seq_end(s);
  const struct memdb_chunk *ch = s->u.c[lo].c;
  assert(!keyed || ch->keyed); /* a sequence inserted into with a key function */
  const uint32_t *k = keyed ? keys(ch) : NULL;
  uint32_t a = 0, b = ch->n;
  while (a < b) {
    uint32_t mid = a + (b - a) / 2;
    if (before(keyed, keyed ? k[mid] : 0, key, ch->e[mid], pred, ctx))
      a = mid + 1;
    else
      b = mid;
  }
  return (struct memdb_pos){lo, a}; /* a < n: the last entry is not before */
}

struct memdb_pos memdb_seq_point(const struct memdb_seq *s, memdb_pred_fn pred, const void *ctx) {
  if (s->capc == 0)
    return s->nc && !pred(s->u.one, ctx) ? memdb_seq_begin(s) : memdb_seq_end(s);
  return point(s, false, 0, pred, ctx);
}

struct memdb_pos memdb_seq_point_key(const struct memdb_seq *s, uint32_t key, memdb_pred_fn pred,
                                     const void *ctx) {
  if (s->capc == 0)
    return memdb_seq_point(s, pred, ctx);
  return point(s, true, key, pred, ctx);
}

void *memdb_seq_at(const struct memdb_seq *s, struct memdb_pos p) {
  if (p.c >= s->nc)
    return NULL;
  return s->capc ? s->u.c[p.c].c->e[p.i] : s->u.one;
}

void **memdb_seq_slot(struct memdb_seq *s, struct memdb_pos p) {
  return s->capc ? &s->u.c[p.c].c->e[p.i] : &s->u.one;
}

void memdb_seq_next(const struct memdb_seq *s, struct memdb_pos *p) {
  if (p->c >= s->nc)
    return;
  if (++p->i >= chunk_len(s, p->c)) {
    p->c++;
    p->i = 0;
  }
}

bool memdb_seq_prev(const struct memdb_seq *s, struct memdb_pos *p) {
  if (p->c < s->nc && p->i > 0) {
    p->i--;
    return true;
  }
  uint32_t c = p->c < s->nc ? p->c : s->nc; /* the end: after the last chunk */
  if (c == 0)
    return false;
  p->c = c - 1; /* the last entry of the chunk before */
  p->i = chunk_len(s, p->c) - 1;
  return true;
}

static struct memdb_chunk *chunk_new(struct memdb_slab *a, uint32_t cap, bool keyed) {
  struct memdb_chunk *ch = memdb_slab_alloc(a, chunk_size(cap, keyed));
  if (ch == NULL)
    return NULL;
  ch->n = 0;
  ch->cap = (uint16_t)cap;
  ch->keyed = keyed;
  return ch;
}

/* Chunk ch with another capacity (>= its n), or NULL (ch unchanged). */
static struct memdb_chunk *chunk_resize(struct memdb_slab *a, struct memdb_chunk *ch,
                                        uint32_t cap) {
  struct memdb_chunk *g = chunk_new(a, cap, ch->keyed);
  if (g == NULL)
    return NULL;
  g->n = ch->n;
  memcpy(g->e, ch->e, ch->n * sizeof(void *));
  if (ch->keyed)
    memcpy(keys(g), keys(ch), ch->n * sizeof(uint32_t));
  chunk_free(a, ch);
  return g;
}

/* Room for one more entry in chunk c (growing it up to the maximum); -1
 * when it is full or memory ran out (unchanged). */
static int chunk_room(struct memdb_slab *a, struct memdb_seq *s, uint32_t c) {
  struct memdb_chunk *ch = s->u.c[c].c;
  if (ch->n < ch->cap)
    return 0;
  if (ch->n >= MEMDB_CHUNK_MAX)
    return -1;
  uint32_t cap = ch->cap * 2u > MEMDB_CHUNK_MAX ? MEMDB_CHUNK_MAX : ch->cap * 2u;
  struct memdb_chunk *g = chunk_resize(a, ch, cap);
  if (g == NULL)
    return -1;
  s->u.c[c].c = g;
  return 0;
}

/* Makes room for one more fence in the chunk array. */
static int chunks_reserve(struct memdb_slab *a, struct memdb_seq *s) {
  if (s->nc < s->capc)
    return 0;
  uint32_t cap = s->capc * 2;
  struct memdb_fence *c = memdb_slab_resize(a, s->u.c, s->capc * sizeof(*c), cap * sizeof(*c));
  if (c == NULL)
    return -1;
  s->u.c = c;
  s->capc = cap;
  return 0;
}

/* Inserts chunk ch (already filled) at index c of the chunk array, which
 * has room. */
static void chunk_put(struct memdb_seq *s, uint32_t c, struct memdb_chunk *ch) {
  memmove(s->u.c + c + 1, s->u.c + c, (s->nc - c) * sizeof(*s->u.c));
  s->u.c[c].c = ch;
  s->nc++;
  fence(s, c);
}

/* Entry e (key k) into slot i of a chunk with room. */
static void chunk_insert_at(struct memdb_chunk *ch, uint32_t i, void *e, uint32_t k) {
  memmove(ch->e + i + 1, ch->e + i, (ch->n - i) * sizeof(void *));
  ch->e[i] = e;
  if (ch->keyed) {
    memmove(keys(ch) + i + 1, keys(ch) + i, (ch->n - i) * sizeof(uint32_t));
    keys(ch)[i] = k;
  }
  ch->n++;
}

/* Removes slot i of a chunk. */
static void chunk_remove_at(struct memdb_chunk *ch, uint32_t i) {
  memmove(ch->e + i, ch->e + i + 1, (ch->n - i - 1) * sizeof(void *));
  if (ch->keyed)
    memmove(keys(ch) + i, keys(ch) + i + 1, (ch->n - i - 1) * sizeof(uint32_t));
  ch->n--;
}

/* From one entry held in place to one chunk of two. */
static int seq_unfold(struct memdb_slab *a, struct memdb_seq *s, memdb_key_fn key) {
  struct memdb_fence *c = memdb_slab_alloc(a, sizeof(*c));
  struct memdb_chunk *ch = chunk_new(a, 2, key != NULL);
  if (c == NULL || ch == NULL) {
    memdb_slab_free(a, c, sizeof(*c));
    if (ch)
      chunk_free(a, ch);
    return -1;
  }
  chunk_insert_at(ch, 0, s->u.one, key ? key(s->u.one) : 0);
  c[0].c = ch;
  s->u.c = c;
  s->capc = 1;
  fence(s, 0);
  return 0;
}

/* A full chunk c (MEMDB_CHUNK_MAX entries) must take e (key k) at slot i.
 * Spill to a neighbour with room when there is one, which keeps chunks
 * nearly full under random inserts; start a new chunk when appending at
 * either end of the sequence (sequential loads then fill every chunk); else
 * split. */
static int insert_full(struct memdb_slab *a, struct memdb_seq *s, uint32_t c, uint32_t i,
                       void *e, uint32_t k) {
  struct memdb_chunk *ch = s->u.c[c].c;
  bool last = c + 1 == s->nc;
  if ((i == ch->n && last) || (i == 0 && c == 0)) {
    struct memdb_chunk *fresh = NULL;
    if (chunks_reserve(a, s) != 0 || (fresh = chunk_new(a, 8, ch->keyed)) == NULL)
      return -1;
    chunk_insert_at(fresh, 0, e, k);
    chunk_put(s, i == 0 ? 0 : s->nc, fresh);
    return 0;
  }
  if (c > 0 && chunk_room(a, s, c - 1) == 0) {
    struct memdb_chunk *left = s->u.c[c - 1].c;
    if (i == 0) {
      chunk_insert_at(left, left->n, e, k);
    } else {
      /* ch's first entry moves left; e goes before what was slot i. */
      chunk_insert_at(left, left->n, ch->e[0], ch->keyed ? keys(ch)[0] : 0);
      chunk_remove_at(ch, 0);
      chunk_insert_at(ch, i - 1, e, k);
      if (i == ch->n)
        fence(s, c); /* e is the last entry now */
    }
    fence(s, c - 1);
    return 0;
  }
  if (!last && chunk_room(a, s, c + 1) == 0) {
    struct memdb_chunk *right = s->u.c[c + 1].c;
    if (i == ch->n) {
      chunk_insert_at(right, 0, e, k);
      return 0;
    }
    uint32_t kn = ch->keyed ? keys(ch)[ch->n - 1] : 0;
    chunk_insert_at(right, 0, ch->e[ch->n - 1], kn);
    ch->n--;
    chunk_insert_at(ch, i, e, k);
    fence(s, c);
    return 0;
  }
  /* Both neighbours full: split in halves, then insert into the half that
   * holds i. */
  struct memdb_chunk *right = NULL;
  if (chunks_reserve(a, s) != 0 || (right = chunk_new(a, MEMDB_CHUNK_MAX, ch->keyed)) == NULL)
    return -1;
  uint32_t half = ch->n / 2;
  right->n = ch->n - half;
  memcpy(right->e, ch->e + half, right->n * sizeof(void *));
  if (ch->keyed)
    memcpy(keys(right), keys(ch) + half, right->n * sizeof(uint32_t));
  ch->n = half;
  if (i > half)
    chunk_insert_at(right, i - half, e, k);
  else
    chunk_insert_at(ch, i, e, k);
  chunk_put(s, c + 1, right);
  fence(s, c);
  return 0;
}

int memdb_seq_insert(struct memdb_slab *a, struct memdb_seq *s, struct memdb_pos p, void *e,
                     memdb_key_fn key) {
  if (s->nc == 0) {
    s->u.one = e;
    s->nc = 1;
    s->capc = 0;
    return 0;
  }
  if (s->capc == 0 && seq_unfold(a, s, key) != 0)
    return -1;
  uint32_t k = key ? key(e) : 0;
  if (p.c >= s->nc) { /* the end: append to the last chunk */
    p.c = s->nc - 1;
    p.i = s->u.c[p.c].c->n;
  }
  if (chunk_room(a, s, p.c) != 0) {
    if (s->u.c[p.c].c->n < MEMDB_CHUNK_MAX)
      return -1; /* out of memory */
    return insert_full(a, s, p.c, p.i, e, k);
  }
  struct memdb_chunk *ch = s->u.c[p.c].c;
  chunk_insert_at(ch, p.i, e, k);
  if (p.i + 1 == ch->n)
    fence(s, p.c);
  return 0;
}

/* Back from one chunk holding one entry to the entry held in place. */
static void seq_fold(struct memdb_slab *a, struct memdb_seq *s) {
  struct memdb_chunk *ch = s->u.c[0].c;
  void *e = ch->e[0];
  chunk_free(a, ch);
  memdb_slab_free(a, s->u.c, s->capc * sizeof(*s->u.c));
  s->u.one = e;
  s->capc = 0;
}

void memdb_seq_remove(struct memdb_slab *a, struct memdb_seq *s, struct memdb_pos p) {
  if (s->capc == 0) {
    s->u.one = NULL;
    s->nc = 0;
    return;
  }
  struct memdb_chunk *ch = s->u.c[p.c].c;
  chunk_remove_at(ch, p.i);
  if (ch->n == 0) {
    chunk_free(a, ch);
    memmove(s->u.c + p.c, s->u.c + p.c + 1, (s->nc - p.c - 1) * sizeof(*s->u.c));
    s->nc--;
  } else {
    if (p.i == ch->n)
      fence(s, p.c); /* the last entry went */
    if (ch->cap > 8 && ch->n <= ch->cap / 4u) {
      /* Give memory back; failure to shrink is harmless. */
      struct memdb_chunk *g = chunk_resize(a, ch, ch->cap / 2u);
      if (g != NULL)
        s->u.c[p.c].c = g;
    }
  }
  if (s->nc == 1 && s->u.c[0].c->n == 1)
    seq_fold(a, s);
  else if (s->nc == 0)
    memdb_seq_free(a, s);
}

void memdb_seq_free(struct memdb_slab *a, struct memdb_seq *s) {
  if (s->capc) {
    for (uint32_t i = 0; i < s->nc; i++)
      chunk_free(a, s->u.c[i].c);
    memdb_slab_free(a, s->u.c, s->capc * sizeof(*s->u.c));
  }
  memset(s, 0, sizeof(*s));
}
