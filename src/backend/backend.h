/* SPDX-License-Identifier: Apache-2.0 */
/* backend.h -- the backend port: one asynchronous call per DynamoDB
 * operation, so the memory backend and the dynamodb backend are
 * interchangeable. Every DynamoDB operation crosses it as typed values
 * (struct tt_ddb_item_request, tt_ddb_read_request, tt_ddb_txn_request,
 * tt_ddb_batch_request, tt_ddb_table_request); DynamoDB's JSON exists only
 * at its wire: the dynamodb backend and the DynamoDB listener
 * (docs/internals/typed-port.md). KMS's operations cross as KMS's JSON. */
#ifndef TT_BACKEND_BACKEND_H
#define TT_BACKEND_BACKEND_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "util/arena.h"
#include "value/av.h"

enum tt_ddb_op {
  TT_DDB_GET_ITEM,
  TT_DDB_PUT_ITEM,
  TT_DDB_UPDATE_ITEM,
  TT_DDB_DELETE_ITEM,
  TT_DDB_QUERY,
  TT_DDB_SCAN,
  TT_DDB_BATCH_GET_ITEM,
  TT_DDB_BATCH_WRITE_ITEM,
  TT_DDB_TRANSACT_WRITE_ITEMS,
  TT_DDB_TRANSACT_GET_ITEMS,
  TT_DDB_CREATE_TABLE,
  TT_DDB_DESCRIBE_TABLE,
  TT_DDB_DELETE_TABLE,
  TT_DDB_UPDATE_TIME_TO_LIVE,
  TT_DDB_DESCRIBE_TIME_TO_LIVE,
  TT_DDB_UPDATE_TABLE, /* GlobalSecondaryIndexUpdates (Create) */
  TT_DDB_LIST_TABLES,  /* the DynamoDB listener's ListTables (api/ddb_listener.c) */
  TT_DDB_TAG_RESOURCE, /* tags of a table (the DynamoDB listener's) */
  TT_DDB_UNTAG_RESOURCE,
  TT_DDB_LIST_TAGS_OF_RESOURCE,
  /* AWS KMS (TrentService), for encrypted attributes: served only by a
   * backend made with tt_kms_backend_new (backend/kms/kms.h), which shares
   * the dynamodb backend's HTTP, SigV4 and credentials; the memory backend
   * refuses them. They are port operations so that the client layer gives
   * them the same retries, deadlines, metrics and joins. */
  TT_KMS_GENERATE_DATA_KEY,
  TT_KMS_DECRYPT,
  TT_DDB_OP__COUNT
};

/* DynamoDB's operation name ("GetItem"), as in X-Amz-Target and metrics. */
const char *tt_ddb_op_name(enum tt_ddb_op op);

/* A classified backend failure, filled once where it is detected (the
 * memory backend, or the dynamodb backend's response parser). `message` is
 * DynamoDB's text: it is returned to clients where docs/errors.md allows it but is
 * never logged, since DynamoDB may quote request content in it. */
struct tt_backend_error {
  char type[64];      /* short __type: "ConditionalCheckFailedException" */
  char message[512];
  unsigned http_status; /* 400, 500, ... (0 for transport errors) */
  bool retryable;       /* transient: 5xx, timeouts, connection errors */
  bool throttling;      /* ProvisionedThroughputExceeded, ThrottlingException, ... */
  uint32_t retry_after_ms; /* x-amz-retry-after, 0 when absent */
  char request_id[64];
  json_t *body;         /* the whole error body when it carries data (a failed
                           condition's Item); owned, may be NULL. A
                           transaction's reasons are in txn_out instead */
};

/* ReturnValues of a write. */
enum tt_ddb_return_values {
  TT_DDB_RETURN_NONE = 0,
  TT_DDB_RETURN_ALL_OLD,
  TT_DDB_RETURN_UPDATED_OLD,
  TT_DDB_RETURN_ALL_NEW,
  TT_DDB_RETURN_UPDATED_NEW
};

