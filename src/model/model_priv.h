/* SPDX-License-Identifier: Apache-2.0 */
/* model_priv.h -- construction helpers shared by the model module's files only. */
#ifndef TT_MODEL_MODEL_PRIV_H
#define TT_MODEL_MODEL_PRIV_H

#include <stddef.h>

#include "model/model.h"

/* "MODL": set while a model is alive, cleared when it is freed. */
#define TT_MODEL_MAGIC 0x4d4f444cu

/* A zeroed model with one reference; NULL when out of memory. */
struct tt_model *tt_model_priv_alloc(void);

/* Fills m->by_name (sorted attribute positions). Returns 0, or -1 when two
 * attributes share a name (then *dup_a < *dup_b are their positions). */
int tt_model_priv_index_names(struct tt_model *m, size_t *dup_a, size_t *dup_b);

/* Builds the cached canonical form once validation passed. Returns 0 or -1
 * (out of memory). */
int tt_model_priv_finish(struct tt_model *m);

/* A word of a closed DMS vocabulary and its value; a table of them ends
 * with a NULL word. */
struct tt_model_word {
  const char *word;
  unsigned value;
};

/* The formats, roles (bits), projection types and naming conventions. */
extern const struct tt_model_word tt_model_formats[], tt_model_roles[], tt_model_projections[],
    tt_model_conventions[];

/* The value of word s in tab; -1 when s is none of its words. */
int tt_model_word_parse(const struct tt_model_word *tab, const char *s);

/* The word of `value` in tab; NULL when none has it. */
const char *tt_model_word_of(const struct tt_model_word *tab, unsigned value);

/* Makes room for `extra` more items. Returns 0 or -1 (out of memory). */
int tt_model_list_reserve(struct tt_model_list *l, size_t extra);

#endif
