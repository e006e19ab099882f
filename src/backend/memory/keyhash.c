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

struct md5 {
  uint32_t h[4];
  uint64_t len;
  unsigned char buf[64];
  size_t n;
};

#define ROTL(x, c) (((x) << (c)) | ((x) >> (32 - (c))))

static const uint32_t md5_k[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613,
    0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193,
    0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d,
    0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
    0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122,
    0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
    0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244,
    0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
    0xeb86d391};
static const unsigned char md5_r[64] = {7,  12, 17, 22, 7,  12, 17, 22, 7,  12, 17, 22, 7,
                                        12, 17, 22, 5,  9,  14, 20, 5,  9,  14, 20, 5,  9,
                                        14, 20, 5,  9,  14, 20, 4,  11, 16, 23, 4,  11, 16,
                                        23, 4,  11, 16, 23, 4,  11, 16, 23, 6,  10, 15, 21,
                                        6,  10, 15, 21, 6,  10, 15, 21, 6,  10, 15, 21};

static void md5_block(uint32_t h[4], const unsigned char *p) {
  uint32_t w[16];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
           (uint32_t)p[4 * i + 3] << 24;
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
  for (int i = 0; i < 64; i++) {
    uint32_t f;
    int g;
    if (i < 16) {
      f = (b & c) | (~b & d);
      g = i;
    } else if (i < 32) {
      f = (d & b) | (~d & c);
      g = (5 * i + 1) & 15;
    } else if (i < 48) {
      f = b ^ c ^ d;
      g = (3 * i + 5) & 15;
    } else {
      f = c ^ (b | ~d);
      g = (7 * i) & 15;
    }
    uint32_t t = d;
    d = c;
    c = b;
    uint32_t x = a + f + md5_k[i] + w[g];
    b = b + ROTL(x, md5_r[i]);
    a = t;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
}

static void md5_init(struct md5 *m) {
  m->h[0] = 0x67452301;
  m->h[1] = 0xefcdab89;
  m->h[2] = 0x98badcfe;
  m->h[3] = 0x10325476;
  m->len = 0;
  m->n = 0;
}

static void md5_update(struct md5 *m, const void *data, size_t len) {
  const unsigned char *p = data;
  m->len += len;
  while (len) {
    size_t k = 64 - m->n < len ? 64 - m->n : len;
    memcpy(m->buf + m->n, p, k);
    m->n += k;
    p += k;
    len -= k;
    if (m->n == 64) {
      md5_block(m->h, m->buf);
      m->n = 0;
    }
  }
}

/* The first 32 bits of the digest, big-endian (the order of its hex text). */
static uint32_t md5_top32(struct md5 *m) {
  uint64_t bits = m->len * 8;
  unsigned char pad = 0x80, zero = 0, lenb[8];
  md5_update(m, &pad, 1);
  while (m->n != 56)
    md5_update(m, &zero, 1);
  for (int i = 0; i < 8; i++)
    lenb[i] = (unsigned char)(bits >> (8 * i));
  md5_update(m, lenb, 8);
  uint32_t a = m->h[0];
  return (a & 0xff) << 24 | (a & 0xff00) << 8 | (a >> 8 & 0xff00) | a >> 24;
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
  unsigned char nb[MEMDB_NUM_BYTES_MAX];
  const unsigned char *bytes;
  struct md5 m;
  md5_init(&m);
  md5_update(&m, "Outliers", 8);
  size_t n = memdb_key_bytes(a, nb, &bytes);
  md5_update(&m, bytes, n);
  if (b) {
    n = memdb_key_bytes(b, nb, &bytes);
    md5_update(&m, bytes, n);
  }
  return md5_top32(&m);
}

uint32_t memdb_hash(const struct memdb_kv *k) { return memdb_hash2(k, NULL); }