/* The ConsumedCapacity of a typed call whose request asks for it (its
 * `consumed` points here): CapacityUnits in all, the table's share, and for
 * a Query or Scan of an index that index's share. Filled by the memory
 * backend on success; the dynamodb backend neither asks DynamoDB for it
 * nor fills it (its one asker, the DynamoDB listener, serves the memory
 * backend only). */
struct tt_ddb_consumed {
  bool set;
  double total, table, index;
  bool index_global; /* which of GlobalSecondaryIndexes/LocalSecondaryIndexes */
};

/* GetItem, PutItem, UpdateItem and DeleteItem as typed values: what their
 * DynamoDB JSON would say, without the JSON. Everything is borrowed from
 * the caller, who keeps it alive and unchanged until the call's `done`
 * ran. Backends validate it as DynamoDB validates the JSON form (a NULL
 * key is "Value null at 'key'", unused placeholders are refused, ...);
 * members the operation does not have (a GetItem's condition, a write's
 * projection) are ignored. */
struct tt_ddb_item_request {
  const char *table;
  const struct tt_av *key;    /* M: GetItem, UpdateItem, DeleteItem */
  const struct tt_av *item;   /* M: PutItem */
  const char *condition;      /* ConditionExpression; NULL: none */
  const char *update;         /* UpdateItem's UpdateExpression; NULL: none */
  const char *projection;     /* GetItem's ProjectionExpression; NULL: all */
  const struct tt_av *names;  /* ExpressionAttributeNames (M of S); NULL: none */
  const struct tt_av *values; /* ExpressionAttributeValues (M); NULL: none */
  enum tt_ddb_return_values return_values;
  bool old_on_condition_failure; /* ReturnValuesOnConditionCheckFailure=ALL_OLD */
  bool consistent_read;
  struct tt_ddb_consumed *consumed; /* ReturnConsumedCapacity; NULL: not asked */
};

/* Select of a Query or Scan. */
enum tt_ddb_select {
  TT_DDB_SELECT_DEFAULT = 0, /* ALL_ATTRIBUTES, or ALL_PROJECTED_ATTRIBUTES on an index */
  TT_DDB_SELECT_ALL_ATTRIBUTES,
  TT_DDB_SELECT_ALL_PROJECTED_ATTRIBUTES,
  TT_DDB_SELECT_SPECIFIC_ATTRIBUTES,
  TT_DDB_SELECT_COUNT
};

/* Query and Scan as typed values; borrowed like tt_ddb_item_request. */
struct tt_ddb_read_request {
  const char *table;
  const char *index;          /* IndexName; NULL: the table */
  const char *key_condition;  /* Query's KeyConditionExpression */
  const char *filter;         /* FilterExpression; NULL: none */
  const char *projection;     /* ProjectionExpression; NULL: none */
  const struct tt_av *names;  /* ExpressionAttributeNames; NULL: none */
  const struct tt_av *values; /* ExpressionAttributeValues; NULL: none */
  const struct tt_av *start_key; /* ExclusiveStartKey (M); NULL: from the start */
  int64_t limit;              /* Limit; 0: none */
  enum tt_ddb_select select;
  bool backward;              /* Query's ScanIndexForward=false */
  bool consistent_read;
  int64_t segment, total_segments; /* Scan; total_segments 0: not parallel */
  struct tt_ddb_consumed *consumed; /* as tt_ddb_item_request's */
};

/* The page a typed Query or Scan answered. Owned by the call like
 * item_out. */
struct tt_ddb_read_result {
  struct tt_av *items; /* n_items M values (none for Select=COUNT) */
  size_t n_items;
  uint64_t count, scanned_count;
  struct tt_av last_key; /* LastEvaluatedKey; type 0 when the data ended */
  /* When items_in_arena, every part of every item lives in `arena` (a
   * backend may decode a page there: one malloc per chunk, not per value):
   * read them, or tt_av_clone one to keep or change it, but never
   * tt_av_free them. The items array and last_key are malloc'd either way. */
  bool items_in_arena;
  struct tt_arena arena;
};

