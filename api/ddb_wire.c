/* SPDX-License-Identifier: Apache-2.0 */
/* ddb_wire.c -- parsing of the DynamoDB listener's requests (ddb_wire.h). */
#include "api/ddb_wire.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define T_SERVICE "com.amazon.coral.service#"
#define T_DDB "com.amazonaws.dynamodb.v20120810#"

static const struct {
  const char *name;
  enum tt_ddb_op op;
} targets[] = {
    {"GetItem", TT_DDB_GET_ITEM},
    {"PutItem", TT_DDB_PUT_ITEM},
    {"UpdateItem", TT_DDB_UPDATE_ITEM},
    {"DeleteItem", TT_DDB_DELETE_ITEM},
    {"Query", TT_DDB_QUERY},
    {"Scan", TT_DDB_SCAN},
    {"BatchGetItem", TT_DDB_BATCH_GET_ITEM},
    {"BatchWriteItem", TT_DDB_BATCH_WRITE_ITEM},
    {"TransactWriteItems", TT_DDB_TRANSACT_WRITE_ITEMS},
    {"TransactGetItems", TT_DDB_TRANSACT_GET_ITEMS},
    {"CreateTable", TT_DDB_CREATE_TABLE},
    {"DescribeTable", TT_DDB_DESCRIBE_TABLE},
    {"DeleteTable", TT_DDB_DELETE_TABLE},
    {"UpdateTimeToLive", TT_DDB_UPDATE_TIME_TO_LIVE},
    {"DescribeTimeToLive", TT_DDB_DESCRIBE_TIME_TO_LIVE},
    {"UpdateTable", TT_DDB_UPDATE_TABLE},
    {"ListTables", TT_DDB_LIST_TABLES},
};

int tt_ddbw_target(const char *target, enum tt_ddb_op *op) {
  static const char prefix[] = "DynamoDB_20120810.";
  if (target == NULL || strncmp(target, prefix, sizeof(prefix) - 1) != 0)
    return -1;
  const char *name = target + sizeof(prefix) - 1;
  for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++)
    if (strcmp(name, targets[i].name) == 0) {
      *op = targets[i].op;
      return 0;
    }
  return -1;
}

static int fail(struct tt_ddbw_error *err, const char *type, unsigned status, const char *fmt,
                ...) __attribute__((format(printf, 4, 5)));
static int fail(struct tt_ddbw_error *err, const char *type, unsigned status, const char *fmt,
                ...) {
  err->type = type;
  err->status = status;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->message, sizeof(err->message), fmt, ap);
  va_end(ap);
  return -1;
}

/* Appends to a message buffer, truncating. */
static void add(char *buf, size_t n, const char *text) {
  size_t len = strlen(buf);
  if (len + 1 < n)
    snprintf(buf + len, n - len, "%s", text);
}

/* Copies the value of `key=` out of the comma- or space-separated
 * parameters after the algorithm; "" when absent. */
static void auth_param(const char *params, const char *key, char *out, size_t n) {
  out[0] = '\0';
  size_t klen = strlen(key);
  const char *p = params;
  while (*p) {
    while (*p == ',' || *p == ' ')
      p++;
    size_t len = strcspn(p, ", ");
    if (len > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
      size_t vlen = len - klen - 1;
      if (vlen >= n)
        vlen = n - 1;
      memcpy(out, p + klen + 1, vlen);
      out[vlen] = '\0';
      return;
    }
    p += len;
  }
}

/* Splits Credential=AKID/date/region/service/aws4_request. */
static int split_credential(const char *cred, struct tt_ddbw_auth *a, struct tt_ddbw_error *err) {
  const char *parts[5];
  size_t lens[5], n = 0;
  const char *p = cred;
  while (n < 5) {
    size_t len = strcspn(p, "/");
    parts[n] = p;
    lens[n++] = len;
    if (p[len] == '\0')
      break;
    p += len + 1;
  }
  bool extra = n == 5 && parts[4][lens[4]] != '\0' && strspn(parts[4] + lens[4], "/") !=
                                                            strlen(parts[4] + lens[4]);
  if (n != 5 || extra)
    return fail(err, T_SERVICE "IncompleteSignatureException", 400,
                "Credential must have exactly 5 slash-delimited elements, e.g. "
                "keyid/date/region/service/term, got '%s'",
                cred);
  if (lens[0] >= sizeof(a->access_key) || lens[1] != 8 || lens[2] >= sizeof(a->region) ||
      lens[3] >= sizeof(a->service))
    return fail(err, T_SERVICE "InvalidSignatureException", 400,
                "Credential should be scoped to a valid region and service");
  memcpy(a->access_key, parts[0], lens[0]);
  a->access_key[lens[0]] = '\0';
  memcpy(a->date, parts[1], 8);
  a->date[8] = '\0';
  memcpy(a->region, parts[2], lens[2]);
  a->region[lens[2]] = '\0';
  memcpy(a->service, parts[3], lens[3]);
  a->service[lens[3]] = '\0';
  snprintf(a->scope, sizeof(a->scope), "%.*s", (int)(parts[4] + lens[4] - parts[1]), parts[1]);
  return 0;
}

