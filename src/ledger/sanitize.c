/* SPDX-License-Identifier: Apache-2.0 */
/* sanitize.c -- redaction and masking of secrets in what the job ledger stores and logs. */
#include "ledger/sanitize.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

/* ---- key classification ------------------------------------------------ */

/* All tables hold keys in normalized form: ASCII lower case without the
 * ignored separators. Adding a key is one line here plus one test row. */

/* Allowlisted keys win over the segment rule below: they name identifiers,
 * labels and counters, not credentials. token_type is allowlisted because its
 * value is a scheme label ("Bearer"), and the *_tokens counters of LLM/API
 * jobs are usage numbers. */
static const char *const allow_keys[] = {
    "cardbrand",    "cardbin",       "cardtype",       "cardlast4",     "cardlastfour",
    "last4",        "lastfour",      "merchantid",     "transactionid", "paymentid",
    "orderid",      "requestid",     "jobid",          "recordid",      "tenantid",
    "traceid",      "correlationid", "idempotencykey", "tokentype",     "tokencount",
    "inputtokens",  "outputtokens",  "totaltokens",    "maxtokens",     "prompttokens",
    "completiontokens", NULL};

/* Exact names whose whole value is replaced. */
static const char *const redact_keys[] = {
    "password",      "passwd",       "pwd",          "passphrase",         "secret",
    "token",         "accesstoken",  "refreshtoken", "idtoken",            "clientsecret",
    "apikey",        "xapikey",      "apitoken",     "privatekey",         "authorization",
    "proxyauthorization", "auth",    "cookie",       "setcookie",          "sessionid",
    "credential",    "credentials",  "signature",    "cvv",                "cvv2",
    "cvc",           "cvc2",         "securitycode", "pin",                NULL};

/* Any key containing one of these is redacted unless allowlisted
 * ("aws_secret_access_key", "x-auth-token", "db_password"). */
static const char *const redact_segments[] = {"token",  "secret",  "password", "passwd",
                                              "passphrase", "apikey", "privatekey", NULL};

static const char *const card_keys[] = {"cardnumber", "pan",    "primaryaccountnumber",
                                        "creditcardnumber", "ccnumber", "cardno",
                                        "cardnum", "creditcard", NULL};
/* "credit_card_number", "gift_card_number" */
static const char *const card_suffixes[] = {"cardnumber", NULL};

static const char *const last4_keys[] = {"ssn",  "socialsecuritynumber", "accountnumber",
                                         "accountno", "bankaccountnumber", "iban",
                                         "taxid", "tin", "ein", "itin", NULL};
/* "bank_account_number", "customer_social_security_number" */
static const char *const last4_suffixes[] = {"accountnumber", "socialsecuritynumber", NULL};

static bool key_ignorable(char c) {
  return c == '_' || c == '-' || c == ' ' || c == '\r' || c == '\n' || c == '\0';
}

static char ascii_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* Whether pattern `p` matches `k` from `pos` on, skipping ignorable bytes
 * between pattern characters; *end is set past the last matched byte. */
static bool match_at(const char *k, size_t n, size_t pos, const char *p, size_t *end) {
  size_t i = pos;
  for (; *p; p++) {
    while (i < n && key_ignorable(k[i]))
      i++;
    if (i >= n || ascii_lower(k[i]) != *p)
      return false;
    i++;
  }
  *end = i;
  return true;
}

static bool rest_ignorable(const char *k, size_t n, size_t from) {
  for (size_t i = from; i < n; i++)
    if (!key_ignorable(k[i]))
      return false;
  return true;
}

/* Tries every non-ignorable start position; `anchored_end` asks for the match
 * to reach the end of the key (suffix), `anchored_start` for it to begin at
 * the first significant byte (with both: equality). */
static bool key_matches(const char *k, size_t n, const char *const *list, bool anchored_start,
                        bool anchored_end) {
  for (size_t pos = 0; pos < n; pos++) {
    if (key_ignorable(k[pos]))
      continue;
    for (const char *const *p = list; *p; p++) {
      size_t end;
      if (match_at(k, n, pos, *p, &end) && (!anchored_end || rest_ignorable(k, n, end)))
        return true;
    }
    if (anchored_start)
      break;
  }
  return false;
}

