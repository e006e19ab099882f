/* SPDX-License-Identifier: Apache-2.0 */
/* config.c -- settings from flags, environment and a JSON file. */
#include "daemon/config.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dynamodb/endpoint.h"
#include "obs/otlp.h"
#include "obs/trace.h"

enum setting_kind { K_STRING, K_UINT, K_BOOL, K_LIST, K_ENUM, K_LEVEL };

struct setting {
  const char *name; /* flag without dashes; also the file key */
  enum setting_kind kind;
  size_t offset;
  size_t size;             /* K_STRING: buffer size */
  uint64_t min, max;       /* K_UINT */
  const char *const *choices; /* K_ENUM */
  const char *help;
};

static const char *const backends[] = {"memory", "dynamodb", NULL};
static const char *const fsync_modes[] = {"always", "everysec", "no", NULL};
static const char *const recover_modes[] = {"none", "truncate", NULL};
static const char *const ddb_auths[] = {"accept", "verify", NULL};

#define F(field) offsetof(struct tt_config, field), sizeof(((struct tt_config *)0)->field)
static const struct setting settings[] = {
    {"listen", K_STRING, F(listen), 0, 0, NULL,
     "ADDR  host:port, [v6]:port or unix:/path (default 127.0.0.1:8737)"},
    {"models", K_LIST, F(models), 0, 0, NULL, "PATH  DMS file or directory; repeatable"},
    {"backend", K_ENUM, F(backend), 0, 0, backends, "NAME  memory | dynamodb (default memory)"},
    {"data-dir", K_STRING, F(data_dir), 0, 0, NULL,
     "DIR  keep the memory backend's tables in DIR across restarts (default: memory only)"},
    {"fsync", K_ENUM, F(fsync), 0, 0, fsync_modes,
     "MODE  always | everysec | no: when a write to --data-dir is acknowledged (default always)"},
    {"data-dir-recover", K_ENUM, F(data_dir_recover), 0, 0, recover_modes,
     "MODE  none | truncate: truncate the log at a corrupt record (default none: refuse)"},
    {"dynamodb-listen", K_STRING, F(dynamodb_listen), 0, 0, NULL,
     "ADDR  also serve DynamoDB's wire protocol on host:port (default: off)"},
    {"dynamodb-auth", K_ENUM, F(dynamodb_auth), 0, 0, ddb_auths,
     "MODE  accept | verify: SigV4 of the DynamoDB listener (default accept)"},
    {"table-transition-ms", K_UINT, F(table_transition_ms), 0, 3600000, NULL,
     "N  memory backend: how long tables stay CREATING, UPDATING, DELETING (default 0)"},
    {"dynamodb-max-body-bytes", K_UINT, F(dynamodb_max_body_bytes), 1, 1u << 30, NULL,
     "N  largest request body of the DynamoDB listener (default 16777216, DynamoDB's)"},
    {"dynamodb-access-key-id", K_STRING, F(dynamodb_access_key_id), 0, 0, NULL,
     "ID  access key verify accepts (default $AWS_ACCESS_KEY_ID)"},
    {"dynamodb-secret-access-key", K_STRING, F(dynamodb_secret_access_key), 0, 0, NULL,
     "KEY  its secret (default $AWS_SECRET_ACCESS_KEY; prefer the variable)"},
    {"endpoint", K_STRING, F(endpoint), 0, 0, NULL, "URL  DynamoDB-compatible endpoint"},
    {"region", K_STRING, F(region), 0, 0, NULL, "R  AWS region (default $AWS_REGION)"},
    {"kms-key-id", K_STRING, F(kms_key_id), 0, 0, NULL,
     "KEY  KMS key (id, ARN or alias) of encrypted attributes (default none: refused)"},
    {"kms-endpoint", K_STRING, F(kms_endpoint), 0, 0, NULL,
     "URL  KMS endpoint (default https://kms.<region>.amazonaws.com)"},
    {"jobs-table", K_STRING, F(jobs_table), 0, 0, NULL,
     "NAME  job ledger table (default tabletheory-jobs)"},
    {"auth-token-file", K_STRING, F(auth_token_file), 0, 0, NULL,
     "FILE  require 'Authorization: Bearer <token>' on /v1"},
    {"allow-unauthenticated-network", K_BOOL, F(allow_unauthenticated_network), 0, 0, NULL,
     "  serve /v1 on a non-loopback --listen without --auth-token-file"},
    {"allow-table-delete", K_BOOL, F(allow_table_delete), 0, 0, NULL,
     "  allow DELETE /v1/models/{m}/table"},
    {"enable-fault-injection", K_BOOL, F(enable_fault_injection), 0, 0, NULL,
     "  serve /v1/_faults and /v1/_test (tests only)"},
    {"request-timeout-ms", K_UINT, F(request_timeout_ms), 1, 3600000, NULL,
     "N  per-request deadline (default 10000)"},
    {"header-timeout-ms", K_UINT, F(header_timeout_ms), 1, 3600000, NULL,
     "N  time a client has to send a request's headers (default 10000)"},
    {"max-body-bytes", K_UINT, F(max_body_bytes), 1, 1u << 30, NULL,
     "N  largest request body (default 1048576)"},
    {"drain-timeout-ms", K_UINT, F(drain_timeout_ms), 0, 3600000, NULL,
     "N  how long SIGTERM waits for in-flight requests (default 10000)"},
    {"max-connections", K_UINT, F(max_connections), 1, 65536, NULL,
     "N  concurrent client connections (default 1024)"},
    {"batch-concurrency", K_UINT, F(batch_concurrency), 1, 64, NULL,
     "N  parallel chunks per batch call (default 4)"},
    {"max-response-bytes", K_UINT, F(max_response_bytes), 1024, 1u << 30, NULL,
     "N  bytes of items in one query or scan answer; more ends it with a cursor (default 4194304)"},
    {"log-level", K_LEVEL, F(log_level), 0, 0, NULL, "L  debug | info | warn | error"},
    {"config", K_STRING, F(config_file), 0, 0, NULL, "FILE  JSON file of these settings"},
    {"check-config", K_BOOL, F(check_config), 0, 0, NULL,
     "  validate the configuration and models, then exit"},
    {"print-models", K_BOOL, F(print_models), 0, 0, NULL,
     "  validate, print the loaded models as JSON (as GET /v1/models), then exit"},
    {"sts-endpoint", K_STRING, F(sts_endpoint), 0, 0, NULL,
     "URL  STS endpoint for partner AssumeRole (default $AWS_ENDPOINT_URL_STS, else regional)"},
    {"ca-file", K_STRING, F(ca_file), 0, 0, NULL,
     "FILE  PEM CA certificates trusted by every outbound TLS connection (default $SSL_CERT_FILE, "
     "else the system bundle)"},
    {"tracing", K_BOOL, F(tracing), 0, 0, NULL,
     "  export OpenTelemetry spans over OTLP/HTTP (also on when --otlp-endpoint is set)"},
    {"otlp-endpoint", K_STRING, F(otlp_endpoint), 0, 0, NULL,
     "URL  OTLP traces URL; turns tracing on (default $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, "
     "$OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces, else http://localhost:4318/v1/traces)"},
    {"otlp-headers", K_STRING, F(otlp_headers), 0, 0, NULL,
     "LIST  k=v,... headers of every export (default $OTEL_EXPORTER_OTLP_HEADERS)"},
    {"otlp-timeout-ms", K_UINT, F(otlp_timeout_ms), 1, 600000, NULL,
     "MS  one export attempt's deadline (default $OTEL_EXPORTER_OTLP_TIMEOUT, else 10000)"},
    {"otlp-protocol", K_STRING, F(otlp_protocol), 0, 0, NULL,
     "PROTO  http/protobuf | http/json, the exports' encoding (default "
     "$OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, $OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf)"},
    {"otlp-schedule-delay-ms", K_UINT, F(otlp_schedule_delay_ms), 1, 600000, NULL,
     "MS  how often queued spans are exported (default $OTEL_BSP_SCHEDULE_DELAY, else 5000)"},
    {"service-name", K_STRING, F(service_name), 0, 0, NULL,
     "NAME  service.name of the spans (default $OTEL_SERVICE_NAME, else tabletheoryd)"},
    {"resource-attributes", K_STRING, F(resource_attributes), 0, 0, NULL,
     "LIST  k=v,... resource attributes (default $OTEL_RESOURCE_ATTRIBUTES)"},
    {"traces-sampler", K_STRING, F(traces_sampler), 0, 0, NULL,
     "NAME  always_on | always_off | traceidratio | parentbased_always_on | "
     "parentbased_traceidratio | ... (default $OTEL_TRACES_SAMPLER, else parentbased_always_on)"},
    {"traces-sampler-arg", K_STRING, F(traces_sampler_arg), 0, 0, NULL,
     "RATIO  the ratio samplers' argument, 0..1 (default $OTEL_TRACES_SAMPLER_ARG, else 1)"},
};
#undef F
#define NSETTINGS (sizeof(settings) / sizeof(settings[0]))

