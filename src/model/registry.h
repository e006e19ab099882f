/* SPDX-License-Identifier: Apache-2.0 */
/* registry.h -- the set of loaded models, by name: files, directories, run-time registration. */
#ifndef TT_MODEL_REGISTRY_H
#define TT_MODEL_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

#include "model/model.h"
#include "util/error.h"

struct tt_model_registry;

/* What tt_model_registry_put did. */
enum tt_model_put_result {
  TT_MODEL_PUT_CREATED = 1, /* the name was new (HTTP 201) */
  TT_MODEL_PUT_IDENTICAL,   /* an identical model was already there (200) */
  TT_MODEL_PUT_REPLACED     /* a different model was replaced (200) */
};

/* A new empty registry, or NULL when out of memory. Free with
 * tt_model_registry_free. */
struct tt_model_registry *tt_model_registry_new(void);

/* Drops the registry's reference to every model and frees it. Models that
 * requests still hold (tt_model_ref) live on. NULL is a no-op. */
void tt_model_registry_free(struct tt_model_registry *r);

/* Loads a DMS file, or every *.yml, *.yaml and *.json file directly inside a
 * directory (sorted by name; dot files and subdirectories skipped). All or
 * nothing: on any error the registry is unchanged. A model name already in
 * the registry is accepted only when the model is identical; a model that
 * shares its table with another must agree on the key schema and on any
 * index of the same name. Returns 0, or -1 with a ValidationError naming
 * the file, the model and the attribute. */
int tt_model_registry_load_path(struct tt_model_registry *r, const char *path,
                                struct tt_error *err);

/* Loads DMS text (bytes) as if it were a file called `source`. Same rules
 * as tt_model_registry_load_path. */
int tt_model_registry_load_text(struct tt_model_registry *r, const char *data, size_t len,
                                const char *source, struct tt_error *err);

/* Flags of tt_model_registry_put and tt_model_registry_check. */
enum {
  TT_MODEL_PUT_REPLACE = 1u << 0,     /* a different model may replace one of its name */
  TT_MODEL_PUT_ALLOW_UNSAFE = 1u << 1 /* ...even with changes stored items do not survive */
};

/* Adds or replaces one model (PUT /v1/models/{m}); steals the caller's
 * reference in every case. `flags` is a set of TT_MODEL_PUT_* (a bool
 * `true` is TT_MODEL_PUT_REPLACE). A different model under the same name is
 * an AlreadyExists error unless TT_MODEL_PUT_REPLACE; a replace with an
 * unsafe change (tt_model_unsafe_changes) is an UnsafeModelChange error
 * naming the first one unless TT_MODEL_PUT_ALLOW_UNSAFE too. Table-sharing
 * conflicts are ValidationErrors. Validates first, then changes the
 * registry: on -1 it is unchanged. Returns 0 with *result set, or -1. */
int tt_model_registry_put(struct tt_model_registry *r, struct tt_model *m, unsigned flags,
                          enum tt_model_put_result *result, struct tt_error *err);

/* What tt_model_registry_put would answer, without changing anything or
 * taking `m`'s reference: 0 with *result set, or -1 with its error. */
int tt_model_registry_check(const struct tt_model_registry *r, const struct tt_model *m,
                            unsigned flags, enum tt_model_put_result *result,
                            struct tt_error *err);

/* A change from one model to the next of its name that the items stored
 * under the old one do not survive (docs/models.md "Replacing a model"). */
enum tt_model_change_kind {
  TT_MODEL_CHANGE_KEYS = 1,           /* the table's key attributes or their types */
  TT_MODEL_CHANGE_INDEX_KEYS,         /* a kept index's kind, keys or their types */
  TT_MODEL_CHANGE_ENCRYPTION_REMOVED, /* a kept attribute loses its encryption */
  TT_MODEL_CHANGE_ENCRYPTED_DROPPED,  /* an encrypted attribute is no longer declared */
  TT_MODEL_CHANGE_ENCRYPTION_ADDED,   /* an attribute stored items may hold in plaintext
                                       * becomes encrypted */
  TT_MODEL_CHANGE_TYPE                /* a kept attribute's type or `json` flag */
};

struct tt_model_change {
  enum tt_model_change_kind kind;
  const char *name; /* the attribute or index (borrowed from a model); NULL for the keys */
};

/* The unsafe changes from `old` to `m`: stores up to `cap` of them in
 * `out` (the table's keys first, then attributes in name order, then
 * indexes in `old`'s order; at most one per attribute) and returns how
 * many there are. */
size_t tt_model_unsafe_changes(const struct tt_model *old, const struct tt_model *m,
                               struct tt_model_change *out, size_t cap);

/* A change's stable label for logs: "keys_changed", "index_keys_changed",
 * "encryption_removed", "encrypted_attribute_dropped", "encryption_added",
 * "type_changed". */
const char *tt_model_change_label(enum tt_model_change_kind kind);

/* The model called `name` as a client may use it: NULL when there is none
 * or when it is reserved (tt_model_registry_reserve_table). Borrowed: valid
 * until the registry changes; take tt_model_ref to keep it across a call
 * that may yield. Everything that serves a client's model name goes through
 * this or tt_model_registry_lookup, so no route can reach a reserved model. */
const struct tt_model *tt_model_registry_get(const struct tt_model_registry *r,
                                             const char *name);

/* Like tt_model_registry_get, with the reason when there is no model: a
 * ModelNotFound, or a ReservedModel (403) naming the owner of the table, in
 * `err` (field `field`, may be NULL). Borrowed. */
const struct tt_model *tt_model_registry_lookup(const struct tt_model_registry *r,
                                                const char *name, const char *field,
                                                struct tt_error *err);

/* The model called `name` whether reserved or not, or NULL. Only for the
 * owner of a reserved table (the job ledger) and for the daemon's own
 * start-up work; never with a name a client sent. Borrowed. */
const struct tt_model *tt_model_registry_get_internal(const struct tt_model_registry *r,
                                                      const char *name);

/* Reserves `table` (copied) for an internal owner named `owner` (copied,
 * used in messages, e.g. "the job ledger"): every model already registered
 * on it becomes reserved, and from now on tt_model_registry_put and the
 * loaders refuse, with ReservedModel, a model of a reserved name or any new
 * model on that table. One table per registry; returns 0, or -1 (out of
 * memory, or a second table). */
int tt_model_registry_reserve_table(struct tt_model_registry *r, const char *table,
                                    const char *owner, struct tt_error *err);

/* Whether `m` (of this registry) is reserved. */
bool tt_model_registry_is_reserved(const struct tt_model_registry *r, const struct tt_model *m);

/* The number of models, and the i-th in name order (borrowed, i < count),
 * reserved ones included (check tt_model_registry_is_reserved before showing
 * or using one for a client: GET /v1/models skips them).
 * Iterate with `for (i = 0; i < count; i++)`. */
size_t tt_model_registry_count(const struct tt_model_registry *r);
const struct tt_model *tt_model_registry_at(const struct tt_model_registry *r, size_t i);

/* The number of models that are not reserved: the user's own, as
 * GET /v1/models lists them and --check-config counts them. */
size_t tt_model_registry_count_user(const struct tt_model_registry *r);

#endif