enum tt_sanitize_rule tt_sanitize_key_rule(const char *key, size_t len) {
  /* Order: the allowlist beats everything; redaction beats masking so that
   * "card_number_token" is redacted, not masked. */
  if (key_matches(key, len, allow_keys, true, true))
    return TT_SANITIZE_RULE_ALLOW;
  if (key_matches(key, len, redact_keys, true, true) ||
      key_matches(key, len, redact_segments, false, false))
    return TT_SANITIZE_RULE_REDACT;
  if (key_matches(key, len, card_keys, true, true) ||
      key_matches(key, len, card_suffixes, false, true))
    return TT_SANITIZE_RULE_CARD;
  if (key_matches(key, len, last4_keys, true, true) ||
      key_matches(key, len, last4_suffixes, false, true))
    return TT_SANITIZE_RULE_LAST4;
  return TT_SANITIZE_RULE_NONE;
}

/* ---- masks ---------------------------------------------------------------- */

static bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

/* A card position is a digit or an already-masked '*' (so that masking a
 * masked value gives the same value). */
static bool card_position(char c) {
  return is_digit(c) || c == '*';
}

/* Whether `s` can be masked as a card number: positions, ' ' and '-' (kept
 * in place), CR/LF (stripped). Anything else is not a card number we can
 * mask by position, and is redacted whole. */
static bool card_maskable(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!card_position(s[i]) && s[i] != ' ' && s[i] != '-' && s[i] != '\r' && s[i] != '\n')
      return false;
  return true;
}

/* Appends the card mask of `s`. Only positions count: with 13 or more the
 * first 6 and last 4 stay; with fewer, keeping 6+4 would show (almost)
 * everything, so only the last 4 stay, and nothing with 4 or fewer.
 * Separators stay where they were: the value keeps its layout, and in free
 * text masking never glues two tokens together. */
static int put_card(struct tt_buf *b, const char *s, size_t n) {
  size_t npos = 0;
  for (size_t i = 0; i < n; i++)
    npos += card_position(s[i]);
  size_t idx = 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == '\r' || c == '\n')
      continue;
    if (card_position(c)) {
      bool keep;
      if (npos >= 13)
        keep = idx < 6 || idx >= npos - 4;
      else
        keep = npos > 4 && idx >= npos - 4;
      if (!keep)
        c = '*';
      idx++;
    }
    if (tt_buf_append(b, &c, 1) != 0)
      return -1;
  }
  return 0;
}

/* End of the character starting at s[i]: a byte and the UTF-8 continuation
 * bytes after it (a stray continuation byte counts as one character, so
 * counting and masking agree even on invalid UTF-8 in free text). */
static size_t next_char(const char *s, size_t n, size_t i) {
  size_t j = i + 1;
  while (j < n && ((unsigned char)s[j] & 0xC0) == 0x80)
    j++;
  return j;
}

/* Appends the last-4 mask of `s`: CR/LF dropped, every character (UTF-8 code
 * point) but the last 4 becomes one '*'; with 4 or fewer characters all of
 * them do, since keeping them would keep the whole value. */
static int put_last4(struct tt_buf *b, const char *s, size_t n) {
  size_t nchars = 0;
  for (size_t i = 0; i < n; i = next_char(s, n, i))
    nchars += s[i] != '\r' && s[i] != '\n';
  size_t keep_from = nchars > 4 ? nchars - 4 : nchars;
  size_t idx = 0;
  for (size_t i = 0, j; i < n; i = j) {
    j = next_char(s, n, i);
    if (s[i] == '\r' || s[i] == '\n')
      continue;
    int rc = idx < keep_from ? tt_buf_append(b, "*", 1) : tt_buf_append(b, s + i, j - i);
    if (rc != 0)
      return -1;
    idx++;
  }
  return 0;
}

static bool is_literal(const char *s, size_t n, const char *lit) {
  return n == strlen(lit) && memcmp(s, lit, n) == 0;
}

/* Appends `s` masked by `rule` (CARD, LAST4 or REDACT). Our own markers pass
 * unchanged, so that sanitizing a sanitized value changes nothing. */