static void defaults(struct tt_config *cfg) {
  memset(cfg, 0, sizeof(*cfg));
  snprintf(cfg->listen, sizeof(cfg->listen), "127.0.0.1:8737");
  snprintf(cfg->backend, sizeof(cfg->backend), "memory");
  snprintf(cfg->fsync, sizeof(cfg->fsync), "always");
  snprintf(cfg->data_dir_recover, sizeof(cfg->data_dir_recover), "none");
  snprintf(cfg->dynamodb_auth, sizeof(cfg->dynamodb_auth), "accept");
  snprintf(cfg->jobs_table, sizeof(cfg->jobs_table), "tabletheory-jobs");
  cfg->request_timeout_ms = 10000;
  cfg->header_timeout_ms = 10000;
  cfg->max_body_bytes = 1048576;
  cfg->dynamodb_max_body_bytes = 16777216;
  cfg->drain_timeout_ms = 10000;
  cfg->max_connections = 1024;
  cfg->batch_concurrency = 4;
  cfg->max_response_bytes = 4194304;
  cfg->log_level = TT_LOG_INFO;
}

static const struct setting *find_setting(const char *name, size_t n) {
  for (size_t i = 0; i < NSETTINGS; i++)
    if (strlen(settings[i].name) == n && strncmp(settings[i].name, name, n) == 0)
      return &settings[i];
  return NULL;
}

