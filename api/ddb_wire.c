/* SPDX-License-Identifier: Apache-2.0 */
/* ddb_wire.c -- parsing of the DynamoDB listener's requests (ddb_wire.h). */
#include "api/ddb_wire.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/text.h"

#define T_SERVICE "com.amazon.coral.service#"
#define T_DDB "com.amazonaws.dynamodb.v20120810#"
#define ALNUM "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

int tt_ddbw_target(const char *target, enum tt_ddb_op *op) {
  static const char prefix[] = "DynamoDB_20120810.";
  if (target == NULL || strncmp(target, prefix, sizeof(prefix) - 1) != 0)
    return -1;
  /* The port's operations, KMS's (after ListTagsOfResource) aside. */
  for (int i = 0; i <= TT_DDB_LIST_TAGS_OF_RESOURCE; i++)
    if (strcmp(target + sizeof(prefix) - 1, tt_ddb_op_name((enum tt_ddb_op)i)) == 0) {
      *op = (enum tt_ddb_op)i;
      return 0;
    }
  return -1;
}

int tt_ddbw_fail(struct tt_ddbw_error *err, const char *type, unsigned status, const char *fmt,
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
    tt_text_copy(buf + len, n - len, text);
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
    return tt_ddbw_fail(err, T_SERVICE "IncompleteSignatureException", 400,
                        "Credential must have exactly 5 slash-delimited elements, e.g. "
                        "keyid/date/region/service/term, got '%s'",
                        cred);
  if (lens[0] >= sizeof(a->access_key) || lens[1] != 8 || lens[2] >= sizeof(a->region) ||
      lens[3] >= sizeof(a->service))
    return tt_ddbw_fail(err, T_SERVICE "InvalidSignatureException", 400,
                        "Credential should be scoped to a valid region and service");
  tt_text_copyn(a->access_key, sizeof(a->access_key), parts[0], lens[0]);
  tt_text_copyn(a->date, sizeof(a->date), parts[1], 8);
  tt_text_copyn(a->region, sizeof(a->region), parts[2], lens[2]);
  tt_text_copyn(a->service, sizeof(a->service), parts[3], lens[3]);
  tt_text_copyn(a->scope, sizeof(a->scope), parts[1], (size_t)(parts[4] + lens[4] - parts[1]));
  return 0;
}

int tt_ddbw_check_auth(const struct tt_ddbw_input *in, struct tt_ddbw_auth *a,
                       struct tt_ddbw_error *err) {
  const char *h = in->authorization;
  if (h && in->query_auth)
    return tt_ddbw_fail(err, T_SERVICE "InvalidSignatureException", 400,
                        "Found both 'X-Amz-Algorithm' as a query-string param and "
                        "'Authorization' as HTTP header.");
  while (h && (*h == ' ' || *h == '\t'))
    h++;
  if ((h == NULL && !in->query_auth) || (h && strncmp(h, "AWS4-", 5) != 0))
    return tt_ddbw_fail(err, T_SERVICE "MissingAuthenticationTokenException", 400,
                        "Request is missing Authentication Token");
  if (h == NULL) { /* presigned: the query string carries the signature */
    static const char *const names[5] = {"X-Amz-Algorithm", "X-Amz-Credential",
                                         "X-Amz-Signature", "X-Amz-SignedHeaders",
                                         "X-Amz-Date"};
    char msg[sizeof(err->message)];
    msg[0] = '\0';
    for (int i = 0; i < 5; i++)
      if (in->query[i] == NULL || in->query[i][0] == '\0') {
        add(msg, sizeof(msg), "AWS query-string parameters must include '");
        add(msg, sizeof(msg), names[i]);
        add(msg, sizeof(msg), "'. ");
      }
    if (msg[0]) {
      add(msg, sizeof(msg), "Re-examine the query-string parameters.");
      return tt_ddbw_fail(err, T_SERVICE "IncompleteSignatureException", 400, "%s", msg);
    }
    return 0;
  }
  const char *params = h + strcspn(h, " ,");
  char cred[256], sh[sizeof(a->signed_headers)], sig[sizeof(a->signature)];
  auth_param(params, "Credential", cred, sizeof(cred));
  auth_param(params, "Signature", sig, sizeof(sig));
  auth_param(params, "SignedHeaders", sh, sizeof(sh));
  char msg[sizeof(err->message)];
  msg[0] = '\0';
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
    return tt_ddbw_fail(err, T_SERVICE "IncompleteSignatureException", 400, "%s", msg);
  }
  tt_text_copyn(a->signed_headers, sizeof(a->signed_headers), sh, strlen(sh));
  tt_text_copyn(a->signature, sizeof(a->signature), sig, strlen(sig));
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

bool tt_ddbw_is_json(const char *content_type) {
  return type_is(content_type, "application/json");
}

static int check_tags(enum tt_ddb_op op, json_t *body, struct tt_ddbw_error *err);

int tt_ddbw_parse(const struct tt_ddbw_input *in, struct tt_ddbw_request *out,
                  struct tt_ddbw_error *err, bool *not_json) {
  memset(out, 0, sizeof(*out));
  *not_json = false;
  bool j10 = tt_ddbw_is_json_1_0(in->content_type);
  bool has_body = in->body_len > 0;
  if (in->method == NULL || strcmp(in->method, "POST") != 0 ||
      (has_body && !j10 && !tt_ddbw_is_json(in->content_type))) {
    *not_json = true;
    return tt_ddbw_fail(err, T_SERVICE "UnknownOperationException", 404, "%s", "");
  }
  out->json_1_0 = j10;
  json_t *body = NULL;
  if (has_body) {
    json_error_t je;
    body = json_loadb(in->body, in->body_len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
    if (body == NULL)
      return tt_ddbw_fail(err, T_SERVICE "SerializationException", 400, "%s", "");
  }
  int rc = -1;
  if (tt_ddbw_target(in->target, &out->op) != 0) {
    tt_ddbw_fail(err, T_SERVICE "UnknownOperationException", 400, "%s", "");
    goto done;
  }
  if (tt_ddbw_check_auth(in, &out->auth, err) != 0)
    goto done;
  if (body == NULL || !json_is_object(body)) {
    tt_ddbw_fail(err, T_SERVICE "SerializationException", 400, "%s",
                 body == NULL ? "" : "Start of structure or map found where not expected.");
    goto done;
  }
  /* The tag operations' members and ResourceArn are checked here, in
   * DynamoDB's order (before the tables of member types). */
  if ((out->op == TT_DDB_TAG_RESOURCE || out->op == TT_DDB_UNTAG_RESOURCE ||
       out->op == TT_DDB_LIST_TAGS_OF_RESOURCE) &&
      check_tags(out->op, body, err) != 0)
    goto done;
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
    /* coral's SerializationException and AccessDeniedException spell it
     * "Message". */
    size_t tl = strlen(full_type);
    bool capital = (tl >= 23 && strcmp(full_type + tl - 23, "#SerializationException") == 0) ||
                   (tl >= 22 && strcmp(full_type + tl - 22, "#AccessDeniedException") == 0);
    if (json_object_set_new(o, capital ? "Message" : "message", m) != 0)
      goto fail;
  }
  return o;
fail:
  json_decref(o);
  return NULL;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_CLMUL 1

/* CRC-32 by folding 16-byte blocks with carry-less multiplication (Intel's
 * "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ
 * Instruction", its constants for the bit-reflected IEEE polynomial): four
 * blocks at a time, then one, then down to 64 and 32 bits with a Barrett
 * reduction. `n` is at least 64 and a multiple of 16; `crc` is the running
 * (inverted) value, as is the result. */
__attribute__((target("pclmul,sse4.1"))) static uint32_t crc32_clmul(const unsigned char *b,
                                                                      size_t n, uint32_t crc) {
  const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596, 0x0154442bd4);
  const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009e, 0x01751997d0);
  const __m128i k5k0 = _mm_set_epi64x(0, 0x0163cd6124);
  const __m128i poly = _mm_set_epi64x(0x01f7011641, 0x01db710641);
  const __m128i mask32 = _mm_setr_epi32(~0, 0, ~0, 0);
  __m128i x1 = _mm_loadu_si128((const __m128i *)(const void *)(b + 0x00));
  __m128i x2 = _mm_loadu_si128((const __m128i *)(const void *)(b + 0x10));
  __m128i x3 = _mm_loadu_si128((const __m128i *)(const void *)(b + 0x20));
  __m128i x4 = _mm_loadu_si128((const __m128i *)(const void *)(b + 0x30));
  x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)crc));
  b += 64;
  n -= 64;
  for (; n >= 64; b += 64, n -= 64) {
    __m128i x5 = _mm_clmulepi64_si128(x1, k1k2, 0x00), x6 = _mm_clmulepi64_si128(x2, k1k2, 0x00);
    __m128i x7 = _mm_clmulepi64_si128(x3, k1k2, 0x00), x8 = _mm_clmulepi64_si128(x4, k1k2, 0x00);
    x1 = _mm_clmulepi64_si128(x1, k1k2, 0x11);
    x2 = _mm_clmulepi64_si128(x2, k1k2, 0x11);
    x3 = _mm_clmulepi64_si128(x3, k1k2, 0x11);
    x4 = _mm_clmulepi64_si128(x4, k1k2, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x5),
                       _mm_loadu_si128((const __m128i *)(const void *)(b + 0x00)));
    x2 = _mm_xor_si128(_mm_xor_si128(x2, x6),
                       _mm_loadu_si128((const __m128i *)(const void *)(b + 0x10)));
    x3 = _mm_xor_si128(_mm_xor_si128(x3, x7),
                       _mm_loadu_si128((const __m128i *)(const void *)(b + 0x20)));
    x4 = _mm_xor_si128(_mm_xor_si128(x4, x8),
                       _mm_loadu_si128((const __m128i *)(const void *)(b + 0x30)));
  }
  /* Four blocks into one. */
  __m128i next[3] = {x2, x3, x4};
  for (int i = 0; i < 3; i++) {
    __m128i x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
    x1 = _mm_clmulepi64_si128(x1, k3k4, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, next[i]), x5);
  }
  for (; n >= 16; b += 16, n -= 16) {
    __m128i x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
    x1 = _mm_clmulepi64_si128(x1, k3k4, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, _mm_loadu_si128((const __m128i *)(const void *)b)), x5);
  }
  /* 128 bits to 64, then Barrett's reduction to 32. */
  x2 = _mm_clmulepi64_si128(x1, k3k4, 0x10);
  x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), x2);
  x2 = _mm_srli_si128(x1, 4);
  x1 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, mask32), k5k0, 0x00), x2);
  x2 = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), poly, 0x10);
  x2 = _mm_clmulepi64_si128(_mm_and_si128(x2, mask32), poly, 0x00);
  x1 = _mm_xor_si128(x1, x2);
  return (uint32_t)_mm_extract_epi32(x1, 1);
}
#endif

