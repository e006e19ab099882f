/* SPDX-License-Identifier: Apache-2.0 */
/* internal.h -- data structures shared by the files of the memory backend:
 * sorted chunk sequences, encoded items, stores (a table or an index), the
 * tables themselves and the helpers every operation uses. */
#ifndef TT_BACKEND_MEMORY_INTERNAL_H
#define TT_BACKEND_MEMORY_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "backend/json_members.h"
#include "backend/memory/memdb.h"
#include "expr/expr.h"
#include "util/buf.h"
#include "util/error.h"
#include "value/av.h"
#include "value/codec_ddb.h"

/* DynamoDB's limits. */
#define MEMDB_ITEM_MAX (400u * 1024u)
#define MEMDB_PAGE_MAX (1024u * 1024u)
#define MEMDB_BATCH_GET_RESPONSE_MAX (16u * 1024u * 1024u)
#define MEMDB_TOKEN_WINDOW_S 600
/* The rest are checked in limits.c. */
#define MEMDB_PK_MAX 2048u               /* partition key value bytes (S, B) */
#define MEMDB_SK_MAX 1024u               /* sort key value bytes (S, B) */
#define MEMDB_ATTR_NAME_MAX 65535u       /* attribute name bytes, at any depth */
#define MEMDB_KEY_NAME_MAX 255u          /* key, index key and projected names */
#define MEMDB_NEST_MAX TT_DDB_MAX_DEPTH  /* levels; a top-level attribute is 1 */
#define MEMDB_PLACEHOLDER_MAX 255u       /* "#name" / ":value" keys, with # or : */
#define MEMDB_EXPR_MAPS_MAX (2u * 1024u * 1024u) /* names + values of a request */
#define MEMDB_TXN_BYTES_MAX (4u * 1024u * 1024u) /* TransactWriteItems payload */

/* ---- slab.c: the long-lived memory of a table and its indexes (items,
 * index entries, partitions, chunks), in pages of its own by size class, so
 * that it neither interleaves with the requests' short-lived memory nor pays
 * malloc's per-object header. Objects over MEMDB_SLAB_MAX bytes go to
 * malloc. The caller gives the size on free (it is not stored). ---- */
#define MEMDB_SLAB_MAX 2048u

struct memdb_slab;

/* A new, empty slab; NULL on OOM. */
struct memdb_slab *memdb_slab_new(void);
/* Frees every page at once. Objects that went to malloc (over
 * MEMDB_SLAB_MAX) must have been freed by the caller. */
void memdb_slab_destroy(struct memdb_slab *s);
/* n bytes, 8-aligned; NULL on OOM. */
void *memdb_slab_alloc(struct memdb_slab *s, size_t n);
/* Frees p (NULL: nothing), which was allocated with exactly n bytes. */
void memdb_slab_free(struct memdb_slab *s, void *p, size_t n);
/* Moves p (old_n bytes, may be NULL) into a new allocation of n bytes;
 * NULL on OOM, p unchanged. */
void *memdb_slab_resize(struct memdb_slab *s, void *p, size_t old_n, size_t n);
/* Bytes in live objects (slots as rounded, malloc'd ones as asked). */
size_t memdb_slab_live(const struct memdb_slab *s);

/* ---- seq.c: a sorted sequence of pointers kept in chunks of at most
 * MEMDB_CHUNK_MAX entries (a one-level B+ tree). Binary search finds a chunk
 * then a slot, so lookups are O(log n) and an insert moves at most one
 * chunk's slots, even in a partition holding millions of items. A sequence
 * of one entry (most partitions, when partition keys are unique) holds it
 * in place of the chunk array and allocates nothing. ---- */
#define MEMDB_CHUNK_MAX 128

/* In a keyed sequence a chunk also holds its entries' keys, after e[cap]. */
struct memdb_chunk {
  uint32_t n;
  uint16_t cap;
  uint16_t keyed;
  void *e[];
};

/* A chunk and the key of its last entry (see memdb_key_fn), so that a
 * search by key finds the chunk without reading any chunk or entry. */
struct memdb_fence {
  struct memdb_chunk *c;
  uint32_t last;
};

/* Three shapes: empty (nc 0); one entry (nc 1, capc 0, `one` is the entry);
 * chunked (capc > 0: `c` holds nc fences, room for capc). */
