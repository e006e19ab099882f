/* SPDX-License-Identifier: Apache-2.0 */
/* ledger.h -- the job ledger on top of the ORM: jobs with optimistic status
 * transitions, per-record status, leases, idempotency records and leased
 * semaphores, all in one DynamoDB table described by the built-in models
 * JobMeta, JobRecord, JobLock, JobRequest and SemaphoreLease. */
#ifndef TT_LEDGER_LEDGER_H
#define TT_LEDGER_LEDGER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "model/registry.h"
#include "orm/orm.h"
#include "util/error.h"
#include "value/av.h"

#define TT_LEDGER_DEFAULT_TABLE "tabletheory-jobs"

/* The built-in model names (docs/ledger.md). */
#define TT_LEDGER_MODEL_META "JobMeta"
#define TT_LEDGER_MODEL_RECORD "JobRecord"
#define TT_LEDGER_MODEL_LOCK "JobLock"
#define TT_LEDGER_MODEL_REQUEST "JobRequest"
#define TT_LEDGER_MODEL_SEMAPHORE "SemaphoreLease" /* AppTheory's name */

/* Limits of the inputs (docs/ledger.md). */
#define TT_LEDGER_MAX_ID_BYTES 256              /* job_id, record_id, key, owner, tenant_id */
#define TT_LEDGER_MAX_LEASE_SECONDS 86400       /* one day */
#define TT_LEDGER_MAX_TTL_SECONDS 315360000     /* ten years */
#define TT_LEDGER_REQUEST_TTL_SECONDS 86400     /* idempotency records: 24 h by default */
#define TT_LEDGER_LOCK_TTL_GRACE_SECONDS 86400  /* a lock item lingers a day after expiry */
#define TT_LEDGER_DEFAULT_LIMIT 100
#define TT_LEDGER_MAX_LIMIT 1000
#define TT_LEDGER_MAX_SEM_LIMIT 256             /* slots of one semaphore (AppTheory's cap) */

/* Registers the five built-in models on `table` (NULL or "": the default
 * table) into `r`, as tt_model_registry_load_text does: all or nothing, and
 * a model of the same name that differs (or a model of another name that
 * shares the table with other keys or indexes) is an error. Call it before
 * loading the user's models, so that a clash names the user's file. Returns
 * 0, or -1 with a ValidationError (bad table name, clash) or Internal. */
int tt_ledger_register_models(struct tt_model_registry *r, const char *table,
                              struct tt_error *err);

enum tt_ledger_kind {
  TT_LEDGER_TABLE_ENSURE = 1, /* PUT /v1/jobs/table */
  TT_LEDGER_JOB_CREATE,       /* POST /v1/jobs */
  TT_LEDGER_JOB_GET,          /* GET /v1/jobs/{id} */
  TT_LEDGER_JOB_LIST,         /* GET /v1/jobs?status=|tenant_id= */
  TT_LEDGER_JOB_TRANSITION,   /* POST /v1/jobs/{id}/transition */
  TT_LEDGER_RECORD_PUT,       /* PUT /v1/jobs/{id}/records/{rid} */
  TT_LEDGER_RECORD_GET,       /* GET /v1/jobs/{id}/records/{rid} */
  TT_LEDGER_RECORD_LIST,      /* GET /v1/jobs/{id}/records?status= */
  TT_LEDGER_LEASE_ACQUIRE,    /* POST /v1/jobs/{id}/lease */
  TT_LEDGER_LEASE_REFRESH,    /* POST /v1/jobs/{id}/lease/refresh */
  TT_LEDGER_LEASE_RELEASE,    /* DELETE /v1/jobs/{id}/lease?owner= */
  TT_LEDGER_REQUEST_CREATE,   /* POST /v1/jobs/{id}/requests/{key} */
  TT_LEDGER_REQUEST_COMPLETE, /* POST /v1/jobs/{id}/requests/{key}/complete */
  TT_LEDGER_TABLE_DELETE,     /* DELETE /v1/jobs/table (--allow-table-delete) */
  TT_LEDGER_SEM_ACQUIRE,      /* POST /v1/semaphores/{scope}/{subject}/lease */
  TT_LEDGER_SEM_REFRESH,      /* POST /v1/semaphores/{scope}/{subject}/lease/refresh */
  TT_LEDGER_SEM_RELEASE,      /* DELETE /v1/semaphores/{scope}/{subject}/lease?owner=&slot= */
  TT_LEDGER_SEM_INSPECT,      /* GET /v1/semaphores/{scope}/{subject} */
};

/* The list parameters of the query string (decoded text, NULL when absent). */
struct tt_ledger_list_args {
  const char *status;
  const char *tenant_id;
  const char *limit;
  const char *cursor;
  const char *order;
};