uint32_t tt_ddbw_crc32(const void *p, size_t n) {
  /* Slicing by 8 (Intel's method): eight bytes per step through eight
   * tables, t[0] being the bytewise one. */
  static uint32_t t[8][256];
  static bool ready;
  if (!ready) {
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++)
        c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[0][i] = c;
    }
    for (int k = 1; k < 8; k++)
      for (uint32_t i = 0; i < 256; i++)
        t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFF];
    ready = true;
  }
  const unsigned char *b = p;
  uint32_t c = 0xFFFFFFFFu;
#ifdef HAVE_CLMUL
  static int clmul = -1;
  if (clmul < 0)
    clmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
  if (clmul && n >= 64) {
    size_t blocks = n & ~(size_t)15;
    c = crc32_clmul(b, blocks, c);
    b += blocks;
    n -= blocks;
  }
#endif
  for (; n >= 8; b += 8, n -= 8) {
    uint32_t lo = c ^ ((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                       (uint32_t)b[3] << 24);
    uint32_t hi = (uint32_t)b[4] | (uint32_t)b[5] << 8 | (uint32_t)b[6] << 16 |
                  (uint32_t)b[7] << 24;
    c = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
        t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
  }
  for (; n > 0; b++, n--)
    c = t[0][(c ^ *b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

int tt_ddbw_check_table_name(enum tt_ddb_op op, const json_t *body, struct tt_ddbw_error *err) {
  /* The operations of schemas[] have TableName's constraints there
   * (tt_ddbw_validate); UpdateTimeToLive has no member table. */
  const char *name = json_string_value(json_object_get(body, "TableName"));
  if (op != TT_DDB_UPDATE_TIME_TO_LIVE || name == NULL)
    return 0;
  size_t n = strlen(name);
  char msg[sizeof(err->message)];
  int k = 0;
  const char *what[3] = {NULL, NULL, NULL};
  if (n == 0 || strspn(name, ALNUM "_.-") != n)
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
  return tt_ddbw_invalid(err, "%s", msg);
}

/* ---- member types ------------------------------------------------------ */

/* DynamoDB's member types of each request, checked before any validation
 * (SerializationException, coral's Java-flavoured messages). A node is a
 * type name or [type, children]; a struct's children are its members, in
 * the order DynamoDB checks them. "AttrStruct<X>" is an AttributeValue
 * shaped as X. A third element lists the member's constraints, in the order
 * DynamoDB reports them ("children": where its children's are checked).
 * An index created by UpdateTable needs no ProvisionedThroughput (an
 * on-demand table's does not have one). The texts quote with ' for "
 * (schema_of); the parts several operations share are the S_ macros. */
#define S_NAME "'regex':'[a-zA-Z0-9_.-]+','lengthGreaterThanOrEqual':3,'lengthLessThanOrEqual':255"
#define S_TABLE "'TableName':['String',null,{'notNull':true," S_NAME "}]"
#define S_TABLE_REQ \
  "'TableName':['String',null,{'required':true,'tableName':true,'regex':'[a-zA-Z0-9_.-]+'}]"
#define S_INDEX "'IndexName':['String',null,{'notNull':true," S_NAME "}]"
#define S_RCC "'ReturnConsumedCapacity':['String',null,{'enum':['INDEXES','TOTAL','NONE']}]"
#define S_RICM "'ReturnItemCollectionMetrics':['String',null,{'enum':['SIZE','NONE']}]"
#define S_RV \
  "'ReturnValues':['String',null,{'enum':['ALL_NEW','UPDATED_OLD','ALL_OLD','NONE','UPDATED_NEW']}]"
#define S_AV "'AttrStruct<ValueStruct>'"
#define S_ITEM "['Map<AttributeValue>'," S_AV ",{'notNull':true,'children':1}]"
#define S_OPS                                                                           \
  "['IN','NULL','BETWEEN','LT','NOT_CONTAINS','EQ','GT','NOT_NULL','NE','LE','BEGINS_WITH'," \
  "'GE','CONTAINS']"
#define S_COND_OP "'ConditionalOperator':['String',null,{'enum':['OR','AND']}]"
#define S_EXPECTED                                                                             \
  "'Expected':['Map<ExpectedAttributeValue>',['ValueStruct<ExpectedAttributeValue>',{"         \
  "'AttributeValueList':['List'," S_AV "],'ComparisonOperator':['String',null,{'enum':" S_OPS \
  "}],'Exists':'Boolean','Value':'AttrStruct<FieldStruct>'}]]"
#define S_FILTER                                                                           \
  "['Map<Condition>',['ValueStruct<Condition>',{'AttributeValueList':['List'," S_AV "]," \
  "'ComparisonOperator':['String',null,{'notNull':true,'enum':" S_OPS "}]}]]"
#define S_NAMES "'ExpressionAttributeNames':['Map<java.lang.String>','String']"
#define S_EXPR "'ExpressionAttributeValues':['Map<AttributeValue>'," S_AV "]," S_NAMES "}"
#define S_TO_GET                                                                         \
  "'AttributesToGet':['List','String',{'lengthGreaterThanOrEqual':1,'lengthLessThanOrEqual':255," \
  "'children':1}]"
#define S_SELECT                                                                                  \
  "{'Select':['String',null,{'enum':['SPECIFIC_ATTRIBUTES','COUNT','ALL_ATTRIBUTES',"             \
  "'ALL_PROJECTED_ATTRIBUTES']}],'IndexName':['String',null,{" S_NAME "}],"
#define S_CAP "['Long',null,{'notNull':true,'greaterThanOrEqual':1}]"
#define S_PT                                                                                 \
  "'ProvisionedThroughput':['FieldStruct<ProvisionedThroughput>',{'WriteCapacityUnits':" S_CAP \
  ",'ReadCapacityUnits':" S_CAP "}"
#define S_BILLING "'BillingMode':['String',null,{'enum':['PROVISIONED','PAY_PER_REQUEST']}]"
#define S_KEYS(key_type)                                                                     \
  "'KeySchema':['List',['ValueStruct<KeySchemaElement>',{'AttributeName':['String',null,{" \
  "'notNull':true}],'KeyType':['String',null,{'notNull':true" key_type "}]}],{'notNull':true," \
  "'lengthGreaterThanOrEqual':1,'lengthLessThanOrEqual':2,'children':1}]"
#define S_PROJECTION                                                                           \
  "'Projection':['FieldStruct<Projection>',{'ProjectionType':['String',null,{'enum':['ALL'," \
  "'INCLUDE','KEYS_ONLY']}],'NonKeyAttributes':['List','String',{'lengthGreaterThanOrEqual':1," \
  "'children':1}]},{'notNull':true,'children':1}]"
#define S_INDEXES(kind, more) \
  "['List',['ValueStruct<" kind ">',{" S_INDEX "," S_KEYS("") "," S_PROJECTION more "}]]"
static const struct {
  enum tt_ddb_op op;
  const char *schema;
} schemas[] = {
    {TT_DDB_BATCH_GET_ITEM,
     "{" S_RCC ",'RequestItems':['Map<KeysAndAttributes>',['ValueStruct<KeysAndAttributes>',{"
     "'Keys':['List',['ParameterizedMap'," S_AV "],{'notNull':true,'lengthGreaterThanOrEqual':1,"
     "'lengthLessThanOrEqual':100,'children':1}]," S_TO_GET ",'ConsistentRead':'Boolean',"
     "'ProjectionExpression':'String'," S_NAMES "}],{'notNull':true,'lengthGreaterThanOrEqual':1,"
     "'keys':{'lengthLessThanOrEqual':255,'lengthGreaterThanOrEqual':3,'regex':'[a-zA-Z0-9_.-]+'},"
     "'children':1}]}"},
    {TT_DDB_BATCH_WRITE_ITEM,
     "{" S_RCC "," S_RICM ",'RequestItems':['Map<java.util.List<com.amazonaws.dynamodb.v20120810."
     "WriteRequest>>',['ParameterizedList',['ValueStruct<WriteRequest>',{'DeleteRequest':["
     "'FieldStruct<DeleteRequest>',{'Key':" S_ITEM "}],'PutRequest':['FieldStruct<PutRequest>',{"
     "'Item':" S_ITEM "}]}]],{'notNull':true,'lengthGreaterThanOrEqual':1,'keys':{"
     "'lengthLessThanOrEqual':255,'lengthGreaterThanOrEqual':3,'regex':'[a-zA-Z0-9_.-]+'},"
     "'values':{'lengthLessThanOrEqual':25,'lengthGreaterThanOrEqual':1},'children':1}]}"},
    {TT_DDB_CREATE_TABLE,
     "{'AttributeDefinitions':['List',['ValueStruct<AttributeDefinition>',{'AttributeName':["
     "'String',null,{'notNull':true}],'AttributeType':['String',null,{'notNull':true,'enum':['B',"
     "'N','S']}]}],{'notNull':true,'children':1}]," S_TABLE_REQ "," S_BILLING "," S_PT "],"
     S_KEYS(",'enum':['HASH','RANGE']") ",'LocalSecondaryIndexes':"
     S_INDEXES("LocalSecondaryIndex", "") ",'GlobalSecondaryIndexes':"
     S_INDEXES("GlobalSecondaryIndex", "," S_PT "]") "}"},
    {TT_DDB_DELETE_ITEM,
     "{" S_RCC "," S_TABLE "," S_RV "," S_RICM ",'Key':" S_ITEM "," S_COND_OP "," S_EXPECTED
     ",'ConditionExpression':'String'," S_EXPR},
    {TT_DDB_DELETE_TABLE, "{" S_TABLE_REQ "}"},
    {TT_DDB_DESCRIBE_TABLE, "{" S_TABLE_REQ "}"},
    {TT_DDB_DESCRIBE_TIME_TO_LIVE, "{" S_TABLE_REQ "}"},
    {TT_DDB_GET_ITEM,
     "{" S_RCC "," S_TO_GET "," S_TABLE ",'Key':" S_ITEM ",'ConsistentRead':'Boolean',"
     "'ProjectionExpression':'String'," S_NAMES "}"},
    {TT_DDB_LIST_TABLES,
     "{'Limit':['Integer',null,{'greaterThanOrEqual':1,'lessThanOrEqual':100}],"
     "'ExclusiveStartTableName':['String',null,{" S_NAME "}]}"},
    {TT_DDB_PUT_ITEM,
     "{" S_RCC "," S_TABLE ",'Item':" S_ITEM "," S_COND_OP "," S_EXPECTED "," S_RV "," S_RICM
     ",'ConditionExpression':'String'," S_EXPR},
    {TT_DDB_QUERY,
     S_SELECT S_RCC ",'QueryFilter':" S_FILTER "," S_TABLE "," S_COND_OP "," S_TO_GET
     ",'Limit':['Integer',null,{'greaterThanOrEqual':1}],'KeyConditions':['Map<Condition>',["
     "'ValueStruct<Condition>',{'ComparisonOperator':['String',null,{'notNull':true,'enum':" S_OPS
     "}],'AttributeValueList':['List'," S_AV "]}]],'ExclusiveStartKey':['Map<AttributeValue>',"
     S_AV "],'ConsistentRead':'Boolean','ScanIndexForward':'Boolean','KeyConditionExpression':"
     "'String','FilterExpression':'String','ProjectionExpression':'String'," S_EXPR},
    {TT_DDB_SCAN,
     S_SELECT "'TotalSegments':['Integer',null,{'greaterThanOrEqual':1}]," S_RCC "," S_TABLE ","
     S_COND_OP ",'ScanFilter':" S_FILTER ",'Segment':['Integer',null,{'greaterThanOrEqual':0}],"
     "'Limit':['Integer',null,{'greaterThanOrEqual':1}]," S_TO_GET ",'ExclusiveStartKey':["
     "'Map<AttributeValue>'," S_AV "],'FilterExpression':'String','ProjectionExpression':'String',"
     S_EXPR},
    {TT_DDB_UPDATE_ITEM,
     "{" S_RCC "," S_TABLE "," S_RICM "," S_RV ",'Key':" S_ITEM "," S_COND_OP "," S_EXPECTED
     ",'AttributeUpdates':['Map<AttributeValueUpdate>',['ValueStruct<AttributeValueUpdate>',{"
     "'Action':'String','Value':'AttrStruct<FieldStruct>'}]],'ConditionExpression':'String',"
     "'UpdateExpression':'String'," S_EXPR},
    {TT_DDB_UPDATE_TABLE,
     "{" S_TABLE_REQ "," S_PT "]," S_BILLING ",'GlobalSecondaryIndexUpdates':['List',['ValueStruct<"
     "GlobalSecondaryIndexUpdate>',{'Update':['FieldStruct<UpdateGlobalSecondaryIndexAction>',{"
     S_INDEX "," S_PT ",{'notNull':true,'children':1}]}],'Create':['FieldStruct<"
     "CreateGlobalSecondaryIndexAction>',{" S_PROJECTION "," S_INDEX "," S_PT
     ",{'children':1}]," S_KEYS("") "}],'Delete':['FieldStruct<DeleteGlobalSecondaryIndexAction>',{"
     S_INDEX "}]}]]}"},
    {TT_DDB_TAG_RESOURCE,
     "{'ResourceArn':'String','Tags':['List',['ValueStruct<Tag>',{'Key':'String',"
     "'Value':'String'}]]}"},
    {TT_DDB_UNTAG_RESOURCE, "{'ResourceArn':'String','TagKeys':['List','String']}"},
    {TT_DDB_LIST_TAGS_OF_RESOURCE, "{'ResourceArn':'String'}"},
};

static const char attr_members[] =
    "{'S':'String','B':'Blob','N':'String','BOOL':'Boolean','NULL':'Boolean','BS':['List','Blob'],"
    "'NS':['List','String'],'SS':['List','String'],'L':['List'," S_AV "],"
    "'M':['Map<AttributeValue>'," S_AV "]}";

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

#define ser(c, ...) tt_ddbw_fail((c)->err, T_SER, 400, __VA_ARGS__)

static bool is_whole(const json_t *v) {
  if (json_is_integer(v))
    return true;
  double d = json_real_value(v);
  /* Outside long long's range (or not finite) the cast is undefined: such a
   * number is no whole number a member of type Integer or Long takes. */
  if (!(d > -9223372036854775808.0 && d < 9223372036854775808.0))
    return false;
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

/* The parsed form of a schema text of this file (attr_members, the
 * operations' schemas, the tag operations'; static strings, fewer than the
 * cache's slots): parsed on first use and kept for the process's life, so
 * that a request pays a lookup, not a JSON parse (the texts quote with ',
 * read as "). Borrowed. The listener runs on the loop's thread only. */
static json_t *schema_of(const char *src) {
  static struct {
    const char *src;
    json_t *tree;
  } cache[48];
  static size_t n;
  for (size_t i = 0; i < n; i++)
    if (cache[i].src == src)
      return cache[i].tree;
  if (n == sizeof(cache) / sizeof(cache[0]))
    return NULL;
  json_t *tree = NULL;
  char *text = strdup(src);
  if (text != NULL) {
    for (char *p = text; *p; p++)
      if (*p == '\'')
        *p = '"';
    tree = json_loads(text, 0, NULL);
    free(text);
  }
  cache[n].src = src;
  cache[n].tree = tree;
  n++;
  return tree;
}

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
  bool boolean = strcmp(base, "Boolean") == 0, string = strcmp(base, "String") == 0,
       blob = strcmp(base, "Blob") == 0,
       number = strcmp(base, "Short") == 0 || strcmp(base, "Integer") == 0 ||
                strcmp(base, "Long") == 0 || strcmp(base, "Double") == 0;
  /* The scalar types' refusals: a value has one JSON type, so their order
   * is free. */
  if (boolean || string || blob || number) {
    if (arr)
      return ser(c, "Unrecognized collection type class %s%s",
                 blob ? "java.nio.ByteBuffer" : "java.lang.", blob ? "" : base);
    if (obj)
      return ser(c, "Start of structure or map found where not expected");
    if (blob && (boo || num))
      return ser(c, "only base-64-encoded strings are convertible to bytes");
    if ((boo && !boolean) || (num && !number))
      return ser(c, "%s cannot be converted to %s", boo ? boov : numv, base);
    if (str && number)
      return ser(c, "STRING_VALUE cannot be converted to %s", base);
  }
  if (boolean && str) {
    const char *s = json_string_value(val);
    if (strcasecmp(s, "true") == 0 || strcmp(s, "1") == 0 || strcasecmp(s, "yes") == 0)
      *repl = json_true();
    else if (strcasecmp(s, "false") == 0 || strcmp(s, "0") == 0 || strcasecmp(s, "no") == 0)
      *repl = json_false();
    else
      return ser(c, "Unexpected token received from parser");
  }
  if (number && json_is_real(val) && strcmp(base, "Double") != 0) {
    double d = floor(json_real_value(val));
    if (d > -9.2e18 && d < 9.2e18)
      *repl = json_integer((json_int_t)d);
  }
  if (blob) {
    size_t n = json_string_length(val);
    if (n % 4)
      return ser(c, "Base64 encoded length is expected a multiple of 4 bytes but found: %zu", n);
    if (!base64_canonical(json_string_value(val), n))
      return ser(c, "Invalid last non-pad Base64 character dectected");
  }
  if (boolean || string || blob || number)
    return 0;
  bool plist = strcmp(base, "ParameterizedList") == 0, pmap = strcmp(base, "ParameterizedMap") == 0;
  bool list = plist || strcmp(base, "List") == 0, map = pmap || strcmp(base, "Map") == 0;
  if (list || map) {
    if (boo || num || str)
      return ser(c, "%s", plist || pmap ? CAST_MSG : "Unexpected field type");
    if (list && obj)
      return ser(c, "Start of structure or map found where not expected");
    if (map && arr) {
      if (pmap || sub == NULL)
        return ser(c, "Unrecognized collection type java.util.Map<java.lang.String, "
                      "com.amazonaws.dynamodb.v20120810.AttributeValue>");
      return ser(c, "Unrecognized collection type java.util.Map<java.lang.String, %s%s>",
                 strchr(sub, '.') ? "" : "com.amazonaws.dynamodb.v20120810.", sub);
    }
    /* Each element (list) or value (map), replaced when its check converts it. */
    size_t i = 0;
    void *it = map ? json_object_iter(val) : NULL;
    for (json_t *e; (e = map ? json_object_iter_value(it) : json_array_get(val, i)) != NULL;
         i++, it = map ? json_object_iter_next(val, it) : NULL) {
      json_t *r = NULL;
      if (check_node(c, e, children, &r) != 0)
        return -1;
      if (r && map)
        json_object_iter_set_new(val, it, r);
      else if (r)
        json_array_set_new(val, i, r);
    }
    return 0;
  }
  bool vs = strcmp(base, "ValueStruct") == 0;
  if (vs || strcmp(base, "FieldStruct") == 0) {
    if (boo || num || str)
      return ser(c, "%s", vs ? "Unexpected value type in payload" : "Unexpected field type");
    if (arr)
      return ser(c, "Unrecognized collection type class com.amazonaws.dynamodb.v20120810.%s",
                 sub ? sub : "");
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
  tt_text_copyn(base, sizeof(base), type, bl);
  if (type[bl] == '<') {
    size_t sl = strlen(type + bl + 1);
    if (sl > 0 && type[bl + sl] == '>')
      sl--;
    tt_text_copyn(sub, sizeof(sub), type + bl + 1, sl);
  }
  c->depth++;
  int rc;
  if (strcmp(base, "AttrStruct") == 0) /* an AttributeValue shaped as `sub` */
    rc = check_as(c, val, sub, "AttributeValue", c->attr, repl);
  else
    rc = check_as(c, val, base, sub[0] ? sub : NULL, children, repl);
  c->depth--;
  return rc;
}

/* The parsed schema of an operation (schemas[]), NULL when it has none. */
static json_t *op_schema(enum tt_ddb_op op) {
  const char *src = NULL;
  for (size_t i = 0; i < sizeof(schemas) / sizeof(schemas[0]); i++)
    if (schemas[i].op == op)
      src = schemas[i].schema;
  return src ? schema_of(src) : NULL;
}

int tt_ddbw_check_types(enum tt_ddb_op op, json_t *body, struct tt_ddbw_error *err) {
  json_t *schema = op_schema(op);
  if (schema == NULL || !json_is_object(body))
    return 0;
  struct tctx c = {.attr = schema_of(attr_members), .err = err, .depth = 0};
  return c.attr ? check_struct(&c, body, schema) : 0;
}

/* ---- member constraints ------------------------------------------------ */

struct vctx {
  char msg[8192]; /* a list of 100 keys or 25 writes fits whole */
  int errors;
};

/* DynamoDB's rendering of a value in a constraint message. */
static void value_str(const json_t *v, char *out, size_t n) {
  if (v == NULL || json_is_null(v)) {
    snprintf(out, n, "null");
  } else if (json_is_array(v)) {
    size_t i, len;
    json_t *e;
    snprintf(out, n, "[");
    json_array_foreach(v, i, e) {
      len = strlen(out);
      if (i && len + 2 < n)
        snprintf(out + len, n - len, ", ");
      len = strlen(out);
      value_str(e, out + len, n - len);
    }
    len = strlen(out);
    if (len + 1 < n)
      snprintf(out + len, n - len, "]");
  } else if (json_is_object(v)) {
    char *s = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
    snprintf(out, n, "%s", s ? s : "");
    free(s);
  } else if (json_is_string(v)) {
    snprintf(out, n, "%s", json_string_value(v));
  } else if (json_is_integer(v)) {
    snprintf(out, n, "%lld", (long long)json_integer_value(v));
  } else if (json_is_real(v)) {
    snprintf(out, n, "%.15g", json_real_value(v));
    if (strtod(out, NULL) != json_real_value(v))
      snprintf(out, n, "%.17g", json_real_value(v));
  } else {
    snprintf(out, n, "%s", json_is_true(v) ? "true" : "false");
  }
}

static void violation(struct vctx *c, const json_t *data, const char *path, const char *what) {
  char value[8000];
  value_str(data, value, sizeof(value) - 2);
  size_t len = strlen(c->msg);
  bool null = data == NULL || json_is_null(data);
  snprintf(c->msg + len, sizeof(c->msg) - len, "%sValue %s%s%s at '%s' failed to satisfy constraint: %s",
           c->errors ? "; " : "", null ? "" : "'", value, null ? "" : "'", path, what);
  c->errors++;
}

/* A string's length as DynamoDB counts it (UTF-16 code units). */
static size_t js_length(const json_t *v) {
  if (json_is_object(v))
    return json_object_size(v);
  if (json_is_array(v))
    return json_array_size(v);
  const unsigned char *s = (const unsigned char *)json_string_value(v);
  size_t n = 0, len = json_string_length(v);
  for (size_t i = 0; s && i < len; i++)
    if ((s[i] & 0xC0) != 0x80)
      n += s[i] >= 0xF0 ? 2 : 1;
  return n;
}

/* DynamoDB's text of the constraint `name` with its argument (a number, a
 * pattern, or an enum's list, each as value_str renders it). */
static void constraint_text(const char *name, const json_t *arg, char *what, size_t n) {
  static const char *const texts[][2] = {
      {"notNull", "not be null"},
      {"greaterThanOrEqual", "have value greater than or equal to "},
      {"lessThanOrEqual", "have value less than or equal to "},
      {"regex", "satisfy regular expression pattern: "},
      {"lengthGreaterThanOrEqual", "have length greater than or equal to "},
      {"lengthLessThanOrEqual", "have length less than or equal to "},
      {"enum", "satisfy enum value set: "}};
  char a[400] = "";
  what[0] = '\0';
  for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
    if (strcmp(name, texts[i][0]) == 0) {
      if (i > 0)
        value_str(arg, a, sizeof(a));
      snprintf(what, n, "Member must %s%s", texts[i][1], a);
    }
}

/* Whether `data` meets the constraint `name`; when it does not, its text is
 * in `what` (written only then: most requests break none). */
static bool constraint(const char *name, const json_t *arg, const json_t *data, char *what,
                       size_t n) {
  double a = json_number_value(arg), d = json_number_value(data);
  bool num = json_is_number(data), enum_ok = false;
  size_t sn = json_string_length(data); /* a name: [a-zA-Z0-9_.-]+ */
  bool name_ok = sn > 0 && strspn(json_string_value(data), ALNUM "_.-") == sn;
  size_t i;
  json_t *e;
  json_array_foreach(arg, i, e) {
    enum_ok = enum_ok || (json_is_string(data) && json_equal(e, (json_t *)data));
  }
  bool ok = strcmp(name, "notNull") == 0              ? data != NULL && !json_is_null(data)
            : strcmp(name, "greaterThanOrEqual") == 0 ? !num || d >= a
            : strcmp(name, "lessThanOrEqual") == 0    ? !num || d <= a
            : strcmp(name, "regex") == 0              ? !json_is_string(data) || name_ok
            : strcmp(name, "lengthGreaterThanOrEqual") == 0 ? js_length(data) >= (size_t)a
            : strcmp(name, "lengthLessThanOrEqual") == 0    ? js_length(data) <= (size_t)a
            : strcmp(name, "enum") != 0 || enum_ok;
  if (!ok)
    constraint_text(name, arg, what, n);
  return ok;
}

/* keys/values: every map key (or value) meets all of `set`, else one
 * message listing them. */
static void map_constraint(struct vctx *c, const char *kind, const json_t *set, const json_t *data,
                           const char *path) {
  if (!json_is_object(data))
    return;
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)data, k, v) {
    json_t *subject = strcmp(kind, "keys") == 0 ? json_string(k) : json_incref(v);
    bool ok = true;
    const char *cn;
    json_t *ca;
    char what[512];
    json_object_foreach((json_t *)set, cn, ca) {
      if (!constraint(cn, ca, subject, what, sizeof(what)))
        ok = false;
    }
    json_decref(subject);
    if (ok || c->errors >= 10)
      continue;
    char msg[512];
    snprintf(msg, sizeof(msg), "Map %s must satisfy constraint: [",
             strcmp(kind, "keys") == 0 ? "keys" : "value");
    size_t i = 0;
    json_object_foreach((json_t *)set, cn, ca) {
      constraint_text(cn, ca, what, sizeof(what));
      add(msg, sizeof(msg), i++ ? ", " : "");
      add(msg, sizeof(msg), what);
    }
    add(msg, sizeof(msg), "]");
    violation(c, data, path, msg);
  }
}

static void validate_members(struct vctx *c, const json_t *data, const json_t *members,
                             const char *parent);

static void validate_one(struct vctx *c, const char *attr, const json_t *data, const json_t *node,
                         const char *parent) {
  const json_t *rules = json_is_array(node) ? json_array_get(node, 2) : NULL;
  const char *type = json_string_value(json_array_get(node, 0));
  const json_t *children = json_array_get(node, 1);
  /* An absent member can break notNull only: every other rule, and its
   * children's, skip a null. */
  if ((data == NULL || json_is_null(data)) &&
      (!json_is_object(rules) || json_object_get(rules, "notNull") == NULL))
    return;
  if (!json_is_object(rules)) {
    /* No constraints of its own: its children's still apply. */
    if (!json_is_object(children) && !json_is_array(children))
      return;
    json_t *only = json_pack("{si}", "children", 1);
    if (only == NULL)
      return;
    json_t *n2 = json_pack("[sOO]", type ? type : "", (json_t *)children, only);
    json_decref(only);
    if (n2 != NULL)
      validate_one(c, attr, data, n2, parent);
    json_decref(n2);
    return;
  }
  char path[512], la[256];
  tt_text_copyn(la, sizeof(la), attr, strlen(attr));
  la[0] = (char)tolower((unsigned char)la[0]); /* "tableName" */
  snprintf(path, sizeof(path), "%s%s%s", parent, parent[0] ? "." : "", la);
  const char *rn;
  json_t *ra;
  json_object_foreach((json_t *)rules, rn, ra) {
    if (c->errors >= 10)
      return;
    if (strcmp(rn, "required") == 0 || strcmp(rn, "tableName") == 0)
      continue;
    bool null = data == NULL || json_is_null(data);
    if (strcmp(rn, "notNull") != 0 && null)
      continue;
    if (strcmp(rn, "children") == 0) {
      size_t tl = type ? strlen(type) : 0;
      if (tl >= 4 && strcmp(type + tl - 4, "List") == 0 && json_is_array(data)) {
        size_t i;
        json_t *e;
        json_array_foreach(data, i, e) {
          char p[600];
          snprintf(p, sizeof(p), "%s.%zu", path, i + 1);
          validate_one(c, "member", e, children, p);
        }
      } else if (type && strstr(type, "Map") && json_is_object(data)) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)data, k, v) {
          char p[600];
          snprintf(p, sizeof(p), "%s%s%s", path, path[0] ? "." : "", k);
          validate_one(c, "member", v, children, p);
        }
      } else if (json_is_object(children) && json_is_object(data)) {
        validate_members(c, data, children, path);
      }
      continue;
    }
    if (strcmp(rn, "keys") == 0 || strcmp(rn, "values") == 0) {
      map_constraint(c, rn, ra, data, path);
      continue;
    }
    char what[512];
    if (!constraint(rn, ra, data, what, sizeof(what)))
      violation(c, data, path, what);
  }
}