static int check_auth(const struct tt_ddbw_input *in, struct tt_ddbw_auth *a,
                      struct tt_ddbw_error *err) {
  const char *h = in->authorization;
  if (h && in->query_auth)
    return fail(err, T_SERVICE "InvalidSignatureException", 400,
                "Found both 'X-Amz-Algorithm' as a query-string param and 'Authorization' as "
                "HTTP header.");
  while (h && (*h == ' ' || *h == '\t'))
    h++;
  if ((h == NULL && !in->query_auth) || (h && strncmp(h, "AWS4-", 5) != 0))
    return fail(err, T_SERVICE "MissingAuthenticationTokenException", 400,
                "Request is missing Authentication Token");
  if (h == NULL)
    return 0; /* presigned: the query string carries the signature */
  const char *params = h + strcspn(h, " ,");
  char cred[256], sh[sizeof(a->signed_headers)], sig[sizeof(a->signature)];
  auth_param(params, "Credential", cred, sizeof(cred));
  auth_param(params, "Signature", sig, sizeof(sig));
  auth_param(params, "SignedHeaders", sh, sizeof(sh));
  char msg[sizeof(err->message)] = "";
  if (cred[0] == '\0')
    add(msg, sizeof(msg), "Authorization header requires 'Credential' parameter. ");
  if (sig[0] == '\0')
    add(msg, sizeof(msg), "Authorization header requires 'Signature' parameter. ");
  if (sh[0] == '\0')
    add(msg, sizeof(msg), "Authorization header requires 'SignedHeaders' parameter. ");
  if (in->amz_date == NULL && in->date == NULL)
    add(msg, sizeof(msg),
        "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. ");
  if (msg[0]) {
    add(msg, sizeof(msg), "Authorization=");
    add(msg, sizeof(msg), in->authorization);
    return fail(err, T_SERVICE "IncompleteSignatureException", 400, "%s", msg);
  }
  snprintf(a->signed_headers, sizeof(a->signed_headers), "%s", sh);
  snprintf(a->signature, sizeof(a->signature), "%s", sig);
  return split_credential(cred, a, err);
}

static bool type_is(const char *ct, const char *want) {
  if (ct == NULL)
    return false;
  while (*ct == ' ')
    ct++;
  size_t n = strcspn(ct, ";");
  while (n > 0 && ct[n - 1] == ' ')
    n--;
  return n == strlen(want) && strncasecmp(ct, want, n) == 0;
}

bool tt_ddbw_is_json_1_0(const char *content_type) {
  return type_is(content_type, "application/x-amz-json-1.0");
}