/* The words of false and true, in pairs: an odd index is true. */
static int parse_bool(const char *v, bool *out) {
  static const char *const words[] = {"0", "1", "false", "true", "no", "yes", "off", "on"};
  for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
    if (strcasecmp(v, words[i]) == 0) {
      *out = i & 1;
      return 0;
    }
  return -1;
}

/* Applies one textual value. `source` describes where it came from for
 * the error message ("--listen", "TABLETHEORYD_LISTEN", "file.json: listen").
 * `append` adds to a list instead of replacing it (repeated flags). */
static int apply(struct tt_config *cfg, const struct setting *st, const char *value,
                 const char *source, bool append, struct tt_error *err) {
  char *field = (char *)cfg + st->offset;
  switch (st->kind) {
  case K_STRING:
  case K_ENUM:
    if (strlen(value) >= st->size)
      return tt_error_set(err, TT_ERR_VALIDATION, st->name, "%s: value is too long (max %zu)",
                          source, st->size - 1);
    if (st->kind == K_ENUM) {
      bool ok = false;
      char list[128] = "";
      size_t n = 0;
      for (const char *const *c = st->choices; *c; c++) {
        ok |= strcmp(*c, value) == 0;
        n += (size_t)snprintf(list + n, n < sizeof(list) ? sizeof(list) - n : 0, "%s%s",
                              c == st->choices ? "" : ", ", *c);
      }
      if (!ok)
        return tt_error_set(err, TT_ERR_VALIDATION, st->name, "%s: must be one of %s", source,
                            list);
    }
    snprintf(field, st->size, "%s", value);
    return 0;
  case K_UINT: {
    errno = 0;
    char *end = NULL;
    if (!isdigit((unsigned char)value[0]))
      goto bad_uint;
    unsigned long long v = strtoull(value, &end, 10);
    if (errno || *end || v < st->min || v > st->max)
      goto bad_uint;
    *(uint64_t *)field = v;
    return 0;
  bad_uint:
    return tt_error_set(err, TT_ERR_VALIDATION, st->name,
                        "%s: must be a whole number from %llu to %llu", source,
                        (unsigned long long)st->min, (unsigned long long)st->max);
  }
  case K_BOOL:
    if (parse_bool(value, (bool *)field) != 0)
      return tt_error_set(err, TT_ERR_VALIDATION, st->name, "%s: must be true or false", source);
    return 0;
  case K_LEVEL:
    if (tt_log_level_parse(value, (enum tt_log_level *)field) != 0)
      return tt_error_set(err, TT_ERR_VALIDATION, st->name,
                          "%s: must be one of debug, info, warn, error", source);
    return 0;
  case K_LIST: {
    if (!append)
      cfg->nmodels = 0;
    if (cfg->nmodels == TT_CONFIG_MAX_MODELS)
      return tt_error_set(err, TT_ERR_VALIDATION, st->name, "%s: more than %d paths", source,
                          TT_CONFIG_MAX_MODELS);
    if (value[0] == '\0' || strlen(value) >= sizeof(cfg->models[0]))
      return tt_error_set(err, TT_ERR_VALIDATION, st->name, "%s: empty or too long path",
                          source);
    snprintf(cfg->models[cfg->nmodels++], sizeof(cfg->models[0]), "%s", value);
    return 0;
  }
  }
  return -1;
}

