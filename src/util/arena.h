/* SPDX-License-Identifier: Apache-2.0 */
/* arena.h -- bump allocator whose memory is released all at once. */
#ifndef TT_UTIL_ARENA_H
#define TT_UTIL_ARENA_H

#include <stddef.h>

struct tt_arena_chunk;

/* Owns every block handed out by tt_arena_alloc until tt_arena_free. A
 * request context embeds one, so nothing a request allocates can outlive
 * it. */
struct tt_arena {
  struct tt_arena_chunk *chunks;
  char *cur;
  size_t left;
};

/* Initializes an empty arena. */
void tt_arena_init(struct tt_arena *a);

/* Returns n bytes aligned for any type, zeroed, or NULL when out of memory.
 * The arena owns them. */
void *tt_arena_alloc(struct tt_arena *a, size_t n);

/* Copies n bytes plus a terminating NUL into the arena; NULL on OOM. */
char *tt_arena_strndup(struct tt_arena *a, const char *s, size_t n);

/* Releases every block. The arena may be reused afterwards. */
void tt_arena_free(struct tt_arena *a);

#endif
