/* SPDX-License-Identifier: Apache-2.0 */
/* av.h -- the DynamoDB AttributeValue model shared by every layer. */
#ifndef TT_VALUE_AV_H
#define TT_VALUE_AV_H

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

enum tt_av_type {
  TT_AV_S = 1, /* string (UTF-8) */
  TT_AV_N,     /* number, kept as canonical decimal text */
  TT_AV_B,     /* binary, raw bytes */
  TT_AV_BOOL,
  TT_AV_NULL,
  TT_AV_SS,
  TT_AV_NS,
  TT_AV_BS,
  TT_AV_M,
  TT_AV_L
};

struct tt_av_member;

/* One AttributeValue. A value owns everything it points to (malloc'd);
 * tt_av_free releases it. `len` is the byte length for S/N/B and the
 * element count for SS/NS/BS/L/M. */
struct tt_av {
  enum tt_av_type type;
  size_t len;
  union {
    char *bytes;                  /* S, N, B: NUL-terminated for convenience */
    bool boolean;                 /* BOOL */
    struct tt_av *elems;          /* SS, NS, BS, L: `len` values */
    struct tt_av_member *members; /* M: `len` members, sorted by name bytes */
  } u;
};

struct tt_av_member {
  char *name; /* NUL-terminated, may not contain NUL */
  size_t name_len;
  struct tt_av value;
};

/* Frees what `v` owns and leaves it as NULL-typed. Safe on a zeroed value. */
void tt_av_free(struct tt_av *v);

/* Deep-copies src into *dst. Returns 0 or -1 (out of memory; *dst zeroed). */
int tt_av_clone(struct tt_av *dst, const struct tt_av *src);

/* DynamoDB equality: same type and value; sets compare as sets; N compares
 * numerically ("1.0" == "1"). */
bool tt_av_equal(const struct tt_av *a, const struct tt_av *b);

/* Ordering for key values and comparison operators on S, N and B only:
 * N numerically, S and B by unsigned bytes. Returns <0, 0, >0. The
 * caller ensures both values have the same scalar type. */
int tt_av_compare(const struct tt_av *a, const struct tt_av *b);

/* DynamoDB's size of one attribute (name + value) in bytes, as documented
 * in "Item sizes and formats". */
size_t tt_av_attr_size(const char *name, size_t name_len, const struct tt_av *v);

/* Size of a whole item (an M value, top-level members as attributes). */
size_t tt_av_item_size(const struct tt_av *item);

/* Looks up a member of an M value by name; NULL when absent (or when
 * `map` is not an M). Binary search: members are sorted. */
const struct tt_av *tt_av_map_get(const struct tt_av *map, const char *name);

/* Same with an explicit name length. */
const struct tt_av *tt_av_map_getn(const struct tt_av *map, const char *name,
                                   size_t name_len);

/* ---- constructors. Each overwrites *v without freeing what it held
 * (call tt_av_free first when reusing a value); on failure *v is left as a
 * zeroed NULL value and nothing leaks. ---- */

/* S value, copying `len` bytes of `s`. Does not check UTF-8 (codecs do).
 * Returns 0 or -1 (out of memory). */
int tt_av_string(struct tt_av *v, const char *s, size_t len);

/* B value, copying `len` raw bytes. Returns 0 or -1 (out of memory). */
int tt_av_binary(struct tt_av *v, const void *p, size_t len);

/* N value from decimal text, canonicalized (number.h rules). Errors are
 * ValidationErrors naming `field`. Returns 0 or -1. */
int tt_av_number_text(struct tt_av *v, const char *text, size_t len, const char *field,
                      struct tt_error *err);

/* N value from an integer. Returns 0 or -1 (out of memory). */
int tt_av_number_int(struct tt_av *v, long long n);

void tt_av_bool(struct tt_av *v, bool b);
void tt_av_null(struct tt_av *v);

/* An L, SS, NS or BS value with `n` zeroed (NULL-typed) slots for the
 * caller to fill. Returns 0 or -1 (out of memory). */
int tt_av_list(struct tt_av *v, enum tt_av_type type, size_t n);

/* An M value with `n` zeroed member slots; fill names and values, then
 * call tt_av_map_finish to sort them. Returns 0 or -1 (out of memory). */
int tt_av_map(struct tt_av *v, size_t n);

/* Names a member slot of such an M: a NUL-terminated copy of `len` bytes
 * of `name`. Returns 0 or -1 (out of memory). */
int tt_av_member_name(struct tt_av_member *m, const char *name, size_t len);

/* Sorts the members of an M by name bytes and rejects duplicate names
 * (ValidationError naming `field`). Returns 0 or -1. */
int tt_av_map_finish(struct tt_av *map, const char *field, struct tt_error *err);

/* Inserts or replaces member `name` of an M, keeping members sorted.
 * Steals *value (left zeroed) on success; on failure (-1, out of memory
 * or `map` not an M) the map and *value are unchanged. */
int tt_av_map_put(struct tt_av *map, const char *name, size_t name_len, struct tt_av *value);

/* Removes member `name` from an M. Returns 1 when removed, 0 when absent. */
int tt_av_map_remove(struct tt_av *map, const char *name);

/* Sorts the elements of an SS, NS or BS (bytes; NS numerically), and
 * rejects an empty set and duplicate members with a ValidationError naming
 * `field`. Sets are kept sorted so that equality and output are cheap and
 * deterministic. Returns 0 or -1. */
int tt_av_set_finish(struct tt_av *set, const char *field, struct tt_error *err);

/* Short type name as DynamoDB spells it ("S", "NS", "BOOL", ...). */
const char *tt_av_type_name(enum tt_av_type type);

/* Parses a DynamoDB type name; returns 0 when unknown. */
enum tt_av_type tt_av_type_parse(const char *name, size_t len);

#endif
