/* SPDX-License-Identifier: Apache-2.0 */
/* test_memdb_limits.c -- DynamoDB's size and shape limits on the memory
 * backend: each one exactly at the limit accepted and one past it refused
 * with the service's error type and text. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "test_memdb.h"

#define HASH_MSG                                                                                   \
  "One or more parameter values were invalid: Size of hashkey has exceeded the maximum size "      \
  "limit of2048 bytes"
#define RANGE_MSG                                                                                  \
  "One or more parameter values were invalid: Aggregated size of all range keys has exceeded "     \
  "the size limit of 1024 bytes"
#define NAME_MSG                                                                                   \
  "1 validation error detected: Attribute name is too large, must be less than 65536 bytes"
#define NEST_MSG                                                                                   \
  "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels "      \
  "beyond supported limit"

#define SS_TABLE                                                                                   \
  "{'TableName':'sst','BillingMode':'PAY_PER_REQUEST','AttributeDefinitions':[{'AttributeName':"   \
  "'pk','AttributeType':'S'},{'AttributeName':'sk','AttributeType':'S'}],'KeySchema':"            \
  "[{'AttributeName':'pk','KeyType':'HASH'},{'AttributeName':'sk','KeyType':'RANGE'}]}"
#define BB_TABLE                                                                                   \
  "{'TableName':'bbt','BillingMode':'PAY_PER_REQUEST','AttributeDefinitions':[{'AttributeName':"   \
  "'pk','AttributeType':'B'},{'AttributeName':'sk','AttributeType':'B'}],'KeySchema':"            \
  "[{'AttributeName':'pk','KeyType':'HASH'},{'AttributeName':'sk','KeyType':'RANGE'}]}"

/* `n` copies of `s`, a new string. */
static char *rep(const char *s, size_t n) {
  struct tt_buf b;
  tt_buf_init(&b, 0);
  for (size_t i = 0; i < n; i++)
    tt_buf_puts(&b, s);
  if (n == 0)
    tt_buf_puts(&b, "");
  return tt_buf_steal(&b, NULL);
}

/* printf into a new string. */
static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  int n = vsnprintf(NULL, 0, f, ap);
  va_end(ap);
  char *s = malloc((size_t)n + 1);
  va_start(ap, f);
  vsnprintf(s, (size_t)n + 1, f, ap);
  va_end(ap);
  return s;
}

/* Base64 of `n` zero bytes (the key sizes count raw bytes, not base64). */
static char *zeros_b64(size_t n) {
  char *s = rep("AAAA", n / 3);
  char *out = fmt("%s%s", s, n % 3 == 1 ? "AA==" : n % 3 == 2 ? "AAA=" : "");
  free(s);
  return out;
}

/* Runs `op` on a request built by fmt and expects success. */
static void ok_f(struct fx *f, enum tt_ddb_op op, char *req) {
  fx_exec(f, op, req);
  free(req);
}

/* GetItem on a request built by fmt: the response (freed by the caller). */
static json_t *get_f(struct fx *f, char *req) {
  json_t *r = fx_ok(f, TT_DDB_GET_ITEM, req);
  free(req);
  return r;
}

static void fail_f(struct fx *f, enum tt_ddb_op op, char *req, const char *type,
                   const char *msg) {
  fx_fail(f, op, req, type, msg);
  free(req);
}

