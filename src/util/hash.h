/* SPDX-License-Identifier: Apache-2.0 */
/* hash.h -- 64-bit FNV-1a, the hash of the daemon's in-memory tables
 * (metric series, batch keys, transaction client tokens, the memory
 * backend's attribute-name dictionaries). Nothing stores its values: they
 * may change between versions. */
#ifndef TT_UTIL_HASH_H
#define TT_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

#define TT_FNV1A_BASIS 14695981039346656037ULL
#define TT_FNV1A_PRIME 1099511628211ULL

/* The hash of the n bytes at p. */
static inline uint64_t tt_fnv1a(const void *p, size_t n) {
  const unsigned char *s = p;
  uint64_t h = TT_FNV1A_BASIS;
  for (size_t i = 0; i < n; i++)
    h = (h ^ s[i]) * TT_FNV1A_PRIME;
  return h;
}

#endif