struct memdb_seq {
  union {
    struct memdb_fence *c;
    void *one;
  } u;
  uint32_t nc, capc;
};

/* A 32-bit key of an entry that orders like the sequence does (entries with
 * smaller keys come first; equal keys are ordered by the predicate), or
 * NULL for a sequence searched by predicate only. The partitions of a store
 * are keyed by their hash. */
typedef uint32_t (*memdb_key_fn)(const void *entry);

/* A position: chunk index and slot. Normalized: either c < nc and i < n of
 * that chunk, or the end position {nc, 0}. */
struct memdb_pos {
  uint32_t c, i;
};

/* True while `entry` sorts before the point being looked for. Must be
 * monotonic over the sequence (true ... true false ... false). */
typedef bool (*memdb_pred_fn)(const void *entry, const void *ctx);

struct memdb_pos memdb_seq_begin(const struct memdb_seq *s);
struct memdb_pos memdb_seq_end(const struct memdb_seq *s);
bool memdb_seq_is_end(const struct memdb_seq *s, struct memdb_pos p);
/* First position whose entry fails pred (the end when none does). */
struct memdb_pos memdb_seq_point(const struct memdb_seq *s, memdb_pred_fn pred, const void *ctx);
/* The same in a keyed sequence, for a point whose key is `key`: the chunk is
 * found by the fences, the slot by the chunk's keys; pred only breaks ties,
 * so entries are read only when keys are equal. */
struct memdb_pos memdb_seq_point_key(const struct memdb_seq *s, uint32_t key, memdb_pred_fn pred,
                                     const void *ctx);
/* The entry at p, NULL at the end. Borrowed. */
void *memdb_seq_at(const struct memdb_seq *s, struct memdb_pos p);
void memdb_seq_next(const struct memdb_seq *s, struct memdb_pos *p);
/* Steps back; false (p unchanged) at the beginning. */
bool memdb_seq_prev(const struct memdb_seq *s, struct memdb_pos *p);
int memdb_pos_cmp(struct memdb_pos a, struct memdb_pos b);
/* The slot holding the entry at p (not the end), to replace it in place by
 * an entry with the same key. */
void **memdb_seq_slot(struct memdb_seq *s, struct memdb_pos p);
/* Inserts e before position p, allocating from a; key is the sequence's
 * key function (NULL: none), the same on every insert into s. Returns 0 or
 * -1 (out of memory, unchanged). */
int memdb_seq_insert(struct memdb_slab *a, struct memdb_seq *s, struct memdb_pos p, void *e,
                     memdb_key_fn key);
/* Removes the entry at p (not the end). Never fails. */
void memdb_seq_remove(struct memdb_slab *a, struct memdb_seq *s, struct memdb_pos p);
/* Frees the chunks (not the entries). */
void memdb_seq_free(struct memdb_slab *a, struct memdb_seq *s);

/* ---- names.c: a table's dictionary of top-level attribute names (items
 * store an id instead of the name). Zeroed memory is an empty one. ---- */
struct memdb_names {
  struct memdb_name {
    char *s; /* NUL-terminated */
    uint32_t len;
  } *name; /* by id */
  uint32_t n, cap;
  uint32_t *slots; /* open addressing: id + 1, 0 when free */
  uint32_t nslots;
};

/* The id of the name, added when new; -1 when it is not in the dictionary
 * and will not be (too long, dictionary full, out of memory): the caller
 * spells it out. */
int64_t memdb_names_id(struct memdb_names *d, const char *name, size_t len);
/* The name of an id the dictionary gave. Borrowed. */
const char *memdb_names_get(const struct memdb_names *d, uint32_t id, size_t *len);
void memdb_names_free(struct memdb_names *d);

/* ---- store.c ---- */

/* Appends v as a varint (7 bits a byte, low bits first, the top bit set on
 * all but the last): the lengths of the item encoding and of the WAL. */
static inline int memdb_put_varint(struct tt_buf *b, uint64_t v) {
  unsigned char tmp[10];
  size_t n = 0;
  do {
    unsigned char c = v & 0x7f;
    v >>= 7;
    tmp[n++] = c | (v ? 0x80 : 0);
  } while (v);
  return tt_buf_append(b, tmp, n);
}

/* A key value seen in place: S, N (canonical text) or B bytes, always
 * NUL-terminated so N can go to tt_number_compare. */