START_TEST(key_value_sizes) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SS_TABLE);
  fx_exec(&f, TT_DDB_CREATE_TABLE, BB_TABLE);
  char *p2048 = rep("p", 2048), *p2049 = rep("p", 2049);
  char *s1024 = rep("s", 1024), *s1025 = rep("s", 1025);
  /* Partition key: 2048 bytes written and read back, 2049 refused on every
   * operation that takes a key. */
  ok_f(&f, TT_DDB_PUT_ITEM,
       fmt("{'TableName':'tbl','Item':{'pk':{'S':'%s'},'v':{'N':'1'}}}", p2048));
  json_t *r = get_f(&f, fmt("{'TableName':'tbl','Key':{'pk':{'S':'%s'}}}", p2048));
  ck_assert_ptr_nonnull(json_object_get(r, "Item"));
  json_decref(r);
  fail_f(&f, TT_DDB_PUT_ITEM, fmt("{'TableName':'tbl','Item':{'pk':{'S':'%s'}}}", p2049),
         "ValidationException", HASH_MSG);
  fail_f(&f, TT_DDB_GET_ITEM, fmt("{'TableName':'tbl','Key':{'pk':{'S':'%s'}}}", p2049),
         "ValidationException", HASH_MSG);
  fail_f(&f, TT_DDB_DELETE_ITEM, fmt("{'TableName':'tbl','Key':{'pk':{'S':'%s'}}}", p2049),
         "ValidationException", HASH_MSG);
  fail_f(&f, TT_DDB_UPDATE_ITEM,
         fmt("{'TableName':'tbl','Key':{'pk':{'S':'%s'}},'UpdateExpression':'SET v = :v',"
             "'ExpressionAttributeValues':{':v':{'N':'1'}}}",
             p2049),
         "ValidationException", HASH_MSG);
  fail_f(&f, TT_DDB_BATCH_WRITE_ITEM,
         fmt("{'RequestItems':{'tbl':[{'PutRequest':{'Item':{'pk':{'S':'%s'}}}}]}}", p2049),
         "ValidationException", HASH_MSG);
  /* Sort key: 1024 accepted, 1025 refused. */
  ok_f(&f, TT_DDB_PUT_ITEM,
       fmt("{'TableName':'sst','Item':{'pk':{'S':'%s'},'sk':{'S':'%s'}}}", p2048, s1024));
  r = get_f(&f,
            fmt("{'TableName':'sst','Key':{'pk':{'S':'%s'},'sk':{'S':'%s'}}}", p2048, s1024));
  ck_assert_ptr_nonnull(json_object_get(r, "Item"));
  json_decref(r);
  fail_f(&f, TT_DDB_PUT_ITEM,
         fmt("{'TableName':'sst','Item':{'pk':{'S':'a'},'sk':{'S':'%s'}}}", s1025),
         "ValidationException", RANGE_MSG);
  fail_f(&f, TT_DDB_GET_ITEM,
         fmt("{'TableName':'sst','Key':{'pk':{'S':'a'},'sk':{'S':'%s'}}}", s1025),
         "ValidationException", RANGE_MSG);
  /* Binary keys count their raw bytes. */
  char *b2048 = zeros_b64(2048), *b2049 = zeros_b64(2049);
  char *b1024 = zeros_b64(1024), *b1025 = zeros_b64(1025);
  ok_f(&f, TT_DDB_PUT_ITEM,
       fmt("{'TableName':'bbt','Item':{'pk':{'B':'%s'},'sk':{'B':'%s'}}}", b2048, b1024));
  r = get_f(&f,
            fmt("{'TableName':'bbt','Key':{'pk':{'B':'%s'},'sk':{'B':'%s'}}}", b2048, b1024));
  ck_assert_ptr_nonnull(json_object_get(r, "Item"));
  json_decref(r);
  fail_f(&f, TT_DDB_PUT_ITEM,
         fmt("{'TableName':'bbt','Item':{'pk':{'B':'%s'},'sk':{'B':'AA=='}}}", b2049),
         "ValidationException", HASH_MSG);
  fail_f(&f, TT_DDB_GET_ITEM,
         fmt("{'TableName':'bbt','Key':{'pk':{'B':'AA=='},'sk':{'B':'%s'}}}", b1025),
         "ValidationException", RANGE_MSG);
  /* The lower bound: an empty S or B key value is refused. */
  fx_fail(&f, TT_DDB_PUT_ITEM, "{'TableName':'bbt','Item':{'pk':{'B':''},'sk':{'B':'AA=='}}}",
          "ValidationException",
          "One or more parameter values are not valid. The AttributeValue for a key attribute "
          "cannot contain an empty binary value. Key: pk");
  free(p2048), free(p2049), free(s1024), free(s1025);
  free(b2048), free(b2049), free(b1024), free(b1025);
  fx_teardown(&f);
}
END_TEST

