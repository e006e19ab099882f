/* SPDX-License-Identifier: Apache-2.0 */
/* wal_codec.c -- the records of the data dir (the write-ahead log and the
 * snapshot): framing (length + CRC32C + payload), the binary form of item
 * images, and their replay into a memory backend. A record is one logical
 * operation at the store level (an item's new image or deletion, a table
 * definition), so replay is deterministic: no condition or clock is
 * evaluated again. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/memory/internal.h"
#include "backend/table_json.h"
#include "backend/memory/wal.h"

/* ---- CRC32C (Castagnoli), table-driven, slicing by 8 ---- */
static uint32_t crc_tab[8][256];
static bool crc_ready;

static void crc_init(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++)
      c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    crc_tab[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++)
    for (int s = 1; s < 8; s++)
      crc_tab[s][i] = (crc_tab[s - 1][i] >> 8) ^ crc_tab[0][crc_tab[s - 1][i] & 0xff];
  crc_ready = true;
}

uint32_t memdb_crc32c_table(const void *data, size_t n) {
  if (!crc_ready)
    crc_init();
  const unsigned char *p = data;
  uint32_t c = 0xffffffffu;
  while (n >= 8) {
    uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                       (uint32_t)p[3] << 24);
    c = crc_tab[7][lo & 0xff] ^ crc_tab[6][(lo >> 8) & 0xff] ^ crc_tab[5][(lo >> 16) & 0xff] ^
        crc_tab[4][lo >> 24] ^ crc_tab[3][p[4]] ^ crc_tab[2][p[5]] ^ crc_tab[1][p[6]] ^
        crc_tab[0][p[7]];
    p += 8;
    n -= 8;
  }
  while (n--)
    c = (c >> 8) ^ crc_tab[0][(c ^ *p++) & 0xff];
  return c ^ 0xffffffffu;
}

#if defined(__x86_64__)
/* The same with SSE 4.2's crc32 instruction (CRC32C's polynomial): about a
 * tenth of the table's cost per byte. */
__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(const unsigned char *p, size_t n) {
  uint64_t c = 0xffffffffu;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t v;
    memcpy(&v, p, 8);
    c = __builtin_ia32_crc32di(c, v);
  }
  uint32_t c32 = (uint32_t)c;
  while (n--)
    c32 = __builtin_ia32_crc32qi(c32, *p++);
  return c32 ^ 0xffffffffu;
}
#endif

uint32_t memdb_crc32c(const void *data, size_t n) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("sse4.2"))
    return crc32c_hw(data, n);
#endif
  return memdb_crc32c_table(data, n);
}

/* ---- writing ---- */
/* Room for n more bytes in b: a compare when it is there (the entries of a
 * record are written in place, not through one tt_buf_append per byte). */
static inline int room(struct tt_buf *b, size_t n) {
  return n < b->alloc - b->len ? 0 : tt_buf_reserve(b, n);
}

/* Writes v as a varint at p (memdb_put_varint's form); returns its bytes. */
static inline size_t varint_at(unsigned char *p, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    p[n++] = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  p[n++] = (unsigned char)v;
  return n;
}

/* A type byte (lead, when not -1), then a varint of n, then the n bytes
 * at s (s not NULL: a string). */
static int put_lead_str(struct tt_buf *b, int lead, const char *s, size_t n) {
  size_t bytes = s ? n : 0;
  if (bytes > (size_t)-1 - 12 || room(b, bytes + 11) != 0)
    return -1;
  unsigned char *p = (unsigned char *)b->data + b->len, *q = p;
  if (lead >= 0)
    *q++ = (unsigned char)lead;
  q += varint_at(q, n);
  if (bytes)
    memcpy(q, s, bytes);
  b->len += (size_t)(q - p) + bytes;
  b->data[b->len] = '\0';
  return 0;
}

static int put_count(struct tt_buf *b, int lead, size_t n) {
  return put_lead_str(b, lead, NULL, n);
}

/* A byte below 0x80 (a type, an entry's or an operation's code), which is
 * its own varint. */
static int put_u8(struct tt_buf *b, unsigned v) {
  return put_count(b, -1, v);
}

static int put_str(struct tt_buf *b, const char *s, size_t n) {
  return put_lead_str(b, -1, s, n);
}