/* A ledger operation's answer: its route's HTTP status and JSON body on
 * success (`status` 0; an empty body with 204), else `err`, `details`
 * (owned, may be NULL) and a Retry-After in seconds (0: none). */
struct tt_ledger_result {
  int status; /* 0 or -1 */
  unsigned http_status;
  struct tt_buf body;
  struct tt_error err;
  json_t *details;
  uint32_t retry_after_s;
};

/* Releases what a result owns. */
void tt_ledger_result_free(struct tt_ledger_result *r);

struct tt_ledger_op;

/* Completion of a ledger operation: runs once, never inside
 * tt_ledger_start, with op->result filled; op->arg is the caller's
 * (docs/internals/completions.md). */
typedef void (*tt_ledger_done_cb)(struct tt_ledger_op *op);

/* One ledger operation of a request. Fill the inputs, then tt_ledger_start.
 * Everything is borrowed until `done` ran; the working state lives in the
 * arena and in the ORM operations the ledger starts in `join`. */
struct tt_ledger_op {
  /* Inputs. */
  enum tt_ledger_kind kind;
  struct tt_orm *orm;
  struct tt_join *join;
  struct tt_arena *arena;
  const char *request_id;
  const char *job_id;    /* path {id}, decoded */
  const char *record_id; /* path {rid} */
  const char *key;       /* path {key} of an idempotency request */
  const char *owner;     /* ?owner= of a release */
  const char *scope;     /* semaphores: path {scope}, decoded */
  const char *subject;   /* semaphores: path {subject}, decoded */
  const char *slot;      /* ?slot= of a semaphore release (decimal text) */
  const json_t *body;    /* the JSON body (tt_json_parse tree); NULL = {} */
  struct tt_ledger_list_args list;
  struct tt_ledger_result *result; /* where the answer goes */
  tt_ledger_done_cb done;
  void *arg;
  /* Working state (tt_ledger_start zeroes it). */
  struct tt_ledger_work {
    int64_t now_ns;
    int64_t now_s;
    const char *pk;        /* "JOB#<job_id>" */
    const char *sk;        /* "REC#<record_id>" or "REQ#<key>" of a record or request */
    const char *to, *from; /* transition */
    int64_t expected;      /* transition: expected version */
    int64_t duration;      /* lease seconds */
    int64_t ttl;           /* epoch seconds of the written item, 0 = none */
    struct tt_av error;    /* sanitized error envelope, typed (owned); zeroed: none */
    struct tt_av value;    /* sanitized result, typed (owned); zeroed: none */
    unsigned attempts;     /* retried steps (idempotency, release) */
    int64_t slot;          /* semaphore slot being written */
    int64_t limit;         /* semaphore acquire: slots 0 .. limit-1 */
    uint16_t *slots;       /* semaphore acquire: slots to try, in order (arena) */
    unsigned nslots, next; /* how many, and the next one to try */
    bool finished;
    bool starting; /* inside tt_ledger_start: finishing there does not call done */
  } w;
};

/* Validates every input (a ValidationError, or an InvalidTransition that is
 * known without reading, answers before any I/O), then runs the ORM
 * operations of `kind`. `done` runs exactly once, when op->result holds the
 * answer: a JSON body and an HTTP status, or an error (JobNotFound,
 * ItemNotFound, AlreadyExists, VersionConflict with details
 * {version, expected_version}, InvalidTransition, LeaseHeld (also for a
 * full semaphore, with details {limit}), LeaseNotOwned, and the ORM's
 * backend errors). Every stored error envelope and result passes through
 * src/ledger/sanitize. Returns 0 (done runs later), or -1 when the
 * operation finished inside this call (op->result holds the answer; done
 * never runs). */
int tt_ledger_start(struct tt_ledger_op *op);

/* Whether `s` is a job status (PENDING RUNNING SUCCEEDED FAILED CANCELED),
 * and whether it is terminal (SUCCEEDED FAILED CANCELED). */
bool tt_ledger_job_status_valid(const char *s);
bool tt_ledger_job_status_terminal(const char *s);

/* Whether `s` is a record status (PENDING PROCESSING SUCCEEDED FAILED
 * SKIPPED). */
bool tt_ledger_record_status_valid(const char *s);

/* Writes a random (RFC 4122 version 4) UUID from OpenSSL's RNG into out
 * (37 bytes with the NUL). Returns 0, or -1 when the RNG failed. */
int tt_ledger_uuid4(char out[37]);

/* Checks an identifier (job_id, record_id, idempotency key, owner,
 * tenant_id): 1 to TT_LEDGER_MAX_ID_BYTES bytes of valid UTF-8 without
 * control characters. Returns 0, or -1 with a ValidationError naming
 * `field` (never the value). */
int tt_ledger_check_id(const char *s, size_t len, const char *field, struct tt_error *err);

#endif