static void env_name(const struct setting *st, char *out, size_t cap) {
  size_t n = (size_t)snprintf(out, cap, "TABLETHEORYD_");
  for (const char *p = st->name; *p && n + 1 < cap; p++)
    out[n++] = *p == '-' ? '_' : (char)toupper((unsigned char)*p);
  out[n] = '\0';
}

static const char *env_lookup(char **envp, const char *name) {
  size_t n = strlen(name);
  for (char **e = envp; e && *e; e++)
    if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
      return *e + n + 1;
  return NULL;
}

/* ---- partner accounts (config file only: they are structured) ---- */

/* Whether every byte of s is alphanumeric or one of `extra`. */
static bool chars_ok(const char *s, const char *extra) {
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && strchr(extra, *s) == NULL)
      return false;
  return true;
}

/* RoleSessionName's characters, so "theorydb-<id>" is a valid one. */
static bool partner_id_ok(const char *id) {
  size_t n = strlen(id);
  return n > 0 && n <= TT_PARTNER_ID_MAX && chars_ok(id, "+=,.@_-");
}

/* arn:<partition>:iam::<12 digits>:role/<path/name>. */
static bool role_arn_ok(const char *a) {
  const char *p = strncmp(a, "arn:", 4) == 0 ? strchr(a + 4, ':') : NULL;
  if (p == NULL || p == a + 4 || strncmp(p, ":iam::", 6) != 0)
    return false;
  p += 6;
  for (int i = 0; i < 12; i++, p++)
    if (!isdigit((unsigned char)*p))
      return false;
  return strncmp(p, ":role/", 6) == 0 && p[6] != '\0' && chars_ok(p + 6, "+=,.@_-/");
}

/* ExternalId: 2..1224 characters of [\w+=,.@:/-]. */
static bool external_id_ok(const char *e) {
  size_t n = strlen(e);
  return n >= 2 && n <= 1224 && chars_ok(e, "+=,.@:/_-");
}

#define PARTNER_FAIL(field, ...)                                                                  \
  do {                                                                                            \
    char f_[128];                                                                                 \
    snprintf(f_, sizeof(f_), "partners.%.55s%s%s", id, (field)[0] ? "." : "", field);           \
    return tt_error_set(err, TT_ERR_VALIDATION, f_, "%s: partner \"%.55s\": " __VA_ARGS__);    \
  } while (0)

/* One entry of "partners". The messages name the partner and the field,
 * never the external id's value. */