START_TEST(index_key_value_sizes) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, FULL_TABLE);
  char *g2048 = rep("g", 2048), *g2049 = rep("g", 2049);
  char *l1024 = rep("l", 1024), *l1025 = rep("l", 1025);
  ok_f(&f, TT_DDB_PUT_ITEM,
       fmt("{'TableName':'full','Item':{'pk':{'S':'a'},'sk':{'N':'1'},'g':{'S':'%s'},'l':{'S':"
           "'%s'}}}",
           g2048, l1024));
  /* The GSI's partition key has the table's partition limit. */
  fail_f(&f, TT_DDB_PUT_ITEM,
         fmt("{'TableName':'full','Item':{'pk':{'S':'a'},'sk':{'N':'2'},'g':{'S':'%s'}}}", g2049),
         "ValidationException", HASH_MSG);
  /* The LSI's sort key has the sort-key limit. */
  fail_f(&f, TT_DDB_PUT_ITEM,
         fmt("{'TableName':'full','Item':{'pk':{'S':'a'},'sk':{'N':'3'},'l':{'S':'%s'}}}", l1025),
         "ValidationException", RANGE_MSG);
  /* An update that makes an index key too long is refused too. */
  fail_f(&f, TT_DDB_UPDATE_ITEM,
         fmt("{'TableName':'full','Key':{'pk':{'S':'a'},'sk':{'N':'1'}},'UpdateExpression':"
             "'SET g = :g','ExpressionAttributeValues':{':g':{'S':'%s'}}}",
             g2049),
         "ValidationException", HASH_MSG);
  /* When the item is over 400 KB too, the size is the answer. */
  char *huge = rep("g", 409600);
  fail_f(&f, TT_DDB_UPDATE_ITEM,
         fmt("{'TableName':'full','Key':{'pk':{'S':'a'},'sk':{'N':'1'}},'UpdateExpression':"
             "'SET g = :g','ExpressionAttributeValues':{':g':{'S':'%s'}}}",
             huge),
         "ValidationException", "Item size to update has exceeded the maximum allowed size");
  free(huge);
  free(g2048), free(g2049), free(l1024), free(l1025);
  fx_teardown(&f);
}
END_TEST

START_TEST(attribute_name_lengths) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  char *n65535 = rep("n", 65535), *n65536 = rep("n", 65536);
  ok_f(&f, TT_DDB_PUT_ITEM,
       fmt("{'TableName':'tbl','Item':{'pk':{'S':'a'},'%s':{'N':'1'}}}", n65535));
  fail_f(&f, TT_DDB_PUT_ITEM,
         fmt("{'TableName':'tbl','Item':{'pk':{'S':'a'},'%s':{'N':'1'}}}", n65536),
         "ValidationException", NAME_MSG);
  /* A map key is an attribute name at any depth. */
  ok_f(&f, TT_DDB_PUT_ITEM,
       fmt("{'TableName':'tbl','Item':{'pk':{'S':'a'},'m':{'M':{'%s':{'N':'1'}}}}}", n65535));
  fail_f(&f, TT_DDB_PUT_ITEM,
         fmt("{'TableName':'tbl','Item':{'pk':{'S':'a'},'m':{'L':[{'M':{'%s':{'N':'1'}}}]}}}",
             n65536),
         "ValidationException", NAME_MSG);
  /* So is a name given through ExpressionAttributeNames. */
  ok_f(&f, TT_DDB_UPDATE_ITEM,
       fmt("{'TableName':'tbl','Key':{'pk':{'S':'a'}},'UpdateExpression':'SET #n = :v',"
           "'ExpressionAttributeNames':{'#n':'%s'},'ExpressionAttributeValues':{':v':{'N':'2'}}}",
           n65535));
  fail_f(&f, TT_DDB_UPDATE_ITEM,
         fmt("{'TableName':'tbl','Key':{'pk':{'S':'a'}},'UpdateExpression':'SET #n = :v',"
             "'ExpressionAttributeNames':{'#n':'%s'},'ExpressionAttributeValues':{':v':{'N':"
             "'2'}}}",
             n65536),
         "ValidationException", NAME_MSG);
  free(n65535), free(n65536);
  fx_teardown(&f);
}
END_TEST