static int memdb_wal_put_av(struct tt_buf *b, const struct tt_av *v) {
  switch (v->type) {
  case TT_AV_S:
  case TT_AV_N:
  case TT_AV_B:
    return put_lead_str(b, (int)v->type, v->u.bytes, v->len);
  case TT_AV_BOOL:
    return put_u8(b, (unsigned)v->type) != 0 || put_u8(b, v->u.boolean ? 1 : 0) != 0 ? -1 : 0;
  case TT_AV_NULL:
    return put_u8(b, (unsigned)v->type);
  case TT_AV_SS:
  case TT_AV_NS:
  case TT_AV_BS:
    if (put_count(b, (int)v->type, v->len) != 0)
      return -1;
    for (size_t i = 0; i < v->len; i++)
      if (put_str(b, v->u.elems[i].u.bytes, v->u.elems[i].len) != 0)
        return -1;
    return 0;
  case TT_AV_L:
    if (put_count(b, (int)v->type, v->len) != 0)
      return -1;
    for (size_t i = 0; i < v->len; i++)
      if (memdb_wal_put_av(b, &v->u.elems[i]) != 0)
        return -1;
    return 0;
  case TT_AV_M:
    if (put_count(b, (int)v->type, v->len) != 0)
      return -1;
    for (size_t i = 0; i < v->len; i++)
      if (put_str(b, v->u.members[i].name, v->u.members[i].name_len) != 0 ||
          memdb_wal_put_av(b, &v->u.members[i].value) != 0)
        return -1;
    return 0;
  }
  errno = EINVAL;
  return -1;
}

/* The end of an entry: 0, or -1 with b cut back to `mark` when rc failed. */
static int entry_end(struct tt_buf *b, size_t mark, int rc) {
  if (rc != 0)
    b->len = mark;
  return rc != 0 ? -1 : 0;
}

int memdb_wal_put_item(struct tt_buf *b, bool put, const char *table, const struct tt_av *v) {
  size_t mark = b->len;
  return entry_end(b, mark,
                   put_lead_str(b, put ? 'P' : 'D', table, strlen(table)) != 0 ||
                       memdb_wal_put_av(b, v) != 0);
}

int memdb_wal_put_stored(struct tt_buf *b, const struct memdb_table *t,
                         const struct memdb_item *it) {
  size_t mark = b->len;
  return entry_end(b, mark,
                   put_lead_str(b, 'P', t->name, strlen(t->name)) != 0 ||
                       memdb_item_put_wal(t, it, b) != 0);
}

int memdb_wal_put_create(struct tt_buf *b, double created, const char *json, size_t n) {
  size_t mark = b->len;
  uint64_t ms = created > 0 ? (uint64_t)(created * 1000.0 + 0.5) : 0;
  return entry_end(b, mark,
                   put_u8(b, 'C') != 0 || memdb_put_varint(b, ms) != 0 ||
                       put_str(b, json, n) != 0);
}

int memdb_wal_put_request(struct tt_buf *b, enum tt_ddb_op op, const char *json, size_t n) {
  size_t mark = b->len;
  return entry_end(b, mark,
                   put_u8(b, 'R') != 0 || put_u8(b, (unsigned)op) != 0 ||
                       put_str(b, json, n) != 0);
}

int memdb_wal_put_header(struct tt_buf *b, uint64_t gen) {
  return put_u8(b, 'H') != 0 || memdb_put_varint(b, gen) != 0 ? -1 : 0;
}

int memdb_wal_put_end(struct tt_buf *b) { return put_u8(b, 'Z'); }

static void le32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
  p[2] = (unsigned char)(v >> 16);
  p[3] = (unsigned char)(v >> 24);
}

static uint32_t rd32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int memdb_wal_frame(struct tt_buf *out, const void *payload, size_t n) {
  if (n == 0 || n > MEMDB_WAL_RECORD_MAX) {
    errno = EMSGSIZE;
    return -1;
  }
  unsigned char h[MEMDB_WAL_HEADER];
  le32(h, (uint32_t)n);
  le32(h + 4, memdb_crc32c(payload, n));
  if (tt_buf_reserve(out, sizeof(h) + n) != 0)
    return -1;
  tt_buf_append(out, h, sizeof(h));
  tt_buf_append(out, payload, n);
  return 0;
}

int memdb_wal_seal(unsigned char *rec, size_t n) {
  if (n == 0 || n > MEMDB_WAL_RECORD_MAX) {
    errno = EMSGSIZE;
    return -1;
  }
  le32(rec, (uint32_t)n);
  le32(rec + 4, memdb_crc32c(rec + MEMDB_WAL_HEADER, n));
  return 0;
}