static int put_masked(struct tt_buf *b, enum tt_sanitize_rule rule, const char *s, size_t n) {
  if (is_literal(s, n, TT_SANITIZE_REDACTED) || is_literal(s, n, TT_SANITIZE_TRUNCATED))
    return tt_buf_append(b, s, n);
  if (rule == TT_SANITIZE_RULE_CARD && card_maskable(s, n))
    return put_card(b, s, n);
  if (rule == TT_SANITIZE_RULE_LAST4)
    return put_last4(b, s, n);
  return tt_buf_puts(b, TT_SANITIZE_REDACTED);
}

/* ---- JSON walk ------------------------------------------------------------ */

/* Builds a JSON string from the buffer (NULL when rc, the writing's
 * outcome, is not 0) and frees the buffer. */
static json_t *string_from_buf(struct tt_buf *b, int rc) {
  json_t *s = rc == 0 ? json_stringn(b->data ? b->data : "", b->len) : NULL;
  tt_buf_free(b);
  return s;
}

/* Appends s[0..n) without CR and LF (nor NUL with `drop_nul`). */
static int append_stripped(struct tt_buf *b, const char *s, size_t n, bool drop_nul) {
  size_t start = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '\r' || s[i] == '\n' || (drop_nul && s[i] == '\0')) {
      if (tt_buf_append(b, s + start, i - start) != 0)
        return -1;
      start = i + 1;
    }
  }
  return tt_buf_append(b, s + start, n - start);
}

static json_t *sanitize_node(json_t *v, int level);
static json_t *sanitize_under(enum tt_sanitize_rule rule, json_t *v, int level);

/* The elements of list `v`, each sanitized under `rule`; TRUNCATED past
 * the depth limit. */
static json_t *sanitize_list(enum tt_sanitize_rule rule, json_t *v, int level) {
  if (level >= TT_SANITIZE_MAX_DEPTH)
    return json_string(TT_SANITIZE_TRUNCATED);
  json_t *out = json_array();
  if (out == NULL)
    return NULL;
  for (size_t i = 0; i < json_array_size(v); i++) {
    if (json_array_append_new(out, sanitize_under(rule, json_array_get(v, i), level + 1)) != 0) {
      json_decref(out);
      return NULL;
    }
  }
  return out;
}

/* Masks a value under a CARD or LAST4 key. Strings and integers (as their
 * digit text, sign dropped) are masked; a list is masked element by element;
 * anything else carries no maskable text and is redacted. */
static json_t *mask_node(enum tt_sanitize_rule rule, json_t *v, int level) {
  struct tt_buf b;
  tt_buf_init(&b, 0);
  if (json_is_string(v))
    return string_from_buf(&b, put_masked(&b, rule, json_string_value(v), json_string_length(v)));
  if (json_is_integer(v)) {
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    const char *p = digits;
    if (n > 0 && *p == '-') {
      p++;
      n--;
    }
    return string_from_buf(&b, n < 0 ? -1 : put_masked(&b, rule, p, (size_t)n));
  }
  if (json_is_array(v))
    return sanitize_list(rule, v, level);
  /* Reals have no faithful digit text (1e15 vs 1000000000000000), and objects,
   * booleans and null have none at all. */
  return json_string(TT_SANITIZE_REDACTED);
}

/* Sanitizes the value found under a key of rule `rule`. `level` counts the
 * containers enclosing `v`. */
static json_t *sanitize_under(enum tt_sanitize_rule rule, json_t *v, int level) {
  switch (rule) {
  case TT_SANITIZE_RULE_REDACT:
    return json_string(TT_SANITIZE_REDACTED);
  case TT_SANITIZE_RULE_CARD:
  case TT_SANITIZE_RULE_LAST4:
    return mask_node(rule, v, level);
  case TT_SANITIZE_RULE_NONE:
  case TT_SANITIZE_RULE_ALLOW:
    break;
  }
  return sanitize_node(v, level);
}

static int envelope_member(const char *k, size_t klen);

/* Sets the member `k` (klen bytes) of the object `out`, at `level`, to `v`
 * sanitized under the key's rule, the key without CR/LF/NUL. With
 * `drop_envelope`, a key that is an envelope member once stripped
 * ("message\n") is dropped: it must not replace the real one. Returns 0, or
 * -1 when out of memory. */
