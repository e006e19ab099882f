/* SPDX-License-Identifier: Apache-2.0 */
/* dms_parse.h -- DMS file bytes (YAML's JSON-compatible subset, or JSON) to jansson trees. */
#ifndef TT_MODEL_DMS_PARSE_H
#define TT_MODEL_DMS_PARSE_H

#include <stddef.h>

#include <jansson.h>

#include "util/error.h"

/* Which grammar a DMS text is written in. */
enum tt_dms_syntax {
  TT_DMS_SYNTAX_YAML = 1, /* YAML 1.2, restricted to the JSON-compatible subset */
  TT_DMS_SYNTAX_JSON      /* strict JSON (RFC 8259), duplicate keys rejected */
};

/* Largest DMS file the loader reads; model files are a few kilobytes, so a
 * bigger one is a mistake (a wrong path), not a model. */
#define TT_DMS_MAX_FILE_BYTES (4u * 1024u * 1024u)

/* Deepest container nesting accepted in a DMS text. A DMS document nests
 * about six levels; the limit keeps recursion in jansson bounded. */
#define TT_DMS_MAX_DEPTH 64

/* Parses `len` bytes of DMS text into a new JSON array holding one element
 * per document (JSON text has exactly one; a YAML stream may hold several
 * `---` documents). YAML scalars become: quoted/block scalars -> strings;
 * plain `null`/`Null`/`NULL`/`~`/empty -> null; `true`/`false` (any YAML 1.2
 * case form) -> booleans; integers that fit in 64 bits -> integers; every
 * other plain scalar -> a string holding its exact text (so a decimal or a
 * huge integer is never rounded through a double, and `yes`, `on`,
 * `2020-01-01` stay strings). Anchors, aliases, duplicate keys and tags
 * other than !!str/!!map/!!seq/! are rejected.
 * `source` names the text in messages ("models/user.yml"; NULL for none).
 * Returns 0 and *out (new reference), or -1 with a ValidationError whose
 * message names the source, line and column. */
int tt_dms_parse(const char *data, size_t len, enum tt_dms_syntax syntax, const char *source,
                 json_t **out, struct tt_error *err);

/* Picks the syntax from a file name: ".json" -> JSON, ".yml"/".yaml" ->
 * YAML. Returns 0, or -1 when the name has none of these extensions. */
int tt_dms_syntax_from_path(const char *path, enum tt_dms_syntax *out);

/* Reads the whole file at `path` (at most TT_DMS_MAX_FILE_BYTES) and parses
 * it with the syntax its extension names. Returns 0 and *out (new reference,
 * an array of documents as tt_dms_parse), or -1 with a ValidationError
 * naming the path (unreadable, too large, wrong extension, bad syntax). */
int tt_dms_parse_file(const char *path, json_t **out, struct tt_error *err);

#endif