enum memdb_wal_scan memdb_wal_next(const unsigned char *data, size_t len, size_t off,
                                   const unsigned char **payload, size_t *n) {
  if (off == len)
    return MEMDB_WAL_END;
  if (len - off < MEMDB_WAL_HEADER)
    return MEMDB_WAL_SHORT;
  uint32_t rl = rd32(data + off), crc = rd32(data + off + 4);
  if (rl == 0 || rl > MEMDB_WAL_RECORD_MAX)
    return len - off - MEMDB_WAL_HEADER < rl ? MEMDB_WAL_SHORT : MEMDB_WAL_BAD;
  if (len - off - MEMDB_WAL_HEADER < rl)
    return MEMDB_WAL_SHORT;
  if (memdb_crc32c(data + off + MEMDB_WAL_HEADER, rl) != crc)
    return MEMDB_WAL_BAD;
  *payload = data + off + MEMDB_WAL_HEADER;
  *n = rl;
  return MEMDB_WAL_OK;
}

/* ---- reading ---- */
struct cur {
  const unsigned char *p;
  size_t n;
};

static int get_u8(struct cur *c, unsigned *v) {
  if (c->n < 1)
    return -1;
  *v = *c->p++;
  c->n--;
  return 0;
}

static int get_varint(struct cur *c, uint64_t *v) {
  uint64_t r = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    unsigned b;
    if (get_u8(c, &b) != 0)
      return -1;
    r |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *v = r;
      return 0;
    }
  }
  return -1;
}

static int get_str(struct cur *c, const char **s, size_t *n) {
  uint64_t l;
  if (get_varint(c, &l) != 0 || l > c->n)
    return -1;
  *s = (const char *)c->p;
  *n = (size_t)l;
  c->p += l;
  c->n -= l;
  return 0;
}

static int get_av(struct cur *c, struct tt_av *v, unsigned depth) {
  unsigned t;
  const char *s;
  size_t n;
  uint64_t cnt;
  struct tt_error err;
  memset(v, 0, sizeof(*v));
  if (depth > MEMDB_NEST_MAX + 1 || get_u8(c, &t) != 0)
    return -1;
  switch ((enum tt_av_type)t) {
  case TT_AV_S:
    return get_str(c, &s, &n) != 0 || tt_av_string(v, s, n) != 0 ? -1 : 0;
  case TT_AV_B:
    return get_str(c, &s, &n) != 0 || tt_av_binary(v, s, n) != 0 ? -1 : 0;
  case TT_AV_N:
    return get_str(c, &s, &n) != 0 || tt_av_number_text(v, s, n, "N", &err) != 0 ? -1 : 0;
  case TT_AV_BOOL:
    if (get_u8(c, &t) != 0 || t > 1)
      return -1;
    tt_av_bool(v, t == 1);
    return 0;
  case TT_AV_NULL:
    tt_av_null(v);
    return 0;
  case TT_AV_SS:
  case TT_AV_NS:
  case TT_AV_BS:
  case TT_AV_L: {
    enum tt_av_type type = (enum tt_av_type)t;
    /* every element takes at least one byte: a count over the rest is bad */
    if (get_varint(c, &cnt) != 0 || cnt > c->n || tt_av_list(v, type, (size_t)cnt) != 0)
      return -1;
    for (size_t i = 0; i < v->len; i++) {
      int rc;
      if (type == TT_AV_L) {
        rc = get_av(c, &v->u.elems[i], depth + 1);
      } else if (get_str(c, &s, &n) != 0) {
        rc = -1;
      } else {
        rc = type == TT_AV_SS   ? tt_av_string(&v->u.elems[i], s, n)
             : type == TT_AV_BS ? tt_av_binary(&v->u.elems[i], s, n)
                                : tt_av_number_text(&v->u.elems[i], s, n, "NS", &err);
      }
      if (rc != 0)
        goto fail;
    }
    if (type != TT_AV_L && tt_av_set_finish(v, "set", &err) != 0)
      goto fail;
    return 0;
  }
  case TT_AV_M:
    if (get_varint(c, &cnt) != 0 || cnt > c->n || tt_av_map(v, (size_t)cnt) != 0)
      return -1;
    for (size_t i = 0; i < v->len; i++) {
      struct tt_av_member *mb = &v->u.members[i];
      if (get_str(c, &s, &n) != 0 || memchr(s, '\0', n) != NULL ||
          tt_av_member_name(mb, s, n) != 0 || get_av(c, &mb->value, depth + 1) != 0)
        goto fail;
    }
    if (tt_av_map_finish(v, "item", &err) != 0)
      goto fail;
    return 0;
  }
  return -1;
fail:
  tt_av_free(v);
  return -1;
}

/* ---- replay ---- */
static int bad(char *msg, size_t msgsz, const char *fmt, const char *what) {
  snprintf(msg, msgsz, fmt, what);
  return -1;
}

