/* SPDX-License-Identifier: Apache-2.0 */
/* number.c -- exact decimal parsing, canonical text, comparison and addition
 * for DynamoDB numbers, on digit strings only (never through a double). */
#include "value/number.h"

#include <stdio.h>
#include <string.h>

#define MAX_DIGITS 38
#define MIN_ADJ_EXP (-130) /* 1E-130 */
#define MAX_ADJ_EXP 125    /* 9.99...E+125 */

/* A decimal as coefficient digits and a power of ten: value = d * 10^e.
 * d has no leading or trailing zeros; n == 0 means zero. */
struct dec {
  bool neg;
  int n;
  int64_t e;
  char d[MAX_DIGITS];
};

enum parse_rc { P_OK = 0, P_SYNTAX, P_DIGITS, P_RANGE };

/* Parses DynamoDB/JSON decimal syntax: [+-] digits [. digits] [e [+-] digits],
 * where either side of the point may be empty but not both. Trailing zeros
 * become exponent, so "1000...0" with 50 zeros is one significant digit, as
 * DynamoDB counts it. */
static enum parse_rc parse(const char *s, size_t len, struct dec *out) {
  size_t i = 0;
  int64_t frac = 0, tz = 0, exp = 0;
  int64_t pending = 0; /* zeros seen since the last non-zero digit */
  size_t mant_digits = 0;
  bool point = false;

  out->neg = false;
  out->n = 0;
  out->e = 0;
  if (i < len && (s[i] == '-' || s[i] == '+')) {
    out->neg = s[i] == '-';
    i++;
  }
  for (; i < len; i++) {
    char c = s[i];
    if (c == '.') {
      if (point)
        return P_SYNTAX;
      point = true;
      continue;
    }
    if (c < '0' || c > '9')
      break;
    mant_digits++;
    if (point)
      frac++;
    if (c == '0') {
      if (out->n > 0)
        pending++;
      continue;
    }
    if (out->n + pending + 1 > MAX_DIGITS)
      return P_DIGITS;
    while (pending > 0) {
      out->d[out->n++] = '0';
      pending--;
    }
    out->d[out->n++] = c;
  }
  if (mant_digits == 0)
    return P_SYNTAX;
  tz = pending;
  if (i < len && (s[i] == 'e' || s[i] == 'E')) {
    bool eneg = false;
    size_t start;
    i++;
    if (i < len && (s[i] == '-' || s[i] == '+')) {
      eneg = s[i] == '-';
      i++;
    }
    start = i;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
      if (exp < (INT64_C(1) << 40)) /* saturate: far outside any range */
        exp = exp * 10 + (s[i] - '0');
    }
    if (i == start)
      return P_SYNTAX;
    if (eneg)
      exp = -exp;
  }
  if (i != len)
    return P_SYNTAX;
  if (out->n == 0) {
    out->neg = false;
    return P_OK;
  }
  out->e = tz - frac + exp;
  int64_t adj = out->e + out->n - 1;
  if (adj < MIN_ADJ_EXP || adj > MAX_ADJ_EXP)
    return P_RANGE;
  return P_OK;
}

/* Writes plain-notation text; returns its length or -1 if cap is short. */
static int format(const struct dec *x, char *out, size_t cap) {
  size_t k = 0;
  /* Worst case is "-0." + 129 zeros + 38 digits, well under 192. */
  char tmp[TT_NUMBER_TEXT_MAX];
  if (x->n == 0) {
    tmp[k++] = '0';
  } else {
    if (x->neg)
      tmp[k++] = '-';
    if (x->e >= 0) {
      memcpy(tmp + k, x->d, (size_t)x->n);
      k += (size_t)x->n;
      memset(tmp + k, '0', (size_t)x->e);
      k += (size_t)x->e;
    } else if (x->n + x->e > 0) {
      size_t ip = (size_t)(x->n + x->e);
      memcpy(tmp + k, x->d, ip);
      k += ip;
      tmp[k++] = '.';
      memcpy(tmp + k, x->d + ip, (size_t)x->n - ip);
      k += (size_t)x->n - ip;
    } else {
      size_t zeros = (size_t)(-(x->e + x->n));
      tmp[k++] = '0';
      tmp[k++] = '.';
      memset(tmp + k, '0', zeros);
      k += zeros;
      memcpy(tmp + k, x->d, (size_t)x->n);
      k += (size_t)x->n;
    }
  }
  if (k + 1 > cap)
    return -1;
  memcpy(out, tmp, k);
  out[k] = '\0';
  return (int)k;
}