struct memdb_kv {
  enum tt_av_type type;
  const char *p;
  size_t len;
};

/* One stored item: its key values (encoded, up front so ordering never
 * decodes the item) followed by the rest of the item in a compact binary
 * form (names from the table's dictionary, key values not repeated). One
 * slab allocation per item. */
struct memdb_item {
  uint32_t blob_len; /* bytes in data */
  uint32_t size;     /* DynamoDB item size */
  unsigned char data[];
};

/* One entry of a secondary index: the item it points to (shared with the
 * table, never copied) and the index key values, encoded. */
struct memdb_ientry {
  struct memdb_item *item;
  uint32_t thash; /* memdb_hash2 of the item's table keys */
  unsigned char keys[];
};

/* All entries of one partition key, ordered by sort key (then, in an index,
 * by the hash of the table's keys and by the table's keys, as DynamoDB
 * orders equal index keys, so that every entry has a unique position). */
struct memdb_part {
  uint32_t hash;
  struct memdb_seq entries;
};

struct memdb_table;

/* A table or an index: partitions ordered by (hash of partition key,
 * partition key), which gives Scan a stable order and makes each parallel
 * scan segment one contiguous run of partitions. */
struct memdb_store {
  struct memdb_seq parts;
  struct memdb_table *table;
  bool is_index;
  bool has_sk;
  size_t count;
};

struct memdb_keydef {
  char *name; /* NULL when absent (no sort key) */
  enum tt_av_type type;
};

struct memdb_index {
  char *name;
  bool global;
  struct memdb_keydef pk, sk;
  enum tt_ddb_projection proj;
  char **include;
  size_t ninclude;
  int64_t rcu, wcu;
  struct memdb_store store;
};

struct memdb_table {
  char *name;
  struct memdb_keydef pk, sk;
  struct tt_ddb_attr_def *defs; /* AttributeDefinitions (names owned) */
  size_t ndefs;
  bool pay_per_request;
  bool billing_given; /* BillingMode was set (DescribeTable shows BillingModeSummary) */
  int64_t rcu, wcu;
  double created;
  /* UpdateTable's throughput changes: when (0: never) and the decreases
   * of the UTC day decrease_day (days since the epoch). */
  double last_increase, last_decrease;
  int64_t decreases_today, decrease_day;
  struct memdb_index *idx;
  size_t nidx;
  struct memdb_store store;
  /* The memory of the items, entries, partitions and chunks of the table and
   * its indexes; made by the first write (NULL while the table is empty). */
  struct memdb_slab *slab;
  struct memdb_names names; /* attribute names of the stored items */
  char *ttl_attr; /* NULL: TTL disabled */
  /* tt_memdb_options.transition_ms: a status other than ACTIVE until
   * transition_at_ms (wall clock); UPDATING's throughput waits in
   * pending_rcu/pending_wcu. */
  enum memdb_status { MEMDB_ACTIVE = 0, MEMDB_CREATING, MEMDB_UPDATING, MEMDB_DELETING } status;
  int64_t transition_at_ms;
  int64_t pending_rcu, pending_wcu;
  struct tt_ddb_tag *tags; /* in the order they were added (strings owned) */
  size_t ntags;
  bool hide_expired; /* from tt_memdb_options */
  uint64_t bytes; /* sum of item sizes */
  struct memdb_table *next;
};

/* A remembered successful TransactWriteItems (idempotency window). */
struct memdb_token {
  char *token;
  char *request; /* canonical JSON text of the request */
  int64_t at;
  struct memdb_token *next;
};

struct memdb {
  struct tt_backend base;
  struct tt_memdb_options opts;
  uv_timer_t timer; /* calls due later (latency_ms) */
  uv_idle_t idle;   /* calls due now: runs once per loop iteration */
  int open_handles;
  struct tt_backend_call *head, *tail; /* started, not executed */
  struct tt_backend_call *canceled;    /* canceled, to complete */
  struct memdb_table *tables;
  struct memdb_token *tokens;
  struct memdb_wal *wal; /* the data dir (wal.c); NULL: memory only */
  void (*closed)(void *);
  void *closed_arg;
  bool closing;
  bool running; /* completing calls: run_ready must not nest */
  bool replaying; /* applying the data dir's records: no quotas of the clock */
  unsigned transitions; /* tables whose status is not ACTIVE */
};