static int sanitize_member(json_t *out, const char *k, size_t klen, json_t *v, int level,
                           bool drop_envelope) {
  struct tt_buf key;
  tt_buf_init(&key, 0);
  int rc = append_stripped(&key, k, klen, true);
  const char *name = key.data ? key.data : "";
  /* Two keys that differ only by CR/LF/NUL collide: the later one wins.
   * Both values went through the same rule, so nothing leaks either way. */
  if (rc == 0 && !(drop_envelope && envelope_member(name, key.len) >= 0))
    rc = json_object_setn_new(out, name, key.len,
                              sanitize_under(tt_sanitize_key_rule(k, klen), v, level + 1));
  tt_buf_free(&key);
  return rc;
}

static json_t *sanitize_node(json_t *v, int level) {
  if (v == NULL)
    return NULL;
  switch (json_typeof(v)) {
  case JSON_OBJECT: {
    if (level >= TT_SANITIZE_MAX_DEPTH)
      return json_string(TT_SANITIZE_TRUNCATED);
    json_t *out = json_object();
    for (void *it = json_object_iter(v); out && it; it = json_object_iter_next(v, it))
      if (sanitize_member(out, json_object_iter_key(it), json_object_iter_key_len(it),
                          json_object_iter_value(it), level, false) != 0) {
        json_decref(out);
        out = NULL;
      }
    return out;
  }
  case JSON_ARRAY:
    return sanitize_list(TT_SANITIZE_RULE_NONE, v, level);
  case JSON_STRING: {
    struct tt_buf b;
    tt_buf_init(&b, 0);
    return string_from_buf(&b, append_stripped(&b, json_string_value(v), json_string_length(v),
                                               false));
  }
  case JSON_INTEGER:
  case JSON_REAL:
  case JSON_TRUE:
  case JSON_FALSE:
  case JSON_NULL:
    break;
  }
  return json_copy(v);
}

json_t *tt_sanitize_json(json_t *value) {
  return sanitize_node(value, 0);
}

/* ---- free text ------------------------------------------------------------ */

static bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c);
}

static bool is_blank(char c) {
  return c == ' ' || c == '\t';
}

static bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\v' || c == '\f';
}

/* Characters of a key word in text: "db.password", "x-api-key", "--token". */
static bool is_keychar(char c) {
  return is_alnum(c) || c == '_' || c == '-' || c == '.';
}

/* RFC 6750 b64token characters. */
static bool is_tokenchar(char c) {
  return is_alnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' ||
         c == '=';
}

static bool starts_with_ci(const char *t, size_t n, size_t i, const char *lit) {
  size_t l = strlen(lit);
  if (n - i < l)
    return false;
  for (size_t j = 0; j < l; j++)
    if (ascii_lower(t[i + j]) != lit[j])
      return false;
  return true;
}

static bool starts_with(const char *t, size_t n, size_t i, const char *lit) {
  size_t l = strlen(lit);
  return n - i >= l && memcmp(t + i, lit, l) == 0;
}

static const size_t redacted_len = sizeof TT_SANITIZE_REDACTED - 1;

/* The matchers below look at text `t` (n bytes, CR/LF already gone) at
 * position i. They return 1 after appending their output and setting *next,
 * 0 when they do not apply (nothing appended), -1 when memory ran out. */

/* "scheme://user:password@host": the whole userinfo becomes [REDACTED]. The
 * user part goes too: it is often a token ("https://ghp_x@github.com"), and
 * keeping it would need the other matchers to run inside it. The last '@'
 * ends the userinfo, as unencoded '@' in passwords is common. */
static int try_userinfo(const char *t, size_t n, size_t i, struct tt_buf *out, size_t *next) {
  if (!starts_with(t, n, i, "://"))
    return 0;
  size_t j = i + 3;
  size_t e = j;
  /* '[' cannot appear in userinfo (RFC 3986) and starts an IPv6 host or our
   * own marker: "://[REDACTED]@" is left as it is. */
  while (e < n && !is_space(t[e]) && strchr("/?#[\"'<>", t[e]) == NULL)
    e++;
  size_t at = e;
  for (size_t k = j; k < e; k++)
    if (t[k] == '@')
      at = k;
  if (at == e)
    return 0;
  if (tt_buf_puts(out, "://" TT_SANITIZE_REDACTED "@") != 0)
    return -1;
  *next = at + 1;
  return 1;
}