int tt_ddbw_parse(const struct tt_ddbw_input *in, struct tt_ddbw_request *out,
                  struct tt_ddbw_error *err, bool *not_json) {
  memset(out, 0, sizeof(*out));
  *not_json = false;
  bool j10 = type_is(in->content_type, "application/x-amz-json-1.0");
  bool has_body = in->body_len > 0;
  if (in->method == NULL || strcmp(in->method, "POST") != 0 ||
      (has_body && !j10 && !type_is(in->content_type, "application/json"))) {
    *not_json = true;
    return fail(err, T_SERVICE "UnknownOperationException", 404, "%s", "");
  }
  out->json_1_0 = j10;
  json_t *body = NULL;
  if (has_body) {
    json_error_t je;
    body = json_loadb(in->body, in->body_len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
    if (body == NULL)
      return fail(err, T_SERVICE "SerializationException", 400, "%s", "");
  }
  int rc = -1;
  if (tt_ddbw_target(in->target, &out->op) != 0) {
    fail(err, T_SERVICE "UnknownOperationException", 400, "%s", "");
    goto done;
  }
  if (check_auth(in, &out->auth, err) != 0)
    goto done;
  if (body == NULL || !json_is_object(body)) {
    fail(err, T_SERVICE "SerializationException", 400, "%s",
         body == NULL ? "" : "Start of structure or map found where not expected.");
    goto done;
  }
  out->body = body;
  body = NULL;
  rc = 0;
done:
  json_decref(body);
  return rc;
}

const char *tt_ddbw_full_type(const char *t, char *buf, size_t n) {
  static const char *const service[] = {
      "SerializationException",      "UnknownOperationException",
      "MissingAuthenticationTokenException", "IncompleteSignatureException",
      "InvalidSignatureException",   "UnrecognizedClientException",
      "AccessDeniedException",       "ThrottlingException"};
  if (strcmp(t, "ValidationException") == 0)
    return "com.amazon.coral.validate#ValidationException";
  for (size_t i = 0; i < sizeof(service) / sizeof(service[0]); i++)
    if (strcmp(t, service[i]) == 0) {
      snprintf(buf, n, T_SERVICE "%s", t);
      return buf;
    }
  snprintf(buf, n, T_DDB "%s", t);
  return buf;
}

json_t *tt_ddbw_error_body(const char *full_type, const char *message, const json_t *extra) {
  json_t *o = json_object();
  if (o == NULL || json_object_set_new(o, "__type", json_string(full_type)) != 0)
    goto fail;
  if (extra && json_is_object(extra)) {
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)extra, k, v) {
      if (strcmp(k, "__type") != 0 && strcasecmp(k, "message") != 0 &&
          json_object_set(o, k, v) != 0)
        goto fail;
    }
  }
  if (message && message[0]) {
    /* A message may quote the request (the Authorization header): one
     * that is not UTF-8 is replaced, never sent as invalid JSON. */
    json_t *m = json_stringn(message, strlen(message));
    if (m == NULL)
      m = json_string("The request is malformed");
    /* coral's SerializationException spells it "Message". */
    size_t tl = strlen(full_type);
    bool capital = tl >= 23 && strcmp(full_type + tl - 23, "#SerializationException") == 0;
    if (json_object_set_new(o, capital ? "Message" : "message", m) != 0)
      goto fail;
  }
  return o;
fail:
  json_decref(o);
  return NULL;
}