/* `n` single-key maps around a string leaf (n = 31: the leaf at level 32). */
static char *deep(size_t n, const char *kind) {
  bool list = strcmp(kind, "L") == 0;
  char *open = rep(list ? "{'L':[" : "{'M':{'n':", n), *close = rep(list ? "]}" : "}}", n);
  char *s = fmt("%s{'S':'leaf'}%s", open, close);
  free(open), free(close);
  return s;
}

START_TEST(nesting_depth) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  static const char *const kinds[] = {"M", "L"};
  for (int k = 0; k < 2; k++) {
    char *d31 = deep(31, kinds[k]), *d32 = deep(32, kinds[k]), *d40 = deep(40, kinds[k]);
    ok_f(&f, TT_DDB_PUT_ITEM, fmt("{'TableName':'tbl','Item':{'pk':{'S':'a'},'d':%s}}", d31));
    fail_f(&f, TT_DDB_PUT_ITEM, fmt("{'TableName':'tbl','Item':{'pk':{'S':'a'},'d':%s}}", d32),
           "ValidationException", NEST_MSG);
    /* Far past the limit, the same answer (not the codec's). */
    fail_f(&f, TT_DDB_PUT_ITEM, fmt("{'TableName':'tbl','Item':{'pk':{'S':'a'},'d':%s}}", d40),
           "ValidationException", NEST_MSG);
    /* Values of ExpressionAttributeValues have the same bound. */
    ok_f(&f, TT_DDB_UPDATE_ITEM,
         fmt("{'TableName':'tbl','Key':{'pk':{'S':'b'}},'UpdateExpression':'SET d = :d',"
             "'ExpressionAttributeValues':{':d':%s}}",
             d31));
    fail_f(&f, TT_DDB_UPDATE_ITEM,
           fmt("{'TableName':'tbl','Key':{'pk':{'S':'b'}},'UpdateExpression':'SET e = :d',"
               "'ExpressionAttributeValues':{':d':%s}}",
               d32),
           "ValidationException", NEST_MSG);
    free(d31), free(d32), free(d40);
  }
  /* An update whose result nests too deep: d holds 31 levels of L, and
   * d[0] = <31 levels> puts the leaf at level 33. */
  char *d31 = deep(31, "M");
  fail_f(&f, TT_DDB_UPDATE_ITEM,
         fmt("{'TableName':'tbl','Key':{'pk':{'S':'b'}},'UpdateExpression':'SET d[0] = :d',"
             "'ExpressionAttributeValues':{':d':%s}}",
             d31),
         "ValidationException", NEST_MSG);
  free(d31);
  fx_teardown(&f);
}
END_TEST

START_TEST(placeholder_limits) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  char *k254 = rep("k", 254), *k255 = rep("k", 255);
  /* "#" + 254 = 255 bytes accepted; 256 refused. */
  ok_f(&f, TT_DDB_GET_ITEM,
       fmt("{'TableName':'tbl','Key':{'pk':{'S':'a'}},'ProjectionExpression':'#%s',"
           "'ExpressionAttributeNames':{'#%s':'v'}}",
           k254, k254));
  fail_f(&f, TT_DDB_GET_ITEM,
         fmt("{'TableName':'tbl','Key':{'pk':{'S':'a'}},'ProjectionExpression':'#%s',"
             "'ExpressionAttributeNames':{'#%s':'v'}}",
             k255, k255),
         "ValidationException",
         "ExpressionAttributeNames contains invalid key: The expression attribute map contains "
         "a key that is too long; size of key: 256");
  ok_f(&f, TT_DDB_UPDATE_ITEM,
       fmt("{'TableName':'tbl','Key':{'pk':{'S':'a'}},'UpdateExpression':'SET v = :%s',"
           "'ExpressionAttributeValues':{':%s':{'N':'1'}}}",
           k254, k254));
  fail_f(&f, TT_DDB_UPDATE_ITEM,
         fmt("{'TableName':'tbl','Key':{'pk':{'S':'a'}},'UpdateExpression':'SET v = :%s',"
             "'ExpressionAttributeValues':{':%s':{'N':'1'}}}",
             k255, k255),
         "ValidationException",
         "ExpressionAttributeValues contains invalid key: The expression attribute map contains "
         "a key that is too long; size of key: 256");
  free(k254), free(k255);
  /* 2 MB of names and values in all: 32 names #a00..#a31 (4 bytes each),
   * 31 of 65535 bytes and one that makes the total exactly 2 MB. */
  for (int over = 0; over < 2; over++) {
    struct tt_buf names, proj;
    tt_buf_init(&names, 0);
    tt_buf_init(&proj, 0);
    size_t total = 0;
    for (int i = 0; i < 32; i++) {
      size_t len = i < 31 ? 65535 : 2097152 - 32 * 4 - 31 * 65535 + (size_t)over;
      char *v = rep("v", len - 2); /* distinct names: paths must not overlap */
      tt_buf_printf(&names, "%s'#a%02d':'%02d%s'", i ? "," : "", i, i, v);
      tt_buf_printf(&proj, "%s#a%02d", i ? "," : "", i);
      total += 4 + len;
      free(v);
    }
    ck_assert_uint_eq(total, 2097152u + (size_t)over);
    char *req = fmt("{'TableName':'tbl','Key':{'pk':{'S':'a'}},'ProjectionExpression':'%s',"
                    "'ExpressionAttributeNames':{%s}}",
                    proj.data, names.data);
    if (over)
      fail_f(&f, TT_DDB_GET_ITEM, req, "ValidationException",
             "ExpressionAttributeNames exceeds max size");
    else
      ok_f(&f, TT_DDB_GET_ITEM, req);
    tt_buf_free(&names);
    tt_buf_free(&proj);
  }
  fx_teardown(&f);
}
END_TEST