static void validate_members(struct vctx *c, const json_t *data, const json_t *members,
                             const char *parent) {
  const char *k;
  json_t *node;
  json_object_foreach((json_t *)members, k, node) {
    validate_one(c, k, json_object_get(data, k), node, parent);
  }
}

int tt_ddbw_validate(enum tt_ddb_op op, const json_t *body, struct tt_ddbw_error *err) {
  json_t *schema = op_schema(op);
  if (schema == NULL || !json_is_object(body))
    return 0;
  int rc = 0;
  const char *k;
  json_t *node;
  json_object_foreach(schema, k, node) {
    const json_t *rules = json_array_get(node, 2);
    const json_t *v = json_object_get(body, k);
    bool absent = v == NULL || json_is_null(v);
    if (json_is_true(json_object_get(rules, "required")) && absent) {
      rc = tt_ddbw_invalid(err, "The parameter '%s' is required but was not present in the request",
                           k);
      goto done;
    }
    if (json_is_true(json_object_get(rules, "tableName")) && json_is_string(v) &&
        (js_length(v) < 3 || js_length(v) > 255)) {
      rc = tt_ddbw_invalid(
          err, "%s must be at least 3 characters long and at most 255 characters long", k);
      goto done;
    }
  }
  struct vctx *c = malloc(sizeof(*c)); /* 8 KiB: not zeroed, msg is a C string */
  if (c == NULL)
    goto done;
  c->msg[0] = '\0';
  c->errors = 0;
  validate_members(c, body, schema, "");
  if (c->errors)
    rc = tt_ddbw_invalid(err, "%d validation error%s detected: %s", c->errors,
                         c->errors > 1 ? "s" : "", c->msg);
  free(c);
done:
  return rc;
}

