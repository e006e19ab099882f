/* SPDX-License-Identifier: Apache-2.0 */
/* models.c -- the built-in DMS models of the job ledger (JobMeta, JobRecord,
 * JobLock, JobRequest, SemaphoreLease) and their registration on the
 * configured table. */
#include <stdlib.h>
#include <string.h>

#include "ledger/ledger.h"
#include "model/dms_parse.h"

/* What every ledger model repeats: one model's heading (its name, the
 * placeholder table, snake_case names, pk/sk string keys and their
 * attributes), the timestamps, and the tail of the models whose version is
 * the DMS role. Spliced by string-literal concatenation, so the text is one
 * constant. */
#define LEDGER_MODEL_HEAD(name) \
    "  - name: \"" name "\"\n" \
    "    table: { name: \"placeholder\" }\n" \
    "    naming: { convention: \"snake_case\" }\n" \
    "    keys:\n" \
    "      partition: { attribute: \"pk\", type: \"S\" }\n" \
    "      sort: { attribute: \"sk\", type: \"S\" }\n" \
    "    attributes:\n" \
    "      - { attribute: \"pk\", type: \"S\", required: true, roles: [\"pk\"] }\n" \
    "      - { attribute: \"sk\", type: \"S\", required: true, roles: [\"sk\"] }\n"
#define LEDGER_MODEL_STAMPS \
    "      - { attribute: \"created_at\", type: \"S\", format: \"rfc3339nano\", roles: [\"created_at\"] }\n" \
    "      - { attribute: \"updated_at\", type: \"S\", format: \"rfc3339nano\", roles: [\"updated_at\"] }\n"
#define LEDGER_MODEL_TAIL \
    LEDGER_MODEL_STAMPS \
    "      - { attribute: \"version\", type: \"N\", format: \"int\", roles: [\"version\"] }\n" \
    "      - { attribute: \"ttl\", type: \"N\", format: \"unix_seconds\", optional: true, omit_empty: true, roles: [\"ttl\"] }\n"

/* One table, pk/sk strings, TTL attribute `ttl`, snake_case attributes
 * (docs/ledger.md). The table name is a placeholder: it is set from
 * --jobs-table on the parsed tree, never spliced into the text.
 *
 * JobMeta's `version` is a plain integer that the ledger manages itself:
 * docs/ledger.md fixes a new job's version at 1, while the DMS `version` role starts
 * at 0. JobRecord, JobLock, JobRequest and SemaphoreLease use the role
 * (every write adds 1),
 * which makes "written exactly twice" observable and guards lock deletes.
 * Only JobMeta declares the GSIs; the table gets them from it. */