/* ---- keyhash.c: DynamoDB's partition hash ---- */

/* Room for an N value in DynamoDB's internal number form. */
#define MEMDB_NUM_BYTES_MAX 24u

/* The bytes a key value is hashed as: S and B values as they are (*bytes
 * points into k), an N value in DynamoDB's number form, written to out. */
size_t memdb_key_bytes(const struct memdb_kv *k, unsigned char out[MEMDB_NUM_BYTES_MAX],
                       const unsigned char **bytes);
/* The first 32 bits (big-endian) of MD5("Outliers" + key bytes): the order
 * of the partitions of a store, which is DynamoDB's Scan order, and the
 * parallel-scan segment of each. */
uint32_t memdb_hash(const struct memdb_kv *k);
/* The same over two key values (b may be NULL): a table key's hash, which
 * orders the entries of an index whose index keys are equal. */
uint32_t memdb_hash2(const struct memdb_kv *a, const struct memdb_kv *b);
/* Orders two key values of one type: N numerically, S/B by bytes. */
int memdb_kv_cmp(const struct memdb_kv *a, const struct memdb_kv *b);
/* A view of an S/N/B AttributeValue. */
struct memdb_kv memdb_kv_of(const struct tt_av *v);

/* Key values of a stored item / index entry. */
void memdb_entry_keys(const struct memdb_store *s, const void *e, struct memdb_kv *pk,
                      struct memdb_kv *sk);
const struct memdb_item *memdb_entry_item(const struct memdb_store *s, const void *e);

/* Calls fn on every item of table t, partition by partition in their
 * stored order; stops at the first non-zero fn returns and returns it, else 0. */
int memdb_table_each(const struct memdb_table *t,
                     int (*fn)(const struct memdb_table *t, struct memdb_item *it, void *arg),
                     void *arg);

/* Decodes an item stored in t into a new M value, every part of it in
 * arena `a` (NULL: malloc, owned by *out). From an arena the value lives as
 * long as the arena and must not be passed to tt_av_free. Returns 0, or -1
 * (memory; *out is zeroed: release the arena to a mark to reclaim the part
 * decoded). */
int memdb_item_decode(const struct memdb_table *t, const struct memdb_item *it,
                      struct tt_av *out, struct tt_arena *a);

/* Appends an item stored in t as the data dir's records write it (wal_codec.c's
 * memdb_wal_put_av of its decoded M value, byte for byte), read straight
 * from its encoding: no value is built. Returns 0, or -1 (memory; b holds
 * part of it: the caller cuts it back). */
int memdb_item_put_wal(const struct memdb_table *t, const struct memdb_item *it,
                       struct tt_buf *b);

/* Finds the partition of `pk`: returns it (or NULL) and its position (or the
 * insertion point). */
struct memdb_part *memdb_store_part(const struct memdb_store *s, const struct memdb_kv *pk,
                                    struct memdb_pos *pos);

/* In a partition: the first entry >= (sk, tpk, tsk), or > when `after`.
 * NULL levels end the comparison (so a bare sk gives the sort-key bounds). */
struct memdb_pos memdb_store_seek(const struct memdb_store *s, const struct memdb_part *pt,
                                  const struct memdb_kv *sk, const struct memdb_kv *tpk,
                                  const struct memdb_kv *tsk, bool after);

/* Finds the table item with exactly these key values (sk NULL when the
 * table has none). NULL when absent. Expired items are returned too. */
struct memdb_item *memdb_table_find(const struct memdb_table *t, const struct memdb_kv *pk,
                                    const struct memdb_kv *sk);

/* Replaces `old` (may be NULL) by the new item `item` (may be NULL: delete)
 * in the table and every index. Borrows item. Returns 0 or -1 (memory; the
 * table is unchanged when the failure happens before any change). */
int memdb_table_write(struct memdb_table *t, struct memdb_item *old, const struct tt_av *item);

/* Frees a table and everything in it. */
void memdb_table_free(struct memdb_table *t);
/* Forgets the client tokens whose idempotency window ended at `now`
 * (`all`: every one). */
void memdb_tokens_expire(struct memdb *m, int64_t now, bool all);
/* Frees every table and client token of the backend (at close, and before
 * the data dir is loaded again). */
void memdb_free_tables(struct memdb *m);