/* ---- attribute values ---------------------------------------------------- */

#define T_VAL "com.amazon.coral.validate#ValidationException"
#define MAX_ITEM_BYTES 409600

/* A DynamoDB number's significant digits and the exponent of its first
 * one; -1 when the text is not a number. */
static int parse_number(const char *s, int *digits, long *exp, bool *neg) {
  const char *p = s;
  *neg = *p == '-';
  if (*neg)
    p++;
  size_t il = strspn(p, "0123456789");
  const char *ip = p;
  p += il;
  const char *fp = p;
  size_t fl = 0;
  if (*p == '.') {
    fp = ++p;
    fl = strspn(p, "0123456789");
    p += fl;
  }
  if (il + fl == 0)
    return -1;
  long e10 = 0;
  if (*p == 'e' || *p == 'E') {
    p++;
    bool eneg = *p == '-';
    if (*p == '-' || *p == '+')
      p++;
    size_t el = strspn(p, "0123456789");
    if (el == 0)
      return -1;
    for (size_t i = 0; i < el; i++)
      if (e10 < 100000000)
        e10 = e10 * 10 + (p[i] - '0');
    p += el;
    if (eneg)
      e10 = -e10;
  }
  if (*p)
    return -1;
  /* position of the first and last non-zero digit in int||frac */
  long first = -1, last = -1, n = (long)(il + fl);
  for (long i = 0; i < n; i++) {
    char d = i < (long)il ? ip[i] : fp[i - (long)il];
    if (d != '0') {
      if (first < 0)
        first = i;
      last = i;
    }
  }
  if (first < 0) {
    *digits = 1;
    *exp = 0;
    return 0;
  }
  *digits = (int)(last - first + 1);
  *exp = (long)il - 1 - first + e10;
  return 0;
}