static const char ledger_dms[] =
    "dms_version: \"0.2\"\n"
    "namespace: \"tabletheoryd.ledger\"\n"
    "models:\n"
    LEDGER_MODEL_HEAD("JobMeta")
    "      - { attribute: \"job_id\", type: \"S\", required: true }\n"
    "      - { attribute: \"tenant_id\", type: \"S\", optional: true, omit_empty: true }\n"
    "      - { attribute: \"status\", type: \"S\", required: true }\n"
    "      - { attribute: \"version\", type: \"N\", format: \"int\", required: true }\n"
    LEDGER_MODEL_STAMPS
    "      - { attribute: \"ttl\", type: \"N\", format: \"unix_seconds\", optional: true, omit_empty: true, roles: [\"ttl\"] }\n"
    "    indexes:\n"
    "      - name: \"status-created-index\"\n"
    "        type: \"GSI\"\n"
    "        partition: { attribute: \"status\", type: \"S\" }\n"
    "        sort: { attribute: \"created_at\", type: \"S\" }\n"
    "        projection: { type: \"ALL\" }\n"
    "      - name: \"tenant-created-index\"\n"
    "        type: \"GSI\"\n"
    "        partition: { attribute: \"tenant_id\", type: \"S\" }\n"
    "        sort: { attribute: \"created_at\", type: \"S\" }\n"
    "        projection: { type: \"ALL\" }\n"
    LEDGER_MODEL_HEAD("JobRecord")
    "      - { attribute: \"job_id\", type: \"S\", required: true }\n"
    "      - { attribute: \"record_id\", type: \"S\", required: true }\n"
    "      - { attribute: \"status\", type: \"S\", required: true }\n"
    "      - { attribute: \"error\", type: \"M\", optional: true, omit_empty: true }\n"
    LEDGER_MODEL_TAIL
    LEDGER_MODEL_HEAD("JobLock")
    "      - { attribute: \"job_id\", type: \"S\", required: true }\n"
    "      - { attribute: \"owner\", type: \"S\", required: true }\n"
    "      - { attribute: \"lease_expires_at\", type: \"N\", format: \"unix_seconds\", required: true }\n"
    LEDGER_MODEL_TAIL
    LEDGER_MODEL_HEAD("JobRequest")
    "      - { attribute: \"job_id\", type: \"S\", required: true }\n"
    "      - { attribute: \"idempotency_key\", type: \"S\", required: true }\n"
    "      - { attribute: \"status\", type: \"S\", required: true }\n"
    "      - { attribute: \"result\", type: \"S\", json: true, optional: true }\n"
    "      - { attribute: \"error\", type: \"M\", optional: true, omit_empty: true }\n"
    "      - { attribute: \"completed_at\", type: \"S\", format: \"rfc3339nano\", optional: true, omit_empty: true }\n"
    LEDGER_MODEL_TAIL
    /* One item per slot of a leased semaphore (AppTheory's SemaphoreLease:
     * pk SEM#<scope>#<subject>, sk SLOT#%09d); `owner` as on JobLock. */
    LEDGER_MODEL_HEAD("SemaphoreLease")
    "      - { attribute: \"scope\", type: \"S\", required: true }\n"
    "      - { attribute: \"subject\", type: \"S\", required: true }\n"
    "      - { attribute: \"slot\", type: \"N\", format: \"int\", required: true }\n"
    "      - { attribute: \"owner\", type: \"S\", required: true }\n"
    "      - { attribute: \"lease_expires_at\", type: \"N\", format: \"unix_seconds\", required: true }\n"
    LEDGER_MODEL_TAIL;

/* The DMS document (v0.2) of the built-in models on `table`, as a new
 * jansson tree (caller decrefs); NULL when out of memory. */
static json_t *tt_ledger_models_doc(const char *table) {
  json_t *docs = NULL;
  struct tt_error err;
  if (tt_dms_parse(ledger_dms, sizeof(ledger_dms) - 1, TT_DMS_SYNTAX_YAML, "ledger", &docs,
                   &err) != 0)
    return NULL;
  json_t *doc = json_incref(json_array_get(docs, 0));
  json_decref(docs);
  size_t i;
  json_t *m;
  json_array_foreach(json_object_get(doc, "models"), i, m) {
    if (json_object_set_new(json_object_get(m, "table"), "name", json_string(table)) != 0) {
      json_decref(doc);
      return NULL;
    }
  }
  return doc;
}

int tt_ledger_register_models(struct tt_model_registry *r, const char *table,
                              struct tt_error *err) {
  if (table == NULL || table[0] == '\0')
    table = TT_LEDGER_DEFAULT_TABLE;
  /* Again on the same table: nothing to do (the reservation kept anyone
   * else from changing the models since). */
  const struct tt_model *meta = tt_model_registry_get_internal(r, TT_LEDGER_MODEL_META);
  if (meta && tt_model_registry_is_reserved(r, meta) && strcmp(meta->table, table) == 0)
    return 0;
  json_t *doc = tt_ledger_models_doc(table);
  if (doc == NULL)
    return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory building the ledger models");
  /* Through the registry's own loader: all or nothing, and the same
   * table-sharing checks as a user's file. */
  char *text = json_dumps(doc, JSON_COMPACT);
  json_decref(doc);
  if (text == NULL)
    return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory building the ledger models");
  int rc = tt_model_registry_load_text(r, text, strlen(text), "jobs-table.json", err);
  free(text);
  /* The ledger's invariants (versions, leases, sanitized errors) hold only
   * if nothing else writes its items: the registry serves these models and
   * their table to no one else (docs/ledger.md "Reserved"). */
  if (rc == 0)
    rc = tt_model_registry_reserve_table(r, table, "the job ledger", err);
  if (rc != 0) {
    struct tt_error named = *err;
    return tt_error_set(err, named.code, "jobs-table", "jobs-table: built-in ledger models: %s",
                        named.message);
  }
  return 0;
}
