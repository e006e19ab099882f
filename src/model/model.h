/* SPDX-License-Identifier: Apache-2.0 */
/* model.h -- a validated TableTheory DMS model and the lookups the ORM needs. */
#ifndef TT_MODEL_MODEL_H
#define TT_MODEL_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "util/error.h"
#include "value/av.h"

/* DMS document versions this daemon reads. */
enum tt_dms_version {
  TT_DMS_V0_1 = 1,
  TT_DMS_V0_2 = 2
};

/* Attribute roles (bit set). index_pk:/index_sk: roles are checked at load
 * and carry no extra meaning afterwards: the index itself names its keys. */
enum tt_model_role {
  TT_ROLE_PK = 1u << 0,
  TT_ROLE_SK = 1u << 1,
  TT_ROLE_CREATED_AT = 1u << 2,
  TT_ROLE_UPDATED_AT = 1u << 3,
  TT_ROLE_VERSION = 1u << 4,
  TT_ROLE_TTL = 1u << 5
};

/* The library-owned attributes, for tt_model_lifecycle(). */
enum tt_model_lifecycle {
  TT_LC_CREATED_AT = 0,
  TT_LC_UPDATED_AT,
  TT_LC_VERSION,
  TT_LC_TTL,
  TT_LC__COUNT
};

/* Value formats (DMS `format`). */
enum tt_model_format {
  TT_FORMAT_NONE = 0,
  TT_FORMAT_RFC3339NANO,   /* S: RFC 3339 timestamp with nanoseconds */
  TT_FORMAT_UNIX_SECONDS,  /* N: integer epoch seconds */
  TT_FORMAT_INT,           /* N: integer */
  TT_FORMAT_DECIMAL_STRING /* N: exact decimal, may travel as a string */
};

/* Attribute naming conventions (DMS `naming.convention`). */
enum tt_model_naming {
  TT_NAMING_NONE = 0,
  TT_NAMING_CAMEL_CASE, /* ^[a-z][A-Za-z0-9]*$, plus "PK" and "SK" */
  TT_NAMING_SNAKE_CASE, /* ^[a-z][a-z0-9]*(_[a-z0-9]+)*$ */
  TT_NAMING_DYNAMORM    /* validated as camelCase */
};

enum tt_model_index_kind {
  TT_INDEX_GSI = 1,
  TT_INDEX_LSI
};

enum tt_model_projection {
  TT_PROJECTION_ALL = 1,
  TT_PROJECTION_KEYS_ONLY,
  TT_PROJECTION_INCLUDE
};

/* One declared attribute. Items are keyed by `name`, the DynamoDB attribute
 * name (the DMS `attribute`); the DMS has no separate logical name. */
struct tt_model_attr {
  char *name;
  size_t name_len;
  char *json_key; /* the name as a JSON object key: quoted, escaped, then ':' */
  size_t json_key_len;
  enum tt_av_type type;
  unsigned roles; /* TT_ROLE_* bits */
  enum tt_model_format format;
  bool required;
  bool optional;
  bool omit_empty;
  bool json;      /* DMS `json: true` */
  bool binary;    /* DMS `binary: true` (type B) */
  bool encrypted; /* DMS `encryption` present: stored as an envelope M */
  bool is_protected; /* listed in write_policy.protected_attributes */
  bool unique;    /* tags.unique: true */
  json_t *tags;   /* the attribute's `tags` object as given, or NULL */
  json_t *index_roles; /* "index_pk:<i>"/"index_sk:<i>" roles as given, or NULL */
};

struct tt_model_index {
  char *name;
  enum tt_model_index_kind kind;
  const struct tt_model_attr *partition;
  const struct tt_model_attr *sort; /* NULL when the index has none */
  enum tt_model_projection projection;
  char **include; /* INCLUDE: the projected non-key attribute names */
  size_t n_include;
};

/* A validated model. Immutable once built; reference-counted because a
 * request in flight may keep using a model that PUT ?replace=true has just
 * replaced in the registry. Single-threaded (the one loop). */
struct tt_model {
  unsigned magic;
  unsigned refs;
  char *name;
  char *table;
  char *namespace_name; /* DMS `namespace`, or NULL */
  char *source;         /* file it came from, or NULL (registered at run time) */
  enum tt_dms_version dms_version;
  enum tt_model_naming naming;
  bool write_once;            /* write_policy.mode == write_once */
  bool additional_attributes; /* tags.additional_attributes: true */
  json_t *tags;               /* the model's `tags` object as given, or NULL */
  struct tt_model_attr *attrs; /* in declared order */
  size_t n_attrs;
  size_t *by_name;             /* indexes into attrs, sorted by name bytes */
  uint64_t *by_name_key8;      /* their first 8 bytes, big-endian, 0-padded */
  const struct tt_model_attr *pk;
  const struct tt_model_attr *sk; /* NULL for a partition-key-only table */
  const struct tt_model_attr *lifecycle[TT_LC__COUNT];
  struct tt_model_index *indexes; /* in declared order */
  size_t n_indexes;
  json_t *normal; /* canonical JSON form, built once */
};

