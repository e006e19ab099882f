/* SPDX-License-Identifier: Apache-2.0 */
/* arena.c -- bump allocator whose memory is released all at once. */
#include "util/arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct tt_arena_chunk {
  struct tt_arena_chunk *next;
  size_t size;
  alignas(max_align_t) char data[];
};

/* Chunks start at 4 KiB and double with what the arena took so far, up to
 * 1 MiB: a request's few small blocks stay in one page, and a page of
 * thousands of decoded items costs a handful of mallocs, not thousands. */
#define CHUNK_FIRST 4096
#define CHUNK_MAX (1u << 20)

void tt_arena_init(struct tt_arena *a) { memset(a, 0, sizeof(*a)); }

/* Starts a new chunk of at least n bytes. Returns 0 or -1 (out of memory). */
static int new_chunk(struct tt_arena *a, size_t n) {
  size_t size = a->grown < CHUNK_FIRST ? CHUNK_FIRST : a->grown;
  if (size > CHUNK_MAX)
    size = CHUNK_MAX;
  if (size < n)
    size = n;
  struct tt_arena_chunk *c = malloc(sizeof(*c) + size);
  if (c == NULL)
    return -1;
  c->next = a->chunks;
  c->size = size;
  a->chunks = c;
  a->cur = c->data;
  a->left = size;
  a->grown += size;
  return 0;
}

void *tt_arena_alloc(struct tt_arena *a, size_t n) {
  const size_t align = alignof(max_align_t);
  /* Text blocks (tt_arena_bytes) may have left a->cur unaligned. */
  size_t pad = (size_t)(-(uintptr_t)a->cur & (align - 1));
  n = (n + align - 1) & ~(align - 1);
  if (n == 0)
    n = align;
  if (pad + n > a->left) {
    if (new_chunk(a, n) != 0)
      return NULL;
    pad = 0;
  }
  void *p = a->cur + pad;
  a->cur += pad + n;
  a->left -= pad + n;
  memset(p, 0, n);
  return p;
}

char *tt_arena_bytes(struct tt_arena *a, size_t n) {
  if ((a->cur == NULL || n > a->left) && new_chunk(a, n) != 0)
    return NULL;
  char *p = a->cur;
  a->cur += n;
  a->left -= n;
  return p;
}

struct tt_arena_mark tt_arena_mark(const struct tt_arena *a) {
  struct tt_arena_mark m = {a->chunks, a->cur, a->left};
  return m;
}

void tt_arena_release(struct tt_arena *a, struct tt_arena_mark m) {
  while (a->chunks != m.chunks) {
    struct tt_arena_chunk *next = a->chunks->next;
    free(a->chunks);
    a->chunks = next;
  }
  a->cur = m.cur;
  a->left = m.left;
}

char *tt_arena_strndup(struct tt_arena *a, const char *s, size_t n) {
  char *p = tt_arena_bytes(a, n + 1);
  if (p) {
    memcpy(p, s, n);
    p[n] = '\0';
  }
  return p;
}

void tt_arena_reset(struct tt_arena *a) {
  struct tt_arena_chunk *c = a->chunks;
  while (c && c->next) {
    struct tt_arena_chunk *next = c->next;
    free(c);
    c = next;
  }
  if (c && c->size != CHUNK_FIRST) {
    free(c);
    c = NULL;
  }
  tt_arena_init(a);
  if (c) {
    a->chunks = c;
    a->cur = c->data;
    a->left = a->grown = CHUNK_FIRST;
  }
}

void tt_arena_free(struct tt_arena *a) {
  tt_arena_release(a, (struct tt_arena_mark){0}); /* back to no chunk at all */
  tt_arena_init(a);
}
