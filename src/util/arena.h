/* SPDX-License-Identifier: Apache-2.0 */
/* arena.h -- bump allocator whose memory is released all at once. */
#ifndef TT_UTIL_ARENA_H
#define TT_UTIL_ARENA_H

#include <stddef.h>

struct tt_arena_chunk;

/* Owns every block handed out by tt_arena_alloc until tt_arena_free. A
 * request context embeds one, so nothing a request allocates can outlive
 * it. A zeroed struct is an empty arena. */
struct tt_arena {
  struct tt_arena_chunk *chunks;
  char *cur;
  size_t left;
  size_t grown; /* bytes of chunks taken so far: the next chunk doubles it */
};

/* Where an arena stood, to give back what was allocated after it. */
struct tt_arena_mark {
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

/* Returns n bytes with no alignment and not zeroed (text), or NULL when
 * out of memory. */
char *tt_arena_bytes(struct tt_arena *a, size_t n);

/* The arena's current position. */
struct tt_arena_mark tt_arena_mark(const struct tt_arena *a);

/* Gives back every block allocated since `m` (chunks taken since are
 * freed); blocks from before stay valid. */
void tt_arena_release(struct tt_arena *a, struct tt_arena_mark m);

/* Releases every block but keeps the arena's first chunk when it has the
 * first chunk's size (4 KiB), for the arena's next use: a request context
 * kept for reuse keeps its page instead of taking it from malloc again.
 * tt_arena_free releases that chunk too. */
void tt_arena_reset(struct tt_arena *a);

/* Releases every block. The arena may be reused afterwards. */
void tt_arena_free(struct tt_arena *a);

#endif