/* Whether an item is hidden as expired by TTL at time `now`. */
bool memdb_expired(const struct memdb_table *t, const struct tt_av *item, int64_t now);

/* The attributes an index projects of `item`, into a new M. */
int memdb_index_project(const struct memdb_table *t, const struct memdb_index *ix,
                        const struct tt_av *item, struct tt_av *out);

/* Fills the store of `ix`, an index being added to `t` (not yet in t->idx),
 * with an entry for every item of the table that has the index's keys, by
 * the same rules as writes (sparse: an item whose key attribute is missing
 * or of another type is left out; so is one whose key value breaks the key
 * limits, as DynamoDB's backfill reports it as a violation and skips it).
 * Returns 0, or -1 when memory ran out (the index store is emptied again). */
int memdb_index_backfill(const struct memdb_table *t, struct memdb_index *ix);

/* Frees what an index owns (its entries, names, schema); not ix itself. */
void memdb_index_free(struct memdb_index *ix);

/* Bytes allocated for the table's data (items, entries, partitions). */
size_t memdb_table_mem(const struct memdb_table *t);

/* ---- memdb.c / util.c: request helpers shared by the operations ---- */

int memdb_fail(struct tt_backend_error *e, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define memdb_validation(e, ...) memdb_fail(e, "ValidationException", __VA_ARGS__)
/* Turns a tt_error into a ValidationException (or InternalServerError). */
int memdb_fail_tt(struct tt_backend_error *e, const struct tt_error *err);
int memdb_oom(struct tt_backend_error *e);

/* Appends call c to the list head..tail. */
static inline void memdb_call_push(struct tt_backend_call **head, struct tt_backend_call **tail,
                                   struct tt_backend_call *c) {
  c->next = NULL;
  *(*tail ? &(*tail)->next : head) = c;
  *tail = c;
}

/* Ends the status transitions whose time came (tt_memdb_options.
 * transition_ms): CREATING and UPDATING tables become ACTIVE (with their
 * new throughput), DELETING ones are removed. */
void memdb_tables_settle(struct memdb *m);
/* A table by name whatever its status (memdb_table_get hides CREATING and
 * DELETING tables, as DynamoDB's item operations do). */
struct memdb_table *memdb_table_get_any(struct memdb *m, const char *name);
/* A table's ARN, in the region of tt_memdb_options.region (else
 * "ddblocal"). */
void memdb_table_arn(const struct memdb *m, const struct memdb_table *t, char *out, size_t n);
/* The BillingMode a table shows (UNSET while no request gave one). */
enum tt_ddb_billing memdb_billing(const struct memdb_table *t);
int64_t memdb_now(const struct memdb *m);
/* Re-arms the idle handle or timer after calls were completed outside
 * memdb.c (the log's completions). */
void memdb_arm(struct memdb *m);
/* One of the backend's handles (or the log) finished closing. */
void memdb_handle_closed(struct memdb *m);
struct memdb_table *memdb_table_get(struct memdb *m, const char *name);
/* Finds the table a request names: ValidationException when the name is
 * NULL ("Value null"), ResourceNotFoundException when unknown. */
int memdb_req_table_named(struct memdb *m, const char *name, struct memdb_table **t,
                          struct tt_backend_error *e);

/* A path of `x` into a key attribute of the table or of one of its
 * indexes: "Key attributes must be scalars; ... Key: a" (IndexKey for an
 * index's). x may be NULL. */
int memdb_key_paths_check(const struct memdb_table *t, const struct tt_expr *x,
                          struct tt_backend_error *e);
/* Capacity units of one item read (4 KB units, halved unless consistent)
 * or written (1 KB units; the larger of the old and new item); an item
 * not there counts as one unit. Either item may be NULL. */
double memdb_capacity_units(const struct tt_av *a, const struct tt_av *b, bool read,
                            bool consistent);

/* The expressions of one request share the placeholder maps. */
struct memdb_exprs {
  /* NULL when absent; the typed request's (borrowed). */
  const struct tt_av *names, *values;
  struct tt_expr *list[4];
  size_t n;
  /* A key condition that parsed but breaks a key-condition rule: DynamoDB
   * reports it after the request's other expressions have parsed. */
  bool key_failed;
  struct tt_error key_err;
};

/* Takes a typed request's placeholder maps (borrowed; either may be
 * NULL). */
int memdb_exprs_use(struct memdb_exprs *x, const struct tt_av *names, const struct tt_av *values,
                    struct tt_backend_error *e);
/* Parses an optional expression's text (NULL: absent) as `kind` into *out
 * (NULL when absent). The expression stays owned by x. */
int memdb_exprs_parse_text(struct memdb_exprs *x, const char *text, enum tt_expr_kind kind,
                           struct tt_expr **out, struct tt_backend_error *e);
/* The unused-placeholder rules, after every expression was parsed. */
int memdb_exprs_finish(struct memdb_exprs *x, struct tt_backend_error *e);
void memdb_exprs_free(struct memdb_exprs *x);

/* Validates a Key parameter against the table schema and returns the key
 * values (views into key). */
int memdb_key_check(const struct memdb_table *t, const struct tt_av *key, struct memdb_kv *pk,
                    struct memdb_kv *sk, struct tt_backend_error *e);
/* Validates a whole item for writing: table keys present, right types, not
 * empty; index keys of the right type and not empty; size <= 400 KB
 * (`size_msg` is the message used). The key values go to pk and sk (views
 * into item) when they are not NULL. */
int memdb_item_check(const struct memdb_table *t, const struct tt_av *item,
                     const char *size_msg, struct memdb_kv *pk, struct memdb_kv *sk,
                     struct tt_backend_error *e);
/* Copies member `name` (NULL: none) of `item` into the M `out` unless
 * `item` lacks it or `out` has it already. Returns 0 or -1 (memory). */
int memdb_copy_attr(struct tt_av *out, const struct tt_av *item, const char *name);
/* The key attributes of an item as a new M (for LastEvaluatedKey etc.). */
int memdb_key_of(const struct memdb_table *t, const struct memdb_index *ix,
                 const struct tt_av *item, struct tt_av *out);

/* A visible (not expired) item by key, decoded into *out; *found false when
 * absent. *phys gets the stored item even when expired (to be replaced). */
int memdb_lookup(struct memdb *m, struct memdb_table *t, const struct memdb_kv *pk,
                 const struct memdb_kv *sk, struct memdb_item **phys, struct tt_av *out,
                 bool *found, struct tt_backend_error *e);

/* A read item (moved, or freed once projected) as the answer: the item, or
 * its projection by proj when proj is not NULL. */
int memdb_project_item(const struct tt_expr *proj, struct tt_av *item, struct tt_av *out,
                       struct tt_backend_error *e);

/* Builds the ConditionalCheckFailedException (with Item when asked). */
int memdb_condition_failed(struct tt_backend_error *e, const struct tt_av *old_item);

/* ---- ops_item.c: one prepared write, shared by PutItem, UpdateItem,
 * DeleteItem, BatchWriteItem and TransactWriteItems ---- */
enum memdb_wr_kind { MEMDB_WR_PUT = 1, MEMDB_WR_UPDATE, MEMDB_WR_DELETE, MEMDB_WR_CHECK };

struct memdb_wr {
  struct memdb *m;
  enum memdb_wr_kind kind;
  struct memdb_table *t;
  const struct tt_av *item; /* PUT: the item; otherwise the Key (the caller's) */
  struct memdb_kv pk, sk;
  struct memdb_exprs x;
  struct tt_expr *cond, *update;
  bool all_old_on_fail; /* ReturnValuesOnConditionCheckFailure=ALL_OLD */
  /* filled by memdb_wr_eval */
  struct memdb_item *phys;
  struct tt_av old, next;
  bool found, has_next;
};

/* Validates one write of a typed request (borrowed until the write is
 * freed) and prepares it. On failure the write is freed. */
int memdb_wr_prepare_typed(struct memdb *m, enum memdb_wr_kind kind,
                           const struct tt_ddb_item_request *r, struct memdb_wr *w,
                           struct tt_backend_error *e);
/* Reads the current item, checks the condition and computes the new item.
 * Returns 0 (ok), 1 (condition false), -1 (error in e: update or size). */
int memdb_wr_eval(struct memdb *m, struct memdb_wr *w, struct tt_backend_error *e);
/* Applies an evaluated write. Returns 0 or -1 (out of memory). */
int memdb_wr_apply(struct memdb_wr *w, struct tt_backend_error *e);
void memdb_wr_free(struct memdb_wr *w);

/* ---- limits.c: DynamoDB's limits; each returns 0, or -1 with a
 * ValidationException in e ---- */

/* An S or B key value of at most MEMDB_PK_MAX (is_hash) or MEMDB_SK_MAX
 * bytes; other types always pass. Borrows v. */
int memdb_limit_key_value(const struct tt_av *v, bool is_hash, struct tt_backend_error *e);
/* The key values an item gives the table's indexes, by the same rule.
 * Borrows t and item. */
int memdb_limit_index_keys(const struct memdb_table *t, const struct tt_av *item,
                           struct tt_backend_error *e);
/* Attribute names (every depth) of at most MEMDB_ATTR_NAME_MAX bytes and
 * values nested at most MEMDB_NEST_MAX levels. Borrows item (an M). */
int memdb_limit_item(const struct tt_av *item, struct tt_backend_error *e);
/* Placeholder keys of at most MEMDB_PLACEHOLDER_MAX bytes, names of at most
 * MEMDB_ATTR_NAME_MAX, nested values, MEMDB_EXPR_MAPS_MAX in all. Either
 * map may be NULL. Borrows both. */
int memdb_limit_exprs(const struct tt_av *names, const struct tt_av *values,
                      struct tt_backend_error *e);
/* The aggregate size of n prepared transaction writes. Borrows w. */
int memdb_limit_txn(const struct memdb_wr *w, size_t n, struct tt_backend_error *e);
/* Key attribute and projected names of a CreateTable request (or of the
 * GlobalSecondaryIndexUpdates Create actions of an UpdateTable request) of
 * at most MEMDB_KEY_NAME_MAX bytes. Borrows req. */
int memdb_limit_schema(const struct tt_ddb_table_request *r, struct tt_backend_error *e);

/* Frees a list of n definitions and their names. */
void memdb_defs_free(struct tt_ddb_attr_def *defs, size_t n);
/* Frees a list of n tags and their strings. */
void memdb_tags_free(struct tt_ddb_tag *tags, size_t n);

/* ---- table operations (ops_table.c): each takes a typed request, whose
 * shape table_json.h's reader checked when it came as JSON, and returns 0
 * with *out its answer, or -1 with e set ---- */
typedef int memdb_op_fn(struct memdb *m, const struct tt_ddb_table_request *r,
                        struct tt_ddb_table_desc *out, struct tt_backend_error *e);
memdb_op_fn memdb_op_create_table, memdb_op_list_tables, memdb_op_tag_resource,
    memdb_op_untag_resource, memdb_op_list_tags, memdb_op_update_table, memdb_op_describe_table,
    memdb_op_delete_table, memdb_op_update_ttl, memdb_op_describe_ttl;
/* Each table operation's, by its op (memdb.c). */
extern memdb_op_fn *const memdb_table_ops[TT_DDB_OP__COUNT];
/* A typed GetItem, PutItem, UpdateItem or DeleteItem (the only form the
 * memory backend takes of them): 0 with *out the Item or Attributes
 * (type 0 when none) and *r->consumed filled when r asks for it, or -1 with
 * e set. */
int memdb_op_item(struct memdb *m, enum tt_ddb_op op, const struct tt_ddb_item_request *r,
                  struct tt_av *out, struct tt_backend_error *e);
/* A typed Query (`query`) or Scan: 0 with *out the page (and
 * *r->consumed as memdb_op_item's), or -1 with e set. */
int memdb_op_read(struct memdb *m, bool query, const struct tt_ddb_read_request *r,
                  struct tt_ddb_read_result *out, struct tt_backend_error *e);
/* A typed BatchWriteItem (`write`) or BatchGetItem: 0 with *out the items
 * read, what was left unprocessed and the capacity, or -1 with e set. */
int memdb_op_batch(struct memdb *m, bool write, const struct tt_ddb_batch_request *r,
                   struct tt_ddb_batch_result *out, struct tt_backend_error *e);
/* A typed TransactWriteItems, or TransactGetItems (`get`): 0 with *out
 * the items read (get), or -1 with e set and, when the transaction was
 * canceled, *out its reasons. */
int memdb_op_transact(struct memdb *m, bool get, const struct tt_ddb_txn_request *r,
                      struct tt_ddb_txn_result *out, struct tt_backend_error *e);

#endif
