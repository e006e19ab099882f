/* SPDX-License-Identifier: Apache-2.0 */
/* names.c -- a table's dictionary of top-level attribute names, so that a
 * stored item holds a small number where it would repeat "createdAt". */

/* Attribute names are mostly a schema (every item of a table has the same
 * dozen), and spelled out they were a fifth of an encoded item. The
 * dictionary only grows (ids are in stored items) and is bounded: names
 * longer than MEMDB_NAMES_LEN_MAX and names met after MEMDB_NAMES_MAX others
 * stay spelled out in the item, so a table whose attribute names are data
 * (one per item) costs at most a bounded dictionary. */
#include <stdlib.h>
#include <string.h>

#include "backend/memory/internal.h"
#include "util/hash.h"

#define MEMDB_NAMES_MAX 4096u
#define MEMDB_NAMES_LEN_MAX 64u

/* Doubles the open-addressing table (kept at most half full). */
static int names_rehash(struct memdb_names *d) {
  uint32_t nslots = d->nslots ? d->nslots * 2 : 16;
  uint32_t *slots = calloc(nslots, sizeof(*slots));
  if (slots == NULL)
    return -1;
  for (uint32_t id = 0; id < d->n; id++) {
    uint32_t i = (uint32_t)tt_fnv1a(d->name[id].s, d->name[id].len) & (nslots - 1);
    while (slots[i])
      i = (i + 1) & (nslots - 1);
    slots[i] = id + 1;
  }
  free(d->slots);
  d->slots = slots;
  d->nslots = nslots;
  return 0;
}

int64_t memdb_names_id(struct memdb_names *d, const char *name, size_t len) {
  if (len > MEMDB_NAMES_LEN_MAX)
    return -1;
  uint32_t h = (uint32_t)tt_fnv1a(name, len), i = 0;
  if (d->nslots) {
    for (i = h & (d->nslots - 1); d->slots[i]; i = (i + 1) & (d->nslots - 1)) {
      uint32_t id = d->slots[i] - 1;
      if (d->name[id].len == len && memcmp(d->name[id].s, name, len) == 0)
        return id;
    }
  }
  if (d->n >= MEMDB_NAMES_MAX)
    return -1;
  /* Add it; any failure leaves the dictionary as it was (the name is then
   * spelled out in the item). */
  if (d->n == d->cap) {
    uint32_t cap = d->cap ? d->cap * 2 : 8;
    struct memdb_name *nm = realloc(d->name, cap * sizeof(*nm));
    if (nm == NULL)
      return -1;
    d->name = nm;
    d->cap = cap;
  }
  if ((d->n + 1) * 2 > d->nslots) {
    if (names_rehash(d) != 0)
      return -1;
    for (i = h & (d->nslots - 1); d->slots[i]; i = (i + 1) & (d->nslots - 1))
      ;
  }
  char *copy = malloc(len + 1);
  if (copy == NULL)
    return -1;
  memcpy(copy, name, len);
  copy[len] = '\0';
  d->name[d->n] = (struct memdb_name){copy, (uint32_t)len};
  d->slots[i] = d->n + 1;
  return d->n++;
}

const char *memdb_names_get(const struct memdb_names *d, uint32_t id, size_t *len) {
  *len = d->name[id].len;
  return d->name[id].s;
}

void memdb_names_free(struct memdb_names *d) {
  for (uint32_t id = 0; id < d->n; id++)
    free(d->name[id].s);
  free(d->name);
  free(d->slots);
  memset(d, 0, sizeof(*d));
}
