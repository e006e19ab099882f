/* SPDX-License-Identifier: Apache-2.0 */
/* txn_internal.h -- what the files of transactions share (not an API):
 * the plan of a transaction (its actions) and the steps between files:
 * txn.c checks a typed request's actions, txn_build.c turns actions into
 * typed transaction steps (backend.h), txn_run.c runs, retries and answers
 * them, txn_item.c is the unique-guard single-item write. */
#ifndef TT_ORM_TXN_INTERNAL_H
#define TT_ORM_TXN_INTERNAL_H

#include <stdlib.h>
#include <string.h>

#include "client/sleep_op.h"
#include "obs/log.h"
#include "orm/crypt.h"
#include "orm/item.h"
#include "orm/key.h"
#include "orm/policy.h"
#include "orm/tokens.h"
#include "orm/txn.h"
#include "orm/unique.h"

#define K_CREATE TT_ORM_TXN_CREATE
#define K_PUT TT_ORM_TXN_PUT
#define K_UPDATE TT_ORM_TXN_UPDATE
#define K_DELETE TT_ORM_TXN_DELETE
#define K_CHECK TT_ORM_TXN_CHECK
#define K_GET TT_ORM_TXN_GET

/* One item of the transaction. */
struct action {
  /* Its inputs: the op's action, or a single write's own (field ""); its
   * key, item and upd are the state's to free. A single update's item is
   * the item read back for the answer; create and put items are sealed
   * before the write. */
  struct tt_orm_txn_action *in;
  struct tt_model *m; /* one reference */
  struct tt_av plain; /* single create/put of an encrypted model: the item
                       * before sealing, which the answer shows */
  bool must_exist;  /* single delete: 404 when absent */
  bool create_only; /* put with If-None-Match: * */
  bool unique;             /* the model keeps unique attributes */
  bool needs_old;          /* read the item before writing */
  bool touches_unique;     /* update: changes a unique attribute */
  struct tt_av old;        /* read before the write */
  bool old_found;
  struct tt_av newvals; /* update touching unique: their values after it */
  size_t main_at;       /* index of its own step in the transaction */
  size_t guard_at, n_guards;
  struct tt_unique_guard *guards;
  bool raced; /* the last write lost a race with another writer */
};

/* What the typed steps of one backend request point to besides the
 * actions and their guards: each step's texts and placeholder maps. */
struct txn_own {
  char *condition, *update, *projection;
  struct tt_av names, values;
};

/* One backend request in typed form, and what it owns. */
struct txn_plan {
  struct tt_ddb_txn_request req;
  struct tt_ddb_txn_step *steps;
  struct txn_own *own;
  size_t cap;
};

struct tt_orm_txn_state {
  struct tt_orm_ctx *ctx;
  struct tt_orm_item_op *single; /* single-item write, else NULL */
  struct tt_orm_txn_op *op;      /* /v1/transactions/..., else NULL */
  bool get;
  struct action *acts;
  size_t n;
  int64_t now;
  unsigned attempts;  /* writes sent */
  unsigned conflicts; /* conflict retries done */
  void (*sealed_next)(struct tt_orm_txn_state *st); /* txn_seal_actions' */
  struct tt_client_call call; /* its steps, one after another */
  struct tt_sleep_op sleep;
  size_t *read_of; /* read index -> action index */
  size_t n_reads;
  bool sealing; /* a write with values of encrypted attributes */
  struct tt_av *got; /* get: the items read, opened before the answer */
  struct txn_plan plan;  /* the write, or transactions/get's read */
  struct txn_plan reads; /* the reads of needs_old actions */
  struct tt_ddb_item_request reread; /* a single update's read of the new item */
  struct tt_span *span; /* the attempt's span (read, then write); NULL when not traced */
};

static inline const char *pk_name(const struct action *a) { return a->m->pk->name; }

/* "items[3].x" or "x" for a single item. */

static inline void subfield(const struct action *a, const char *name, char *out, size_t cap) {
  /* A longer path is cut: a field only points at the place. */
  size_t o = 0;
  const char *parts[3] = {a->in->field, a->in->field[0] ? "." : "", name};
  for (size_t p = 0; p < 3; p++)
    for (const char *c = parts[p]; *c && o + 1 < cap; c++)
      out[o++] = *c;
  out[o] = '\0';
}

/* The top-level attribute an update action targets. */

static inline const struct tt_model_attr *action_attr(const struct tt_model *m,
                                                      const struct tt_orm_action *x) {
  const char *name;
  size_t n = tt_orm_action_root(x, &name);
  return tt_model_attr_find(m, name, n);
}

/* ---- txn.c: the checks of actions ------------------------------------------------ */

/* Checks the model and key of an action of a model with unique attributes,
 * decides what must be read first and makes room for its guards. */
int txn_prepare_unique(struct tt_orm_txn_state *st, struct action *a, struct tt_error *err);
/* Compares the update's key attributes (TableTheory form) with the key. */
int txn_check_update_key(struct action *a, struct tt_error *err);

/* ---- txn_build.c: actions -> TransactWriteItems / TransactGetItems -------------- */

/* Builds the whole TransactWriteItems (or TransactGetItems) request into
 * st->plan. `snapshot`: the reads of needs_old actions are in. */
int txn_build_request(struct tt_orm_txn_state *st, bool snapshot, struct tt_error *err);

/* Appends a step of `kind` on `table` to plan; *own is its storage.
 * Returns the step, or NULL (memory). */
struct tt_ddb_txn_step *txn_plan_add(struct txn_plan *plan, enum tt_ddb_txn_kind kind,
                                     const char *table, struct txn_own **own);

/* Frees what a plan owns and empties it. */
void txn_plan_free(struct txn_plan *plan);

/* ---- txn_run.c: running, cancellation reasons, retries, answers ----------------- */

/* A state of n actions: in[i], or (in NULL) zeroed ones of its own. */
struct tt_orm_txn_state *txn_state_new(struct tt_orm_ctx *ctx, size_t n,
                                       struct tt_orm_txn_action *in);
void txn_state_free(struct tt_orm_txn_state *st);
/* Fails the request with err and finishes it. */
void txn_fail(struct tt_orm_txn_state *st, const struct tt_error *err);
/* Starts one backend step on st->call: the transaction `txn`, or (NULL)
 * st->reread's GetItem; a refused start completes as cb. */
void txn_call(struct tt_orm_txn_state *st, enum tt_ddb_op op, const struct tt_ddb_txn_request *txn,
              tt_client_done_cb cb);
/* Reads what the items that move guards hold now, then writes. */
void txn_start_attempt(struct tt_orm_txn_state *st);
/* The completion of a TransactGetItems of transactions/get. */
void txn_get_cb(struct tt_client_call *c);
/* Seals the values of encrypted attributes the actions write, then runs
 * next(st) once, or fails the transaction; returns 0, or -1 (neither). */
int txn_seal_actions(struct tt_orm_txn_state *st, void (*next)(struct tt_orm_txn_state *st),
                     struct tt_error *err);

#endif