/* A JWT: "eyJ" (base64 of '{"') and at least two dots. */
static int try_jwt(const char *t, size_t n, size_t i, struct tt_buf *out, size_t *next) {
  if (!starts_with(t, n, i, "eyJ"))
    return 0;
  size_t j = i;
  int dots = 0;
  while (j < n && (is_alnum(t[j]) || t[j] == '-' || t[j] == '_' || t[j] == '.' || t[j] == '=')) {
    dots += t[j] == '.';
    j++;
  }
  if (dots < 2 || j - i < 10)
    return 0;
  if (tt_buf_puts(out, TT_SANITIZE_REDACTED) != 0)
    return -1;
  *next = j;
  return 1;
}

/* "Bearer <token>" anywhere: the scheme stays, the token goes. */
static int try_bearer(const char *t, size_t n, size_t i, struct tt_buf *out, size_t *next) {
  if (!starts_with_ci(t, n, i, "bearer") || i + 6 >= n || !is_blank(t[i + 6]))
    return 0;
  size_t p = i + 6;
  while (p < n && is_blank(t[p]))
    p++;
  size_t r = p;
  while (r < n && is_tokenchar(t[r]))
    r++;
  if (r == p)
    return 0;
  if (tt_buf_append(out, t + i, p - i) != 0 || tt_buf_puts(out, TT_SANITIZE_REDACTED) != 0)
    return -1;
  *next = r;
  return 1;
}

/* End of an unquoted redacted value. */
static size_t plain_value_end(const char *t, size_t n, size_t p) {
  while (p < n && !is_space(t[p]) && strchr(",;&)]}<>\"'", t[p]) == NULL)
    p++;
  return p;
}

static bool is_auth_scheme(const char *t, size_t len) {
  static const char *const schemes[] = {"bearer", "basic",  "digest", "token",
                                        "negotiate", "ntlm", NULL};
  for (const char *const *s = schemes; *s; s++)
    if (strlen(*s) == len && starts_with_ci(t, len, 0, *s))
      return true;
  return false;
}

/* `key=value`, `key: value`, `"key":"value"`, `key => value` (also with
 * JSON-escaped quotes) where the key's rule is REDACT, CARD or LAST4. */
