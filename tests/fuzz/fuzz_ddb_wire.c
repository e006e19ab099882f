/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_ddb_wire.c -- libFuzzer target for api/ddb_wire.c, the DynamoDB
 * listener's request parser. The input is five header values (method,
 * Content-Type, X-Amz-Target, Authorization, X-Amz-Date), one a line, then
 * the body. Invariants: an accepted request has a known operation and an
 * object body; a refused one has a full __type, a 400 or 404 status and a
 * message that is a C string; the error body renders; nothing reads past
 * the input (ASan). The legacy rewrite (api/ddb_legacy.c) runs on every
 * accepted body, a transaction's or batch's conversion to the typed
 * request (api/ddb_typed.c) on every accepted one, and a table operation's
 * (backend/table_json.c) too. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/ddb_items.h"
#include "api/ddb_wire.h"
#include "backend/table_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The typed request of an item or read operation (api/ddb_items.c), read
 * from a body the checks and the legacy rewrite passed: it has its Key,
 * Item or table as the operation needs, and its answer to an empty result
 * renders as a JSON object; or it is refused with a short type, a 400 and
 * a message. */
static void typed_items(enum tt_ddb_op op, const json_t *body) {
  struct tt_ddbi_request r;
  struct tt_ddbi_owned own;
  struct tt_backend_error e;
  memset(&e, 0, sizeof(e));
  if (!tt_ddbi_typed_op(op))
    return;
  if (tt_ddbi_request_from_json(op, body, &r, &own, &e) != 0) {
    if (e.type[0] == '\0' || e.http_status != 400 || strchr(e.type, '#') != NULL ||
        memchr(e.message, '\0', sizeof(e.message)) == NULL)
      abort();
    tt_backend_error_clear(&e);
    return;
  }
  bool read = op == TT_DDB_QUERY || op == TT_DDB_SCAN;
  if (!read && (op == TT_DDB_PUT_ITEM ? r.item.item : r.item.key) == NULL)
    abort();
  struct tt_backend_call bc;
  struct tt_buf b;
  memset(&bc, 0, sizeof(bc));
  own.consumed.set = (read ? r.read.table : r.item.table) != NULL; /* as after a success */
  tt_buf_init(&b, 0);
  json_t *j = NULL;
  if (tt_ddbi_answer_write(&r, &bc, &b) != 0 ||
      (j = json_loadb(b.data, b.len, JSON_ALLOW_NUL, NULL)) == NULL || !json_is_object(j))
    abort();
  json_decref(j);
  tt_buf_free(&b);
  tt_ddbi_owned_free(&own);
}

/* A table operation's typed request (backend/table_json.c): refused with a
 * short type, a 400 (500: memory) and a message; or accepted, and then the
 * request it writes (when every name it needs is there) reads back into a
 * request that writes the same JSON. */