static const char *check_num(const char *s, char *buf, size_t n) {
  int digits;
  long e;
  bool neg;
  if (s == NULL || s[0] == '\0')
    return "The parameter cannot be converted to a numeric value";
  if (parse_number(s, &digits, &e, &neg) != 0) {
    snprintf(buf, n, "The parameter cannot be converted to a numeric value: %s", s);
    return buf;
  }
  if (e > 125)
    return "Number overflow. Attempting to store a number with magnitude larger than supported "
           "range";
  if (e < -130)
    return "Number underflow. Attempting to store a number with magnitude smaller than supported "
           "range";
  if (digits > 38)
    return "Attempting to store more than 38 significant digits in a Number";
  return NULL;
}

bool tt_ddbw_number_ok(const char *s) {
  char buf[160];
  return check_num(s, buf, sizeof(buf)) == NULL;
}

static bool type_in(const char *t, const char *const *list) {
  for (; *list; list++)
    if (strcmp(t, *list) == 0)
      return true;
  return false;
}

static bool av_type(const char *k) {
  static const char *const t[] = {"S", "N", "B", "BOOL", "NULL", "SS", "NS", "BS", "L", "M", NULL};
  return type_in(k, t);
}

static bool has_duplicate(const json_t *arr) {
  size_t n = json_array_size(arr);
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++)
      if (json_equal(json_array_get(arr, i), json_array_get(arr, j)))
        return true;
  return false;
}

