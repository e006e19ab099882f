/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_sts_xml.c -- libFuzzer target for the STS XML reader (sts_xml.c):
 * AssumeRole / AssumeRoleWithWebIdentity success bodies and error codes.
 * The input is a length-delimited, non-NUL-terminated buffer, as curl hands
 * it over. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dynamodb/sts_xml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t bounded_len(const char *s, size_t cap) {
  size_t n = 0;
  while (n < cap && s[n])
    n++;
  return n;
}

static int printable(const char *s) {
  for (; *s; s++)
    if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f)
      return 0;
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* An exact-size copy, so ASan sees any read past the end. */
  char *buf = malloc(size ? size : 1);
  if (buf == NULL)
    return 0;
  memcpy(buf, data, size);
  struct tt_creds c;
  const char *why = NULL;
  int rc = tt_sts_parse_credentials(buf, size, "fuzz", &c, &why);
  if (rc == 0) {
    /* Accepted credentials are non-empty, NUL-terminated, printable. */
    if (bounded_len(c.access_key_id, sizeof(c.access_key_id)) == sizeof(c.access_key_id) ||
        bounded_len(c.secret_access_key, sizeof(c.secret_access_key)) ==
            sizeof(c.secret_access_key) ||
        bounded_len(c.session_token, sizeof(c.session_token)) == sizeof(c.session_token) ||
        !c.access_key_id[0] || !c.secret_access_key[0] || !c.session_token[0] ||
        !printable(c.access_key_id) || !printable(c.secret_access_key) ||
        !printable(c.session_token) || strcmp(c.source, "fuzz") != 0)
      abort();
  } else {
    /* A refusal says why and leaves nothing behind. */
    if (rc != -1 || why == NULL || why[0] == '\0' || c.access_key_id[0] ||
        c.secret_access_key[0] || c.session_token[0])
      abort();
  }
  tt_creds_clear(&c);
  char code[64];
  tt_sts_error_code(buf, size, code, sizeof(code));
  if (bounded_len(code, sizeof(code)) == sizeof(code))
    abort();
  for (const char *p = code; *p; p++)
    if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
          *p == '.' || *p == '_'))
      abort();
  free(buf);
  return 0;
}
