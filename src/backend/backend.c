/* SPDX-License-Identifier: Apache-2.0 */
/* backend.c -- operation names and the one error classifier of the port. */
#include "backend/backend.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_names[TT_DDB_OP__COUNT] = {
    [TT_DDB_GET_ITEM] = "GetItem",
    [TT_DDB_PUT_ITEM] = "PutItem",
    [TT_DDB_UPDATE_ITEM] = "UpdateItem",
    [TT_DDB_DELETE_ITEM] = "DeleteItem",
    [TT_DDB_QUERY] = "Query",
    [TT_DDB_SCAN] = "Scan",
    [TT_DDB_BATCH_GET_ITEM] = "BatchGetItem",
    [TT_DDB_BATCH_WRITE_ITEM] = "BatchWriteItem",
    [TT_DDB_TRANSACT_WRITE_ITEMS] = "TransactWriteItems",
    [TT_DDB_TRANSACT_GET_ITEMS] = "TransactGetItems",
    [TT_DDB_CREATE_TABLE] = "CreateTable",
    [TT_DDB_DESCRIBE_TABLE] = "DescribeTable",
    [TT_DDB_DELETE_TABLE] = "DeleteTable",
    [TT_DDB_UPDATE_TIME_TO_LIVE] = "UpdateTimeToLive",
    [TT_DDB_DESCRIBE_TIME_TO_LIVE] = "DescribeTimeToLive",
    [TT_DDB_UPDATE_TABLE] = "UpdateTable",
    [TT_DDB_LIST_TABLES] = "ListTables",
    [TT_DDB_TAG_RESOURCE] = "TagResource",
    [TT_DDB_UNTAG_RESOURCE] = "UntagResource",
    [TT_DDB_LIST_TAGS_OF_RESOURCE] = "ListTagsOfResource",
    [TT_KMS_GENERATE_DATA_KEY] = "GenerateDataKey",
    [TT_KMS_DECRYPT] = "Decrypt",
};

const char *tt_ddb_op_name(enum tt_ddb_op op) {
  return (unsigned)op < TT_DDB_OP__COUNT ? op_names[op] : "Unknown";
}

bool tt_backend_call_typed(const struct tt_backend_call *c) {
  bool item_op = c->op == TT_DDB_GET_ITEM || c->op == TT_DDB_PUT_ITEM ||
                 c->op == TT_DDB_UPDATE_ITEM || c->op == TT_DDB_DELETE_ITEM;
  bool read_op = c->op == TT_DDB_QUERY || c->op == TT_DDB_SCAN;
  bool txn_op = c->op == TT_DDB_TRANSACT_WRITE_ITEMS || c->op == TT_DDB_TRANSACT_GET_ITEMS;
  bool batch_op = c->op == TT_DDB_BATCH_GET_ITEM || c->op == TT_DDB_BATCH_WRITE_ITEM;
  bool table_op = c->op >= TT_DDB_CREATE_TABLE && c->op <= TT_DDB_LIST_TAGS_OF_RESOURCE;
  return (c->item != NULL && item_op) || (c->read != NULL && read_op) ||
         (c->txn != NULL && txn_op) || (c->batch != NULL && batch_op) ||
         (c->table != NULL && table_op);
}

void tt_backend_call_results_free(struct tt_backend_call *c) {
  json_decref(c->response);
  c->response = NULL;
  tt_av_free(&c->item_out);
  tt_ddb_read_result_free(&c->read_out);
  tt_ddb_txn_result_free(&c->txn_out);
  tt_ddb_batch_result_free(&c->batch_out);
  tt_ddb_table_out_free(&c->table_out);
  tt_backend_error_clear(&c->error);
}

void tt_ddb_table_desc_free(struct tt_ddb_table_desc *d) {
  tt_arena_free(&d->arena);
  memset(d, 0, sizeof(*d));
}

void tt_ddb_table_out_free(struct tt_ddb_table_desc **d) {
  if (*d)
    tt_ddb_table_desc_free(*d);
  free(*d);
  *d = NULL;
}