/* DynamoDB's checks of one AttributeValue; NULL when it passes. */
static const char *check_av(const json_t *v, char *buf, size_t n, int depth) {
  if (!json_is_object(v) || depth > 64)
    return NULL;
  size_t types = 0;
  const char *k;
  json_t *x;
  json_object_foreach((json_t *)v, k, x) {
    if (av_type(k) && !json_is_null(x))
      types++;
  }
  if (types == 0)
    return "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes";
  json_object_foreach((json_t *)v, k, x) {
    const char *m;
    if (!av_type(k) || json_is_null(x))
      continue;
    if (strcmp(k, "N") == 0 && (m = check_num(json_string_value(x), buf, n)) != NULL)
      return m;
    if (strcmp(k, "NULL") == 0 && !json_is_true(x))
      return "One or more parameter values were invalid: Null attribute value types must have "
             "the value of true";
    if (strcmp(k, "SS") == 0 && json_array_size(x) == 0)
      return "One or more parameter values were invalid: An string set  may not be empty";
    if (strcmp(k, "NS") == 0 && json_array_size(x) == 0)
      return "One or more parameter values were invalid: An number set  may not be empty";
    if (strcmp(k, "BS") == 0 && json_array_size(x) == 0)
      return "One or more parameter values were invalid: Binary sets should not be empty";
    if (strcmp(k, "NS") == 0) {
      size_t i;
      json_t *e;
      json_array_foreach(x, i, e) {
        if ((m = check_num(json_string_value(e), buf, n)) != NULL)
          return m;
      }
    }
    if ((strcmp(k, "SS") == 0 || strcmp(k, "BS") == 0) && has_duplicate(x)) {
      char list[400];
      value_str(x, list, sizeof(list));
      snprintf(buf, n, "One or more parameter values were invalid: Input collection %s%s contains "
               "duplicates.", list, k[0] == 'B' ? "of type BS" : "");
      return buf;
    }
    if (strcmp(k, "NS") == 0 && has_duplicate(x))
      return "Input collection contains duplicates";
    bool map = strcmp(k, "M") == 0;
    void *it = map ? json_object_iter(x) : NULL;
    json_t *e;
    for (size_t i = 0; (map || strcmp(k, "L") == 0) &&
                       (e = map ? json_object_iter_value(it) : json_array_get(x, i)) != NULL;
         i++, it = map ? json_object_iter_next(x, it) : NULL)
      if ((m = check_av(e, buf, n, depth + 1)) != NULL)
        return m; /* a map's values or a list's elements */
  }
  if (types > 1)
    return "Supplied AttributeValue has more than one datatypes set, must contain exactly one of "
           "the supported datatypes";
  return NULL;
}

static size_t b64_len(const char *s) {
  size_t n = s ? strlen(s) : 0, pad = 0;
  while (pad < 2 && pad < n && s[n - 1 - pad] == '=')
    pad++;
  return n / 4 * 3 - (n % 4 == 0 ? pad : 0);
}

static size_t item_bytes(const json_t *item, int depth);

static size_t num_bytes(const char *s) {
  int d;
  long e;
  bool neg;
  if (s == NULL || parse_number(s, &d, &e, &neg) != 0)
    return 0;
  if (d == 1 && strspn(s, "-0.") == strcspn(s, "eE"))
    return 1; /* zero */
  return 1 + (size_t)(d + 1) / 2 + (d % 2 || e % 2 ? 0 : 1) + (neg ? 1 : 0);
}