static int apply_partner(struct tt_config *cfg, const char *path, const char *id, json_t *v,
                         struct tt_error *err) {
  if (!partner_id_ok(id))
    return tt_error_set(err, TT_ERR_VALIDATION, "partners",
                        "%s: partners: a partner id must be 1 to %d characters of "
                        "A-Z a-z 0-9 + = , . @ _ -",
                        path, TT_PARTNER_ID_MAX);
  if (!json_is_object(v))
    PARTNER_FAIL("", "must be an object with role_arn", path, id);
  if (cfg->npartners >= TT_CONFIG_MAX_PARTNERS)
    PARTNER_FAIL("", "more than %d partners", path, id, TT_CONFIG_MAX_PARTNERS);
  struct tt_config_partner *p = &cfg->partners[cfg->npartners];
  memset(p, 0, sizeof(*p));
  snprintf(p->id, sizeof(p->id), "%s", id);
  p->session_duration_s = 3600;
  const char *key;
  json_t *f;
  json_object_foreach(v, key, f) {
    if (strcmp(key, "role_arn") == 0) {
      if (!json_is_string(f) || !role_arn_ok(json_string_value(f)) ||
          strlen(json_string_value(f)) >= sizeof(p->role_arn))
        PARTNER_FAIL("role_arn", "role_arn must be an IAM role ARN "
                                 "(arn:aws:iam::123456789012:role/name)", path, id);
      snprintf(p->role_arn, sizeof(p->role_arn), "%s", json_string_value(f));
    } else if (strcmp(key, "external_id") == 0) {
      if (!json_is_string(f) || !external_id_ok(json_string_value(f)))
        PARTNER_FAIL("external_id", "external_id must be 2 to 1224 characters of "
                                    "A-Z a-z 0-9 + = , . @ : / _ -", path, id);
      snprintf(p->external_id, sizeof(p->external_id), "%s", json_string_value(f));
    } else if (strcmp(key, "region") == 0) {
      if (!json_is_string(f) || !tt_aws_region_ok(json_string_value(f)))
        PARTNER_FAIL("region", "region must be a region name such as eu-west-1", path, id);
      snprintf(p->region, sizeof(p->region), "%s", json_string_value(f));
    } else if (strcmp(key, "session_duration_seconds") == 0) {
      if (!json_is_integer(f) || json_integer_value(f) < 900 || json_integer_value(f) > 43200)
        PARTNER_FAIL("session_duration_seconds",
                     "session_duration_seconds must be an integer from 900 to 43200", path, id);
      p->session_duration_s = (uint32_t)json_integer_value(f);
    } else {
      char k[64];
      snprintf(k, sizeof(k), "%.63s", key);
      PARTNER_FAIL("", "unknown field \"%s\" (role_arn, external_id, region, "
                       "session_duration_seconds)", path, id, k);
    }
  }
  if (p->role_arn[0] == '\0')
    PARTNER_FAIL("role_arn", "role_arn is required", path, id);
  cfg->npartners++;
  return 0;
}
#undef PARTNER_FAIL

static int apply_partners(struct tt_config *cfg, const char *path, json_t *v,
                          struct tt_error *err) {
  if (!json_is_object(v))
    return tt_error_set(err, TT_ERR_VALIDATION, "partners",
                        "%s: partners: must be an object of partner id -> {role_arn, ...}",
                        path);
  cfg->npartners = 0;
  const char *id;
  json_t *entry;
  json_object_foreach(v, id, entry) {
    if (apply_partner(cfg, path, id, entry, err) != 0)
      return -1;
  }
  return 0;
}

static int apply_file(struct tt_config *cfg, const char *path, struct tt_error *err) {
  json_error_t jerr;
  json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
  if (root == NULL)
    return tt_error_set(err, TT_ERR_VALIDATION, "config", "%s: %s (line %d)", path, jerr.text,
                        jerr.line);
  int rc = -1;
  if (!json_is_object(root)) {
    tt_error_set(err, TT_ERR_VALIDATION, "config", "%s: must hold a JSON object", path);
    goto fail;
  }
  const char *key;
  json_t *v;
  json_object_foreach(root, key, v) {
    if (strcmp(key, "partners") == 0) {
      if (apply_partners(cfg, path, v, err) != 0)
        goto fail;
      continue;
    }
    const struct setting *st = find_setting(key, strlen(key));
    char source[600];
    snprintf(source, sizeof(source), "%s: %s", path, key);
    if (st == NULL || strcmp(key, "config") == 0) {
      tt_error_set(err, TT_ERR_VALIDATION, key, "%s: unknown setting", source);
      goto fail;
    }
    if (st->kind == K_LIST && json_is_array(v)) {
      cfg->nmodels = 0;
      size_t i;
      json_t *elem;
      json_array_foreach(v, i, elem) {
        if (!json_is_string(elem)) {
          tt_error_set(err, TT_ERR_VALIDATION, key, "%s: must be a list of strings", source);
          goto fail;
        }
        if (apply(cfg, st, json_string_value(elem), source, true, err) != 0)
          goto fail;
      }
      continue;
    }
    char text[64];
    const char *value = text;
    if (json_is_string(v))
      value = json_string_value(v);
    else if (json_is_boolean(v))
      value = json_is_true(v) ? "true" : "false";
    else if (json_is_integer(v))
      snprintf(text, sizeof(text), "%lld", (long long)json_integer_value(v));
    else {
      tt_error_set(err, TT_ERR_VALIDATION, key, "%s: unsupported value type", source);
      goto fail;
    }
    if (apply(cfg, st, value, source, false, err) != 0)
      goto fail;
  }
  rc = 0;
fail:
  json_decref(root);
  return rc;
}

