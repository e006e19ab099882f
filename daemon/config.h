/* SPDX-License-Identifier: Apache-2.0 */
/* config.h -- settings from flags, TABLETHEORYD_* environment and a JSON
 * file; flags win over the environment, the environment over the file. */
#ifndef TT_DAEMON_CONFIG_H
#define TT_DAEMON_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "obs/log.h"
#include "util/error.h"

#define TT_CONFIG_MAX_MODELS 64

#define TT_CONFIG_MAX_PARTNERS 32
#define TT_PARTNER_ID_MAX 55 /* "theorydb-" + id fits STS's 64-character session name */

/* A partner account (config file key "partners"): its calls run with STS
 * AssumeRole credentials of role_arn, in region. */
struct tt_config_partner {
  char id[TT_PARTNER_ID_MAX + 1];
  char role_arn[2048];
  char external_id[1232]; /* "" = none */
  char region[64];        /* "" = the daemon's --region */
  uint32_t session_duration_s; /* 900..43200, default 3600 */
};

struct tt_config {
  char listen[256];
  char models[TT_CONFIG_MAX_MODELS][512];
  size_t nmodels;
  char backend[16];
  char data_dir[512];         /* memory backend's data dir; "" = memory only */
  char fsync[16];             /* always | everysec | no */
  char data_dir_recover[16];  /* none | truncate */
  char dynamodb_listen[256];  /* "" = no DynamoDB listener */
  char dynamodb_auth[16];     /* "accept" | "verify" */
  char dynamodb_access_key_id[128];
  char dynamodb_secret_access_key[128];
  char endpoint[512];
  char region[64];
  char kms_key_id[2048]; /* KMS key of encrypted attributes; "" = fail closed */
  char kms_endpoint[512];
  char jobs_table[256];
  char auth_token_file[512];
  bool allow_unauthenticated_network;
  bool allow_table_delete;
  bool enable_fault_injection;
  bool test_clock; /* --test-clock only: a frozen clock that tests move (loopback only) */
  uint64_t request_timeout_ms;
  uint64_t header_timeout_ms;
  uint64_t max_body_bytes;
  uint64_t table_transition_ms;     /* memory backend: CREATING/UPDATING/DELETING time */
  uint64_t dynamodb_max_body_bytes; /* the DynamoDB listener's (DynamoDB's 16 MiB) */
  uint64_t drain_timeout_ms;
  uint64_t max_connections;
  uint64_t batch_concurrency;
  uint64_t max_response_bytes;
  enum tt_log_level log_level;
  char config_file[512];
  bool check_config;
  bool print_models; /* print the loaded models as JSON and exit */
  char sts_endpoint[512]; /* "" = AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL, else regional */
  char ca_file[512];      /* trust anchors of every TLS connection; "" = SSL_CERT_FILE or system */
  struct tt_config_partner partners[TT_CONFIG_MAX_PARTNERS];
  size_t npartners;
  /* Tracing (docs/operations.md, "Traces"): on with --tracing or an
   * endpoint; the OTEL_* variables fill what is not set here. */
  bool tracing;
  char otlp_endpoint[512];     /* the traces URL; "" = OTEL_*, else localhost:4318 */
  char otlp_headers[2048];     /* "k=v,..." (OTEL_EXPORTER_OTLP_HEADERS) */
  char otlp_protocol[16];      /* http/protobuf (default) or http/json */
  uint64_t otlp_timeout_ms;    /* one export attempt */
  uint64_t otlp_schedule_delay_ms; /* periodic export (OTEL_BSP_SCHEDULE_DELAY) */
  char service_name[256];      /* OTEL_SERVICE_NAME; default tabletheoryd */
  char resource_attributes[2048]; /* OTEL_RESOURCE_ATTRIBUTES */
  char traces_sampler[32];     /* OTEL_TRACES_SAMPLER; default parentbased_always_on */
  char traces_sampler_arg[32]; /* OTEL_TRACES_SAMPLER_ARG */
};

enum tt_config_action {
  TT_CONFIG_RUN = 0,
  TT_CONFIG_HELP,    /* --help: print tt_config_usage, exit 0 */
  TT_CONFIG_VERSION, /* --version */
};

/* Fills cfg from defaults, then the config file (--config or
 * TABLETHEORYD_CONFIG), then `envp` (NULL-terminated "K=V" strings), then
 * argv. Returns 0 with *action set, or -1 with err naming the setting and
 * its source (exit status 2). */
int tt_config_load(struct tt_config *cfg, int argc, char **argv, char **envp,
                   enum tt_config_action *action, struct tt_error *err);

#define TT_TOKEN_MIN 16    /* characters */
#define TT_TOKEN_FILE_MAX 1023 /* bytes, trailing whitespace included */

/* Reads the bearer token from `path`: the whole file minus trailing
 * whitespace (space, tab, CR, LF). Refuses a file over TT_TOKEN_FILE_MAX
 * bytes, a token with NUL or any other control byte (they would cut or
 * hide part of it), and one shorter than TT_TOKEN_MIN. Returns 0 with
 * *token malloc'd (the caller frees it), or -1 with err naming
 * "auth-token-file"; the message never quotes the file's content. */
int tt_config_read_token(const char *path, char **token, struct tt_error *err);

/* The --help text. */
const char *tt_config_usage(void);

/* The tracing settings parsed (traces-sampler and its argument, the
 * otlp-headers and resource-attributes lists), with the configuration's
 * messages. Returns 0 with *headers and *attrs to free
 * (tt_otlp_kvs_free), or -1 with err (nothing to free). */
struct tt_sampler;
struct tt_otlp_kvs;
int tt_config_tracing(const struct tt_config *cfg, struct tt_sampler *sampler,
                      struct tt_otlp_kvs *headers, struct tt_otlp_kvs *attrs,
                      struct tt_error *err);

#endif