/* DynamoDB's size of an AttributeValue. */
static size_t av_bytes(const json_t *v, int depth) {
  const char *k;
  json_t *x;
  size_t size = 0, i;
  json_t *e;
  if (depth > 64)
    return 0;
  json_object_foreach((json_t *)v, k, x) {
    if (strcmp(k, "S") == 0)
      return json_string_length(x);
    if (strcmp(k, "B") == 0)
      return b64_len(json_string_value(x));
    if (strcmp(k, "N") == 0)
      return num_bytes(json_string_value(x));
    if (strcmp(k, "NULL") == 0 || strcmp(k, "BOOL") == 0)
      return 1;
    if (strcmp(k, "SS") == 0 || strcmp(k, "BS") == 0 || strcmp(k, "NS") == 0) {
      json_array_foreach(x, i, e) {
        size += k[0] == 'S' ? json_string_length(e)
                : k[0] == 'B' ? b64_len(json_string_value(e))
                              : num_bytes(json_string_value(e));
      }
      return size;
    }
    if (strcmp(k, "L") == 0) {
      json_array_foreach(x, i, e) {
        size += 1 + av_bytes(e, depth + 1);
      }
      return 3 + size;
    }
    if (strcmp(k, "M") == 0)
      return 3 + json_object_size(x) + item_bytes(x, depth + 1);
  }
  return 0;
}

static size_t item_bytes(const json_t *item, int depth) {
  const char *k;
  json_t *v;
  size_t size = 0;
  json_object_foreach((json_t *)item, k, v) {
    size += av_bytes(v, depth) + strlen(k);
  }
  return size;
}

/* One AttributeValue, refused with check_av's message. */
static int check_one(const json_t *v, struct tt_ddbw_error *err) {
  const char *m = check_av(v, err->message, sizeof(err->message), 0);
  if (m == NULL)
    return 0;
  if (m != err->message)
    snprintf(err->message, sizeof(err->message), "%s", m);
  err->type = T_VAL;
  err->status = 400;
  return -1;
}

/* Every AttributeValue of a map (an item or a key). */
static int check_avs(const json_t *map, struct tt_ddbw_error *err) {
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)map, k, v) {
    if (check_one(v, err) != 0)
      return -1;
  }
  return 0;
}

static int check_item(const json_t *item, struct tt_ddbw_error *err) {
  if (check_avs(item, err) != 0)
    return -1;
  if (json_is_object(item) && item_bytes(item, 0) > MAX_ITEM_BYTES)
    return tt_ddbw_invalid(err, "Item size has exceeded the maximum allowed size");
  return 0;
}

/* ExpressionAttributeNames and ExpressionAttributeValues, as DynamoDB checks
 * them before it parses the expressions: not empty, keys of placeholder
 * form, then each value. */
static int check_expr_maps(const json_t *body, struct tt_ddbw_error *err) {
  static const char *const maps[] = {"ExpressionAttributeNames", "ExpressionAttributeValues"};
  for (size_t i = 0; i < 2; i++) {
    const json_t *map = json_object_get(body, maps[i]);
    const char *k;
    json_t *v;
    if (!json_is_object(map))
      continue;
    if (json_object_size(map) == 0)
      return tt_ddbw_invalid(err, "%s must not be empty", maps[i]);
    json_object_foreach((json_t *)map, k, v) {
      /* The lead character and one or more of [0-9A-Za-z_]. */
      if (k[0] != (i == 0 ? '#' : ':') || k[1] == '\0' || k[1 + strspn(k + 1, ALNUM "_")])
        return tt_ddbw_invalid(err, "%s contains invalid key: Syntax error; key: \"%.200s\"",
                               maps[i], k);
    }
    if (i == 0)
      continue;
    json_object_foreach((json_t *)map, k, v) {
      char buf[sizeof(err->message) - 300];
      const char *m = check_av(v, buf, sizeof(buf), 0);
      if (m != NULL)
        return tt_ddbw_invalid(err, "%s contains invalid value: %s for key %.200s", maps[i], m,
                               k);
    }
  }
  return 0;
}

int tt_ddbw_check_values(enum tt_ddb_op op, const json_t *body, struct tt_ddbw_error *err) {
  const char *k;
  json_t *v;
  size_t i;
  json_t *e;
  switch (op) {
  case TT_DDB_PUT_ITEM:
    return check_item(json_object_get(body, "Item"), err) != 0 ? -1 : check_expr_maps(body, err);
  case TT_DDB_GET_ITEM:
  case TT_DDB_DELETE_ITEM:
    return check_avs(json_object_get(body, "Key"), err) != 0 ? -1 : check_expr_maps(body, err);
  case TT_DDB_UPDATE_ITEM:
    if (check_avs(json_object_get(body, "Key"), err) != 0)
      return -1;
    json_object_foreach(json_object_get(body, "AttributeUpdates"), k, v) {
      json_t *value = json_object_get(v, "Value");
      const char *act = json_string_value(json_object_get(v, "Action"));
      bool del = act && strcmp(act, "DELETE") == 0, add = act && strcmp(act, "ADD") == 0;
      if (value && !json_is_null(value)) {
        if (check_one(value, err) != 0)
          return -1;
      } else if (!del) {
        return tt_ddbw_invalid(err, "One or more parameter values were invalid: Only DELETE "
                                    "action is allowed when no attribute value is specified");
      } else {
        continue;
      }
      const char *type = NULL;
      json_t *tv;
      json_object_foreach(value, type, tv) {
        if (av_type(type) && !json_is_null(tv))
          break;
      }
      if (type == NULL)
        continue;
      bool set = strcmp(type, "SS") == 0 || strcmp(type, "NS") == 0 || strcmp(type, "BS") == 0;
      if (del && !set)
        return tt_ddbw_invalid(err, "One or more parameter values were invalid: DELETE action "
                                    "with value is not supported for the type %s", type);
      if (add && !set && strcmp(type, "N") != 0 && strcmp(type, "L") != 0)
        return tt_ddbw_invalid(err, "One or more parameter values were invalid: ADD action is "
                                    "not supported for the type %s", type);
    }
    return check_expr_maps(body, err);
  case TT_DDB_BATCH_GET_ITEM:
    json_object_foreach(json_object_get(body, "RequestItems"), k, v) {
      json_array_foreach(json_object_get(v, "Keys"), i, e) {
        if (check_avs(e, err) != 0)
          return -1;
      }
    }
    return 0;
  case TT_DDB_BATCH_WRITE_ITEM:
    json_object_foreach(json_object_get(body, "RequestItems"), k, v) {
      json_array_foreach(v, i, e) {
        json_t *put = json_object_get(json_object_get(e, "PutRequest"), "Item");
        if (put && check_item(put, err) != 0)
          return -1;
        if (check_avs(json_object_get(json_object_get(e, "DeleteRequest"), "Key"), err) != 0)
          return -1;
      }
    }
    return 0;
  default:
    return 0;
  }
}

/* The first type key of an AttributeValue ("" when none). */
static const char *first_type(const json_t *v) {
  void *it = json_is_object(v) ? json_object_iter((json_t *)v) : NULL;
  return it ? json_object_iter_key(it) : "";
}

int tt_ddbw_condition_args(const char *op, const json_t *list, struct tt_ddbw_error *err) {
  static const char *const any[] = {"S", "N", "B", "SS", "NS", "BS", NULL};
  static const char *const snb[] = {"S", "N", "B", NULL};
  static const char *const sb[] = {"S", "B", NULL};
  size_t i, n = json_array_size(list);
  bool none = strcmp(op, "NULL") == 0 || strcmp(op, "NOT_NULL") == 0;
  bool in = strcmp(op, "IN") == 0, between = strcmp(op, "BETWEEN") == 0;
  if (none ? n != 0 : in ? n < 1 : between ? n != 2 : n != 1)
    return tt_ddbw_invalid(err, "One or more parameter values were invalid: Invalid number "
                                "of argument(s) for the %s ComparisonOperator", op);
  for (i = 1; i < n; i++)
    if (strcmp(first_type(json_array_get(list, i)), first_type(json_array_get(list, 0))) != 0)
      return tt_ddbw_invalid(err, "One or more parameter values were invalid: "
                                  "AttributeValues inside AttributeValueList must be of "
                                  "same type");
  const char *const *allowed = strcmp(op, "EQ") == 0 || strcmp(op, "NE") == 0 ? any
                               : strcmp(op, "BEGINS_WITH") == 0              ? sb
                               : none                                        ? NULL
                                                                             : snb;
  for (i = 0; allowed && i < n; i++) {
    const char *t = first_type(json_array_get(list, i));
    if (!type_in(t, allowed))
      return tt_ddbw_invalid(err, "One or more parameter values were invalid: "
                                  "ComparisonOperator %s is not valid for %s AttributeValue "
                                  "type", op, t);
  }
  return 0;
}