static int report(enum parse_rc rc, const char *field, struct tt_error *err) {
  const char *f = field && *field ? field : "number";
  switch (rc) {
  case P_DIGITS:
    return tt_error_set(err, TT_ERR_VALIDATION, field,
                        "%s: a number can have at most 38 significant digits", f);
  case P_RANGE:
    return tt_error_set(err, TT_ERR_VALIDATION, field,
                        "%s: number magnitude is outside DynamoDB's range "
                        "(1E-130 to 9.9999999999999999999999999999999999999E+125)",
                        f);
  default:
    return tt_error_set(err, TT_ERR_VALIDATION, field, "%s: not a valid decimal number", f);
  }
}

int tt_number_canonical(const char *text, size_t len, char *out, size_t cap,
                        const char *field, struct tt_error *err) {
  struct dec x;
  enum parse_rc rc = parse(text, len, &x);
  if (rc != P_OK)
    return report(rc, field, err);
  if (format(&x, out, cap) < 0)
    return tt_error_set(err, TT_ERR_INTERNAL, field, "number buffer too small");
  return 0;
}

/* Magnitude comparison of two non-zero decimals. */
static int cmp_mag(const struct dec *a, const struct dec *b) {
  int64_t aa = a->e + a->n - 1, ab = b->e + b->n - 1;
  if (aa != ab)
    return aa < ab ? -1 : 1;
  int m = a->n < b->n ? a->n : b->n;
  int c = memcmp(a->d, b->d, (size_t)m);
  if (c != 0)
    return c < 0 ? -1 : 1;
  /* Equal prefix: the longer one has more non-zero digits below. */
  return (a->n > b->n) - (a->n < b->n);
}

static int cmp_dec(const struct dec *a, const struct dec *b) {
  int sa = a->n == 0 ? 0 : (a->neg ? -1 : 1);
  int sb = b->n == 0 ? 0 : (b->neg ? -1 : 1);
  if (sa != sb)
    return sa < sb ? -1 : 1;
  if (sa == 0)
    return 0;
  int m = cmp_mag(a, b);
  return sa < 0 ? -m : m;
}

int tt_number_compare(const char *a, const char *b) {
  struct dec x, y;
  bool okx = parse(a, strlen(a), &x) == P_OK;
  bool oky = parse(b, strlen(b), &y) == P_OK;
  if (okx && oky)
    return cmp_dec(&x, &y);
  if (okx != oky)
    return okx ? -1 : 1;
  int c = strcmp(a, b);
  return (c > 0) - (c < 0);
}

/* Digit positions span 10^-167 (lowest digit of a 38-digit number at
 * 1E-130) up to 10^126 (a carry above 9.9E+125): 294 places. */
#define SPAN 300
#define LOW_POS (-170)

static void place(const struct dec *x, unsigned char *acc) {
  for (int i = 0; i < x->n; i++) {
    int64_t pos = x->e + (x->n - 1 - i);
    acc[pos - LOW_POS] = (unsigned char)(x->d[i] - '0');
  }
}

