/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_creds.c -- libFuzzer target for what the credentials chain reads:
 * the shared config and credentials files (profiles, static keys, region),
 * credential_process output and the container/IMDS JSON documents, and
 * their ISO 8601 expiration times. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "backend/dynamodb/creds_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];
static char config_path[128], creds_path[128];
static char env_config[160], env_creds[160];

static void cleanup(void) {
  unlink(config_path);
  unlink(creds_path);
  rmdir(dir);
}

static void init(void) {
  if (dir[0])
    return;
  /* tmpfs when there is one: every input writes two files. */
  snprintf(dir, sizeof(dir), "%s/fuzz_creds.XXXXXX",
           access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
  if (mkdtemp(dir) == NULL)
    abort();
  atexit(cleanup);
  snprintf(config_path, sizeof(config_path), "%s/config", dir);
  snprintf(creds_path, sizeof(creds_path), "%s/credentials", dir);
  snprintf(env_config, sizeof(env_config), "AWS_CONFIG_FILE=%s", config_path);
  snprintf(env_creds, sizeof(env_creds), "AWS_SHARED_CREDENTIALS_FILE=%s", creds_path);
}

static void write_file(const char *path, const char *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (f == NULL || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0)
    abort();
}

/* Case-insensitive search in bytes that may hold NULs. */
static int contains(const char *p, size_t n, const char *word) {
  size_t w = strlen(word);
  for (size_t i = 0; i + w <= n; i++)
    if (strncasecmp(p + i, word, w) == 0)
      return 1;
  return 0;
}

/* Splits off the next NUL-separated part of [*p, end). */
static void part(const char **p, const char *end, const char **s, size_t *n) {
  const char *nul = memchr(*p, '\0', (size_t)(end - *p));
  *s = *p;
  *n = nul ? (size_t)(nul - *p) : (size_t)(end - *p);
  *p = nul ? nul + 1 : end;
}

static void check_creds(const struct tt_creds *c) {
  if (c->access_key_id[0] == '\0' || c->secret_access_key[0] == '\0' ||
      memchr(c->access_key_id, '\0', sizeof(c->access_key_id)) == NULL ||
      memchr(c->session_token, '\0', sizeof(c->session_token)) == NULL)
    abort();
}

/* The first byte: bit 0 selects AWS_PROFILE=dev (else "default"). Then
 * three NUL-separated parts: the config file, the credentials file, and a
 * JSON credentials document. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  init();
  if (size < 1)
    return 0;
  const char *p = (const char *)data + 1, *end = (const char *)data + size;
  const char *cfg, *cred, *doc;
  size_t cfg_n, cred_n, doc_n;
  part(&p, end, &cfg, &cfg_n);
  part(&p, end, &cred, &cred_n);
  doc = p;
  doc_n = (size_t)(end - p);

  /* The JSON documents, as each provider asks for them. */
  static const struct {
    const char *token;
    bool version, expiration;
    const char *source;
  } kinds[] = {{"SessionToken", true, false, "process"},
               {"Token", false, true, "container"},
               {"Token", false, true, "imds"}};
  for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
    struct tt_creds c;
    const char *why = NULL;
    memset(&c, 0, sizeof(c));
    if (creds_from_json(doc, doc_n, kinds[i].token, kinds[i].version, kinds[i].expiration,
                        kinds[i].source, &c, &why) == 0)
      check_creds(&c);
    else if (why == NULL || c.access_key_id[0] != '\0')
      abort(); /* a refusal says why and leaves nothing behind */
    tt_creds_clear(&c);
  }
  int64_t t;
  (void)creds_parse_time(doc, doc_n, &t);

  /* The profile files through the provider (not when they would start a
   * process or an STS call: those are not parsers). */
  write_file(config_path, cfg, cfg_n);
  write_file(creds_path, cred, cred_n);
  char *env[] = {env_config, env_creds, data[0] & 1 ? "AWS_PROFILE=dev" : NULL, NULL};
  struct creds_chain ch;
  memset(&ch, 0, sizeof(ch));
  ch.cache.magic = CREDS_CACHE_MAGIC;
  ch.env = env;
  char region[64];
  creds_profile_region(&ch, region, sizeof(region));
  if (memchr(region, '\0', sizeof(region)) == NULL)
    abort();
  if (!contains(cfg, cfg_n, "credential_process") && !contains(cred, cred_n, "credential_process") &&
      !contains(cfg, cfg_n, "web_identity_token_file") &&
      !contains(cred, cred_n, "web_identity_token_file")) {
    struct creds_job job;
    memset(&job, 0, sizeof(job));
    job.ch = &ch;
    job.src = CREDS_SRC_PROFILE;
    int rc = creds_profile_start(&job);
    if (rc == CREDS_DONE)
      check_creds(&job.out);
    else if (rc == CREDS_FAIL && job.err.message[0] == '\0')
      abort();
    else if (rc != CREDS_DONE && rc != CREDS_FAIL && rc != CREDS_SKIP)
      abort();
    tt_creds_clear(&job.out);
  }
  return 0;
}