/* DynamoDB's checks of legacy conditions (KeyConditions, QueryFilter,
 * ScanFilter), made before the table lookup: each AttributeValue, then
 * tt_ddbw_condition_args. */
static int check_conditions(const json_t *conds, struct tt_ddbw_error *err) {
  const char *k;
  json_t *c;
  json_object_foreach((json_t *)conds, k, c) {
    const char *op = json_string_value(json_object_get(c, "ComparisonOperator"));
    const json_t *list = json_object_get(c, "AttributeValueList");
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v) {
      char buf[sizeof(err->message) - 64];
      const char *m = check_av(v, buf, sizeof(buf), 0);
      if (m != NULL)
        return tt_ddbw_invalid(err, "%s", m);
    }
    if (op && tt_ddbw_condition_args(op, list, err) != 0)
      return -1;
  }
  return 0;
}

/* AttributesToGet naming one attribute twice. */
static int check_attributes_to_get(const json_t *body, struct tt_ddbw_error *err) {
  const json_t *a = json_object_get(body, "AttributesToGet");
  size_t n = json_array_size(a);
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++)
      if (json_equal(json_array_get(a, i), json_array_get(a, j)) &&
          json_is_string(json_array_get(a, i)))
        return tt_ddbw_invalid(err, "One or more parameter values were invalid: Duplicate "
                                    "value in attribute name: %.200s",
                               json_string_value(json_array_get(a, i)));
  return 0;
}

static bool absent(const json_t *v) { return v == NULL || json_is_null(v); }

int tt_ddbw_check_request(enum tt_ddb_op op, json_t *body, struct tt_ddbw_error *err) {
  return tt_ddbw_check_types(op, body, err) != 0 || tt_ddbw_validate(op, body, err) != 0 ||
                 tt_ddbw_expression_params(op, body, err) != 0 ||
                 tt_ddbw_check_values(op, body, err) != 0 ||
                 tt_ddbw_check_table_name(op, body, err) != 0 ||
                 tt_ddbw_check_table(op, body, err) != 0 || tt_ddbw_check_read(op, body, err) != 0
             ? -1
             : 0;
}

int tt_ddbw_check_read(enum tt_ddb_op op, const json_t *body, struct tt_ddbw_error *err) {
  if (op == TT_DDB_SCAN) {
    json_t *seg = json_object_get(body, "Segment"), *total = json_object_get(body, "TotalSegments");
    json_int_t s = json_integer_value(seg), t = json_integer_value(total);
    if (check_attributes_to_get(body, err) != 0 ||
        check_conditions(json_object_get(body, "ScanFilter"), err) != 0 ||
        tt_ddbw_check_start_key(op, body, err) != 0)
      return -1;
    if (s != 0 && absent(total))
      return tt_ddbw_invalid(err, "The TotalSegments parameter is required but was not present "
                                  "in the request when Segment parameter is present");
    if (t != 0 && absent(seg))
      return tt_ddbw_invalid(err, "The Segment parameter is required but was not present in "
                                  "the request when parameter TotalSegments is present");
    if (t != 0 && s >= t)
      return tt_ddbw_invalid(err,
                             "The Segment parameter is zero-based and must be less than parameter "
                             "TotalSegments: Segment: %lld is not less than TotalSegments: %lld",
                             (long long)s, (long long)t);
    return check_expr_maps(body, err);
  }
  if (op != TT_DDB_QUERY)
    return 0;
  const json_t *kc = json_object_get(body, "KeyConditions");
  if (check_conditions(json_object_get(body, "QueryFilter"), err) != 0 ||
      check_attributes_to_get(body, err) != 0 || tt_ddbw_check_start_key(op, body, err) != 0)
    return -1;
  if (absent(kc) && absent(json_object_get(body, "KeyConditionExpression")))
    return tt_ddbw_invalid(err, "Either the KeyConditions or KeyConditionExpression "
                                "parameter must be specified in the request.");
  if (check_expr_maps(body, err) != 0 || check_conditions(kc, err) != 0)
    return -1;
  if (json_is_object(kc) && (json_object_size(kc) < 1 || json_object_size(kc) > 2))
    return tt_ddbw_invalid(err, "Conditions can be of length 1 or 2 only");
  return 0;
}

int tt_ddbw_check_start_key(enum tt_ddb_op op, const json_t *body, struct tt_ddbw_error *err) {
  if (op != TT_DDB_QUERY && op != TT_DDB_SCAN)
    return 0;
  if (check_avs(json_object_get(body, "ExclusiveStartKey"), err) == 0)
    return 0;
  /* DynamoDB names the starting key in most of these messages. */
  static const char *const bare[] = {"contains duplicates", "number set", "numeric value",
                                     "significant digits", "number with magnitude"};
  for (size_t i = 0; i < sizeof(bare) / sizeof(bare[0]); i++)
    if (strstr(err->message, bare[i]))
      return -1;
  char m[sizeof(err->message)];
  snprintf(m, sizeof(m), "%s", err->message);
  return tt_ddbw_invalid(err, "The provided starting key is invalid: %.2200s", m);
}

/* ---- tag operations ------------------------------------------------------ */

/* Whether an ARN has six colon-separated parts and a slash after them. */
static bool arn_shaped(const char *a) {
  int colons = 0;
  const char *p = a;
  for (; *p && colons < 5; p++)
    if (*p == ':' && p != a && p[-1] != ':')
      colons++;
  return colons == 5 && p[0] && p[0] != '/' && strchr(p, '/') && strchr(p, '/')[1];
}

/* arn:aws:dynamodb:<region>:<digits>:table/<name of 3+ without '/'> */
static bool table_arn(const char *a) {
  static const char pre[] = "arn:aws:dynamodb:";
  if (strncmp(a, pre, sizeof(pre) - 1) != 0)
    return false;
  const char *region = a + sizeof(pre) - 1;
  for (const char *t = strstr(region, ":table/"); t; t = strstr(t + 1, ":table/")) {
    const char *d = t;
    while (d > region && d[-1] >= '0' && d[-1] <= '9')
      d--;
    const char *name = t + 7;
    if (d < t && d - 1 > region && d[-1] == ':' && strlen(name) >= 3 && !strchr(name, '/'))
      return true;
  }
  return false;
}

static int check_tags(enum tt_ddb_op op, json_t *body, struct tt_ddbw_error *err) {
  const char *name = tt_ddb_op_name(op);
  bool tag = op == TT_DDB_TAG_RESOURCE, untag = op == TT_DDB_UNTAG_RESOURCE;
  if (tt_ddbw_check_types(op, body, err) != 0) /* schemas[]: checked again, as for all */
    return -1;
  const char *arn = json_string_value(json_object_get(body, "ResourceArn"));
  if (arn == NULL)
    return tt_ddbw_invalid(err, "Invalid TableArn");
  if (!arn_shaped(arn))
    return tt_ddbw_fail(err, T_SERVICE "AccessDeniedException", 400,
                        "User: arn:aws:iam::000000000000:user/local is not authorized to perform: "
                        "dynamodb:%s on resource: %s",
                        name, arn[0] ? arn : "*");
  const char *list = tag ? "Tags" : "TagKeys";
  json_t *l = json_object_get(body, list);
  if ((tag || untag) && l == NULL)
    return tt_ddbw_invalid(err,
                           "1 validation error detected: Value null at '%s' failed to satisfy "
                           "constraint: Member must not be null",
                           tag ? "tags" : "tagKeys");
  if (!table_arn(arn))
    return tt_ddbw_invalid(err, "Invalid TableArn: Invalid ResourceArn provided as input %s",
                           arn);
  if ((tag || untag) && json_array_size(l) == 0)
    return tt_ddbw_invalid(err, "%s",
                           tag ? "Atleast one Tag needs to be provided as Input."
                               : "Atleast one Tag Key needs to be provided as Input.");
  return 0;
}
