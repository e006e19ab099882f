/* SPDX-License-Identifier: Apache-2.0 */
/* wal.h -- the data dir of the memory backend (--data-dir): the record
 * codec (wal_codec.c) and the write-ahead log with group commit and
 * snapshots (wal.c), shared with their unit tests and fuzz target. */
#ifndef TT_BACKEND_MEMORY_WAL_H
#define TT_BACKEND_MEMORY_WAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "util/buf.h"
#include "value/av.h"

struct memdb;

/* A record on disk: u32 payload length, u32 CRC32C of the payload (both
 * little-endian), then the payload: one or more entries, applied together
 * (a transaction or a batch is one record). */
#define MEMDB_WAL_HEADER 8u
#define MEMDB_WAL_RECORD_MAX (256u * 1024u * 1024u)

/* CRC32C (Castagnoli) of the n bytes at data: with the CPU's instruction
 * where it has one, else by table (memdb_crc32c_table, the same values). */
uint32_t memdb_crc32c(const void *data, size_t n);
uint32_t memdb_crc32c_table(const void *data, size_t n);

/* Entries, appended to a payload being built. Each returns 0, or -1 (out of
 * memory; the buffer is as before). An item's new image (put) or its
 * deletion (the key). */
int memdb_wal_put_item(struct tt_buf *b, bool put, const char *table, const struct tt_av *v);
/* The same for an item stored in table t, read from its encoding (a
 * snapshot): the bytes memdb_wal_put_item writes for its decoded value. */
struct memdb_table;
struct memdb_item;
int memdb_wal_put_stored(struct tt_buf *b, const struct memdb_table *t,
                         const struct memdb_item *it);
/* A CreateTable request (JSON text) and the table's creation time. */
int memdb_wal_put_create(struct tt_buf *b, double created, const char *json, size_t n);
/* An UpdateTable, DeleteTable or UpdateTimeToLive request (JSON text). */
int memdb_wal_put_request(struct tt_buf *b, enum tt_ddb_op op, const char *json, size_t n);
/* A snapshot's first entry (the first log generation after it) and last. */
int memdb_wal_put_header(struct tt_buf *b, uint64_t gen);
int memdb_wal_put_end(struct tt_buf *b);

/* Appends the framed record of payload (n bytes, 1..MEMDB_WAL_RECORD_MAX).
 * Returns 0 or -1 (memory, or a payload too large: errno EMSGSIZE). */
int memdb_wal_frame(struct tt_buf *out, const void *payload, size_t n);
/* Frames in place the record at rec: its payload (n bytes) follows the
 * MEMDB_WAL_HEADER bytes the header goes to. Returns 0 or -1 (EMSGSIZE). */
int memdb_wal_seal(unsigned char *rec, size_t n);

enum memdb_wal_scan {
  MEMDB_WAL_OK,    /* a whole record with a good checksum */
  MEMDB_WAL_END,   /* off is the end of the data */
  MEMDB_WAL_SHORT, /* the data ends inside the record (a torn append) */
  MEMDB_WAL_BAD    /* a whole record whose checksum or length is wrong */
};

/* Reads the record at `off` of data (len bytes): *payload and *n on OK. */
enum memdb_wal_scan memdb_wal_next(const unsigned char *data, size_t len, size_t off,
                                   const unsigned char **payload, size_t *n);

/* Applies the entries of one payload to m. A snapshot header sets
 * *header_gen (NULL: refused), its end sets *end (NULL: refused). Returns
 * 0, or -1 with msg saying what is wrong (never a key or an item value). */
int memdb_wal_apply(struct memdb *m, const unsigned char *p, size_t n, uint64_t *header_gen,
                    bool *end, char *msg, size_t msgsz);

/* ---- wal.c: the log of a memory backend ---- */
struct memdb_wal;

/* Opens the data dir of m->opts (lock, load, open the log). Returns 0, or a
 * negative errno-style code with msg set (UV_EBUSY: locked by another
 * process; UV_EIO: a corrupt file) and the tables loaded so far left to
 * the caller to free. */
int memdb_wal_open(struct memdb *m, char *msg, size_t msgsz);
/* Starts a record for the call about to run (drops any unfinished one). */
void memdb_wal_begin(struct memdb *m);
/* Notes one change of the running call (no-op without a data dir). */
void memdb_wal_note_item(struct memdb *m, bool put, const char *table, const struct tt_av *v);
void memdb_wal_note_table(struct memdb *m, enum tt_ddb_op op,
                          const struct tt_ddb_table_request *r);
/* After a call ran: when it changed something, its record goes to the log
 * and the call waits for it (true: the caller must not complete it). */
bool memdb_wal_hold(struct memdb *m, struct tt_backend_call *c);
/* Whether the backend refuses every call (the state could not be kept
 * consistent with the data dir); fills e with the reason. */
bool memdb_wal_refuse(struct memdb *m, struct tt_backend_error *e);
/* Flushes, syncs and closes the log; calls memdb_handle_closed once done. */
void memdb_wal_close(struct memdb *m);
void memdb_wal_free(struct memdb *m);

/* Counters for tests and benchmarks. */
struct tt_memdb_wal_stats {
  uint64_t records, batches, fsyncs, snapshots, log_bytes, snapshot_bytes;
};
void tt_memdb_wal_stats(struct tt_backend *b, struct tt_memdb_wal_stats *out);

#endif