static int replay_item(struct memdb *m, bool put, struct cur *c, char *msg, size_t msgsz) {
  const char *tn;
  size_t tl;
  char name[256];
  struct tt_av v;
  struct tt_backend_error e = {0};
  if (get_str(c, &tn, &tl) != 0 || tl == 0 || tl >= sizeof(name) || memchr(tn, 0, tl))
    return bad(msg, msgsz, "%s", "an item with a bad table name");
  memcpy(name, tn, tl);
  name[tl] = '\0';
  struct memdb_table *t = memdb_table_get(m, name);
  if (t == NULL)
    return bad(msg, msgsz, "%s", "an item of a table that does not exist");
  if (get_av(c, &v, 1) != 0 || v.type != TT_AV_M)
    goto fail;
  struct memdb_kv pk, sk = {0};
  if (put ? memdb_item_check(t, &v, "Item size has exceeded the maximum allowed size", &pk, &sk,
                             &e) != 0
          : memdb_key_check(t, &v, &pk, &sk, &e) != 0)
    goto fail;
  struct memdb_item *old = memdb_table_find(t, &pk, t->sk.name ? &sk : NULL);
  int rc = 0;
  if (put || old)
    rc = memdb_table_write(t, old, put ? &v : NULL);
  tt_av_free(&v);
  tt_backend_error_clear(&e);
  if (rc != 0)
    return bad(msg, msgsz, "%s", "out of memory replaying an item");
  return 0;
fail:
  tt_av_free(&v);
  tt_backend_error_clear(&e);
  return bad(msg, msgsz, "%s", "an item that does not fit its table");
}

static int replay_json(struct memdb *m, char op, enum tt_ddb_op dop, uint64_t created_ms,
                       const char *js, size_t jl, char *msg, size_t msgsz) {
  json_error_t jerr;
  json_t *req = json_loadb(js, jl, 0, &jerr);
  struct tt_backend_error e = {0};
  struct tt_ddb_table_desc desc = {0};
  struct tt_ddb_table_request r;
  struct tt_arena a;
  if (!json_is_object(req)) {
    json_decref(req);
    return bad(msg, msgsz, "%s", "a table record whose definition is not a JSON object");
  }
  tt_arena_init(&a);
  m->replaying = true; /* changes made at once, no quotas of the clock */
  /* The log holds only the table operations that change a table. */
  int rc = (unsigned)dop >= TT_DDB_OP__COUNT || memdb_table_ops[dop] == NULL ||
                   tt_ddb_table_request_read(dop, req, &a, &r, &e) != 0
               ? -1
               : memdb_table_ops[dop](m, &r, &desc, &e);
  struct memdb_table *t = rc == 0 && op == 'C' ? memdb_table_get_any(m, r.table) : NULL;
  if (t && created_ms)
    t->created = (double)created_ms / 1000.0;
  m->replaying = false;
  json_decref(req);
  tt_arena_free(&a);
  tt_ddb_table_desc_free(&desc);
  if (rc != 0)
    snprintf(msg, msgsz, "a table change that does not apply (%s)", e.type);
  tt_backend_error_clear(&e);
  return rc != 0 ? -1 : 0;
}

int memdb_wal_apply(struct memdb *m, const unsigned char *p, size_t n, uint64_t *header_gen,
                    bool *end, char *msg, size_t msgsz) {
  struct cur c = {p, n};
  msg[0] = '\0';
  while (c.n > 0) {
    unsigned op, dop;
    uint64_t v;
    const char *s;
    size_t sl;
    if (get_u8(&c, &op) != 0)
      return bad(msg, msgsz, "%s", "a truncated record");
    switch (op) {
    case 'P':
    case 'D':
      if (replay_item(m, op == 'P', &c, msg, msgsz) != 0)
        return -1;
      break;
    case 'C': /* creation time (ms), then the request */
    case 'R': /* operation, then the request */
      v = 0;
      dop = TT_DDB_CREATE_TABLE;
      if ((op == 'C' ? get_varint(&c, &v) : get_u8(&c, &dop)) != 0 || get_str(&c, &s, &sl) != 0 ||
          replay_json(m, (char)op, (enum tt_ddb_op)dop, v, s, sl, msg, msgsz) != 0)
        return msg[0] ? -1 : bad(msg, msgsz, "%s", "a truncated table record");
      break;
    case 'H':
      if (header_gen == NULL || get_varint(&c, &v) != 0)
        return bad(msg, msgsz, "%s", "a misplaced snapshot header");
      *header_gen = v;
      break;
    case 'Z':
      if (end == NULL || c.n != 0)
        return bad(msg, msgsz, "%s", "a misplaced snapshot end");
      *end = true;
      break;
    default:
      return bad(msg, msgsz, "%s", "an unknown record type");
    }
  }
  return 0;
}
