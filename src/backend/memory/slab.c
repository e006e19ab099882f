/* SPDX-License-Identifier: Apache-2.0 */
/* slab.c -- the memory a table keeps between requests (items, index
 * entries, partitions, sequence chunks) in 64 KiB pages of its own, one size
 * class per page. */

/* Why not malloc: a table's objects live for as long as the data, a
 * request's for microseconds. From one heap the two interleave, and the
 * holes a request leaves between items stay resident after it is freed:
 * loading 1,000,000 items of 199 bytes left glibc holding 440 MB of heap for
 * 293 MB in use. Here the data packs into pages nothing else touches, the
 * request heap shrinks back when its memory is freed, and a slot costs its
 * size rounded to 8 bytes (malloc adds an 8-byte header and rounds to 16).
 *
 * Pages come from 1 MiB regions mapped at once (few mappings for a large
 * table) and aligned to the page size, so memdb_slab_free finds a slot's page by
 * masking its address; the header at the start of a page names its class.
 * A page that becomes empty is handed back to the kernel (MADV_DONTNEED,
 * all but the header's first system page) and reused for any class, unless
 * it is its class's last page with room, which is kept to avoid mapping and
 * faulting a page in and out for a table that inserts and deletes one item.
 * Objects larger than MEMDB_SLAB_MAX go to malloc: they are rare and their
 * header is under 1 % of them.
 *
 * Under AddressSanitizer the regions come from malloc (LeakSanitizer then
 * sees the pointers stored in the slots) and free slots are poisoned, so a
 * use after free of an item is still reported. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backend/memory/internal.h"

#if defined(__SANITIZE_ADDRESS__)
#define SLAB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLAB_ASAN 1
#endif
#endif
#ifdef SLAB_ASAN
#include <sanitizer/asan_interface.h>
#define SLAB_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define SLAB_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define SLAB_POISON(p, n) ((void)(p), (void)(n))
#define SLAB_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define SLAB_PAGE ((size_t)64 * 1024)
#define SLAB_REGION_PAGES 16u
#define SLAB_REGION (SLAB_PAGE * SLAB_REGION_PAGES)
#define SLAB_GRAIN 8u
#define SLAB_CLASSES (MEMDB_SLAB_MAX / SLAB_GRAIN)

struct slab_page {
  struct slab_page *prev, *next; /* in its class's pages with room, or the spares */
  void *free;                    /* freed slots, linked through their first word */
  uint32_t used;                 /* live slots */
  uint32_t bump;                 /* offset of the first slot never handed out */
  uint16_t cls;                  /* slot size / SLAB_GRAIN */
  bool listed;                   /* in its class's list of pages with room */
};

#define SLAB_HEADER ((sizeof(struct slab_page) + SLAB_GRAIN - 1) / SLAB_GRAIN * SLAB_GRAIN)

struct memdb_slab {
  struct slab_page *room[SLAB_CLASSES + 1]; /* per class: pages with a free slot */
  struct slab_page *spare;                  /* empty pages, for any class */
  unsigned char **regions;
  size_t nregions, capregions;
  uint32_t region_used; /* pages handed out of the newest region */
  size_t live;          /* bytes of live objects, as allocated */
};

static void list_push(struct slab_page **head, struct slab_page *pg) {
  pg->prev = NULL;
  pg->next = *head;
  if (*head)
    (*head)->prev = pg;
  *head = pg;
}

static void list_unlink(struct slab_page **head, struct slab_page *pg) {
  if (pg->prev)
    pg->prev->next = pg->next;
  else
    *head = pg->next;
  if (pg->next)
    pg->next->prev = pg->prev;
  pg->prev = pg->next = NULL;
}

static unsigned char *region_map(void) {
#ifdef SLAB_ASAN
  void *p = NULL;
  if (posix_memalign(&p, SLAB_PAGE, SLAB_REGION) != 0)
    return NULL;
  SLAB_POISON(p, SLAB_REGION);
  return p;
#else
  /* Map one page more than needed, then unmap what lies outside the
   * aligned region. */
  size_t len = SLAB_REGION + SLAB_PAGE;
  unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return NULL;
  uintptr_t a = ((uintptr_t)p + SLAB_PAGE - 1) & ~(uintptr_t)(SLAB_PAGE - 1);
  size_t head = a - (uintptr_t)p;
  if (head)
    munmap(p, head);
  munmap((unsigned char *)a + SLAB_REGION, SLAB_PAGE - head);
  return (unsigned char *)a;
#endif
}

static void region_unmap(unsigned char *r) {
#ifdef SLAB_ASAN
  SLAB_UNPOISON(r, SLAB_REGION);
  free(r);
#else
  munmap(r, SLAB_REGION);
#endif
}

/* An unused page: a spare one, the next of the newest region, or the first
 * of a new region. NULL when memory ran out. */
