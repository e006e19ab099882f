/* SPDX-License-Identifier: Apache-2.0 */
/* credentials.h -- AWS credentials for signing: the provider interface the
 * dynamodb backend signs with, and the default chain (environment, shared
 * files and credential_process, web identity, ECS/EKS container endpoint,
 * EC2 IMDSv2), cached and refreshed before expiry on the loop. */
#ifndef TT_BACKEND_DYNAMODB_CREDENTIALS_H
#define TT_BACKEND_DYNAMODB_CREDENTIALS_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

/* One set of credentials. Secrets live only here and in the signer; wipe
 * with tt_creds_clear. */
struct tt_creds {
  char access_key_id[128];
  char secret_access_key[128];
  char session_token[4096]; /* "" when none */
  int64_t expires_at;       /* unix seconds; 0 = does not expire */
  char source[32];          /* "environment", "profile", "web-identity", ... (for logs) */
};

/* Wipes the secrets (OPENSSL_cleanse). */
void tt_creds_clear(struct tt_creds *c);

struct tt_creds_provider;

/* Completion of a credentials request: `creds` (borrowed for the callback)
 * on success, else `err` (never containing a secret). Runs on the loop. */
typedef void (*tt_creds_cb)(void *arg, const struct tt_creds *creds, const struct tt_error *err);

/* The interface a provider implements. get() answers from the cache when it
 * is fresh (the callback may then run before get returns), otherwise it
 * fetches on the loop; concurrent gets share one fetch. cancel() withdraws
 * a pending get (its callback then never runs). */
struct tt_creds_provider_ops {
  int (*get)(struct tt_creds_provider *p, tt_creds_cb cb, void *arg, void **handle);
  void (*cancel)(struct tt_creds_provider *p, void *handle);
  void (*close)(struct tt_creds_provider *p, void (*closed)(void *arg), void *arg);
  void (*destroy)(struct tt_creds_provider *p);
};

struct tt_creds_provider {
  const struct tt_creds_provider_ops *ops;
  void *impl;
};

#endif
