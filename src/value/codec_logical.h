/* SPDX-License-Identifier: Apache-2.0 */
/* codec_logical.h -- the plain JSON values of our REST API <-> tt_av, driven
 * by the DMS attribute type. */
#ifndef TT_VALUE_CODEC_LOGICAL_H
#define TT_VALUE_CODEC_LOGICAL_H

#include <jansson.h>

#include "util/buf.h"
#include "util/error.h"
#include "value/av.h"

/* Pass as `declared` when the attribute has no DMS type (undeclared
 * attributes of a model with additional_attributes, nested values): the
 * type is inferred from the JSON (string S, number N, bool BOOL, null
 * NULL, object M, array L). */
#define TT_LOGICAL_INFER ((enum tt_av_type)0)

/* Documents (M/L and json:true values) nest at most 32 levels. */
#define TT_LOGICAL_MAX_DEPTH 32

enum {
  /* DMS `json: true`. With declared S the value is stored as a
   * deterministic JSON string (keys sorted, no spaces, numbers canonical,
   * strings escaped as Go's encoding/json does) and JSON null as NULL; with
   * any other type it changes nothing on write. On read, an S value is
   * parsed back into JSON whatever the declared type (old writers stored
   * S), falling back to the plain string when it is not JSON. */
  TT_LOGICAL_JSON = 1,
  /* DMS `format: decimal_string`: N values are always written as JSON
   * strings. */
  TT_LOGICAL_N_STRING = 2
};

/* Converts a logical JSON value (from tt_json_parse; jansson integers are
 * accepted too) of the attribute `attr` with DMS type `declared` into *out
 * (a new value; caller frees). Rules: JSON null gives NULL for every type;
 * S a string; N a JSON number or a decimal string, exact (38 digits,
 * DynamoDB's range); B a standard base64 string; BOOL true/false; SS/NS/BS
 * a JSON array (strings / numbers or decimal strings / base64 strings)
 * without duplicates, an empty array stored as NULL; M an object and L an
 * array with inferred nested values. Errors are ValidationErrors whose
 * field is the attribute path ("metadata.child[2]") and whose message names
 * that path and the expected type, never the value. On failure *out is a
 * NULL value. Returns 0 or -1. */
int tt_logical_to_av(const json_t *in, enum tt_av_type declared, unsigned flags,
                     const char *attr, struct tt_av *out, struct tt_error *err);

/* Appends the logical JSON of v to b. `declared` and `flags` are the DMS
 * type and flags of the attribute (TT_LOGICAL_INFER when none): a NULL
 * stored for a declared set reads back as []. N is written as a JSON
 * number when tt_number_json_safe says a double-parsing client gets it
 * exactly (integers up to 2^53, other values with at most 15 significant
 * digits), else as a string; B and BS as standard base64. Returns 0 or -1
 * (b's cap or memory). */
int tt_logical_write(struct tt_buf *b, const struct tt_av *v, enum tt_av_type declared,
                     unsigned flags);

/* Same as a new jansson tree (numbers as tt_json_number_new marked
 * numbers: dump it with tt_json_dump). NULL when out of memory. */
json_t *tt_logical_from_av(const struct tt_av *v, enum tt_av_type declared, unsigned flags);

#endif
