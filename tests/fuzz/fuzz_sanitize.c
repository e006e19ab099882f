/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_sanitize.c -- libFuzzer target for the ledger sanitizer (JSON, envelope, free text). */
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/sanitize.h"

/* Checks what must hold for any sanitized value: no CR/LF in strings or keys,
 * no NUL in keys, at most TT_SANITIZE_MAX_DEPTH container levels, every
 * redacted key holding exactly "[REDACTED]" and every masked key holding a
 * string (or a list). Aborts on a violation so libFuzzer reports it. */
static void check_clean(json_t *v, int level) {
  if (json_is_string(v)) {
    if (memchr(json_string_value(v), '\r', json_string_length(v)) ||
        memchr(json_string_value(v), '\n', json_string_length(v)))
      abort();
    return;
  }
  if (!json_is_object(v) && !json_is_array(v))
    return;
  if (level >= TT_SANITIZE_MAX_DEPTH)
    abort();
  if (json_is_array(v)) {
    for (size_t i = 0; i < json_array_size(v); i++)
      check_clean(json_array_get(v, i), level + 1);
    return;
  }
  for (void *it = json_object_iter(v); it; it = json_object_iter_next(v, it)) {
    const char *k = json_object_iter_key(it);
    size_t klen = json_object_iter_key_len(it);
    json_t *child = json_object_iter_value(it);
    if (memchr(k, '\r', klen) || memchr(k, '\n', klen) || memchr(k, '\0', klen))
      abort();
    switch (tt_sanitize_key_rule(k, klen)) {
    case TT_SANITIZE_RULE_REDACT:
      if (!json_is_string(child) || strcmp(json_string_value(child), TT_SANITIZE_REDACTED) != 0)
        abort();
      break;
    case TT_SANITIZE_RULE_CARD:
    case TT_SANITIZE_RULE_LAST4:
      if (!json_is_string(child) && !json_is_array(child))
        abort();
      break;
    case TT_SANITIZE_RULE_NONE:
    case TT_SANITIZE_RULE_ALLOW:
      break;
    }
    check_clean(child, level + 1);
  }
}

static void fuzz_json(json_t *v) {
  json_t *before = json_deep_copy(v);
  json_t *out = tt_sanitize_json(v);
  if (out == NULL)
    abort();
  check_clean(out, 0);
  /* Input untouched; sanitizing twice changes nothing. */
  if (!json_equal(v, before))
    abort();
  json_t *again = tt_sanitize_json(out);
  if (again == NULL || !json_equal(again, out))
    abort();
  json_decref(again);
  json_decref(out);

  json_t *env = NULL;
  struct tt_error err;
  if (tt_sanitize_error_envelope(v, &env, &err) == 0) {
    check_clean(env, 0);
    json_t *env2 = NULL;
    if (tt_sanitize_error_envelope(env, &env2, &err) != 0 || !json_equal(env, env2))
      abort();
    json_decref(env2);
    json_decref(env);
  } else if (env != NULL || err.code != TT_ERR_VALIDATION) {
    abort();
  }
  json_decref(before);
}

static void fuzz_text(const char *s, size_t n) {
  size_t len = 0;
  char *out = tt_sanitize_text(s, n, &len);
  if (out == NULL || out[len] != '\0' || memchr(out, '\r', len) || memchr(out, '\n', len))
    abort();
  size_t len2 = 0;
  char *again = tt_sanitize_text(out, len, &len2);
  if (again == NULL || len2 != len || memcmp(again, out, len) != 0)
    abort();
  free(again);
  free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_text((const char *)data, size);
  json_error_t jerr;
  json_t *v = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
  if (v != NULL) {
    fuzz_json(v);
    json_decref(v);
  }
  /* The bytes as a string under each kind of key, and as an envelope's
   * message (when they are valid UTF-8, as jansson requires). */
  json_t *s = json_stringn((const char *)data, size);
  if (s != NULL) {
    static const char *const keys[] = {"message", "card_number", "ssn", "token", "note"};
    json_t *obj = json_object();
    for (size_t i = 0; obj && i < sizeof keys / sizeof keys[0]; i++)
      json_object_set(obj, keys[i], s);
    if (obj)
      fuzz_json(obj);
    json_decref(obj);
    json_decref(s);
  }
  return 0;
}