uint32_t tt_ddbw_crc32(const void *p, size_t n) {
  static uint32_t table[256];
  static bool ready;
  if (!ready) {
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++)
        c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
    ready = true;
  }
  const unsigned char *b = p;
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; i++)
    c = table[(c ^ b[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

int tt_ddbw_check_table_name(enum tt_ddb_op op, const json_t *body, struct tt_ddbw_error *err) {
  const char *name = json_string_value(json_object_get(body, "TableName"));
  if (name == NULL)
    return 0;
  size_t n = strlen(name);
  bool pattern = n > 0 && strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                       "0123456789_.-") == n;
  switch (op) {
  case TT_DDB_CREATE_TABLE:
  case TT_DDB_DELETE_TABLE:
  case TT_DDB_DESCRIBE_TABLE:
  case TT_DDB_DESCRIBE_TIME_TO_LIVE:
  case TT_DDB_UPDATE_TABLE:
    /* These check the length first, with a message of their own. */
    if (n < 3 || n > 255)
      return fail(err, "com.amazon.coral.validate#ValidationException", 400,
                  "TableName must be at least 3 characters long and at most 255 characters "
                  "long");
    if (!pattern)
      return fail(err, "com.amazon.coral.validate#ValidationException", 400,
                  "1 validation error detected: Value '%s' at 'tableName' failed to satisfy "
                  "constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+",
                  name);
    return 0;
  case TT_DDB_GET_ITEM:
  case TT_DDB_PUT_ITEM:
  case TT_DDB_UPDATE_ITEM:
  case TT_DDB_DELETE_ITEM:
  case TT_DDB_QUERY:
  case TT_DDB_SCAN:
  case TT_DDB_UPDATE_TIME_TO_LIVE: {
    char msg[sizeof(err->message)] = "";
    int k = 0;
    const char *what[3] = {NULL, NULL, NULL};
    if (!pattern)
      what[k++] = "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+";
    if (n < 3)
      what[k++] = "Member must have length greater than or equal to 3";
    if (n > 255)
      what[k++] = "Member must have length less than or equal to 255";
    if (k == 0)
      return 0;
    snprintf(msg, sizeof(msg), "%d validation error%s detected: ", k, k > 1 ? "s" : "");
    for (int i = 0; i < k; i++) {
      size_t len = strlen(msg);
      snprintf(msg + len, sizeof(msg) - len, "%sValue '%s' at 'tableName' failed to satisfy "
               "constraint: %s", i ? "; " : "", name, what[i]);
    }
    return fail(err, "com.amazon.coral.validate#ValidationException", 400, "%s", msg);
  }
  default:
    return 0;
  }
}

/* ---- member types ------------------------------------------------------ */

/* DynamoDB's member types of each request, checked before any validation
 * (SerializationException, coral's Java-flavoured messages). A node is a
 * type name or [type, children]; a struct's children are its members, in
 * the order DynamoDB checks them. "AttrStruct<X>" is an AttributeValue
 * shaped as X. */
static const struct {
  enum tt_ddb_op op;
  const char *schema;
} schemas[] = {
    {TT_DDB_BATCH_GET_ITEM,
     "{\"ReturnConsumedCapacity\":\"String\",\"RequestItems\":[\"Map<KeysAndAttributes>\",[\"ValueStruc"
     "t<KeysAndAttributes>\",{\"Keys\":[\"List\",[\"ParameterizedMap\",\"AttrStruct<ValueStruct>\"]],\"A"
     "ttributesToGet\":[\"List\",\"String\"],\"ConsistentRead\":\"Boolean\",\"ProjectionExpression\":\"Str"
     "ing\",\"ExpressionAttributeNames\":[\"Map<java.lang.String>\",\"String\"]}]]}"},
    {TT_DDB_BATCH_WRITE_ITEM,
     "{\"ReturnConsumedCapacity\":\"String\",\"ReturnItemCollectionMetrics\":\"String\",\"RequestItems\""
     ":[\"Map<java.util.List<com.amazonaws.dynamodb.v20120810.WriteRequest>>\",[\"ParameterizedLi"
     "st\",[\"ValueStruct<WriteRequest>\",{\"DeleteRequest\":[\"FieldStruct<DeleteRequest>\",{\"Key\":["
     "\"Map<AttributeValue>\",\"AttrStruct<ValueStruct>\"]}],\"PutRequest\":[\"FieldStruct<PutRequest"
     ">\",{\"Item\":[\"Map<AttributeValue>\",\"AttrStruct<ValueStruct>\"]}]}]]]}"},
    {TT_DDB_CREATE_TABLE,
     "{\"AttributeDefinitions\":[\"List\",[\"ValueStruct<AttributeDefinition>\",{\"AttributeName\":\"St"
     "ring\",\"AttributeType\":\"String\"}]],\"TableName\":\"String\",\"BillingMode\":\"String\",\"Provision"
     "edThroughput\":[\"FieldStruct<ProvisionedThroughput>\",{\"WriteCapacityUnits\":\"Long\",\"ReadCa"
     "pacityUnits\":\"Long\"}],\"KeySchema\":[\"List\",[\"ValueStruct<KeySchemaElement>\",{\"AttributeNa"
     "me\":\"String\",\"KeyType\":\"String\"}]],\"LocalSecondaryIndexes\":[\"List\",[\"ValueStruct<LocalSe"
     "condaryIndex>\",{\"IndexName\":\"String\",\"KeySchema\":[\"List\",[\"ValueStruct<KeySchemaElement>"
     "\",{\"AttributeName\":\"String\",\"KeyType\":\"String\"}]],\"Projection\":[\"FieldStruct<Projection>"
     "\",{\"ProjectionType\":\"String\",\"NonKeyAttributes\":[\"List\",\"String\"]}]}]],\"GlobalSecondaryI"
     "ndexes\":[\"List\",[\"ValueStruct<GlobalSecondaryIndex>\",{\"IndexName\":\"String\",\"KeySchema\":["
     "\"List\",[\"ValueStruct<KeySchemaElement>\",{\"AttributeName\":\"String\",\"KeyType\":\"String\"}]],"
     "\"Projection\":[\"FieldStruct<Projection>\",{\"ProjectionType\":\"String\",\"NonKeyAttributes\":[\""
     "List\",\"String\"]}],\"ProvisionedThroughput\":[\"FieldStruct<ProvisionedThroughput>\",{\"WriteC"
     "apacityUnits\":\"Long\",\"ReadCapacityUnits\":\"Long\"}]}]]}"},
    {TT_DDB_DELETE_ITEM,
     "{\"ReturnConsumedCapacity\":\"String\",\"TableName\":\"String\",\"ReturnValues\":\"String\",\"ReturnI"
     "temCollectionMetrics\":\"String\",\"Key\":[\"Map<AttributeValue>\",\"AttrStruct<ValueStruct>\"],\""
     "ConditionalOperator\":\"String\",\"Expected\":[\"Map<ExpectedAttributeValue>\",[\"ValueStruct<Ex"
     "pectedAttributeValue>\",{\"AttributeValueList\":[\"List\",\"AttrStruct<ValueStruct>\"],\"Compari"
     "sonOperator\":\"String\",\"Exists\":\"Boolean\",\"Value\":\"AttrStruct<FieldStruct>\"}]],\"Condition"
     "Expression\":\"String\",\"ExpressionAttributeValues\":[\"Map<AttributeValue>\",\"AttrStruct<Valu"
     "eStruct>\"],\"ExpressionAttributeNames\":[\"Map<java.lang.String>\",\"String\"]}"},
    {TT_DDB_DELETE_TABLE,
     "{\"TableName\":\"String\"}"},
    {TT_DDB_DESCRIBE_TABLE,
     "{\"TableName\":\"String\"}"},
    {TT_DDB_DESCRIBE_TIME_TO_LIVE,
     "{\"TableName\":\"String\"}"},
    {TT_DDB_GET_ITEM,
     "{\"ReturnConsumedCapacity\":\"String\",\"AttributesToGet\":[\"List\",\"String\"],\"TableName\":\"Stri"
     "ng\",\"Key\":[\"Map<AttributeValue>\",\"AttrStruct<ValueStruct>\"],\"ConsistentRead\":\"Boolean\",\""
     "ProjectionExpression\":\"String\",\"ExpressionAttributeNames\":[\"Map<java.lang.String>\",\"Stri"
     "ng\"]}"},
    {TT_DDB_LIST_TABLES,
     "{\"Limit\":\"Integer\",\"ExclusiveStartTableName\":\"String\"}"},
    {TT_DDB_PUT_ITEM,
     "{\"ReturnConsumedCapacity\":\"String\",\"TableName\":\"String\",\"Item\":[\"Map<AttributeValue>\",\"A"
     "ttrStruct<ValueStruct>\"],\"ConditionalOperator\":\"String\",\"Expected\":[\"Map<ExpectedAttribu"
     "teValue>\",[\"ValueStruct<ExpectedAttributeValue>\",{\"AttributeValueList\":[\"List\",\"AttrStru"
     "ct<ValueStruct>\"],\"ComparisonOperator\":\"String\",\"Exists\":\"Boolean\",\"Value\":\"AttrStruct<F"
     "ieldStruct>\"}]],\"ReturnValues\":\"String\",\"ReturnItemCollectionMetrics\":\"String\",\"Conditio"
     "nExpression\":\"String\",\"ExpressionAttributeValues\":[\"Map<AttributeValue>\",\"AttrStruct<Val"
     "ueStruct>\"],\"ExpressionAttributeNames\":[\"Map<java.lang.String>\",\"String\"]}"},
    {TT_DDB_QUERY,
     "{\"Select\":\"String\",\"IndexName\":\"String\",\"ReturnConsumedCapacity\":\"String\",\"QueryFilter\":"
     "[\"Map<Condition>\",[\"ValueStruct<Condition>\",{\"AttributeValueList\":[\"List\",\"AttrStruct<Va"
     "lueStruct>\"],\"ComparisonOperator\":\"String\"}]],\"TableName\":\"String\",\"ConditionalOperator\""
     ":\"String\",\"AttributesToGet\":[\"List\",\"String\"],\"Limit\":\"Integer\",\"KeyConditions\":[\"Map<Co"
     "ndition>\",[\"ValueStruct<Condition>\",{\"ComparisonOperator\":\"String\",\"AttributeValueList\":"
     "[\"List\",\"AttrStruct<ValueStruct>\"]}]],\"ExclusiveStartKey\":[\"Map<AttributeValue>\",\"AttrSt"
     "ruct<ValueStruct>\"],\"ConsistentRead\":\"Boolean\",\"ScanIndexForward\":\"Boolean\",\"KeyConditio"
     "nExpression\":\"String\",\"FilterExpression\":\"String\",\"ProjectionExpression\":\"String\",\"Expre"
     "ssionAttributeValues\":[\"Map<AttributeValue>\",\"AttrStruct<ValueStruct>\"],\"ExpressionAttri"
     "buteNames\":[\"Map<java.lang.String>\",\"String\"]}"},
    {TT_DDB_SCAN,
     "{\"Select\":\"String\",\"IndexName\":\"String\",\"TotalSegments\":\"Integer\",\"ReturnConsumedCapacit"
     "y\":\"String\",\"TableName\":\"String\",\"ConditionalOperator\":\"String\",\"ScanFilter\":[\"Map<Condi"
     "tion>\",[\"ValueStruct<Condition>\",{\"AttributeValueList\":[\"List\",\"AttrStruct<ValueStruct>\""
     "],\"ComparisonOperator\":\"String\"}]],\"Segment\":\"Integer\",\"Limit\":\"Integer\",\"AttributesToGe"
     "t\":[\"List\",\"String\"],\"ExclusiveStartKey\":[\"Map<AttributeValue>\",\"AttrStruct<ValueStruct>"
     "\"],\"FilterExpression\":\"String\",\"ProjectionExpression\":\"String\",\"ExpressionAttributeValue"
     "s\":[\"Map<AttributeValue>\",\"AttrStruct<ValueStruct>\"],\"ExpressionAttributeNames\":[\"Map<ja"
     "va.lang.String>\",\"String\"]}"},
    {TT_DDB_UPDATE_ITEM,
     "{\"ReturnConsumedCapacity\":\"String\",\"TableName\":\"String\",\"ReturnItemCollectionMetrics\":\"S"
     "tring\",\"ReturnValues\":\"String\",\"Key\":[\"Map<AttributeValue>\",\"AttrStruct<ValueStruct>\"],\""
     "ConditionalOperator\":\"String\",\"Expected\":[\"Map<ExpectedAttributeValue>\",[\"ValueStruct<Ex"
     "pectedAttributeValue>\",{\"AttributeValueList\":[\"List\",\"AttrStruct<ValueStruct>\"],\"Compari"
     "sonOperator\":\"String\",\"Exists\":\"Boolean\",\"Value\":\"AttrStruct<FieldStruct>\"}]],\"Attribute"
     "Updates\":[\"Map<AttributeValueUpdate>\",[\"ValueStruct<AttributeValueUpdate>\",{\"Action\":\"St"
     "ring\",\"Value\":\"AttrStruct<FieldStruct>\"}]],\"ConditionExpression\":\"String\",\"UpdateExpress"
     "ion\":\"String\",\"ExpressionAttributeValues\":[\"Map<AttributeValue>\",\"AttrStruct<ValueStruct"
     ">\"],\"ExpressionAttributeNames\":[\"Map<java.lang.String>\",\"String\"]}"},
    {TT_DDB_UPDATE_TABLE,
     "{\"TableName\":\"String\",\"ProvisionedThroughput\":[\"FieldStruct<ProvisionedThroughput>\",{\"Wr"
     "iteCapacityUnits\":\"Long\",\"ReadCapacityUnits\":\"Long\"}],\"BillingMode\":\"String\",\"GlobalSeco"
     "ndaryIndexUpdates\":[\"List\",[\"ValueStruct<GlobalSecondaryIndexUpdate>\",{\"Update\":[\"FieldS"
     "truct<UpdateGlobalSecondaryIndexAction>\",{\"IndexName\":\"String\",\"ProvisionedThroughput\":["
     "\"FieldStruct<ProvisionedThroughput>\",{\"WriteCapacityUnits\":\"Long\",\"ReadCapacityUnits\":\"L"
     "ong\"}]}],\"Create\":[\"FieldStruct<CreateGlobalSecondaryIndexAction>\",{\"Projection\":[\"Field"
     "Struct<Projection>\",{\"ProjectionType\":\"String\",\"NonKeyAttributes\":[\"List\",\"String\"]}],\"I"
     "ndexName\":\"String\",\"ProvisionedThroughput\":[\"FieldStruct<ProvisionedThroughput>\",{\"Write"
     "CapacityUnits\":\"Long\",\"ReadCapacityUnits\":\"Long\"}],\"KeySchema\":[\"List\",[\"ValueStruct<Key"
     "SchemaElement>\",{\"AttributeName\":\"String\",\"KeyType\":\"String\"}]]}],\"Delete\":[\"FieldStruct"
     "<DeleteGlobalSecondaryIndexAction>\",{\"IndexName\":\"String\"}]}]]}"},
};

static const char attr_members[] =
    "{\"S\":\"String\",\"B\":\"Blob\",\"N\":\"String\",\"BOOL\":\"Boolean\",\"NULL\":\"Boolean\","
    "\"BS\":[\"List\",\"Blob\"],\"NS\":[\"List\",\"String\"],\"SS\":[\"List\",\"String\"],"
    "\"L\":[\"List\",\"AttrStruct<ValueStruct>\"],"
    "\"M\":[\"Map<AttributeValue>\",\"AttrStruct<ValueStruct>\"]}";

#define T_SER T_SERVICE "SerializationException"
#define CAST_MSG                                                                                 \
  "class sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl cannot be cast to class "  \
  "java.lang.Class (sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl and "           \
  "java.lang.Class are in module java.base of loader 'bootstrap')"

struct tctx {
  json_t *attr; /* attr_members, parsed */
  struct tt_ddbw_error *err;
  int depth;
};

static int ser(struct tctx *c, const char *fmt, const char *a, const char *b)
    __attribute__((format(printf, 2, 0)));
static int ser(struct tctx *c, const char *fmt, const char *a, const char *b) {
  c->err->type = T_SER;
  c->err->status = 400;
  snprintf(c->err->message, sizeof(c->err->message), fmt, a, b);
  return -1;
}

static bool is_whole(const json_t *v) {
  if (json_is_integer(v))
    return true;
  double d = json_real_value(v);
  return d == (double)(long long)d;
}

/* Canonical base64 (what decoding then encoding again gives back). */
static bool base64_canonical(const char *s, size_t n) {
  static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t pad = 0;
  while (pad < 2 && pad < n && s[n - 1 - pad] == '=')
    pad++;
  size_t m = n - pad;
  unsigned last = 0;
  for (size_t i = 0; i < m; i++) {
    const char *p = s[i] ? strchr(al, s[i]) : NULL;
    if (p == NULL)
      return false;
    last = (unsigned)(p - al);
  }
  if (m % 4 == 1)
    return false;
  if (pad == 1)
    return (last & 0x3) == 0;
  if (pad == 2)
    return m % 4 == 2 && (last & 0xF) == 0;
  return true;
}

static int check_node(struct tctx *c, json_t *val, const json_t *node, json_t **repl);

static int check_struct(struct tctx *c, json_t *val, const json_t *members) {
  const char *k;
  json_t *m;
  json_object_foreach((json_t *)members, k, m) {
    json_t *v = json_object_get(val, k);
    if (v == NULL)
      continue;
    if (json_is_null(v)) {
      json_object_del(val, k); /* null is absent */
      continue;
    }
    json_t *r = NULL;
    if (check_node(c, v, m, &r) != 0)
      return -1;
    if (r)
      json_object_set_new(val, k, r);
  }
  return 0;
}

static int check_as(struct tctx *c, json_t *val, const char *base, const char *sub,
                    const json_t *children, json_t **repl) {
  bool num = json_is_number(val), str = json_is_string(val), arr = json_is_array(val),
       obj = json_is_object(val), boo = json_is_boolean(val);
  const char *numv = num ? (is_whole(val) ? "NUMBER_VALUE" : "DECIMAL_VALUE") : "";
  const char *boov = json_is_true(val) ? "TRUE_VALUE" : "FALSE_VALUE";
  if (strcmp(base, "Boolean") == 0) {
    if (num)
      return ser(c, "%s cannot be converted to %s", numv, base);
    if (arr)
      return ser(c, "Unrecognized collection type class java.lang.%s%s", base, "");
    if (obj)
      return ser(c, "%s%s", "Start of structure or map found where not expected", "");
    if (str) {
      const char *s = json_string_value(val);
      if (strcasecmp(s, "true") == 0 || strcmp(s, "1") == 0 || strcasecmp(s, "yes") == 0)
        *repl = json_true();
      else if (strcasecmp(s, "false") == 0 || strcmp(s, "0") == 0 || strcasecmp(s, "no") == 0)
        *repl = json_false();
      else
        return ser(c, "%s%s", "Unexpected token received from parser", "");
    }
    return 0;
  }
  if (strcmp(base, "Short") == 0 || strcmp(base, "Integer") == 0 || strcmp(base, "Long") == 0 ||
      strcmp(base, "Double") == 0) {
    if (boo)
      return ser(c, "%s cannot be converted to %s", boov, base);
    if (str)
      return ser(c, "STRING_VALUE cannot be converted to %s%s", base, "");
    if (arr)
      return ser(c, "Unrecognized collection type class java.lang.%s%s", base, "");
    if (obj)
      return ser(c, "%s%s", "Start of structure or map found where not expected", "");
    return 0;
  }
  if (strcmp(base, "String") == 0) {
    if (boo)
      return ser(c, "%s cannot be converted to %s", boov, base);
    if (num)
      return ser(c, "%s cannot be converted to %s", numv, base);
    if (arr)
      return ser(c, "Unrecognized collection type class java.lang.%s%s", base, "");
    if (obj)
      return ser(c, "%s%s", "Start of structure or map found where not expected", "");
    return 0;
  }
  if (strcmp(base, "Blob") == 0) {
    if (boo || num)
      return ser(c, "%s%s", "only base-64-encoded strings are convertible to bytes", "");
    if (arr)
      return ser(c, "%s%s", "Unrecognized collection type class java.nio.ByteBuffer", "");
    if (obj)
      return ser(c, "%s%s", "Start of structure or map found where not expected", "");
    size_t n = json_string_length(val);
    if (n % 4) {
      char len[32];
      snprintf(len, sizeof(len), "%zu", n);
      return ser(c, "Base64 encoded length is expected a multiple of 4 bytes but found: %s%s",
                 len, "");
    }
    if (!base64_canonical(json_string_value(val), n))
      return ser(c, "%s%s", "Invalid last non-pad Base64 character dectected", "");
    return 0;
  }
  bool plist = strcmp(base, "ParameterizedList") == 0, pmap = strcmp(base, "ParameterizedMap") == 0;
  if (strcmp(base, "List") == 0 || plist) {
    if (boo || num || str)
      return ser(c, "%s%s", plist ? CAST_MSG : "Unexpected field type", "");
    if (obj)
      return ser(c, "%s%s", "Start of structure or map found where not expected", "");
    size_t i;
    json_t *e;
    json_array_foreach(val, i, e) {
      json_t *r = NULL;
      if (check_node(c, e, children, &r) != 0)
        return -1;
      if (r)
        json_array_set_new(val, i, r);
    }
    return 0;
  }
  if (strcmp(base, "Map") == 0 || pmap) {
    if (boo || num || str)
      return ser(c, "%s%s", pmap ? CAST_MSG : "Unexpected field type", "");
    if (arr) {
      if (pmap || sub == NULL)
        return ser(c, "%s%s",
                   "Unrecognized collection type java.util.Map<java.lang.String, "
                   "com.amazonaws.dynamodb.v20120810.AttributeValue>",
                   "");
      return ser(c, "Unrecognized collection type java.util.Map<java.lang.String, %s%s>",
                 strchr(sub, '.') ? "" : "com.amazonaws.dynamodb.v20120810.", sub);
    }
    const char *k;
    json_t *v;
    json_object_foreach(val, k, v) {
      json_t *r = NULL;
      if (check_node(c, v, children, &r) != 0)
        return -1;
      if (r)
        json_object_set_new(val, k, r);
    }
    return 0;
  }
  bool vs = strcmp(base, "ValueStruct") == 0;
  if (vs || strcmp(base, "FieldStruct") == 0) {
    if (boo || num || str)
      return ser(c, "%s%s", vs ? "Unexpected value type in payload" : "Unexpected field type", "");
    if (arr)
      return ser(c, "Unrecognized collection type class com.amazonaws.dynamodb.v20120810.%s%s",
                 sub ? sub : "", "");
    return json_is_object(children) ? check_struct(c, val, children) : 0;
  }
  return 0; /* a type this table does not know: not checked */
}

static int check_node(struct tctx *c, json_t *val, const json_t *node, json_t **repl) {
  if (val == NULL || json_is_null(val))
    return 0;
  if (c->depth > 64)
    return 0; /* the parser bounds the depth; the check stops there too */
  const char *type = json_is_string(node) ? json_string_value(node)
                                          : json_string_value(json_array_get(node, 0));
  const json_t *children = json_is_array(node) ? json_array_get(node, 1) : NULL;
  if (type == NULL)
    return 0;
  char base[48], sub[96];
  sub[0] = '\0';
  size_t bl = strcspn(type, "<");
  snprintf(base, sizeof(base), "%.*s", (int)bl, type);
  if (type[bl] == '<') {
    size_t sl = strlen(type + bl + 1);
    if (sl > 0 && type[bl + sl] == '>')
      sl--;
    snprintf(sub, sizeof(sub), "%.*s", (int)sl, type + bl + 1);
  }
  c->depth++;
  int rc;
  if (strcmp(base, "AttrStruct") == 0) {
    char t[128];
    snprintf(t, sizeof(t), "%s", sub);
    rc = check_as(c, val, t, "AttributeValue", c->attr, repl);
  } else {
    rc = check_as(c, val, base, sub[0] ? sub : NULL, children, repl);
  }
  c->depth--;
  return rc;
}

int tt_ddbw_check_types(enum tt_ddb_op op, json_t *body, struct tt_ddbw_error *err) {
  const char *src = NULL;
  for (size_t i = 0; i < sizeof(schemas) / sizeof(schemas[0]); i++)
    if (schemas[i].op == op)
      src = schemas[i].schema;
  if (src == NULL || !json_is_object(body))
    return 0;
  json_t *schema = json_loads(src, 0, NULL);
  struct tctx c = {.attr = json_loads(attr_members, 0, NULL), .err = err, .depth = 0};
  int rc = 0;
  if (schema && c.attr)
    rc = check_struct(&c, body, schema);
  json_decref(schema);
  json_decref(c.attr);
  return rc;
}
