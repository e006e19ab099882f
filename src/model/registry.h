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

/* Adds or replaces one model (PUT /v1/models/{m}); steals the caller's
 * reference in every case. A different model under the same name is an
 * AlreadyExists error unless `replace`. Table-sharing conflicts are
 * ValidationErrors. Returns 0 with *result set, or -1. */
int tt_model_registry_put(struct tt_model_registry *r, struct tt_model *m, bool replace,
                          enum tt_model_put_result *result, struct tt_error *err);

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
