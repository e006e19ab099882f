/* SPDX-License-Identifier: Apache-2.0 */
/* creds_internal.h -- what the credentials chain files share: the chain and
 * fetch-job structs, the provider entry points and the parsing helpers. Not
 * for use outside src/backend/dynamodb/creds*.c and credentials.c. */
#ifndef TT_BACKEND_DYNAMODB_CREDS_INTERNAL_H
#define TT_BACKEND_DYNAMODB_CREDS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "backend/dynamodb/credentials.h"
#include "backend/dynamodb/creds_cache.h"
#include "util/error.h"

/* The providers, in chain order. */
enum creds_src {
  CREDS_SRC_ENV,
  CREDS_SRC_PROFILE,
  CREDS_SRC_WEB_IDENTITY,
  CREDS_SRC_CONTAINER,
  CREDS_SRC_IMDS,
  CREDS_SRC__COUNT
};

/* What a provider's start function reports. */
enum creds_start {
  CREDS_FAIL = -1, /* configured but failed: job->err says why */
  CREDS_SKIP = 0,  /* not configured: try the next provider */
  CREDS_DONE = 1,  /* answered synchronously into job->out */
  CREDS_ASYNC = 2  /* will call creds_job_async_done exactly once */
};

struct creds_process; /* creds_process.c */
struct creds_http_op; /* creds_http.c */
struct creds_files;   /* creds_files.c */

/* Size caps of the files a fetch reads. */
#define CREDS_PROFILE_FILE_CAP (1u << 20)
#define CREDS_TOKEN_FILE_CAP (64u * 1024)

/* The time each STS or container transfer, and each IMDS one, may take. */
#define CREDS_HTTP_TIMEOUT_MS 5000
#define CREDS_IMDS_TIMEOUT_MS 2000

struct creds_chain;

/* One fetch through the chain; at most one exists per chain. */
struct creds_job {
  struct creds_chain *ch;
  int src;         /* provider being tried */
  bool cancelled;  /* close() asked it to stop */
  bool background; /* refresh while the cached credentials are still usable */
  struct tt_creds out;
  struct tt_error err;
  struct creds_process *proc; /* running credential_process, or NULL */
  struct creds_http_op *http; /* running HTTP provider, or NULL */
  struct creds_files *files;  /* files being read off the loop, or NULL */
};

struct creds_chain {
  struct tt_creds_provider pub;
  uv_loop_t *loop;
  struct tt_http *http;
  char **env; /* copied "NAME=value" strings, NULL-terminated; wiped on free */
  char *home, *region, *sts_endpoint, *container_endpoint;
  uint32_t process_timeout_ms;

  /* Cached credentials, refresh schedule, waiters, hooks and the chain's
   * one handle (cache.timer, closed by close()). */
  struct creds_cache cache;
  int sticky; /* provider that answered last, or -1 */
  struct creds_job *job;

  /* IMDSv2 session token, reused until shortly before it expires. */
  char imds_token[512];
  int64_t imds_token_expires;

  /* While the providers run after a read off the loop: what was read
   * (creds_read_file answers from it). Loop thread only. */
  const struct creds_files *serving;
};

/* ---- credentials.c ---- */

/* The value of environment variable `name` in the chain's snapshot, or NULL
 * when unset or empty (AWS SDKs treat empty as unset). Borrowed. */
const char *creds_env(const struct creds_chain *ch, const char *name);

/* The current time (the injected clock). */
int64_t creds_now(const struct creds_chain *ch);

/* Ends an async provider: rc 0 with job->out filled, or -1 with job->err.
 * The job may be freed before this returns. */
void creds_job_async_done(struct creds_job *job, int rc);

/* Fills job->err with "credentials: <provider>: <reason>" and returns
 * CREDS_FAIL. */