static int apply_env(struct tt_config *cfg, char **envp, struct tt_error *err) {
  for (size_t i = 0; i < NSETTINGS; i++) {
    const struct setting *st = &settings[i];
    char name[64];
    env_name(st, name, sizeof(name));
    const char *v = env_lookup(envp, name);
    if (v == NULL || st->offset == offsetof(struct tt_config, config_file))
      continue;
    if (st->kind == K_LIST) {
      /* A colon-separated list, like PATH. */
      cfg->nmodels = 0;
      const char *p = v;
      while (*p) {
        size_t n = strcspn(p, ":");
        char part[512];
        if (n >= sizeof(part))
          return tt_error_set(err, TT_ERR_VALIDATION, st->name, "%s: path too long", name);
        memcpy(part, p, n);
        part[n] = '\0';
        if (n && apply(cfg, st, part, name, true, err) != 0)
          return -1;
        p += n + (p[n] == ':');
      }
      continue;
    }
    if (apply(cfg, st, v, name, false, err) != 0)
      return -1;
  }
  return 0;
}

/* Walks argv. With `only_config` it just finds --config; otherwise it
 * applies every flag. */
static int apply_args(struct tt_config *cfg, int argc, char **argv, bool only_config,
                      enum tt_config_action *action, struct tt_error *err) {
  bool models_seen = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      *action = TT_CONFIG_HELP;
      return 0;
    }
    if (strcmp(a, "--version") == 0) {
      *action = TT_CONFIG_VERSION;
      return 0;
    }
    if (strncmp(a, "--", 2) != 0)
      return tt_error_set(err, TT_ERR_VALIDATION, a, "unexpected argument '%s' (see --help)", a);
    if (strcmp(a, "--test-clock") == 0) {
      /* Flag only (no environment variable, no file key), so that a
       * deployment's settings cannot turn it on. */
      cfg->test_clock = true;
      continue;
    }
    const char *name = a + 2;
    const char *eq = strchr(name, '=');
    size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
    const struct setting *st = find_setting(name, nlen);
    if (st == NULL)
      return tt_error_set(err, TT_ERR_VALIDATION, a, "unknown option '--%.*s' (see --help)",
                          (int)nlen, name);
    const char *value;
    if (eq)
      value = eq + 1;
    else if (st->kind == K_BOOL)
      value = "true";
    else if (i + 1 < argc)
      value = argv[++i];
    else
      return tt_error_set(err, TT_ERR_VALIDATION, st->name, "--%s needs a value", st->name);
    bool is_config = st->offset == offsetof(struct tt_config, config_file);
    if (only_config != is_config)
      continue;
    char source[80];
    snprintf(source, sizeof(source), "--%s", st->name);
    if (apply(cfg, st, value, source, st->kind == K_LIST && models_seen, err) != 0)
      return -1;
    if (st->kind == K_LIST)
      models_seen = true;
  }
  return 0;
}

/* Fills an empty tracing setting from OpenTelemetry's standard variable
 * `var`; fails when it does not fit. */
static int otel_default(char *field, size_t size, char **envp, const char *var,
                        const char *suffix, struct tt_error *err) {
  const char *v = env_lookup(envp, var);
  if (field[0] || v == NULL || v[0] == '\0')
    return 0;
  size_t n = strlen(v);
  while (suffix && n > 0 && v[n - 1] == '/')
    n--;
  if ((size_t)snprintf(field, size, "%.*s%s", (int)n, v, suffix ? suffix : "") >= size)
    return tt_error_set(err, TT_ERR_VALIDATION, var, "%s: value is too long (max %zu)", var,
                        size - 1);
  return 0;
}

/* The OTEL_* variables under the daemon's own settings, then the checks
 * that need no I/O: the sampler, its ratio, the two k=v lists. */
