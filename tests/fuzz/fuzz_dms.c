/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_dms.c -- libFuzzer target for the DMS loader: bytes -> YAML/JSON -> models -> JSON. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/dms_parse.h"
#include "model/model.h"
#include "model/registry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Checks what must hold for every model that loads: the canonical form
 * loads back to an identical model, and every lookup finds what it lists. */
static void check_model(const struct tt_model *m) {
  json_t *j = tt_model_to_json(m);
  if (j == NULL)
    return; /* out of memory */
  struct tt_model *back = NULL;
  struct tt_error err;
  if (tt_model_from_json(j, NULL, &back, &err) != 0 || !tt_model_equal(m, back))
    abort();
  tt_model_unref(back);
  json_decref(j);
  for (size_t i = 0; i < m->n_attrs; i++)
    if (tt_model_attr_find(m, m->attrs[i].name, m->attrs[i].name_len) != &m->attrs[i])
      abort();
  for (size_t i = 0; i < m->n_indexes; i++) {
    if (tt_model_index_find(m, m->indexes[i].name) != &m->indexes[i])
      abort();
    const struct tt_model_index *ix;
    (void)tt_model_choose_index(m, m->indexes[i].partition->name,
                                m->indexes[i].sort ? m->indexes[i].sort->name : NULL, &ix, &err);
  }
  const struct tt_model_index *ix = (const void *)1;
  if (tt_model_choose_index(m, m->pk->name, m->sk ? m->sk->name : NULL, &ix, &err) != 0 ||
      ix != NULL)
    abort();
}

/* The first byte picks the syntax (even: YAML, odd: JSON); the rest is the
 * DMS text. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  enum tt_dms_syntax syn = (data[0] & 1) ? TT_DMS_SYNTAX_JSON : TT_DMS_SYNTAX_YAML;
  const char *text = (const char *)data + 1;
  size_t len = size - 1;
  struct tt_error err;
  json_t *docs = NULL;
  if (tt_dms_parse(text, len, syn, "fuzz.yml", &docs, &err) != 0) {
    /* Every failure is a user-facing ValidationError (or out of memory). */
    if (err.code != TT_ERR_VALIDATION && err.code != TT_ERR_INTERNAL)
      abort();
    return 0;
  }
  struct tt_model_list list = {0};
  size_t i;
  json_t *doc;
  json_array_foreach(docs, i, doc) {
    if (tt_model_doc_load(doc, "fuzz.yml", &list, &err) != 0 && err.code != TT_ERR_VALIDATION &&
        err.code != TT_ERR_INTERNAL)
      abort();
  }
  for (size_t k = 0; k < list.n; k++)
    check_model(list.items[k]);
  tt_model_list_clear(&list);
  json_decref(docs);

  /* The registry path over the same text: all or nothing. */
  struct tt_model_registry *r = tt_model_registry_new();
  if (r != NULL) {
    if (tt_model_registry_load_text(r, text, len,
                                    syn == TT_DMS_SYNTAX_JSON ? "fuzz.json" : "fuzz.yml",
                                    &err) != 0 &&
        tt_model_registry_count(r) != 0)
      abort();
    tt_model_registry_free(r);
  }
  return 0;
}