/* The kind of one action of a transaction. */
enum tt_ddb_txn_kind {
  TT_DDB_TXN_CONDITION_CHECK,
  TT_DDB_TXN_PUT,
  TT_DDB_TXN_DELETE,
  TT_DDB_TXN_UPDATE,
  TT_DDB_TXN_GET /* TransactGetItems: all its steps, and only there */
};

/* One action of TransactWriteItems or TransactGetItems: the members of the
 * item request its kind has (a Put's item, the others' key; condition,
 * update, a Get's projection, the placeholder maps,
 * old_on_condition_failure). */
struct tt_ddb_txn_step {
  enum tt_ddb_txn_kind kind;
  struct tt_ddb_item_request r;
};

/* TransactWriteItems and TransactGetItems as typed values; borrowed like
 * tt_ddb_item_request. */
struct tt_ddb_txn_request {
  const struct tt_ddb_txn_step *steps;
  size_t n_steps;
  const char *client_token; /* TransactWriteItems' ClientRequestToken; NULL: none */
};

/* Why one action of a canceled transaction failed (CancellationReasons). */
struct tt_ddb_txn_reason {
  char code[64];     /* "None", "ConditionalCheckFailed", "TransactionConflict", ... */
  char *message;     /* NULL: none */
  struct tt_av item; /* the item as it was (ALL_OLD on a failed condition); type 0: none */
};

/* The answer of a typed transaction, owned by the call like item_out. On
 * success of TransactGetItems: one entry in `items` per step (an M, or
 * type 0 when no item has the key). On a TransactionCanceledException:
 * one reason per step (none when the answer gave none). */
struct tt_ddb_txn_result {
  struct tt_av *items;
  size_t n_items;
  struct tt_ddb_txn_reason *reasons;
  size_t n_reasons;
};

/* Frees what a transaction result owns and zeroes it. */
void tt_ddb_txn_result_free(struct tt_ddb_txn_result *r);

/* One table of a BatchGetItem or BatchWriteItem (a RequestItems member). */
struct tt_ddb_batch_table {
  const char *table;
  /* BatchGetItem's; NULL / false for BatchWriteItem: */
  const char *projection;     /* ProjectionExpression; NULL: all */
  const struct tt_av *names;  /* ExpressionAttributeNames; NULL: none */
  const struct tt_av *values; /* ExpressionAttributeValues (refused as unused); NULL: none */
  bool consistent_read;
};

/* One key of a BatchGetItem, or one write of a BatchWriteItem. */
struct tt_ddb_batch_entry {
  size_t table;              /* index in the request's tables */
  bool put;                  /* a PutRequest (else a key: BatchGetItem's, a DeleteRequest's) */
  const struct tt_av *value; /* the key or the item to put (M); NULL: none given */
};

/* BatchGetItem and BatchWriteItem as typed values; borrowed like
 * tt_ddb_item_request. The entries are in the request's order, those of
 * one table together. */
struct tt_ddb_batch_request {
  const struct tt_ddb_batch_table *tables;
  size_t n_tables;
  const struct tt_ddb_batch_entry *entries;
  size_t n_entries;
  /* ReturnConsumedCapacity: 0 NONE, 1 TOTAL, 2 INDEXES (the memory backend
   * answers it; the dynamodb backend sends and reads it) */
  int capacity;
};

/* An item a BatchGetItem read, or an entry it or a BatchWriteItem left
 * unprocessed (UnprocessedKeys / UnprocessedItems). */
struct tt_ddb_batch_value {
  size_t table;      /* index in the request's tables */
  bool put;          /* an unprocessed PutRequest: `value` is its item */
  struct tt_av value; /* the item read, the key, or the item to put (M) */
};

