/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_wal.c -- libFuzzer target for the data dir's records (wal_codec.c):
 * the first byte picks the form. 0: the rest is a log file, scanned record
 * by record (length, CRC32C) and each good record replayed; 1: the rest is
 * one record's payload, replayed as it is (so the entries are reached
 * without a matching checksum). Replay goes into a fresh memory backend
 * holding one table (tbl) with a sort key and a global index. Every item
 * replay stored is then written as a snapshot writes it (from its stored
 * encoding), which must give the bytes of its decoded value's record. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "backend/memory/internal.h"
#include "backend/memory/memdb.h"
#include "backend/memory/wal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char TABLE[] =
    "{\"TableName\":\"tbl\",\"BillingMode\":\"PAY_PER_REQUEST\",\"AttributeDefinitions\":["
    "{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},{\"AttributeName\":\"sk\","
    "\"AttributeType\":\"N\"},{\"AttributeName\":\"g\",\"AttributeType\":\"S\"}],\"KeySchema\":"
    "[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"sk\",\"KeyType\":"
    "\"RANGE\"}],\"GlobalSecondaryIndexes\":[{\"IndexName\":\"gsi\",\"KeySchema\":[{"
    "\"AttributeName\":\"g\",\"KeyType\":\"HASH\"}],\"Projection\":{\"ProjectionType\":\"ALL\"}}]}";

static void closed(void *arg) { *(int *)arg = 1; }

/* A snapshot's record of a stored item equals its decoded value's. */
static int check_stored_item(const struct memdb_table *t, struct memdb_item *it, void *arg) {
  struct tt_buf *ab = arg;
  struct tt_av v;
  tt_buf_reset(&ab[0]);
  tt_buf_reset(&ab[1]);
  if (memdb_item_decode(t, it, &v, NULL) != 0 ||
      memdb_wal_put_item(&ab[0], true, t->name, &v) != 0 ||
      memdb_wal_put_stored(&ab[1], t, it) != 0)
    abort(); /* out of memory */
  if (ab[0].len != ab[1].len || memcmp(ab[0].data, ab[1].data, ab[0].len) != 0) {
    fprintf(stderr, "fuzz_wal: a stored item's snapshot record differs from its record\n");
    abort();
  }
  tt_av_free(&v);
  return 0;
}

static void check_stored(struct memdb *m) {
  struct tt_buf ab[2];
  tt_buf_init(&ab[0], 0);
  tt_buf_init(&ab[1], 0);
  for (const struct memdb_table *t = m->tables; t; t = t->next)
    memdb_table_each(t, check_stored_item, ab);
  tt_buf_free(&ab[0]);
  tt_buf_free(&ab[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static uv_loop_t loop;
  static int ready;
  if (!ready) {
    uv_loop_init(&loop);
    ready = 1;
  }
  if (size < 1)
    return 0;
  struct tt_backend *b;
  if (tt_memdb_new(&loop, NULL, &b) != 0)
    abort();
  struct memdb *m = b->impl;
  char msg[256];
  struct tt_buf pl;
  tt_buf_init(&pl, 0);
  if (memdb_wal_put_create(&pl, 1.5, TABLE, strlen(TABLE)) != 0 ||
      memdb_wal_apply(m, (const unsigned char *)pl.data, pl.len, NULL, NULL, msg, sizeof(msg)) !=
          0) {
    fprintf(stderr, "fuzz_wal: the fixed table: %s\n", msg);
    abort();
  }
  tt_buf_free(&pl);
  const unsigned char *p = data + 1;
  size_t n = size - 1;
  uint64_t gen = 0;
  bool end = false;
  if (data[0] & 1) {
    (void)memdb_wal_apply(m, p, n, &gen, &end, msg, sizeof(msg));
  } else {
    size_t off = 0;
    const unsigned char *rec;
    size_t rn;
    while (memdb_wal_next(p, n, off, &rec, &rn) == MEMDB_WAL_OK) {
      if (memdb_wal_apply(m, rec, rn, NULL, NULL, msg, sizeof(msg)) != 0)
        break;
      off += MEMDB_WAL_HEADER + rn;
    }
  }
  check_stored(m);
  int done = 0;
  b->ops->close(b, closed, &done);
  uv_run(&loop, UV_RUN_DEFAULT);
  if (!done)
    abort();
  b->ops->destroy(b);
  return 0;
}