static int tracing_settings(struct tt_config *cfg, char **envp, struct tt_error *err) {
  if (cfg->otlp_endpoint[0])
    cfg->tracing = true;
#define OTEL(f, var, suffix) {cfg->f, sizeof(cfg->f), var, suffix}
  const struct {
    char *field;
    size_t size;
    const char *var, *suffix;
  } otel[] = {OTEL(otlp_endpoint, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", NULL),
              OTEL(otlp_endpoint, "OTEL_EXPORTER_OTLP_ENDPOINT", "/v1/traces"),
              OTEL(otlp_headers, "OTEL_EXPORTER_OTLP_TRACES_HEADERS", NULL),
              OTEL(otlp_headers, "OTEL_EXPORTER_OTLP_HEADERS", NULL),
              OTEL(otlp_protocol, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", NULL),
              OTEL(otlp_protocol, "OTEL_EXPORTER_OTLP_PROTOCOL", NULL),
              OTEL(service_name, "OTEL_SERVICE_NAME", NULL),
              OTEL(resource_attributes, "OTEL_RESOURCE_ATTRIBUTES", NULL),
              OTEL(traces_sampler, "OTEL_TRACES_SAMPLER", NULL),
              OTEL(traces_sampler_arg, "OTEL_TRACES_SAMPLER_ARG", NULL)};
#undef OTEL
  for (size_t i = 0; i < sizeof(otel) / sizeof(otel[0]); i++)
    if (otel_default(otel[i].field, otel[i].size, envp, otel[i].var, otel[i].suffix, err) != 0)
      return -1;
  const char *t = env_lookup(envp, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
                      ?: env_lookup(envp, "OTEL_EXPORTER_OTLP_TIMEOUT");
  if (cfg->otlp_timeout_ms == 0 && t &&
      apply(cfg, find_setting("otlp-timeout-ms", 15), t, "OTEL_EXPORTER_OTLP_TIMEOUT", false,
            err) != 0)
    return -1;
  const char *bsp = env_lookup(envp, "OTEL_BSP_SCHEDULE_DELAY");
  if (cfg->otlp_schedule_delay_ms == 0 && bsp &&
      apply(cfg, find_setting("otlp-schedule-delay-ms", 22), bsp, "OTEL_BSP_SCHEDULE_DELAY",
            false, err) != 0)
    return -1;
  if (cfg->otlp_endpoint[0] == '\0')
    snprintf(cfg->otlp_endpoint, sizeof(cfg->otlp_endpoint), "http://localhost:4318/v1/traces");
  if (strncmp(cfg->otlp_endpoint, "http://", 7) != 0 &&
      strncmp(cfg->otlp_endpoint, "https://", 8) != 0)
    return tt_error_set(err, TT_ERR_VALIDATION, "otlp-endpoint",
                        "otlp-endpoint: must be an http:// or https:// URL");
  /* Another exporter's protocol in the environment (grpc) does not stop a
   * daemon that does not trace. */
  if (cfg->otlp_protocol[0] == '\0' || !cfg->tracing)
    snprintf(cfg->otlp_protocol, sizeof(cfg->otlp_protocol), "http/protobuf");
  enum tt_otlp_protocol protocol;
  if (tt_otlp_protocol_parse(cfg->otlp_protocol, &protocol) != 0)
    return tt_error_set(err, TT_ERR_VALIDATION, "otlp-protocol",
                        "otlp-protocol: must be http/protobuf or http/json");
  struct tt_sampler sampler;
  struct tt_otlp_kvs headers, attrs;
  if (tt_config_tracing(cfg, &sampler, &headers, &attrs, err) != 0)
    return -1;
  tt_otlp_kvs_free(&headers);
  tt_otlp_kvs_free(&attrs);
  return 0;
}

int tt_config_tracing(const struct tt_config *cfg, struct tt_sampler *sampler,
                      struct tt_otlp_kvs *headers, struct tt_otlp_kvs *attrs,
                      struct tt_error *err) {
  char why[160];
  if (tt_sampler_parse(cfg->traces_sampler, cfg->traces_sampler_arg, sampler, why,
                       sizeof(why)) != 0)
    return tt_error_set(err, TT_ERR_VALIDATION, "traces-sampler", "traces-sampler: %s", why);
  if (tt_otlp_kv_parse(cfg->otlp_headers, strlen(cfg->otlp_headers), true, headers, why,
                       sizeof(why)) != 0)
    return tt_error_set(err, TT_ERR_VALIDATION, "otlp-headers", "otlp-headers: %s", why);
  if (tt_otlp_kv_parse(cfg->resource_attributes, strlen(cfg->resource_attributes), false, attrs,
                       why, sizeof(why)) != 0) {
    tt_otlp_kvs_free(headers);
    return tt_error_set(err, TT_ERR_VALIDATION, "resource-attributes",
                        "resource-attributes: %s", why);
  }
  return 0;
}

int tt_config_load(struct tt_config *cfg, int argc, char **argv, char **envp,
                   enum tt_config_action *action, struct tt_error *err) {
  defaults(cfg);
  *action = TT_CONFIG_RUN;
  /* The file's location comes first, from the flag or the environment. */
  const char *env_cfg = env_lookup(envp, "TABLETHEORYD_CONFIG");
  if (env_cfg && apply(cfg, find_setting("config", 6), env_cfg, "TABLETHEORYD_CONFIG", false,
                       err) != 0)
    return -1;
  if (apply_args(cfg, argc, argv, true, action, err) != 0)
    return -1;
  if (*action != TT_CONFIG_RUN)
    return 0;
  if (cfg->config_file[0] && apply_file(cfg, cfg->config_file, err) != 0)
    return -1;
  if (apply_env(cfg, envp, err) != 0)
    return -1;
  if (apply_args(cfg, argc, argv, false, action, err) != 0)
    return -1;
  const char *r = env_lookup(envp, "AWS_REGION") ?: env_lookup(envp, "AWS_DEFAULT_REGION");
  if (cfg->region[0] == '\0' && r)
    snprintf(cfg->region, sizeof(cfg->region), "%s", r);
  return tracing_settings(cfg, envp, err);
}

int tt_config_read_token(const char *path, char **token, struct tt_error *err) {
#define TOKEN_FAIL(fmt, ...)                                                                      \
  tt_error_set(err, TT_ERR_VALIDATION, "auth-token-file", "auth-token-file: %s" fmt, path,      \
               ##__VA_ARGS__)
  *token = NULL;
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return TOKEN_FAIL(": %s", strerror(errno));
  /* One byte more than allowed tells an over-long file from a full one. */
  char buf[TT_TOKEN_FILE_MAX + 2];
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  bool read_error = ferror(f) != 0;
  fclose(f);
  if (read_error)
    return TOKEN_FAIL(": could not be read");
  if (n > TT_TOKEN_FILE_MAX)
    return TOKEN_FAIL(" is longer than %d bytes", TT_TOKEN_FILE_MAX);
  while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\t' || buf[n - 1] == '\r' ||
                   buf[n - 1] == '\n'))
    n--;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)buf[i];
    if (c < 0x20 || c == 0x7f)
      return TOKEN_FAIL(": the token has a control byte (0x%02x) at offset %zu; write it on "
                        "one line of printable characters", c, i);
  }
  if (n < TT_TOKEN_MIN)
    return TOKEN_FAIL(": the token must be at least %d characters", TT_TOKEN_MIN);
#undef TOKEN_FAIL
  buf[n] = '\0';
  *token = strdup(buf);
  if (*token == NULL)
    return tt_error_set(err, TT_ERR_INTERNAL, "auth-token-file", "out of memory");
  return 0;
}

