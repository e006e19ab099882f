/* SPDX-License-Identifier: Apache-2.0 */
/* seq.c -- sorted pointer sequences in bounded chunks (a one-level B+ tree):
 * O(log n) search, inserts and removals that move at most one chunk. */
#include <stdlib.h>
#include <string.h>

#include "backend/memory/internal.h"

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
  if (a.c != b.c)
    return a.c < b.c ? -1 : 1;
  if (a.i != b.i)
    return a.i < b.i ? -1 : 1;
  return 0;
}

struct memdb_pos memdb_seq_point(const struct memdb_seq *s, memdb_pred_fn pred, const void *ctx) {
  /* First chunk whose last entry fails pred: the point lies in it. */
  uint32_t lo = 0, hi = s->nc;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    const struct memdb_chunk *ch = s->c[mid];
    if (pred(ch->e[ch->n - 1], ctx))
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == s->nc)
    return memdb_seq_end(s);
  const struct memdb_chunk *ch = s->c[lo];
  uint32_t a = 0, b = ch->n;
  while (a < b) {
    uint32_t mid = a + (b - a) / 2;
    if (pred(ch->e[mid], ctx))
      a = mid + 1;
    else
      b = mid;
  }
  return (struct memdb_pos){lo, a}; /* a < n: the last entry fails pred */
}

void *memdb_seq_at(const struct memdb_seq *s, struct memdb_pos p) {
  if (p.c >= s->nc)
    return NULL;
  return s->c[p.c]->e[p.i];
}

void memdb_seq_next(const struct memdb_seq *s, struct memdb_pos *p) {
  if (p->c >= s->nc)
    return;
  if (++p->i >= s->c[p->c]->n) {
    p->c++;
    p->i = 0;
  }
}

bool memdb_seq_prev(const struct memdb_seq *s, struct memdb_pos *p) {
  if (p->c >= s->nc) {
    if (s->nc == 0)
      return false;
    p->c = s->nc - 1;
    p->i = s->c[p->c]->n - 1;
    return true;
  }
  if (p->i > 0) {
    p->i--;
    return true;
  }
  if (p->c == 0)
    return false;
  p->c--;
  p->i = s->c[p->c]->n - 1;
  return true;
}

static struct memdb_chunk *chunk_new(uint32_t cap) {
  struct memdb_chunk *ch = malloc(sizeof(*ch) + cap * sizeof(void *));
  if (ch == NULL)
    return NULL;
  ch->n = 0;
  ch->cap = cap;
  return ch;
}

/* Makes room for one more chunk pointer in s->c. */
static int chunks_reserve(struct memdb_seq *s) {
  if (s->nc < s->capc)
    return 0;
  uint32_t cap = s->capc ? s->capc * 2 : 1;
  struct memdb_chunk **c = realloc(s->c, cap * sizeof(*c));
  if (c == NULL)
    return -1;
  s->c = c;
  s->capc = cap;
  return 0;
}

int memdb_seq_insert(struct memdb_seq *s, struct memdb_pos p, void *e) {
  if (s->nc == 0) {
    /* Most partitions hold one item: start with a one-slot chunk. */
    if (chunks_reserve(s) != 0)
      return -1;
    struct memdb_chunk *ch = chunk_new(1);
    if (ch == NULL)
      return -1;
    ch->e[0] = e;
    ch->n = 1;
    s->c[0] = ch;
    s->nc = 1;
    s->count = 1;
    return 0;
  }
  if (p.c >= s->nc) { /* the end: append to the last chunk */
    p.c = s->nc - 1;
    p.i = s->c[p.c]->n;
  }
  struct memdb_chunk *ch = s->c[p.c];
  if (ch->n == ch->cap && ch->cap < MEMDB_CHUNK_MAX) {
    uint32_t cap = ch->cap * 2 > MEMDB_CHUNK_MAX ? MEMDB_CHUNK_MAX : ch->cap * 2;
    struct memdb_chunk *g = realloc(ch, sizeof(*ch) + cap * sizeof(void *));
    if (g == NULL)
      return -1;
    g->cap = cap;
    s->c[p.c] = ch = g;
  }
  if (ch->n == ch->cap) {
    /* Full: split in halves, then insert into the half that holds p. */
    if (chunks_reserve(s) != 0)
      return -1;
    struct memdb_chunk *right = chunk_new(MEMDB_CHUNK_MAX);
    if (right == NULL)
      return -1;
    uint32_t half = ch->n / 2;
    right->n = ch->n - half;
    memcpy(right->e, ch->e + half, right->n * sizeof(void *));
    ch->n = half;
    memmove(s->c + p.c + 2, s->c + p.c + 1, (s->nc - p.c - 1) * sizeof(*s->c));
    s->c[p.c + 1] = right;
    s->nc++;
    if (p.i > half) {
      p.c++;
      p.i -= half;
      ch = right;
    }
  }
  memmove(ch->e + p.i + 1, ch->e + p.i, (ch->n - p.i) * sizeof(void *));
  ch->e[p.i] = e;
  ch->n++;
  s->count++;
  return 0;
}

void memdb_seq_remove(struct memdb_seq *s, struct memdb_pos p) {
  struct memdb_chunk *ch = s->c[p.c];
  memmove(ch->e + p.i, ch->e + p.i + 1, (ch->n - p.i - 1) * sizeof(void *));
  ch->n--;
  s->count--;
  if (ch->n == 0) {
    free(ch);
    memmove(s->c + p.c, s->c + p.c + 1, (s->nc - p.c - 1) * sizeof(*s->c));
    s->nc--;
    if (s->nc == 0) {
      free(s->c);
      s->c = NULL;
      s->capc = 0;
    }
    return;
  }
  if (ch->cap > 4 && ch->n <= ch->cap / 4) {
    /* Give memory back to the allocator; failure to shrink is harmless. */
    struct memdb_chunk *g = realloc(ch, sizeof(*ch) + (ch->cap / 2) * sizeof(void *));
    if (g != NULL) {
      g->cap /= 2;
      s->c[p.c] = g;
    }
  }
}

void memdb_seq_free(struct memdb_seq *s) {
  for (uint32_t i = 0; i < s->nc; i++)
    free(s->c[i]);
  free(s->c);
  memset(s, 0, sizeof(*s));
}

size_t memdb_seq_bytes(const struct memdb_seq *s) {
  size_t n = s->capc * sizeof(*s->c);
  for (uint32_t i = 0; i < s->nc; i++)
    n += sizeof(struct memdb_chunk) + s->c[i]->cap * sizeof(void *);
  return n;
}