void tt_ddb_batch_result_free(struct tt_ddb_batch_result *r) {
  for (size_t i = 0; i < r->n_items; i++)
    tt_av_free(&r->items[i].value);
  for (size_t i = 0; i < r->n_left; i++)
    tt_av_free(&r->left[i].value);
  free(r->items);
  free(r->left);
  free(r->units);
  memset(r, 0, sizeof(*r));
}

void tt_ddb_txn_result_free(struct tt_ddb_txn_result *r) {
  for (size_t i = 0; i < r->n_items; i++)
    tt_av_free(&r->items[i]);
  free(r->items);
  for (size_t i = 0; i < r->n_reasons; i++) {
    free(r->reasons[i].message);
    tt_av_free(&r->reasons[i].item);
  }
  free(r->reasons);
  memset(r, 0, sizeof(*r));
}

const char *tt_ddb_return_values_name(enum tt_ddb_return_values rv) {
  static const char *const names[] = {"NONE", "ALL_OLD", "UPDATED_OLD", "ALL_NEW",
                                      "UPDATED_NEW"};
  return (unsigned)rv < sizeof(names) / sizeof(names[0]) ? names[rv] : NULL;
}

const char *tt_ddb_select_name(enum tt_ddb_select s) {
  static const char *const names[] = {NULL, "ALL_ATTRIBUTES", "ALL_PROJECTED_ATTRIBUTES",
                                      "SPECIFIC_ATTRIBUTES", "COUNT"};
  return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : NULL;
}

void tt_ddb_read_result_free(struct tt_ddb_read_result *r) {
  for (size_t i = 0; !r->items_in_arena && i < r->n_items; i++)
    tt_av_free(&r->items[i]);
  tt_arena_free(&r->arena);
  free(r->items);
  tt_av_free(&r->last_key);
  memset(r, 0, sizeof(*r));
}

int tt_ddb_read_result_own_items(struct tt_ddb_read_result *r) {
  if (!r->items_in_arena)
    return 0;
  struct tt_av *own = r->n_items ? calloc(r->n_items, sizeof(*own)) : NULL;
  if (r->n_items && own == NULL)
    return -1;
  for (size_t i = 0; i < r->n_items; i++)
    if (tt_av_clone(&own[i], &r->items[i]) != 0) {
      while (i-- > 0)
        tt_av_free(&own[i]);
      free(own);
      return -1;
    }
  free(r->items);
  r->items = own;
  r->items_in_arena = false;
  tt_arena_free(&r->arena);
  return 0;
}

void tt_backend_error_clear(struct tt_backend_error *e) {
  json_decref(e->body);
  memset(e, 0, sizeof(*e));
}

/* DynamoDB's throttling errors (AWS SDK standard retry mode lists these),
 * then its transient ones, each list ending with NULL. */
static const char *const throttling_types[] = {
    "ProvisionedThroughputExceededException", "ThrottlingException", "Throttling",
    "RequestLimitExceeded", "RequestThrottledException", "TooManyRequestsException",
    "ThrottledException", "SlowDown", "TransactionInProgressException", NULL,
};
static const char *const transient_types[] = {
    "InternalServerError", "InternalFailure", "ServiceUnavailable", "RequestTimeout",
    "RequestTimeoutException", "ConnectionReset", "Timeout", NULL,
};

static bool type_in(const char *type, const char *const *names) {
  for (; *names; names++)
    if (strcmp(type, *names) == 0)
      return true;
  return false;
}

int tt_backend_error_set(struct tt_backend_error *e, const char *type, unsigned http_status,
                         const char *fmt, ...) {
  json_decref(e->body);
  memset(e, 0, sizeof(*e));
  snprintf(e->type, sizeof(e->type), "%s", type);
  e->http_status = http_status;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->message, sizeof(e->message), fmt, ap);
  va_end(ap);
  e->throttling = type_in(type, throttling_types);
  e->retryable = e->throttling || type_in(type, transient_types) || http_status == 500 ||
                 http_status == 502 || http_status == 503 || http_status == 504;
  if (http_status == 413) /* too large, whatever the __type says: it would only repeat */
    e->retryable = e->throttling = false;
  return -1;
}
