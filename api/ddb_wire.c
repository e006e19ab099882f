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
