/* SPDX-License-Identifier: Apache-2.0 */
/* number.h -- exact DynamoDB decimal numbers (38 significant digits). */
#ifndef TT_VALUE_NUMBER_H
#define TT_VALUE_NUMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* Parses decimal text (JSON number syntax, or DynamoDB's: optional sign,
 * digits, fraction, exponent) and writes its canonical text to out (NUL-
 * terminated, at most cap bytes): no leading '+', no superfluous zeros,
 * plain notation. Rejects more than 38 significant digits and magnitudes
 * outside DynamoDB's range (1E-130 .. 9.99...E+125) with a ValidationError
 * naming `field`. Returns 0 or -1. */
int tt_number_canonical(const char *text, size_t len, char *out, size_t cap,
                        const char *field, struct tt_error *err);

/* Compares two canonical numbers numerically. Returns <0, 0, >0. Also
 * accepts any valid DynamoDB number text (non-canonical spellings); text
 * that is not a number at all sorts by its bytes after every number. */
int tt_number_compare(const char *a, const char *b);

/* a + b (or a - b when subtract), exact, canonical into out. Fails with a
 * ValidationError when the result needs more than 38 digits or leaves
 * DynamoDB's range (DynamoDB never rounds: it refuses such updates).
 * Operands are valid DynamoDB numbers (canonical or not). */
int tt_number_add(const char *a, const char *b, int subtract, char *out, size_t cap,
                  struct tt_error *err);

/* Canonical text of an integer into out (cap >= 21 always suffices).
 * Returns the length, or -1 when cap is too small. */
int tt_number_from_int64(int64_t v, char *out, size_t cap);

/* Reads a canonical number as an int64. Returns 0, or -1 when it is not an
 * integer or does not fit (out untouched). */
int tt_number_to_int64(const char *canonical, int64_t *out);

/* Whether a client that parses this canonical number from a JSON number
 * into an IEEE-754 double gets the same value back: integers with
 * |v| <= 2^53 (every such integer is a double, exactly), and non-integers
 * with at most 15 significant digits (DBL_DIG: the nearest double converts
 * back to the same 15-digit decimal). Everything else travels as a string. */
bool tt_number_json_safe(const char *canonical);

/* DynamoDB's size of a number value in bytes: one byte per two significant
 * digits (rounded up) plus one, as "Item sizes and formats" documents. */
size_t tt_number_size(const char *canonical);

/* Enough room for any canonical DynamoDB number (sign, 38 digits, point,
 * up to 130 zeros of scale or 125 of magnitude). */
#define TT_NUMBER_TEXT_MAX 192

#endif