static void typed_table(enum tt_ddb_op op, const json_t *body) {
  struct tt_ddb_table_request r, again;
  struct tt_backend_error e;
  struct tt_arena a;
  memset(&e, 0, sizeof(e));
  if (op < TT_DDB_CREATE_TABLE || op > TT_DDB_LIST_TAGS_OF_RESOURCE)
    return;
  tt_arena_init(&a);
  if (tt_ddb_table_request_read(op, body, &a, &r, &e) != 0) {
    if (e.type[0] == '\0' || (e.http_status != 400 && e.http_status != 500) ||
        strchr(e.type, '#') != NULL || memchr(e.message, '\0', sizeof(e.message)) == NULL)
      abort();
    tt_backend_error_clear(&e);
  } else {
    json_t *j = tt_ddb_table_request_json(op, &r), *k = NULL;
    if (j != NULL && (tt_ddb_table_request_read(op, j, &a, &again, &e) != 0 ||
                      (k = tt_ddb_table_request_json(op, &again)) == NULL || !json_equal(j, k)))
      abort();
    json_decref(j);
    json_decref(k);
  }
  tt_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *buf = malloc(size + 1);
  if (buf == NULL)
    return 0;
  memcpy(buf, data, size);
  buf[size] = '\0';
  char *field[5] = {NULL, NULL, NULL, NULL, NULL};
  char *p = buf;
  size_t used = 0;
  for (int i = 0; i < 5 && used < size; i++) {
    char *nl = memchr(p, '\n', size - used);
    if (nl == NULL)
      break;
    *nl = '\0';
    field[i] = p[0] == '-' && p[1] == '\0' ? NULL : p; /* "-": header absent */
    used += (size_t)(nl - p) + 1;
    p = nl + 1;
  }
  struct tt_ddbw_input in = {
      .method = field[0],
      .content_type = field[1],
      .target = field[2],
      .authorization = field[3],
      .amz_date = field[4],
      .query_auth = size > 0 && (data[0] & 1),
      .body = p,
      .body_len = size - used,
  };
  struct tt_ddbw_request req;
  struct tt_ddbw_error err;
  bool not_json;
  if (tt_ddbw_parse(&in, &req, &err, &not_json) == 0) {
    if (!json_is_object(req.body) || (unsigned)req.op >= TT_DDB_OP__COUNT)
      abort();
    /* The legacy rewrite either refuses with a ValidationException or
     * leaves no legacy parameter behind. */
    struct tt_ddbw_error lerr;
    /* The type check refuses with a SerializationException, or passes and
     * leaves a body that passes it again (its conversions are final). */
    if (tt_ddbw_check_types(req.op, req.body, &lerr) != 0) {
      if (lerr.status != 400 || strstr(lerr.type, "#SerializationException") == NULL)
        abort();
    } else if (tt_ddbw_check_types(req.op, req.body, &lerr) != 0) {
      abort();
    } else if (tt_ddbw_validate(req.op, req.body, &lerr) != 0 &&
               (lerr.status != 400 || strstr(lerr.type, "#ValidationException") == NULL ||
                memchr(lerr.message, '\0', sizeof(lerr.message)) == NULL)) {
      abort();
    }
    if ((tt_ddbw_check_values(req.op, req.body, &lerr) != 0 ||
         tt_ddbw_check_start_key(req.op, req.body, &lerr) != 0) &&
        (lerr.status != 400 || strstr(lerr.type, "#ValidationException") == NULL))
      abort();
    if (tt_ddbw_expression_params(req.op, req.body, &lerr) != 0 &&
        (lerr.status != 400 || strstr(lerr.type, "#ValidationException") == NULL))
      abort();
    /* The table parameters' checks take any body: a refusal is a
     * ValidationException with a message. */
    if (tt_ddbw_check_table(req.op, req.body, &lerr) != 0 &&
        (lerr.status != 400 || strstr(lerr.type, "#ValidationException") == NULL ||
         lerr.message[0] == '\0' || memchr(lerr.message, '\0', sizeof(lerr.message)) == NULL))
      abort();
    if (tt_ddbw_check_table_name(req.op, req.body, &lerr) != 0 &&
        (lerr.status != 400 || strchr(lerr.type, '#') == NULL))
      abort();
    if (tt_ddbw_check_read(req.op, req.body, &lerr) != 0 &&
        (lerr.status != 400 || strstr(lerr.type, "#ValidationException") == NULL))
      abort();
    typed_table(req.op, req.body);
    if (tt_ddbw_legacy(req.op, req.body, &lerr) == 0) {
      typed_items(req.op, req.body);
      if (req.op != TT_DDB_BATCH_GET_ITEM && req.op != TT_DDB_TRANSACT_WRITE_ITEMS &&
          req.op != TT_DDB_TRANSACT_GET_ITEMS && req.op != TT_DDB_BATCH_WRITE_ITEM &&
          req.op < TT_DDB_CREATE_TABLE &&
          (json_object_get(req.body, "Expected") || json_object_get(req.body, "QueryFilter") ||
           json_object_get(req.body, "AttributeUpdates")))
        abort();
    } else if (lerr.status != 400 || strchr(lerr.type, '#') == NULL) {
      abort();
    }
    /* A transaction converts to 1..100 steps of the operation's kinds, or
     * is refused with a short type, a 400 and a message. */
    struct tt_ddbt_txn txn;
    struct tt_backend_error terr;
    memset(&terr, 0, sizeof(terr));
    if (tt_ddbt_is_txn(req.op) && tt_ddbt_txn_parse(req.op, req.body, &txn, &terr) == 0) {
      if (txn.req.n_steps < 1 || txn.req.n_steps > 100)
        abort();
      for (size_t i = 0; i < txn.req.n_steps; i++)
        if ((txn.steps[i].kind == TT_DDB_TXN_GET) != (req.op == TT_DDB_TRANSACT_GET_ITEMS) ||
            (txn.steps[i].r.key == NULL && txn.steps[i].r.item == NULL))
          abort();
      tt_ddbt_txn_free(&txn);
    } else if (tt_ddbt_is_txn(req.op) &&
               (terr.type[0] == '\0' || (terr.http_status != 400 && terr.http_status != 500) ||
                strchr(terr.type, '#') != NULL)) {
      abort();
    }
    tt_backend_error_clear(&terr);
    /* A batch converts to entries of its tables, and its answer renders
     * (an empty result, and one with every entry left unprocessed). */
    struct tt_ddbt_batch batch;
    if (tt_ddbt_is_batch(req.op) && tt_ddbt_batch_parse(req.op, req.body, &batch, &terr) == 0) {
      struct tt_ddb_batch_value left[4];
      struct tt_ddb_batch_result res;
      memset(&res, 0, sizeof(res));
      for (size_t i = 0; i < batch.req.n_entries; i++) {
        const struct tt_ddb_batch_entry *x = &batch.entries[i];
        if (x->table >= batch.req.n_tables)
          abort();
        if (i < 4 && x->value) {
          left[res.n_left] = (struct tt_ddb_batch_value){.table = x->table, .put = x->put,
                                                         .value = *x->value};
          res.n_left++;
        }
      }
      res.left = left; /* borrowed values: rendered, never freed */
      json_t *a = tt_ddbt_batch_answer(req.op, req.body, &batch, &res);
      if (a == NULL)
        abort();
      json_decref(a);
      tt_ddbt_batch_free(&batch);
    } else if (tt_ddbt_is_batch(req.op) &&
               (terr.type[0] == '\0' || (terr.http_status != 400 && terr.http_status != 500))) {
      abort();
    }
    tt_backend_error_clear(&terr);
    json_decref(req.body);
  } else {
    if (err.type == NULL || strchr(err.type, '#') == NULL ||
        (err.status != 400 && err.status != 404) || memchr(err.message, '\0',
                                                           sizeof(err.message)) == NULL)
      abort();
    json_t *b = tt_ddbw_error_body(err.type, err.message, NULL);
    if (b == NULL)
      abort();
    json_decref(b);
  }
  (void)tt_ddbw_crc32(data, size);
  free(buf);
  return 0;
}
