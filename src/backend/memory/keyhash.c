/* SPDX-License-Identifier: Apache-2.0 */
/* keyhash.c -- DynamoDB's partition hash: the order of a Scan and the
 * parallel-scan segment of a partition key, and the order of index entries
 * whose index keys are equal. The hash is the MD5 digest of "Outliers"
 * followed by the key's bytes: an S value's UTF-8 bytes, a B value's raw
 * bytes, an N value in DynamoDB's internal number form (a base-100
 * exponent byte, then base-100 digits, complemented for negative numbers).
 * DynamoDB's answers order partitions by this digest (dynalite reproduces
 * its recorded orders the same way); a store keeps its first 32 bits. */
#include <string.h>

#include "backend/memory/internal.h"

/* ---- MD5 (RFC 1321) ---- */

#define MD5_F(x, y, z) ((z) ^ ((x) & ((y) ^ (z))))
#define MD5_G(x, y, z) ((y) ^ ((z) & ((x) ^ (y))))
#define MD5_H(x, y, z) ((x) ^ (y) ^ (z))
#define MD5_I(x, y, z) ((y) ^ ((x) | ~(z)))

/* The additive constant of each of MD5's 64 steps; the rotations of the
 * four steps of each round. */
static const uint32_t md5_k[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};
static const unsigned char md5_r[16] = {7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21};
/* Step i of a round adds message word (g[0] * i + g[1]) % 16. */
static const unsigned char md5_g[4][2] = {{1, 0}, {5, 1}, {3, 5}, {7, 0}};

static void md5_block(uint32_t h[4], const unsigned char *p) {
  uint32_t w[16];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
           (uint32_t)p[4 * i + 3] << 24;
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
  /* Step i is of round i / 16 (F, G, H, I); the next step works on (d, a,
   * b, c). Unrolled, each step's function, word and rotation are
   * constants. */
#pragma GCC unroll 64
  for (int i = 0; i < 64; i++) {
    int round = i / 16;
    uint32_t f = round == 0   ? MD5_F(b, c, d)
                 : round == 1 ? MD5_G(b, c, d)
                 : round == 2 ? MD5_H(b, c, d)
                              : MD5_I(b, c, d);
    uint32_t t = a + f + w[(md5_g[round][0] * i + md5_g[round][1]) & 15] + md5_k[i];
    unsigned r = md5_r[round * 4 + i % 4];
    a = d;
    d = c;
    c = b;
    b += t << r | t >> (32 - r);
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
}

struct md5 {
  uint32_t h[4];
  unsigned char blk[64];
  size_t n; /* bytes waiting in blk */
  uint64_t len;
};

static void md5_add(struct md5 *m, const unsigned char *p, size_t len) {
  if (len == 0)
    return;
  m->len += len;
  if (m->n) {
    size_t k = 64 - m->n < len ? 64 - m->n : len;
    memcpy(m->blk + m->n, p, k);
    m->n += k;
    p += k;
    len -= k;
    if (m->n < 64)
      return;
    md5_block(m->h, m->blk);
    m->n = 0;
  }
  for (; len >= 64; p += 64, len -= 64)
    md5_block(m->h, p);
  if (len)
    memcpy(m->blk, p, len);
  m->n = len;
}

/* The first 32 bits (big-endian: the order of the digest's hex text) of
 * MD5("Outliers" + a + b). */
static uint32_t md5_top32(const unsigned char *a, size_t na, const unsigned char *b, size_t nb) {
  struct md5 m = {{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476}, {0}, 0, 0};
  md5_add(&m, (const unsigned char *)"Outliers", 8);
  md5_add(&m, a, na);
  md5_add(&m, b, nb);
  uint64_t bits = m.len * 8;
  m.blk[m.n++] = 0x80;
  if (m.n > 56) {
    memset(m.blk + m.n, 0, 64 - m.n);
    md5_block(m.h, m.blk);
    m.n = 0;
  }
  memset(m.blk + m.n, 0, 56 - m.n);
  for (int i = 0; i < 8; i++)
    m.blk[56 + i] = (unsigned char)(bits >> (8 * i));
  md5_block(m.h, m.blk);
  uint32_t x = m.h[0];
  return (x & 0xff) << 24 | (x & 0xff00) << 8 | (x >> 8 & 0xff00) | x >> 24;
}

/* ---- the bytes a key value is hashed as ---- */

size_t memdb_key_bytes(const struct memdb_kv *k, unsigned char out[MEMDB_NUM_BYTES_MAX],
                       const unsigned char **bytes) {
  if (k->type != TT_AV_N) {
    *bytes = (const unsigned char *)k->p;
    return k->len;
  }
  *bytes = out;
  /* Canonical text: optional '-', digits, optional '.' and digits. The
   * value is 0.D x 10^e with D the significant digits. */
  const char *p = k->p, *end = k->p + k->len;
  bool neg = p < end && *p == '-';
  if (neg)
    p++;
  char d[48];
  size_t nd = 0;
  long e = 0;
  bool point = false, lead = true;
  for (; p < end; p++) {
    if (*p == '.') {
      point = true;
      continue;
    }
    if (*p < '0' || *p > '9')
      break;
    if (lead && *p == '0') {
      if (point)
        e--; /* 0.00x: the point moves right past a zero */
      continue;
    }
    lead = false;
    if (!point)
      e++;
    if (nd < sizeof(d))
      d[nd++] = *p;
  }
  while (nd && d[nd - 1] == '0')
    nd--;
  if (nd == 0) {
    out[0] = 0x80;
    return 1;
  }
  /* Base-100 digits aligned on the point: a leading zero digit when e is
   * odd; the exponent byte is the base-100 exponent offset by 64 (193 + x
   * for a positive number, its complement for a negative one). */
  int odd = (int)(e & 1);
  long x = (e + odd) / 2 - 64;
  size_t n = 0;
  out[n++] = (unsigned char)(neg ? ~x : x);
  size_t total = nd + (size_t)odd, pairs = (total + 1) / 2;
  for (size_t i = 0; i < pairs; i++) {
    size_t hi = 2 * i, lo = hi + 1;
    int a = hi < (size_t)odd ? 0 : d[hi - (size_t)odd] - '0';
    int b = lo - (size_t)odd < nd ? d[lo - (size_t)odd] - '0' : 0;
    int v = 10 * a + b;
    out[n++] = (unsigned char)(neg ? 101 - v : v + 1);
  }
  if (neg && pairs < 20)
    out[n++] = 102;
  return n;
}

uint32_t memdb_hash2(const struct memdb_kv *a, const struct memdb_kv *b) {
  unsigned char na[MEMDB_NUM_BYTES_MAX], nb[MEMDB_NUM_BYTES_MAX];
  const unsigned char *pa, *pb = NULL;
  size_t la = memdb_key_bytes(a, na, &pa), lb = 0;
  if (b)
    lb = memdb_key_bytes(b, nb, &pb);
  return md5_top32(pa, la, pb, lb);
}

uint32_t memdb_hash(const struct memdb_kv *k) { return memdb_hash2(k, NULL); }