int creds_job_fail(struct creds_job *job, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Copies the three strings into *c (wiping it first) with the expiry and
 * source name. Returns 0, or -1 with `why` naming the field that is missing
 * or too long. `token` may be NULL. */
int creds_fill(struct tt_creds *c, const char *akid, size_t akid_len, const char *secret,
               size_t secret_len, const char *token, size_t token_len, int64_t expires_at,
               const char *source, const char **why);

/* Parses an ISO 8601 / RFC 3339 UTC time ("2019-11-09T13:34:41Z", optional
 * fraction, "Z" or "+hh:mm"/"-hh:mm") into unix seconds. Returns 0 or -1. */
int creds_parse_time(const char *s, size_t n, int64_t *out);

/* Parses a JSON credentials document: AccessKeyId, SecretAccessKey, the
 * session token under `token_field` ("SessionToken" or "Token"; optional)
 * and Expiration (optional unless `need_expiration`). `need_version`
 * demands "Version": 1 (credential_process). Wipes the parsed strings.
 * Returns 0, or -1 with a field-naming reason in `why` (static string). */
int creds_from_json(const char *data, size_t len, const char *token_field, bool need_version,
                    bool need_expiration, const char *source, struct tt_creds *out,
                    const char **why);

/* Reads a whole small file into a new NUL-terminated buffer (*len bytes).
 * Returns 0, -1 with errno set (ENOENT, EFBIG over `cap`, ...). Free with
 * creds_free_secret(buf, len + 1). Providers call it on the loop: it answers
 * from the files a fetch read off the loop beforehand (creds_files.c), and
 * reads directly only a path nobody could predict (none today). */
int creds_read_file(const struct creds_chain *ch, const char *path, size_t cap, char **out,
                    size_t *len);

/* The blocking read itself; safe on any thread. Same contract. */
int creds_read_file_now(const char *path, size_t cap, char **out, size_t *len);

/* Runs the providers of a job whose files were read (creds_files.c, on
 * the loop): answers from `fs` while they run, then frees it, and ends the
 * job unless a provider went asynchronous. */
void creds_job_resume(struct creds_job *job, struct creds_files *fs);

/* ---- creds_files.c ---- */

/* Reads, on libuv's thread pool, every file the job's providers may read:
 * the shared config and credentials files, the profile's
 * web_identity_token_file, AWS_WEB_IDENTITY_TOKEN_FILE and
 * AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE; then creds_job_resume on the
 * loop (or creds_job_async_done(job, -1) when the job was cancelled).
 * Returns 0 (job->files set), or -1 with job->err. */
int creds_files_start(struct creds_job *job);

/* Asks a pending read to stop (uv_cancel); the completion still arrives. */
void creds_files_cancel(struct creds_job *job);

/* Wipes and frees what was read. */
void creds_files_free(struct creds_files *fs);

/* Whether `fs` read `path`; if so, *rc is creds_read_file's answer for it
 * (0 with a new copy in *out / *len, or -1 with errno). */
bool creds_files_lookup(const struct creds_files *fs, const char *path, char **out, size_t *len,
                        int *rc);


/* ---- creds_profile.c ---- */

/* The shared config/credentials files provider (static keys,
 * credential_process, or role_arn + web_identity_token_file). */
int creds_profile_start(struct creds_job *job);

/* The region named by the selected profile, copied into buf ("" when
 * none). Reads the config file. */
void creds_profile_region(const struct creds_chain *ch, char *buf, size_t n);

/* Path of the shared config (config=true) or credentials file into buf;
 * -1 when there is none to read. Reads only the chain's immutable
 * settings: safe off the loop. */
int creds_profile_file_path(const struct creds_chain *ch, bool config, char *buf, size_t n);

/* The selected profile's web_identity_token_file (with role_arn) given the
 * two files' texts (NULL when absent), into buf ("" when none). Pure: safe
 * off the loop. */
void creds_profile_token_file(const struct creds_chain *ch, const char *cfg, size_t cfg_len,
                              const char *cred, size_t cred_len, char *buf, size_t n);

/* ---- creds_process.c ---- */

/* Runs `command` (the credential_process value, split on spaces with
 * double-quote grouping, no shell) and parses its stdout. Returns
 * CREDS_ASYNC or CREDS_FAIL. */
int creds_process_start(struct creds_job *job, const char *command);

/* Kills a running credential_process; its completion still arrives. */
void creds_process_cancel(struct creds_job *job);

/* ---- creds_http.c ---- */

/* AssumeRoleWithWebIdentity from the environment (AWS_WEB_IDENTITY_TOKEN_FILE
 * + AWS_ROLE_ARN). */
int creds_web_identity_start(struct creds_job *job);

/* AssumeRoleWithWebIdentity with explicit settings (borrowed; from a
 * profile). `session_name` may be NULL. */
int creds_sts_start(struct creds_job *job, const char *role_arn, const char *session_name,
                    const char *token_file, const char *source);

/* The ECS/EKS container endpoint provider. */
int creds_container_start(struct creds_job *job);

/* The EC2 IMDSv2 provider. */
int creds_imds_start(struct creds_job *job);

/* Cancels a running HTTP provider; its completion still arrives. */
void creds_http_cancel(struct creds_job *job);

#endif
