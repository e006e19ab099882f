/* SPDX-License-Identifier: Apache-2.0 */
/* batch.h -- typed batch-get and batch-write of one model: every key and
 * item checked before any I/O, DynamoDB-sized chunks run in parallel with a
 * bound, unprocessed work retried with backoff until done or the deadline;
 * the answer per entry (found item, done) and the count done. */
#ifndef TT_ORM_BATCH_H
#define TT_ORM_BATCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "orm/orm.h"

/* docs/batch.md: at most this many keys (batch-get) or requests (batch-write). */
#define TT_ORM_BATCH_MAX 10000
/* DynamoDB's limits per call. */
#define TT_ORM_BATCH_GET_CHUNK 100
#define TT_ORM_BATCH_WRITE_CHUNK 25
#define TT_ORM_BATCH_REQUEST_BYTES (16u * 1024u * 1024u)
/* Parallel chunks when the daemon was not told (--batch-concurrency). */
#define TT_ORM_BATCH_DEFAULT_CONCURRENCY 4

struct tt_orm_batch_state;

/* One entry of a batch: a key to read (batch-get), or a put or a delete
 * (batch-write). The caller owns its values and frees them
 * (tt_orm_batch_entries_free) once it read the answer. */
struct tt_orm_batch_entry {
  bool put;          /* batch-write: a put of `item`; else `key` is read or deleted */
  struct tt_av key;  /* an M of exactly the key attributes; a put's is set from its item */
  struct tt_av item; /* a put's whole item (tt_orm_item_from_json); sealed in place for a
                      * model with encrypted attributes */
  /* The answer. */
  bool done;          /* read (found or missing), or written */
  struct tt_av found; /* batch-get: the item read (an M, encrypted attributes opened); left
                       * empty (type 0) when it is missing */
};

/* One batch call. Fill the inputs into a zeroed op, then tt_orm_batch_start.
 * The op borrows the entries and `select` until its ctx's done ran. */
struct tt_orm_batch_op {
  struct tt_orm_ctx ctx; /* first; ctx.model is the batch's model */
  bool write;            /* batch-write; else batch-get */
  /* Entries; an entry's place in errors and answers is its index among
   * the entries of its list: "keys[i]", "put[i]" or "delete[i]". */
  struct tt_orm_batch_entry *entries;
  size_t n_entries;
  bool consistent;      /* batch-get: strongly consistent reads */
  struct tt_select select; /* batch-get: the projection (tt_orm_select_from_json); n 0:
                            * none */
  /* CLOCK_MONOTONIC nanoseconds of the request deadline (0 = none):
   * unprocessed work is not retried when the next backoff would pass it,
   * so the answer names what is left instead of timing out. */
  uint64_t deadline_ns;
  /* The answer: entries done, and whether the failure leaves entries
   * undone (those whose `done` is false): then it is BatchIncomplete, whose
   * `cause` is the code of the backend error that stopped the batch (TT_OK
   * when the deadline did), or the backend's error itself when it came
   * before anything was written (or it stopped a batch-get). */
  size_t processed;
  bool incomplete;
  enum tt_err_code cause;
  struct tt_orm_batch_state *st; /* private */
};

/* The number of chunks one batch call runs at once: orm->batch_concurrency
 * (--batch-concurrency, 1-64), or TT_ORM_BATCH_DEFAULT_CONCURRENCY when it
 * is 0 (not configured). */
unsigned tt_orm_batch_concurrency(const struct tt_orm *orm);

/* The refusals of a batch of model `m` that depend only on how many
 * entries of each kind it holds: more than TT_ORM_BATCH_MAX keys
 * (batch-get) or puts and deletes together (batch-write), a batch-write
 * of a model with unique attributes, or of one whose write policy refuses
 * a blind put (n_puts > 0) or delete (n_deletes > 0). Returns 0 or -1
 * with a ValidationError naming "keys", "put" or "delete". */
int tt_orm_batch_check_counts(const struct tt_model *m, bool write, size_t n_puts,
                              size_t n_deletes, struct tt_error *err);

/* Checks the whole batch before any I/O, in order: encryption
 * (tt_orm_query_check_crypt of `select`), tt_orm_batch_check_counts, the
 * select paths, then each entry (its key, and a key named twice: a
 * ValidationError naming both places, e.g. "keys[17]"), then the
 * projection; then runs the chunks. Success answers TT_ORM_ANSWER_NONE
 * with the answer in op: `processed`, and batch-get's `found` of every
 * entry. A failure after some work is `incomplete`: BatchIncomplete when
 * work is left at the deadline or after a backend error that came after
 * some requests were written, else the backend's error. A backend error
 * cancels the other chunks, which are still joined. The ctx's done runs
 * once later (0), or it finished inside this call (-1, result filled, done
 * never runs; docs/internals/completions.md). */
int tt_orm_batch_start(struct tt_orm_batch_op *op);

/* Fails op, never started, whose entries [0, n_typed) were typed, with the
 * first refusal tt_orm_batch_start would make of them, else with `input`:
 * the order of a request whose input failed to type. Returns -1, as a
 * start that finished inside it. */
int tt_orm_batch_fail_input(struct tt_orm_batch_op *op, size_t n_typed,
                            const struct tt_error *input);

/* Frees the key, item and found item of each of op's entries. */
void tt_orm_batch_entries_free(struct tt_orm_batch_op *op);

#endif