/* Builds a model from one DMS model object, as sent in the body of
 * `PUT /v1/models/{m}`. The object may carry `dms_version` ("0.1" or "0.2";
 * default "0.2") and `namespace`, so that the output of tt_model_to_json
 * loads back unchanged. Borrows `obj`. `source` labels messages (NULL: none).
 * Returns 0 and *out (one reference, caller unrefs), or -1 with a
 * ValidationError such as `model User: attribute "email": unknown type "X"`
 * whose `field` is the JSON path of the offending member. */
int tt_model_from_json(const json_t *obj, const char *source, struct tt_model **out,
                       struct tt_error *err);

/* A growable list of model references (the registry and the document
 * loader use it). Zero-initialize; tt_model_list_clear drops every
 * reference and the storage. */
struct tt_model_list {
  struct tt_model **items;
  size_t n;
  size_t cap;
};

/* Appends `m`, stealing its reference. Returns 0, or -1 when out of memory
 * (then the reference is dropped). */
int tt_model_list_push(struct tt_model_list *l, struct tt_model *m);

/* Unrefs every model and frees the storage; the list is empty afterwards. */
void tt_model_list_clear(struct tt_model_list *l);

/* Validates a whole parsed DMS document (`dms_version`, `namespace`,
 * `models`) and appends a new reference for each of its models to `out`.
 * Borrows `doc`. `source` (the file path, or NULL) starts every message.
 * On failure nothing is appended and the ValidationError names the source,
 * the model and the attribute, e.g.
 * `models/user.yml: model User: attribute "email": unknown type "X"`, with
 * `field` set to the JSON path (`models[0].attributes[2].type`).
 * Returns 0 or -1. */
int tt_model_doc_load(const json_t *doc, const char *source, struct tt_model_list *out,
                      struct tt_error *err);

/* Takes one more reference; returns `m`. */
struct tt_model *tt_model_ref(struct tt_model *m);

/* Drops one reference; frees the model with the last one. NULL is a no-op. */
void tt_model_unref(struct tt_model *m);

/* The canonical JSON form (new reference, caller decrefs; NULL only when out
 * of memory): defaults written out (write_policy, projection), false flags
 * left out, roles in fixed order, attributes and indexes sorted by name,
 * protected attributes and INCLUDE fields sorted. Two models are identical
 * exactly when their canonical forms are equal; it loads back through
 * tt_model_from_json. `source` is not part of it. */
json_t *tt_model_to_json(const struct tt_model *m);

/* Whether two models are identical (same canonical form). */
bool tt_model_equal(const struct tt_model *a, const struct tt_model *b);

/* Finds a declared attribute by DynamoDB name (n bytes); NULL when absent.
 * O(log n). Borrowed pointer, valid while the model lives. */
const struct tt_model_attr *tt_model_attr_find(const struct tt_model *m, const char *name,
                                               size_t n);

/* The partition-key attribute (never NULL) and the sort-key attribute (NULL
 * when the table has none). */
/* tt_model_attr_find for names visited in ascending byte order (an M
 * value's members): a merge walk from *pos (start at 0), which it leaves at
 * the first attribute not below `name`. */
const struct tt_model_attr *tt_model_attr_seek(const struct tt_model *m, const char *name,
                                               size_t n, size_t *pos);

const struct tt_model_attr *tt_model_pk(const struct tt_model *m);
const struct tt_model_attr *tt_model_sk(const struct tt_model *m);

/* Whether `a` is the table's partition or sort key. */
bool tt_model_attr_is_key(const struct tt_model *m, const struct tt_model_attr *a);

/* The attribute holding a lifecycle role, or NULL when the model has none. */
const struct tt_model_attr *tt_model_lifecycle(const struct tt_model *m,
                                               enum tt_model_lifecycle which);

/* Finds an index by name; NULL when absent. */
const struct tt_model_index *tt_model_index_find(const struct tt_model *m, const char *name);

/* Chooses the query target whose keys are `pk_attr` (and `sk_attr`, NULL when
 * the query has no sort-key condition): *out = NULL for the base table, or
 * the index. A target matches when its partition key is pk_attr and, if
 * sk_attr is given, its sort key is sk_attr. The base table wins when it
 * matches; otherwise exactly one index must match. Returns 0, or -1 with a
 * ValidationError (field "index") that names the candidates when none or
 * several match. */
int tt_model_choose_index(const struct tt_model *m, const char *pk_attr, const char *sk_attr,
                          const struct tt_model_index **out, struct tt_error *err);

/* DMS spelling of a type ("S", "BOOL", ...); "?" for an unknown value. */
const char *tt_model_type_name(enum tt_av_type t);

#endif