static struct slab_page *page_get(struct memdb_slab *s) {
  struct slab_page *pg = s->spare;
  if (pg) {
    list_unlink(&s->spare, pg);
    return pg;
  }
  if (s->nregions == 0 || s->region_used == SLAB_REGION_PAGES) {
    if (s->nregions == s->capregions) {
      size_t cap = s->capregions ? s->capregions * 2 : 8;
      unsigned char **g = realloc(s->regions, cap * sizeof(*g));
      if (g == NULL)
        return NULL;
      s->regions = g;
      s->capregions = cap;
    }
    unsigned char *r = region_map();
    if (r == NULL)
      return NULL;
    s->regions[s->nregions++] = r;
    s->region_used = 0;
  }
  pg = (struct slab_page *)(s->regions[s->nregions - 1] + s->region_used++ * SLAB_PAGE);
  SLAB_UNPOISON(pg, SLAB_HEADER);
  return pg;
}

struct memdb_slab *memdb_slab_new(void) { return calloc(1, sizeof(struct memdb_slab)); }

void memdb_slab_destroy(struct memdb_slab *s) {
  if (s == NULL)
    return;
  for (size_t i = 0; i < s->nregions; i++)
    region_unmap(s->regions[i]);
  free(s->regions);
  free(s);
}

void *memdb_slab_alloc(struct memdb_slab *s, size_t n) {
  if (n > MEMDB_SLAB_MAX) {
    void *p = malloc(n);
    if (p)
      s->live += n;
    return p;
  }
  unsigned cls = n ? (unsigned)((n + SLAB_GRAIN - 1) / SLAB_GRAIN) : 1u;
  uint32_t size = cls * SLAB_GRAIN;
  struct slab_page *pg = s->room[cls];
  if (pg == NULL) {
    if ((pg = page_get(s)) == NULL)
      return NULL;
    pg->free = NULL;
    pg->used = 0;
    pg->bump = (uint32_t)SLAB_HEADER;
    pg->cls = (uint16_t)cls;
    list_push(&s->room[cls], pg);
    pg->listed = true;
  }
  void *p;
  if (pg->free) {
    p = pg->free;
    SLAB_UNPOISON(p, size);
    pg->free = *(void **)p;
  } else {
    p = (unsigned char *)pg + pg->bump;
    SLAB_UNPOISON(p, size);
    pg->bump += size;
  }
  pg->used++;
  if (pg->free == NULL && pg->bump + size > SLAB_PAGE) {
    list_unlink(&s->room[cls], pg); /* full */
    pg->listed = false;
  }
  s->live += size;
  return p;
}

void memdb_slab_free(struct memdb_slab *s, void *p, size_t n) {
  if (p == NULL)
    return;
  if (n > MEMDB_SLAB_MAX) {
    free(p);
    s->live -= n;
    return;
  }
  unsigned cls = n ? (unsigned)((n + SLAB_GRAIN - 1) / SLAB_GRAIN) : 1u;
  uint32_t size = cls * SLAB_GRAIN;
  struct slab_page *pg = (struct slab_page *)((uintptr_t)p & ~(uintptr_t)(SLAB_PAGE - 1));
  assert(pg->cls == cls); /* else freed with another size than it was allocated with */
  *(void **)p = pg->free;
  pg->free = p;
  SLAB_POISON((unsigned char *)p + sizeof(void *), size - sizeof(void *));
  pg->used--;
  s->live -= size;
  if (pg->used == 0) {
    if (pg->listed)
      list_unlink(&s->room[cls], pg);
    pg->listed = false;
    if (s->room[cls] != NULL) {
      /* Back to the kernel (but for the system page holding its header,
       * which links it into the spares). */
      size_t sys = (size_t)sysconf(_SC_PAGESIZE);
      if (sys >= SLAB_HEADER && sys < SLAB_PAGE)
        madvise((unsigned char *)pg + sys, SLAB_PAGE - sys, MADV_DONTNEED);
      list_push(&s->spare, pg);
      return;
    }
    /* The last page with room in its class stays, emptied: its slots start
     * over from the bump offset. */
    pg->free = NULL;
    pg->bump = (uint32_t)SLAB_HEADER;
    SLAB_POISON((unsigned char *)pg + SLAB_HEADER, SLAB_PAGE - SLAB_HEADER);
  }
  if (!pg->listed) {
    list_push(&s->room[cls], pg);
    pg->listed = true;
  }
}

void *memdb_slab_resize(struct memdb_slab *s, void *p, size_t old_n, size_t n) {
  void *q = memdb_slab_alloc(s, n);
  if (q == NULL)
    return NULL;
  if (p) {
    memcpy(q, p, old_n < n ? old_n : n);
    memdb_slab_free(s, p, old_n);
  }
  return q;
}

size_t memdb_slab_live(const struct memdb_slab *s) { return s ? s->live : 0; }