const char *tt_config_usage(void) {
  static char text[8192];
  if (text[0])
    return text;
  size_t n = (size_t)snprintf(text, sizeof(text),
                              "Usage: tabletheoryd [options]\n"
                              "A sidecar that serves a DynamoDB ORM over localhost HTTP/JSON.\n\n");
  for (size_t i = 0; i < NSETTINGS && n < sizeof(text); i++) {
    const char *h = settings[i].help;
    const char *gap = strchr(h, ' ');
    int arglen = (int)(gap - h);
    char flag[64];
    snprintf(flag, sizeof(flag), "--%s%s%.*s", settings[i].name, arglen ? " " : "", arglen, h);
    n += (size_t)snprintf(text + n, sizeof(text) - n, "  %-32s %s\n", flag, gap + 2);
  }
  if (n < sizeof(text))
    snprintf(text + n, sizeof(text) - n,
             "  %-32s %s\n  %-32s %s\n  %-32s %s\n\nEvery option but --test-clock also reads "
             "TABLETHEORYD_<OPTION>\n(e.g. TABLETHEORYD_BACKEND) and the --config file; flags "
             "win over the\nenvironment, the environment over the file.\n",
             "--test-clock", "freeze the clock; POST /v1/_test/clock moves it (tests only)",
             "--version", "print the version", "--help", "print this text");
  return text;
}