START_TEST(expression_limits) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  /* Text: 4096 bytes accepted, 4097 refused. */
  const char *base = "attribute_not_exists(v)";
  for (size_t len = 4096; len <= 4097; len++) {
    char *pad = rep(" ", len - strlen(base));
    char *req = fmt("{'TableName':'tbl','Item':{'pk':{'S':'t%zu'}},'ConditionExpression':'%s%s'}",
                    len, base, pad);
    if (len == 4096)
      ok_f(&f, TT_DDB_PUT_ITEM, req);
    else
      fail_f(&f, TT_DDB_PUT_ITEM, req, "ValidationException",
             "Invalid ConditionExpression: Expression size has exceeded the maximum allowed "
             "size; expression size: 4097");
    free(pad);
  }
  /* Operators: NOT (150 comparisons joined by 149 ORs) is 300; 151
   * comparisons and 150 ORs are 301. */
  char *ors = rep(" OR v = :v", 149);
  ok_f(&f, TT_DDB_PUT_ITEM,
       fmt("{'TableName':'tbl','Item':{'pk':{'S':'op'}},'ConditionExpression':'NOT (v = :v%s)',"
           "'ExpressionAttributeValues':{':v':{'N':'1'}}}",
           ors));
  fail_f(&f, TT_DDB_PUT_ITEM,
         fmt("{'TableName':'tbl','Item':{'pk':{'S':'op'}},'ConditionExpression':'v = :v%s OR v = "
             ":v','ExpressionAttributeValues':{':v':{'N':'1'}}}",
             ors),
         "ValidationException",
         "Invalid ConditionExpression: The expression contains too many operators; operator "
         "count: 301");
  free(ors);
  /* IN: 100 operands accepted, 101 refused. */
  char *in99 = rep(", :v", 99);
  ok_f(&f, TT_DDB_PUT_ITEM,
       fmt("{'TableName':'tbl','Item':{'pk':{'S':'in'}},'ConditionExpression':'NOT v IN (:v%s)',"
           "'ExpressionAttributeValues':{':v':{'N':'1'}}}",
           in99));
  fail_f(&f, TT_DDB_PUT_ITEM,
         fmt("{'TableName':'tbl','Item':{'pk':{'S':'in'}},'ConditionExpression':'NOT v IN "
             "(:v%s, :v)','ExpressionAttributeValues':{':v':{'N':'1'}}}",
             in99),
         "ValidationException",
         "Invalid ConditionExpression: The IN operator is provided with too many operands; "
         "number of operands: 101");
  free(in99);
  /* Document path: 32 levels accepted, 33 refused. */
  char *p31 = rep(".b", 31);
  ok_f(&f, TT_DDB_GET_ITEM,
       fmt("{'TableName':'tbl','Key':{'pk':{'S':'op'}},'ProjectionExpression':'a%s'}", p31));
  fail_f(&f, TT_DDB_GET_ITEM,
         fmt("{'TableName':'tbl','Key':{'pk':{'S':'op'}},'ProjectionExpression':'a%s.b'}", p31),
         "ValidationException",
         "Invalid ProjectionExpression: The document path has too many nesting levels; nesting "
         "levels: 33");
  free(p31);
  fx_teardown(&f);
}
END_TEST