int tt_number_add(const char *a, const char *b, int subtract, char *out, size_t cap,
                  struct tt_error *err) {
  struct dec x, y, r;
  unsigned char da[SPAN] = {0}, db[SPAN] = {0}, dr[SPAN] = {0};
  enum parse_rc rc;

  if ((rc = parse(a, strlen(a), &x)) != P_OK)
    return report(rc, NULL, err);
  if ((rc = parse(b, strlen(b), &y)) != P_OK)
    return report(rc, NULL, err);
  if (subtract && y.n)
    y.neg = !y.neg;
  place(&x, da);
  place(&y, db);
  r.neg = false;
  if (x.n == 0 || y.n == 0 || x.neg == y.neg) {
    int carry = 0;
    for (int i = 0; i < SPAN; i++) {
      int s = da[i] + db[i] + carry;
      dr[i] = (unsigned char)(s % 10);
      carry = s / 10;
    }
    r.neg = x.n ? x.neg : y.neg;
  } else {
    /* Different signs: subtract the smaller magnitude from the larger. */
    const unsigned char *big = da, *small = db;
    r.neg = x.neg;
    if (cmp_mag(&x, &y) < 0) {
      big = db;
      small = da;
      r.neg = y.neg;
    }
    int borrow = 0;
    for (int i = 0; i < SPAN; i++) {
      int s = big[i] - small[i] - borrow;
      borrow = s < 0;
      dr[i] = (unsigned char)(s < 0 ? s + 10 : s);
    }
  }
  int hi = SPAN - 1, lo = 0;
  while (hi >= 0 && dr[hi] == 0)
    hi--;
  if (hi < 0) {
    r.n = 0;
    r.neg = false;
    r.e = 0;
  } else {
    while (dr[lo] == 0)
      lo++;
    if (hi - lo + 1 > MAX_DIGITS)
      return tt_error_set(err, TT_ERR_VALIDATION, NULL,
                          "the result has more than 38 significant digits");
    r.n = hi - lo + 1;
    for (int i = 0; i < r.n; i++)
      r.d[i] = (char)('0' + dr[hi - i]);
    r.e = lo + LOW_POS;
    int64_t adj = r.e + r.n - 1;
    if (adj < MIN_ADJ_EXP || adj > MAX_ADJ_EXP)
      return report(P_RANGE, NULL, err);
  }
  if (format(&r, out, cap) < 0)
    return tt_error_set(err, TT_ERR_INTERNAL, NULL, "number buffer too small");
  return 0;
}

int tt_number_from_int64(int64_t v, char *out, size_t cap) {
  int n = snprintf(out, cap, "%lld", (long long)v);
  return (n < 0 || (size_t)n >= cap) ? -1 : n;
}

int tt_number_to_int64(const char *canonical, int64_t *out) {
  struct dec x;
  if (parse(canonical, strlen(canonical), &x) != P_OK || x.e < 0)
    return -1;
  if (x.n == 0) {
    *out = 0;
    return 0;
  }
  if (x.n + x.e > 19)
    return -1;
  /* Accumulate negatively so INT64_MIN fits. */
  int64_t v = 0;
  for (int64_t i = 0; i < x.n + x.e; i++) {
    int dg = i < x.n ? x.d[i] - '0' : 0;
    if (v < (INT64_MIN + dg) / 10)
      return -1;
    v = v * 10 - dg;
  }
  if (!x.neg) {
    if (v == INT64_MIN)
      return -1;
    v = -v;
  }
  *out = v;
  return 0;
}

bool tt_number_json_safe(const char *canonical) {
  struct dec x;
  if (parse(canonical, strlen(canonical), &x) != P_OK)
    return false;
  if (x.n == 0)
    return true;
  if (x.e >= 0) {
    /* Integer: |v| <= 2^53 = 9007199254740992 (16 digits). */
    static const char two53[] = "9007199254740992";
    int64_t width = x.n + x.e;
    if (width != 16)
      return width < 16;
    char full[17];
    memset(full, '0', 16);
    memcpy(full, x.d, (size_t)x.n);
    full[16] = '\0';
    return memcmp(full, two53, 16) <= 0;
  }
  return x.n <= 15;
}

size_t tt_number_size(const char *canonical) {
  struct dec x;
  if (parse(canonical, strlen(canonical), &x) != P_OK)
    return strlen(canonical); /* not a number: count its text */
  int digits = x.n ? x.n : 1;
  return (size_t)(digits + 1) / 2 + 1;
}