/* The answer of a typed batch, owned by the call like item_out. */
struct tt_ddb_batch_result {
  struct tt_ddb_batch_value *items; /* BatchGetItem's Responses */
  size_t n_items;
  struct tt_ddb_batch_value *left;  /* UnprocessedKeys / UnprocessedItems */
  size_t n_left;
  double *units; /* ConsumedCapacity, one per table when asked (else NULL) */
};

/* Frees what a batch result owns and zeroes it. */
void tt_ddb_batch_result_free(struct tt_ddb_batch_result *r);

/* DynamoDB's names of the two enums ("ALL_OLD", "COUNT"): NULL out of
 * range and for TT_DDB_SELECT_DEFAULT. One table, used both to write the
 * wire form and to read it. */
const char *tt_ddb_return_values_name(enum tt_ddb_return_values rv);
const char *tt_ddb_select_name(enum tt_ddb_select s);

/* Frees what a read result owns and zeroes it. */
void tt_ddb_read_result_free(struct tt_ddb_read_result *r);

/* Makes every item of r individually owned (cloned out of the arena), for
 * a caller that changes or keeps them. Returns 0, or -1 (memory; r is
 * unchanged). */
int tt_ddb_read_result_own_items(struct tt_ddb_read_result *r);


/* ---- table operations ---- */

/* A key schema: the HASH attribute and the RANGE one (NULL: none). */
struct tt_ddb_keys {
  const char *hash, *range;
};

/* One AttributeDefinitions entry. */
struct tt_ddb_attr_def {
  const char *name;
  enum tt_av_type type; /* TT_AV_S, TT_AV_N or TT_AV_B */
};

/* ProjectionType of an index. */
enum tt_ddb_projection { TT_DDB_PROJECT_ALL, TT_DDB_PROJECT_KEYS_ONLY, TT_DDB_PROJECT_INCLUDE };

/* BillingMode; UNSET: not given (a request) or no BillingModeSummary (a
 * description). */
enum tt_ddb_billing { TT_DDB_BILLING_UNSET, TT_DDB_BILLING_PROVISIONED, TT_DDB_BILLING_PAY_PER_REQUEST };

/* ProvisionedThroughput; the last three only in a description. */
struct tt_ddb_throughput {
  bool set; /* given / described */
  int64_t read, write;
  int64_t decreases_today;
  double last_increase, last_decrease; /* epoch seconds; 0: none */
};

/* A secondary index: in a CreateTable, as an UpdateTable's Create, in a
 * TableDescription (which alone has the last four). */
struct tt_ddb_index {
  const char *name;
  bool global;
  struct tt_ddb_keys keys;
  enum tt_ddb_projection projection;
  const char *const *include; /* NonKeyAttributes of INCLUDE */
  size_t n_include;
  struct tt_ddb_throughput throughput; /* a GSI's */
  const char *status;                  /* IndexStatus; NULL: none (an LSI) */
  int64_t item_count, size_bytes;
  const char *arn;
};

/* A tag of a table. */
struct tt_ddb_tag {
  const char *key, *value;
};

/* The table operations as typed values; borrowed like tt_ddb_item_request.
 * Each reads its members: CreateTable table, defs, keys, indexes, billing,
 * throughput; UpdateTable table, defs, billing, throughput, indexes (each a
 * GlobalSecondaryIndexUpdates Create) and updates (each an Update: an
 * index's name and throughput); UpdateTimeToLive table and the TTL's;
 * DescribeTable, DeleteTable, DescribeTimeToLive the table; ListTables limit
 * and start; TagResource arn and tags; UntagResource arn and tag_keys;
 * ListTagsOfResource arn. */
