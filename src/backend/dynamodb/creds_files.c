/* SPDX-License-Identifier: Apache-2.0 */
/* creds_files.c -- reads the files a credentials fetch needs on libuv's
 * thread pool, so that a slow or blocking file never stalls the loop. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dynamodb/creds_internal.h"

/* Config, credentials, the profile's token file, and the two token files
 * named by the environment. */
#define MAX_FILES 5

struct creds_file {
  char path[4096];
  size_t cap;
  char *data; /* NUL-terminated, or NULL when err != 0 */
  size_t len;
  int err; /* errno of a failed read, else 0 */
};

/* One read of a job. Owned by the job (job->files) until the completion
 * hands it to creds_job_resume. The worker touches only this struct and
 * the chain's settings, which never change after construction. */
struct creds_files {
  uv_work_t work;
  struct creds_job *job;
  struct creds_file f[MAX_FILES];
  size_t n;
  int cfg, cred; /* indexes of the shared files in f, or -1 */
};

static int add(struct creds_files *fs, const char *path, size_t cap) {
  if (path == NULL || path[0] == '\0' || fs->n == MAX_FILES)
    return -1;
  for (size_t i = 0; i < fs->n; i++)
    if (strcmp(fs->f[i].path, path) == 0)
      return (int)i;
  struct creds_file *f = &fs->f[fs->n];
  size_t len = strlen(path);
  if (len >= sizeof(f->path))
    return -1; /* cannot be opened either; the provider reports it */
  memcpy(f->path, path, len + 1);
  f->cap = cap;
  return (int)fs->n++;
}

static void read_one(struct creds_file *f) {
  if (creds_read_file_now(f->path, f->cap, &f->data, &f->len) != 0) {
    f->data = NULL;
    f->err = errno ? errno : EIO;
  }
}

/* Thread pool: the blocking part. */
static void work_cb(uv_work_t *w) {
  struct creds_files *fs = w->data;
  size_t n = fs->n;
  for (size_t i = 0; i < n; i++)
    read_one(&fs->f[i]);
  /* A profile may name its own token file: known only once parsed. */
  const struct creds_file *cfg = fs->cfg >= 0 ? &fs->f[fs->cfg] : NULL;
  const struct creds_file *cred = fs->cred >= 0 ? &fs->f[fs->cred] : NULL;
  char token_path[4096];
  creds_profile_token_file(fs->job->ch, cfg && cfg->data ? cfg->data : NULL, cfg ? cfg->len : 0,
                           cred && cred->data ? cred->data : NULL, cred ? cred->len : 0,
                           token_path, sizeof(token_path));
  int k = add(fs, token_path, CREDS_TOKEN_FILE_CAP);
  if (k >= (int)n)
    read_one(&fs->f[k]);
}

/* Loop: hand over to the providers, or end a cancelled job. */
static void after_cb(uv_work_t *w, int status) {
  struct creds_files *fs = w->data;
  struct creds_job *job = fs->job;
  job->files = NULL;
  if (job->cancelled || status != 0) {
    creds_files_free(fs);
    if (!job->cancelled)
      creds_job_fail(job, "the shared files could not be read: %s", uv_strerror(status));
    creds_job_async_done(job, -1);
    return;
  }
  creds_job_resume(job, fs);
}

int creds_files_start(struct creds_job *job) {
  const struct creds_chain *ch = job->ch;
  struct creds_files *fs = calloc(1, sizeof(*fs));
  if (fs == NULL)
    return creds_job_fail(job, "out of memory");
  fs->job = job;
  fs->cfg = fs->cred = -1;
  char path[4096];
  if (creds_profile_file_path(ch, true, path, sizeof(path)) == 0)
    fs->cfg = add(fs, path, CREDS_PROFILE_FILE_CAP);
  if (creds_profile_file_path(ch, false, path, sizeof(path)) == 0)
    fs->cred = add(fs, path, CREDS_PROFILE_FILE_CAP);
  add(fs, creds_env(ch, "AWS_WEB_IDENTITY_TOKEN_FILE"), CREDS_TOKEN_FILE_CAP);
  add(fs, creds_env(ch, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"), CREDS_TOKEN_FILE_CAP);
  fs->work.data = fs;
  uv_queue_work(ch->loop, &fs->work, work_cb, after_cb); /* fails only without work_cb */
  job->files = fs;
  return 0;
}

void creds_files_cancel(struct creds_job *job) {
  /* Fails with EBUSY once a worker runs it: then it finishes first. */
  if (job->files)
    uv_cancel((uv_req_t *)&job->files->work);
}

void creds_files_free(struct creds_files *fs) {
  if (fs == NULL)
    return;
  for (size_t i = 0; i < fs->n; i++)
    if (fs->f[i].data)
      creds_free_secret(fs->f[i].data, fs->f[i].cap + 1);
  free(fs);
}

bool creds_files_lookup(const struct creds_files *fs, const char *path, char **out, size_t *len,
                        int *rc) {
  for (size_t i = 0; fs && i < fs->n; i++) {
    const struct creds_file *f = &fs->f[i];
    if (strcmp(f->path, path) != 0)
      continue;
    if (f->data == NULL) {
      errno = f->err;
      *rc = -1;
      return true;
    }
    char *copy = malloc(f->len + 1);
    if (copy == NULL) {
      errno = ENOMEM;
      *rc = -1;
      return true;
    }
    memcpy(copy, f->data, f->len + 1);
    *out = copy;
    *len = f->len;
    *rc = 0;
    return true;
  }
  return false;
}