/* A put of item {pk: key, v: <n x's>} as one transaction action. */
static void tx_put(struct tt_buf *b, const char *key, size_t n) {
  char *v = rep("x", n);
  tt_buf_printf(b, "%s{'Put':{'TableName':'tbl','Item':{'pk':{'S':'%s'},'v':{'S':'%s'}}}}",
                b->len > 18 ? "," : "", key, v);
  free(v);
}

START_TEST(item_size_and_transaction_size) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  /* Item: "pk" + "a" (3) + "v" + value (1 + n) = 409600 exactly. */
  char *v = rep("x", 409596), *v1 = rep("x", 409597);
  ok_f(&f, TT_DDB_PUT_ITEM, fmt("{'TableName':'tbl','Item':{'pk':{'S':'a'},'v':{'S':'%s'}}}", v));
  fail_f(&f, TT_DDB_PUT_ITEM, fmt("{'TableName':'tbl','Item':{'pk':{'S':'a'},'v':{'S':'%s'}}}", v1),
         "ValidationException", "Item size has exceeded the maximum allowed size");
  free(v), free(v1);
  /* Transaction: ten items of 409600 bytes ("pk" + "kN" + "v" + 409595)
   * and one of 98304 ("pk" + "k10" + "v" + 98298) are exactly 4 MB. */
  for (int over = 0; over < 2; over++) {
    struct tt_buf b;
    tt_buf_init(&b, 0);
    tt_buf_puts(&b, "{'TransactItems':[");
    for (int i = 0; i < 10; i++) {
      char key[16];
      snprintf(key, sizeof(key), "k%d", i);
      tx_put(&b, key, 409595);
    }
    tx_put(&b, "k10", 98298 + (size_t)over);
    tt_buf_puts(&b, "]}");
    if (over)
      fx_fail(&f, TT_DDB_TRANSACT_WRITE_ITEMS, b.data, "ValidationException",
              "Transaction request cannot be larger than 4 MB");
    else
      fx_exec(&f, TT_DDB_TRANSACT_WRITE_ITEMS, b.data);
    tt_buf_free(&b);
  }
  fx_teardown(&f);
}
END_TEST

/* A request of n actions: "{'<head>[<one with %d> x n]}". */
static char *actions(const char *head, const char *one, int n) {
  struct tt_buf b;
  tt_buf_init(&b, 0);
  tt_buf_puts(&b, head);
  for (int i = 0; i < n; i++) {
    if (i)
      tt_buf_puts(&b, ",");
    tt_buf_printf(&b, one, i);
  }
  tt_buf_puts(&b, strstr(head, "RequestItems") ? "]}}" : "]}");
  return tt_buf_steal(&b, NULL);
}

START_TEST(request_action_counts) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  static const char bw[] = "{'RequestItems':{'tbl':[";
  static const char bw_one[] = "{'PutRequest':{'Item':{'pk':{'S':'w%d'}}}}";
  static const char tw[] = "{'TransactItems':[";
  static const char tw_one[] = "{'Put':{'TableName':'tbl','Item':{'pk':{'S':'t%d'}}}}";
  static const char tg_one[] = "{'Get':{'TableName':'tbl','Key':{'pk':{'S':'t%d'}}}}";
  ok_f(&f, TT_DDB_BATCH_WRITE_ITEM, actions(bw, bw_one, 25));
  fail_f(&f, TT_DDB_BATCH_WRITE_ITEM, actions(bw, bw_one, 26), "ValidationException",
         "1 validation error detected: Value at 'requestItems' failed to satisfy constraint: "
         "Map value must satisfy constraint: [Member must have length less than or equal to 25, "
         "Member must have length greater than or equal to 1]");
  ok_f(&f, TT_DDB_TRANSACT_WRITE_ITEMS, actions(tw, tw_one, 100));
  fail_f(&f, TT_DDB_TRANSACT_WRITE_ITEMS, actions(tw, tw_one, 101), "ValidationException",
         "1 validation error detected: Value at 'transactItems' failed to satisfy constraint: "
         "Member must have length less than or equal to 100");
  char *req = actions(tw, tg_one, 100);
  json_t *r = fx_ok(&f, TT_DDB_TRANSACT_GET_ITEMS, req);
  free(req);
  ck_assert_uint_eq(json_array_size(json_object_get(r, "Responses")), 100);
  json_decref(r);
  fail_f(&f, TT_DDB_TRANSACT_GET_ITEMS, actions(tw, tg_one, 101), "ValidationException",
         "1 validation error detected: Value at 'transactItems' failed to satisfy constraint: "
         "Member must have length less than or equal to 100");
  fx_teardown(&f);
}
END_TEST