struct tt_ddb_table_request {
  const char *table;
  const struct tt_ddb_attr_def *defs;
  size_t n_defs;
  struct tt_ddb_keys keys;
  const struct tt_ddb_index *indexes;
  size_t n_indexes;
  const struct tt_ddb_index *updates;
  size_t n_updates;
  /* UpdateTable's GlobalSecondaryIndexUpdates Delete actions: counted, for
   * the limit DynamoDB checks first; the memory backend refuses them, and
   * only the DynamoDB listener, which serves it, reads them. */
  size_t n_deletes;
  enum tt_ddb_billing billing;
  struct tt_ddb_throughput throughput;
  const char *ttl_attribute;
  bool ttl_enabled;
  int64_t limit;     /* 0: none */
  const char *start; /* ExclusiveStartTableName; NULL: none */
  const char *arn;   /* ResourceArn */
  const struct tt_ddb_tag *tags;
  size_t n_tags;
  const char *const *tag_keys;
  size_t n_tag_keys;
};

/* The answer of a typed table operation: the TableDescription (DescribeTable's
 * Table), ListTables' names, ListTagsOfResource's tags (TagResource and
 * UntagResource answer nothing), or the TTL's (DescribeTimeToLive's
 * TimeToLiveDescription,
 * UpdateTimeToLive's TimeToLiveSpecification). Owned by the call like
 * item_out; every string and array lives in `arena`. */
struct tt_ddb_table_desc {
  const char *table, *status, *arn, *id; /* NULL: absent */
  struct tt_ddb_attr_def *defs;
  size_t n_defs;
  struct tt_ddb_keys keys;
  struct tt_ddb_index *indexes; /* GSIs, then LSIs */
  size_t n_indexes;
  int64_t item_count, size_bytes;
  double created;
  enum tt_ddb_billing billing;
  struct tt_ddb_throughput throughput;
  const char *ttl_status;    /* TimeToLiveStatus ("ENABLED", ...); NULL: absent */
  const char *ttl_attribute; /* NULL: none */
  bool ttl_enabled;          /* UpdateTimeToLive's Enabled */
  const char **names;        /* ListTables' TableNames */
  size_t n_names;
  const char *last_name;     /* LastEvaluatedTableName; NULL: none */
  struct tt_ddb_tag *tags;   /* ListTagsOfResource's Tags */
  size_t n_tags;
  struct tt_arena arena;
};

/* Frees what a table description owns and zeroes it. */
void tt_ddb_table_desc_free(struct tt_ddb_table_desc *d);
/* Frees a call's table_out (what it owns and itself) and sets it NULL. */
void tt_ddb_table_out_free(struct tt_ddb_table_desc **d);

struct tt_backend;
struct tt_backend_call;

/* The calling convention of the port is the daemon's one completion
 * contract (docs/internals/completions.md): start() refuses with a negative
 * error and `done` never runs, or returns 0 and `done` runs exactly once,
 * never inside start(), from a loop callback of the backend or from
 * run_ready(). Particular to the port:
 * - run_ready() is its trampoline: the owner of the stack (the server,
 *   after a handler returned) calls it, and it completes the calls that are
 *   ready now and those their completions start, at constant stack depth;
 *   it is not re-entrant (from inside a completion it returns 0).
 * - Retries wait on the client's timer, i.e. on the loop, never inside
 *   run_ready.
 * - A backend takes a call off its lists before `done` and never touches
 *   it afterwards: `done` may start the same struct again (the client does,
 *   for a query's next page). */
typedef void (*tt_backend_done_cb)(struct tt_backend_call *call);

/* One call. The caller owns the struct (usually in a request arena) and
 * keeps it alive until `done` ran. */
