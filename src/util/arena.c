/* SPDX-License-Identifier: Apache-2.0 */
/* arena.c -- bump allocator whose memory is released all at once. */
#include "util/arena.h"

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

struct tt_arena_chunk {
  struct tt_arena_chunk *next;
  alignas(max_align_t) char data[];
};

#define CHUNK_DEFAULT 4096

void tt_arena_init(struct tt_arena *a) {
  a->chunks = NULL;
  a->cur = NULL;
  a->left = 0;
}

void *tt_arena_alloc(struct tt_arena *a, size_t n) {
  const size_t align = alignof(max_align_t);
  n = (n + align - 1) & ~(align - 1);
  if (n == 0)
    n = align;
  if (n > a->left) {
    size_t size = n > CHUNK_DEFAULT ? n : CHUNK_DEFAULT;
    struct tt_arena_chunk *c = malloc(sizeof(*c) + size);
    if (c == NULL)
      return NULL;
    c->next = a->chunks;
    a->chunks = c;
    a->cur = c->data;
    a->left = size;
  }
  void *p = a->cur;
  a->cur += n;
  a->left -= n;
  memset(p, 0, n);
  return p;
}

char *tt_arena_strndup(struct tt_arena *a, const char *s, size_t n) {
  char *p = tt_arena_alloc(a, n + 1);
  if (p) {
    memcpy(p, s, n);
    p[n] = '\0';
  }
  return p;
}

void tt_arena_free(struct tt_arena *a) {
  struct tt_arena_chunk *c = a->chunks;
  while (c) {
    struct tt_arena_chunk *next = c->next;
    free(c);
    c = next;
  }
  tt_arena_init(a);
}