START_TEST(schema_name_lengths) {
  struct fx f;
  fx_setup(&f, NULL);
  char *n255 = rep("k", 255), *n256 = rep("k", 256);
  ok_f(&f, TT_DDB_CREATE_TABLE,
       fmt("{'TableName':'tt1','BillingMode':'PAY_PER_REQUEST','AttributeDefinitions':"
           "[{'AttributeName':'%s','AttributeType':'S'}],'KeySchema':[{'AttributeName':'%s',"
           "'KeyType':'HASH'}]}",
           n255, n255));
  fail_f(&f, TT_DDB_CREATE_TABLE,
         fmt("{'TableName':'tt2','BillingMode':'PAY_PER_REQUEST','AttributeDefinitions':"
             "[{'AttributeName':'%s','AttributeType':'S'}],'KeySchema':[{'AttributeName':'%s',"
             "'KeyType':'HASH'}]}",
             n256, n256),
         "ValidationException",
         "1 validation error detected: Value at 'attributeDefinitions.1.member.attributeName' "
         "failed to satisfy constraint: Member must have length less than or equal to 255");
  fail_f(&f, TT_DDB_CREATE_TABLE,
         fmt("{'TableName':'tt3','BillingMode':'PAY_PER_REQUEST','AttributeDefinitions':"
             "[{'AttributeName':'pk','AttributeType':'S'},{'AttributeName':'g','AttributeType':"
             "'S'}],'KeySchema':[{'AttributeName':'pk','KeyType':'HASH'}],"
             "'GlobalSecondaryIndexes':[{'IndexName':'gsi','KeySchema':[{'AttributeName':'g',"
             "'KeyType':'HASH'}],'Projection':{'ProjectionType':'INCLUDE','NonKeyAttributes':"
             "['%s']}}]}",
             n256),
         "ValidationException",
         "1 validation error detected: Value at 'nonKeyAttributes.1.member' failed to satisfy "
         "constraint: Member must have length less than or equal to 255");
  ok_f(&f, TT_DDB_UPDATE_TIME_TO_LIVE,
       fmt("{'TableName':'tt1','TimeToLiveSpecification':{'AttributeName':'%s','Enabled':true}}",
           n255));
  fail_f(&f, TT_DDB_UPDATE_TIME_TO_LIVE,
         fmt("{'TableName':'tt1','TimeToLiveSpecification':{'AttributeName':'%s','Enabled':"
             "false}}",
             n256),
         "ValidationException",
         "1 validation error detected: Value at 'timeToLiveSpecification.attributeName' failed "
         "to satisfy constraint: Member must have length less than or equal to 255");
  free(n255), free(n256);
  fx_teardown(&f);
}
END_TEST

int main(void) {
  Suite *s = suite_create("memdb_limits");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, key_value_sizes);
  tcase_add_test(tc, index_key_value_sizes);
  tcase_add_test(tc, attribute_name_lengths);
  tcase_add_test(tc, nesting_depth);
  tcase_add_test(tc, placeholder_limits);
  tcase_add_test(tc, expression_limits);
  tcase_add_test(tc, item_size_and_transaction_size);
  tcase_add_test(tc, request_action_counts);
  tcase_add_test(tc, schema_name_lengths);
  suite_add_tcase(s, tc);
  return fx_run_suite(s);
}