static int try_pair(const char *t, size_t n, size_t i, struct tt_buf *out, size_t *next) {
  size_t w = i;
  while (w < n && is_keychar(t[w]))
    w++;
  enum tt_sanitize_rule rule = tt_sanitize_key_rule(t + i, w - i);
  if (rule != TT_SANITIZE_RULE_REDACT && rule != TT_SANITIZE_RULE_CARD &&
      rule != TT_SANITIZE_RULE_LAST4)
    return 0;
  size_t k = w;
  for (int q = 0; q < 3 && k < n && (t[k] == '\\' || t[k] == '"' || t[k] == '\''); q++)
    k++;
  while (k < n && is_blank(t[k]))
    k++;
  if (k >= n || (t[k] != ':' && t[k] != '='))
    return 0;
  k++;
  if (k < n && t[k] == '>')
    k++;
  while (k < n && is_blank(t[k]))
    k++;
  if (k >= n)
    return 0;

  size_t vstart = k, vend, close_start, close_end;
  size_t bs = 0;
  while (vstart + bs < n && t[vstart + bs] == '\\')
    bs++;
  if (vstart + bs < n && (t[vstart + bs] == '"' || t[vstart + bs] == '\'')) {
    char q = t[vstart + bs];
    size_t open_end = vstart + bs + 1;
    size_t m = open_end;
    if (bs == 0) {
      /* A plain quoted value: backslash escapes the next character. */
      while (m < n && t[m] != q)
        m += t[m] == '\\' ? 2 : 1;
      if (m > n)
        m = n;
      close_start = m;
    } else {
      /* A value inside an escaped JSON string (\"...\"): ends at the next
       * quote, whose backslashes belong to the closing sequence. */
      while (m < n && t[m] != q)
        m++;
      close_start = m;
      while (close_start > open_end && t[close_start - 1] == '\\')
        close_start--;
    }
    vstart = open_end;
    vend = close_start;
    close_end = m < n ? m + 1 : n;
  } else if (starts_with(t, n, vstart, TT_SANITIZE_REDACTED)) {
    /* Already clean: keep it, so sanitizing twice changes nothing. */
    if (tt_buf_append(out, t + i, vstart + redacted_len - i) != 0)
      return -1;
    *next = vstart + redacted_len;
    return 1;
  } else if (rule == TT_SANITIZE_RULE_REDACT) {
    vend = plain_value_end(t, n, vstart);
    if (vend == vstart)
      return 0;
    if (is_auth_scheme(t + vstart, vend - vstart) && vend < n && is_blank(t[vend])) {
      /* "Authorization: Bearer abc": keep the scheme, redact the credential. */
      size_t p = vend;
      while (p < n && is_blank(t[p]))
        p++;
      size_t r = starts_with(t, n, p, TT_SANITIZE_REDACTED) ? p + redacted_len
                                                             : plain_value_end(t, n, p);
      if (r > p) {
        vstart = p;
        vend = r;
      }
    }
    close_start = close_end = vend;
  } else {
    /* Card and last-4 values: letters, digits, '*', '_', '-' and single
     * spaces inside the number ("4111 1111 1111 1111"). For cards a space
     * between two positions (digit or '*') joins, since the card mask keeps
     * positions and separators in place: the masked value then has the same
     * extent when sanitized again. The last-4 mask turns spaces into '*', so
     * there only a space between two digits joins. */
    size_t m = vstart;
    while (m < n) {
      char c = t[m];
      if (is_alnum(c) || c == '-' || c == '_' || c == '*')
        m++;
      else if (c == ' ' && m > vstart && m + 1 < n &&
               (rule == TT_SANITIZE_RULE_CARD
                    ? card_position(t[m - 1]) && card_position(t[m + 1])
                    : is_digit(t[m - 1]) && is_digit(t[m + 1])))
        m++;
      else
        break;
    }
    if (m == vstart)
      return 0;
    vend = close_start = close_end = m;
  }
  if (tt_buf_append(out, t + i, vstart - i) != 0 ||
      put_masked(out, rule, t + vstart, vend - vstart) != 0 ||
      tt_buf_append(out, t + close_start, close_end - close_start) != 0)
    return -1;
  *next = close_end;
  return 1;
}

/* Digit runs: 13+ digits (card-like, even without a Luhn check: a mistyped
 * card number is still one) keep their first 6 and last 4; "ddd-dd-dddd"
 * (SSN-like) keeps its last 4; other runs stay. Always consumes the run. */
static int put_digit_run(const char *t, size_t n, size_t i, struct tt_buf *out, size_t *next) {
  size_t j = i, nd = 0;
  for (;;) {
    while (j < n && is_digit(t[j])) {
      j++;
      nd++;
    }
    if (j + 1 < n && (t[j] == ' ' || t[j] == '-') && is_digit(t[j + 1])) {
      j++;
      continue;
    }
    break;
  }
  int rc;
  if (nd >= 13)
    rc = put_card(out, t + i, j - i);
  else if (nd == 9 && j - i == 11 && t[i + 3] == '-' && t[i + 6] == '-')
    rc = (tt_buf_puts(out, "***-**-") != 0 || tt_buf_append(out, t + i + 7, 4) != 0) ? -1 : 0;
  else
    rc = tt_buf_append(out, t + i, j - i);
  *next = j;
  return rc;
}

