/* SPDX-License-Identifier: Apache-2.0 */
/* key.h -- primary keys of a model from JSON objects, typed keys and stored items. */
#ifndef TT_ORM_KEY_H
#define TT_ORM_KEY_H

#include <stddef.h>

#include <jansson.h>

#include "model/model.h"
#include "util/error.h"
#include "value/av.h"

/* Builds the key of model `m` from a JSON object {"PK": "...", "SK": "..."}
 * (batch-get/-delete keys, transactions): exactly the key attributes, typed
 * as item values are (S string, N number or decimal string, B standard
 * base64), non-empty. `field` is the JSON path of the object ("keys[3]";
 * NULL for none) and prefixes error fields ("keys[3].SK"). Returns 0 and a
 * new M in *key_out, or -1 with a ValidationError (missing key attribute,
 * an attribute that is not part of the key, wrong type) and a NULL value. */
int tt_orm_key_from_json(const struct tt_model *m, const json_t *obj, const char *field,
                         struct tt_av *key_out, struct tt_error *err);

/* Copies the key attributes of a full item (an M) into *key_out (a new M,
 * caller frees). Returns 0, or -1 with a ValidationError naming the missing
 * key attribute (field `field`, "item" when NULL) or Internal when out of
 * memory; *key_out is then a NULL value. */
int tt_orm_key_of_item(const struct tt_model *m, const struct tt_av *item, const char *field,
                       struct tt_av *key_out, struct tt_error *err);

/* Checks a typed key given by the caller: an M holding exactly the key
 * attributes of `m`, each as tt_orm_key_check_value wants it. Errors are
 * ValidationErrors with field `field` ("key" when NULL) naming the
 * attribute, never the value. Returns 0 or -1. */
int tt_orm_key_check(const struct tt_model *m, const struct tt_av *key, const char *field,
                     struct tt_error *err);

/* Checks one key value as DynamoDB requires: S, N or B as the attribute
 * declares, S and B non-empty. `field` names it in errors. Returns 0 or -1
 * (ValidationError). */
int tt_orm_key_check_value(const struct tt_model_attr *a, const struct tt_av *v,
                           const char *field, struct tt_error *err);

#endif