struct tt_backend_call {
  enum tt_ddb_op op;
  /* A typed operation (tt_backend_call_typed) has `item`, `read`, `txn`,
   * `batch` or `table` and no `request`; every other (KMS's) has `request`.
   * All borrowed by the backend. The memory backend takes the DynamoDB
   * operations only typed (their JSON is read and written at the DynamoDB
   * listener: api/ddb_items.c, api/ddb_typed.c, backend/table_json.c); the
   * dynamodb backend sends a JSON request of any operation as it is. */
  json_t *request;  /* KMS's request JSON (AWS KMS's own protocol) */
  const struct tt_ddb_item_request *item; /* GetItem, PutItem, UpdateItem, DeleteItem */
  const struct tt_ddb_read_request *read; /* Query, Scan */
  const struct tt_ddb_txn_request *txn;   /* TransactWriteItems, TransactGetItems */
  const struct tt_ddb_batch_request *batch; /* BatchGetItem, BatchWriteItem */
  const struct tt_ddb_table_request *table; /* the table operations of tt_ddb_table_request */
  /* On success of a typed call, set by the backend: GetItem's Item or the
   * write's Attributes (ReturnValues), TT_AV_M; type 0 when there is none.
   * Owned by the call: whoever frees the call's results frees it. */
  struct tt_av item_out;
  struct tt_ddb_read_result read_out; /* the same for a typed read */
  /* The same for a transaction; set on success and, with status -1, on a
   * TransactionCanceledException (its reasons; error.body is then NULL). */
  struct tt_ddb_txn_result txn_out;
  struct tt_ddb_batch_result batch_out; /* the same for a typed batch */
  /* The same for a typed table operation: its answer, malloc'd (NULL
   * when there is none); tt_ddb_table_out_free frees it. */
  struct tt_ddb_table_desc *table_out;
  json_t *response; /* on success of a JSON call: new reference set by the backend */
  int status;       /* 0 success, -1 failure (see error) */
  struct tt_backend_error error;
  tt_backend_done_cb done;
  void *arg;
  /* The account the call runs in: 0 = the backend's own, n = the n-th
   * partner account of the dynamodb backend (a start with an index it does
   * not know fails with UV_EINVAL). The memory backend has one account and
   * ignores it. Set by the client layer from the request's join. */
  unsigned account;
  /* Private to the backend. */
  struct tt_backend_call *next;
  void *impl;
  bool canceled;
};

struct tt_backend_ops {
  const char *name; /* "memory", "dynamodb" */
  /* Starts a call: 0, or a negative error (completions.md). */
  int (*start)(struct tt_backend *b, struct tt_backend_call *call);
  /* Asks a started call to finish early; done still runs once, with
   * error.type "RequestCanceled" unless the call already completed. */
  void (*cancel)(struct tt_backend *b, struct tt_backend_call *call);
  /* Closes the backend's loop handles; `closed` runs when they are closed.
   * No call may be outstanding. */
  void (*close)(struct tt_backend *b, void (*closed)(void *arg), void *arg);
  /* Frees the backend after close completed. */
  void (*destroy)(struct tt_backend *b);
  /* Optional (NULL: every call completes from the loop). Completes, in
   * start order, the calls that are ready now, including those that their
   * completions start, until none is left or CLOCK_MONOTONIC passes
   * `until_ns` (0: no limit; checked after each completion, so a slice
   * always makes progress). The rest complete from the loop as before.
   * Returns the number of calls completed. Call it only from the top of
   * the stack, never from inside a `done` (it would then return 0). */
  size_t (*run_ready)(struct tt_backend *b, uint64_t until_ns);
};

struct tt_backend {
  const struct tt_backend_ops *ops;
  uv_loop_t *loop;
  void *impl;
};

/* Whether a call is in typed form: `item` for GetItem, PutItem,
 * UpdateItem, DeleteItem; `read` for Query, Scan; `txn` for
 * TransactWriteItems, TransactGetItems; `batch` for BatchGetItem,
 * BatchWriteItem; `table` for the table operations of
 * tt_ddb_table_request. Else it is JSON. */
bool tt_backend_call_typed(const struct tt_backend_call *c);

/* Releases what a finished call holds, its results in every form and its
 * error's body, and leaves them empty. */
void tt_backend_call_results_free(struct tt_backend_call *c);

/* Clears an error and releases its body. */
void tt_backend_error_clear(struct tt_backend_error *e);

/* Fills an error: DynamoDB short type, message (printf), HTTP status; the
 * retryable/throttling flags follow from the type (one classifier for
 * every backend). Returns -1 for convenience. */
int tt_backend_error_set(struct tt_backend_error *e, const char *type, unsigned http_status,
                         const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