char *tt_sanitize_text(const char *s, size_t len, size_t *out_len) {
  char *result = NULL;
  char *t = malloc(len + 1);
  struct tt_buf out;
  tt_buf_init(&out, 0);
  if (t == NULL)
    goto fail;
  /* CR/LF go first. In free text a run of them becomes one space (none at
   * the ends): removing them would glue words ("said\nBearer x" into
   * "saidBearer x", "id\npin=1" into "idpin=1") and hide the patterns below. */
  size_t n = 0;
  bool pending_space = false;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '\r' || s[i] == '\n') {
      pending_space = n > 0;
      continue;
    }
    if (pending_space)
      t[n++] = ' ';
    pending_space = false;
    t[n++] = s[i];
  }

  size_t i = 0;
  size_t boundary = 0; /* where the last match ended: a word may start there */
  while (i < n) {
    size_t next = i;
    int rc = try_userinfo(t, n, i, &out, &next);
    bool word_start = is_keychar(t[i]) && (i == boundary || !is_keychar(t[i - 1]));
    if (rc == 0 && word_start)
      rc = try_jwt(t, n, i, &out, &next);
    if (rc == 0 && word_start)
      rc = try_bearer(t, n, i, &out, &next);
    if (rc == 0 && word_start)
      rc = try_pair(t, n, i, &out, &next);
    if (rc == 0 && is_digit(t[i]))
      rc = put_digit_run(t, n, i, &out, &next) == 0 ? 1 : -1;
    if (rc < 0)
      goto fail;
    if (rc > 0) {
      i = boundary = next;
      continue;
    }
    if (tt_buf_append(&out, t + i, 1) != 0)
      goto fail;
    i++;
  }
  result = tt_buf_steal(&out, out_len);
fail:
  free(t);
  tt_buf_free(&out);
  return result;
}

/* ---- error envelope ------------------------------------------------------- */

/* The five envelope members: the free-text ones first, then retryable. */
static const char *const envelope_names[] = {"type", "code", "message", "retryable", "fields"};
#define TEXT_MEMBERS 3
#define RETRYABLE 3

/* The index of `k` (klen bytes) among the envelope members, or -1. */
static int envelope_member(const char *k, size_t klen) {
  for (int i = 0; i < 5; i++)
    if (is_literal(k, klen, envelope_names[i]))
      return i;
  return -1;
}

static int text_member(json_t *v, json_t **out) {
  size_t n;
  char *clean = tt_sanitize_text(json_string_value(v), json_string_length(v), &n);
  if (clean == NULL)
    return -1;
  *out = json_stringn(clean, n);
  free(clean);
  return *out ? 0 : -1;
}

int tt_sanitize_error_envelope(json_t *envelope, json_t **out, struct tt_error *err) {
  json_t *res = NULL;
  *out = NULL;
  if (!json_is_object(envelope))
    return tt_error_set(err, TT_ERR_VALIDATION, "error", "error must be an object");
  /* Shape first, so a bad envelope fails before any work. */
  static const char *const shapes[] = {"a string", "a string", "a string", "a boolean",
                                       "an object"};
  for (int m = 0; m < 5; m++) {
    json_t *v = json_object_get(envelope, envelope_names[m]);
    char field[16];
    snprintf(field, sizeof field, "error.%s", envelope_names[m]);
    if (v != NULL && !json_is_null(v) &&
        !(m < TEXT_MEMBERS ? json_is_string(v)
          : m == RETRYABLE ? json_is_boolean(v)
                           : json_is_object(v)))
      return tt_error_set(err, TT_ERR_VALIDATION, field, "%s must be %s", field, shapes[m]);
  }

  res = json_object();
  if (res == NULL)
    goto oom;
  for (void *it = json_object_iter(envelope); it; it = json_object_iter_next(envelope, it)) {
    const char *k = json_object_iter_key(it);
    size_t klen = json_object_iter_key_len(it);
    json_t *v = json_object_iter_value(it), *s = NULL;
    int m = envelope_member(k, klen);
    if (m >= 0 && json_is_null(v))
      continue;
    int rc;
    if (m >= 0 && m < TEXT_MEMBERS)
      rc = text_member(v, &s) != 0 ? -1 : json_object_setn_new(res, k, klen, s);
    else if (m == RETRYABLE)
      rc = json_object_setn_new(res, k, klen, json_copy(v));
    else /* fields and extra members: the map rules, as in any stored object */
      rc = sanitize_member(res, k, klen, v, 0, m < 0);
    if (rc != 0)
      goto oom;
  }
  *out = res;
  return 0;
oom:
  json_decref(res);
  return tt_error_set(err, TT_ERR_INTERNAL, "error", "out of memory while sanitizing error");
}
