/* SPDX-License-Identifier: Apache-2.0 */
/* ddb_legacy.c -- DynamoDB's legacy (pre-expression) parameters rewritten as
 * expressions for the backend (ddb_wire.h: tt_ddbw_legacy): AttributesToGet,
 * Expected, KeyConditions, QueryFilter, ScanFilter, AttributeUpdates and
 * ConditionalOperator, with DynamoDB's own checks of them. */
#include <stdio.h>
#include <string.h>

#include "api/ddb_wire.h"
#include "util/buf.h"

/* The rewrite's state: placeholders are #lN and :lN, new names and values
 * collected in two objects merged into the request at the end. */
struct rw {
  json_t *names, *values;
  unsigned n;
  struct tt_ddbw_error *err;
};

/* A new placeholder of v (stolen) in w->names (#lN) or w->values (:lN),
 * written to out. */
static int placeholder(struct rw *w, json_t *map, json_t *v, struct tt_buf *out) {
  char ph[24];
  snprintf(ph, sizeof(ph), "%cl%u", map == w->names ? '#' : ':', w->n++);
  if (json_object_set_new(map, ph, v) != 0)
    return tt_ddbw_invalid(w->err, "out of memory");
  return tt_buf_printf(out, "%s", ph);
}
#define name_ph(w, attr, out) placeholder(w, (w)->names, json_string(attr), out)
#define value_ph(w, v, out) placeholder(w, (w)->values, json_incref(v), out)

/* The comparison operators: their expressions (%a the attribute's name,
 * %0 and %1 the values, %* an IN's values) and whether a key condition
 * may use them. */
static const struct {
  const char *op, *fmt;
  bool key;
} ops[] = {
    {"EQ", "%a = %0", true},          {"NE", "%a <> %0", false},
    {"LE", "%a <= %0", true},         {"LT", "%a < %0", true},
    {"GE", "%a >= %0", true},         {"GT", "%a > %0", true},
    {"NOT_NULL", "attribute_exists(%a)", false},
    {"NULL", "attribute_not_exists(%a)", false},
    {"CONTAINS", "contains(%a, %0)", false},
    {"NOT_CONTAINS", "NOT contains(%a, %0)", false},
    {"BEGINS_WITH", "begins_with(%a, %0)", true},
    {"IN", "%a IN (%*)", false},      {"BETWEEN", "%a BETWEEN %0 AND %1", true},
};

/* An IN's AttributeValueList has no length limit of its own in DynamoDB,
 * where an expression's IN takes 100 operands and 4 KB of text: the
 * rewrite leaves out repeated values (which change nothing), looking back
 * over the first IN_DISTINCT_MAX distinct ones. Whether list[k] repeats
 * one of those; else it is noted in kept. */
#define IN_DISTINCT_MAX 100

static bool in_repeated(json_t *list, size_t *kept, size_t *nkept, size_t k) {
  json_t *v = json_array_get(list, k);
  for (size_t i = 0; i < *nkept && i < IN_DISTINCT_MAX; i++)
    if (json_equal(json_array_get(list, kept[i]), v))
      return true;
  if (*nkept <= IN_DISTINCT_MAX)
    kept[*nkept] = k;
  if (*nkept < IN_DISTINCT_MAX + 1)
    (*nkept)++;
  return false;
}

/* Writes the template fmt to out: %a a new placeholder of the name attr,
 * %0 and %1 of the values list[0] and list[1], %* of list's distinct values
 * (an IN's), %v of v, %e of an empty list. Returns 0 or -1. */
static int expand(struct rw *w, const char *fmt, const char *attr, json_t *list, json_t *v,
                  struct tt_buf *out) {
  size_t kept[IN_DISTINCT_MAX + 1], nkept = 0;
  int rc = 0;
  for (const char *f = fmt; *f && rc >= 0; f++) {
    if (*f != '%') {
      rc = tt_buf_append(out, f, 1);
    } else if (*++f == 'a') {
      rc = name_ph(w, attr, out);
    } else if (*f == 'v') {
      rc = value_ph(w, v, out);
    } else if (*f == 'e') {
      rc = placeholder(w, w->values, json_pack("{s:[]}", "L"), out);
    } else if (*f != '*') {
      rc = value_ph(w, json_array_get(list, (size_t)(*f - '0')), out);
    } else {
      for (size_t k = 0; k < json_array_size(list) && rc >= 0; k++) {
        if (in_repeated(list, kept, &nkept, k))
          continue;
        rc = nkept > 1 ? tt_buf_puts(out, ", ") : 0;
        if (rc >= 0)
          rc = value_ph(w, json_array_get(list, k), out);
      }
    }
  }
  return rc < 0 ? -1 : 0;
}

/* One condition {ComparisonOperator, AttributeValueList} on `attr`. */
static int condition(struct rw *w, const char *attr, json_t *c, bool key, struct tt_buf *out) {
  json_t *opj = json_object_get(c, "ComparisonOperator");
  json_t *list = json_object_get(c, "AttributeValueList");
  json_t *single = NULL;
  if (list == NULL && json_object_get(c, "Value")) { /* Expected's {ComparisonOperator, Value} */
    single = json_array();
    json_array_append(single, json_object_get(c, "Value"));
    list = single;
  }
  int result = -1;
  const char *op = json_string_value(opj);
  if (op == NULL) {
    tt_ddbw_invalid(w->err,
                    "1 validation error detected: Value null at 'comparisonOperator' failed to "
                    "satisfy constraint: Member must not be null");
    goto out;
  }
  size_t i;
  for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
    if (strcmp(ops[i].op, op) == 0)
      break;
  if (i == sizeof(ops) / sizeof(ops[0])) {
    tt_ddbw_invalid(w->err,
                    "1 validation error detected: Value '%s' at 'comparisonOperator' failed to "
                    "satisfy constraint: Member must satisfy enum value set: [IN, NULL, "
                    "BETWEEN, LT, NOT_CONTAINS, EQ, GT, NOT_NULL, NE, LE, BEGINS_WITH, GE, "
                    "CONTAINS]",
                    op);
    goto out;
  }
  if (list && !json_is_array(list)) {
    tt_ddbw_invalid(w->err, "AttributeValueList must be a list");
    goto out;
  }
  if (tt_ddbw_condition_args(op, list, w->err) != 0)
    goto out;
  if (key && !ops[i].key) {
    /* DynamoDB refuses it once it knows the table's keys, after the
     * index and the starting key: the key condition carries it as an
     * equality with a :l_ni placeholder (tt_expr_key_range). */
    char ph[32];
    snprintf(ph, sizeof(ph), ":l_ni%u", w->n++);
    json_t *null = json_pack("{s:b}", "NULL", 1);
    int rc = null && json_object_set_new(w->values, ph, null) == 0 ? 0 : -1;
    if (rc == 0)
      rc = name_ph(w, attr, out);
    if (rc >= 0)
      rc = tt_buf_printf(out, " = %s", ph);
    result = rc < 0 ? -1 : 0;
    goto out;
  }
  result = expand(w, ops[i].fmt, attr, list, NULL, out);
out:
  json_decref(single);
  return result;
}

/* Expected's entries: {Value}, {Exists, Value}, or a condition. */
static int expected_one(struct rw *w, const char *attr, json_t *e, struct tt_buf *out) {
  if (!json_is_object(e))
    return tt_ddbw_invalid(w->err, "Expected.%s must be a map", attr);
  json_t *exists = json_object_get(e, "Exists");
  json_t *value = json_object_get(e, "Value");
  json_t *list = json_object_get(e, "AttributeValueList");
  json_t *cmp = json_object_get(e, "ComparisonOperator");
  const char *pre = "One or more parameter values were invalid: ";
  if (list && value)
    return tt_ddbw_invalid(w->err, "%sValue and AttributeValueList cannot be used together for "
                           "Attribute: %s", pre, attr);
  if (cmp) {
    const char *op = json_string_value(cmp);
    if (exists)
      return tt_ddbw_invalid(w->err, "%sExists and ComparisonOperator cannot be used together for "
                             "Attribute: %s", pre, attr);
    if (op && strcmp(op, "NULL") && strcmp(op, "NOT_NULL") && !list && !value)
      return tt_ddbw_invalid(w->err, "%sValue or AttributeValueList must be used with "
                             "ComparisonOperator: %s for Attribute: %s", pre, op, attr);
    return condition(w, attr, e, false, out);
  }
  if (list)
    return tt_ddbw_invalid(w->err,
                           "%sAttributeValueList can only be used with a ComparisonOperator "
                           "for Attribute: %s", pre, attr);
  if (exists && !json_is_boolean(exists))
    return tt_ddbw_invalid(w->err, "Exists must be a boolean");
  bool ex = exists == NULL || json_is_true(exists);
  if (ex && value == NULL)
    return tt_ddbw_invalid(w->err,
                           "%sValue must be provided when Exists is %s for Attribute: %s", pre,
                           exists ? "true" : "null", attr);
  if (!ex && value)
    return tt_ddbw_invalid(w->err,
                           "%sValue cannot be used when Exists is false for Attribute: %s", pre,
                           attr);
  return expand(w, ex ? "%a = %v" : "attribute_not_exists(%a)", attr, NULL, value, out);
}

/* Ends a rewrite: when rc is 0, `expr` gets out's text (when `put`) in
 * place of the legacy `param`. Frees out; returns rc, or -1 out of memory. */
static int replace_param(struct rw *w, json_t *req, const char *param, const char *expr,
                         struct tt_buf *out, bool put, int rc) {
  if (rc == 0 && put && json_object_set_new(req, expr, json_stringn(out->data, out->len)) != 0)
    rc = tt_ddbw_invalid(w->err, "out of memory");
  tt_buf_free(out);
  if (rc == 0)
    json_object_del(req, param);
  return rc;
}

/* A map of conditions joined with AND or OR into `expr` of `req`. */
static int conditions(struct rw *w, json_t *req, const char *param, const char *expr,
                      const char *joiner, bool key) {
  json_t *m = json_object_get(req, param);
  if (m == NULL)
    return 0;
  if (!json_is_object(m))
    return tt_ddbw_invalid(w->err, "%s must be a map", param);
  struct tt_buf out;
  tt_buf_init(&out, 0);
  const char *attr;
  json_t *c;
  int rc = 0;
  size_t k = 0;
  json_object_foreach(m, attr, c) {
    if (k++ && tt_buf_printf(&out, " %s ", joiner) < 0)
      rc = -1;
    if (rc == 0 && !json_is_object(c))
      rc = tt_ddbw_invalid(w->err, "%s.%s must be a map", param, attr);
    if (rc == 0)
      rc = strcmp(param, "Expected") == 0 ? expected_one(w, attr, c, &out)
                                          : condition(w, attr, c, key, &out);
    if (rc != 0)
      break;
  }
  return replace_param(w, req, param, expr, &out, k > 0, rc);
}

static int attributes_to_get(struct rw *w, json_t *req) {
  json_t *a = json_object_get(req, "AttributesToGet");
  if (a == NULL)
    return 0;
  if (!json_is_array(a) || json_array_size(a) == 0)
    return tt_ddbw_invalid(w->err,
                           "1 validation error detected: Value '[]' at 'attributesToGet' failed "
                           "to satisfy constraint: Member must have length greater than or "
                           "equal to 1");
  struct tt_buf out;
  tt_buf_init(&out, 0);
  int rc = 0;
  for (size_t i = 0; i < json_array_size(a) && rc == 0; i++) {
    const char *s = json_string_value(json_array_get(a, i));
    for (size_t j = 0; j < i && s; j++)
      if (strcmp(s, json_string_value(json_array_get(a, j)) ?: "") == 0)
        return tt_buf_free(&out),
               tt_ddbw_invalid(w->err,
                               "One or more parameter values were invalid: Duplicate value in "
                               "attribute name: %s",
                               s);
    if (s == NULL)
      rc = tt_ddbw_invalid(w->err, "AttributesToGet must hold strings");
    else if ((i && tt_buf_printf(&out, ", ") < 0) || name_ph(w, s, &out) < 0)
      rc = -1;
  }
  return replace_param(w, req, "AttributesToGet", "ProjectionExpression", &out, true, rc);
}

static int attribute_updates(struct rw *w, json_t *req) {
  json_t *m = json_object_get(req, "AttributeUpdates");
  if (m == NULL)
    return 0;
  if (!json_is_object(m))
    return tt_ddbw_invalid(w->err, "AttributeUpdates must be a map");
  struct tt_buf part[4]; /* SET, REMOVE, ADD, DELETE */
  static const char *const kw[4] = {"SET", "REMOVE", "ADD", "DELETE"};
  for (int i = 0; i < 4; i++)
    tt_buf_init(&part[i], 0);
  const char *attr;
  json_t *u;
  int rc = 0;
  json_object_foreach(m, attr, u) {
    json_t *actj = json_object_get(u, "Action"), *v = json_object_get(u, "Value");
    const char *act = actj ? json_string_value(actj) : "PUT";
    int which;
    if (act == NULL || !json_is_object(u)) {
      rc = tt_ddbw_invalid(w->err, "AttributeUpdates.%s must be a map with a string Action", attr);
      break;
    }
    if (strcmp(act, "PUT") == 0)
      which = 0;
    else if (strcmp(act, "DELETE") == 0)
      which = v ? 3 : 1;
    else if (strcmp(act, "ADD") == 0)
      which = 2;
    else {
      rc = tt_ddbw_invalid(w->err, "1 validation error detected: Value '%s' at "
                           "'attributeUpdates.%s.member.action' failed to satisfy constraint: "
                           "Member must satisfy enum value set: [ADD, PUT, DELETE]",
                   act, attr);
      break;
    }
    if (which != 1 && v == NULL) {
      rc = tt_ddbw_invalid(w->err,
                           "One or more parameter values were invalid: Only DELETE action is "
                           "allowed when no attribute value is specified");
      break;
    }
    /* ADD of a list appends to it (an absent attribute is an empty list):
     * the expression form is SET with list_append. */
    static const char *const fmt[4] = {"%a = %v", "%a", "%a %v", "%a %v"};
    bool add_list = which == 2 && json_object_get(v, "L") != NULL;
    struct tt_buf *b = &part[add_list ? 0 : which];
    if ((b->len && tt_buf_printf(b, ", ") < 0) ||
        expand(w, add_list ? "%a = list_append(if_not_exists(%a, %e), %v)" : fmt[which], attr,
               NULL, v, b) != 0) {
      rc = -1;
      break;
    }
  }
  struct tt_buf all;
  tt_buf_init(&all, 0);
  for (int i = 0; i < 4 && rc == 0; i++)
    if (part[i].len && tt_buf_printf(&all, "%s%s %.*s", all.len ? " " : "", kw[i],
                                     (int)part[i].len, part[i].data) < 0)
      rc = -1;
  for (int i = 0; i < 4; i++)
    tt_buf_free(&part[i]);
  return replace_param(w, req, "AttributeUpdates", "UpdateExpression", &all, all.len > 0, rc);
}

const char *tt_ddbw_legacy_message(const char *message) {
  if (message && strcmp(message, "An operand in the update expression has an incorrect data "
                                 "type") == 0)
    return "Type mismatch for attribute to update";
  return message;
}

static const char *const legacy_params[] = {"AttributesToGet", "Expected", "KeyConditions",
                                            "QueryFilter", "ScanFilter", "AttributeUpdates",
                                            "ConditionalOperator"};

/* DynamoDB's expression and non-expression parameters of each operation,
 * in the order its messages list them. */
struct params {
  const char *expr[4];
  const char *legacy[5];
};

static const struct params *params_of(enum tt_ddb_op op) {
  static const struct params get = {{"ProjectionExpression"}, {"AttributesToGet"}};
  static const struct params write = {{"ConditionExpression"}, {"Expected"}};
  static const struct params update = {{"UpdateExpression", "ConditionExpression"},
                                       {"AttributeUpdates", "Expected"}};
  static const struct params query = {
      {"ProjectionExpression", "FilterExpression", "KeyConditionExpression"},
      {"AttributesToGet", "QueryFilter", "ConditionalOperator", "KeyConditions"}};
  static const struct params scan = {{"ProjectionExpression", "FilterExpression"},
                                     {"AttributesToGet", "ScanFilter", "ConditionalOperator"}};
  switch (op) {
  case TT_DDB_GET_ITEM:
  case TT_DDB_BATCH_GET_ITEM:
    return &get;
  case TT_DDB_PUT_ITEM:
  case TT_DDB_DELETE_ITEM:
    return &write;
  case TT_DDB_UPDATE_ITEM:
    return &update;
  case TT_DDB_QUERY:
    return &query;
  case TT_DDB_SCAN:
    return &scan;
  default:
    return NULL;
  }
}

static void add_list(char *buf, size_t n, const char *item) {
  size_t len = strlen(buf);
  snprintf(buf + len, n - len, "%s%s", len ? ", " : "", item);
}

/* DynamoDB's rules on mixing the two forms, and on names and values
 * without an expression. */
static int expression_params(json_t *req, const struct params *p, struct tt_ddbw_error *err) {
  char ex[200] = "", lg[200] = "";
  for (size_t i = 0; i < 4 && p->expr[i]; i++)
    if (json_object_get(req, p->expr[i]) && !json_is_null(json_object_get(req, p->expr[i])))
      add_list(ex, sizeof(ex), p->expr[i]);
  if (ex[0]) {
    bool key_conditions_alone = json_object_get(req, "KeyConditions") &&
                                !json_object_get(req, "KeyConditionExpression");
    for (size_t i = 0; i < 5 && p->legacy[i]; i++)
      if (json_object_get(req, p->legacy[i]) && !json_is_null(json_object_get(req, p->legacy[i])) &&
          !(key_conditions_alone && strcmp(p->legacy[i], "KeyConditions") == 0))
        add_list(lg, sizeof(lg), p->legacy[i]);
    if (lg[0])
      return tt_ddbw_invalid(err,
                             "Can not use both expression and non-expression parameters in the "
                             "same request: Non-expression parameters: {%s} Expression "
                             "parameters: {%s}",
                             lg, ex);
  }
  if (json_object_get(req, "ExpressionAttributeNames") && ex[0] == '\0')
    return tt_ddbw_invalid(err,
                           "ExpressionAttributeNames can only be specified when using expressions");
  char vals[200] = "";
  size_t nvals = 0;
  bool any = false;
  for (size_t i = 0; i < 4 && p->expr[i]; i++)
    if (strcmp(p->expr[i], "ProjectionExpression") != 0) {
      snprintf(vals + strlen(vals), sizeof(vals) - strlen(vals), "%s%s", nvals ? " and " : "",
               p->expr[i]);
      nvals++;
      any = any || json_object_get(req, p->expr[i]) != NULL;
    }
  if (nvals && json_object_get(req, "ExpressionAttributeValues") && !any)
    return tt_ddbw_invalid(err, "ExpressionAttributeValues can only be specified when using "
                        "expressions: %s %s null",
                   vals, nvals > 1 ? "are" : "is");
  return 0;
}

/* Rewrites one request object (an item request, a Query or a Scan, or a
 * BatchGetItem table entry). */
static int rewrite(json_t *req, enum tt_ddb_op op, struct tt_ddbw_error *err) {
  const struct params *p = params_of(op);
  if (p && expression_params(req, p, err) != 0)
    return -1;
  bool legacy = false;
  for (size_t i = 0; i < sizeof(legacy_params) / sizeof(legacy_params[0]); i++)
    legacy = legacy || json_object_get(req, legacy_params[i]) != NULL;
  if (!legacy)
    return 0;
  json_t *co = json_object_get(req, "ConditionalOperator");
  const char *joiner = "AND";
  if (co) {
    const char *s = json_string_value(co);
    if (s == NULL || (strcmp(s, "AND") && strcmp(s, "OR")))
      return tt_ddbw_invalid(err,
                             "1 validation error detected: Value '%s' at 'conditionalOperator' "
                             "failed to satisfy constraint: Member must satisfy enum value set: "
                             "[OR, AND]",
                             s ? s : "");
    joiner = s;
  }
  struct rw w = {json_object(), json_object(), 0, err};
  int rc = 0;
  if (w.names == NULL || w.values == NULL)
    rc = tt_ddbw_invalid(err, "out of memory");
  if (rc == 0 && (attributes_to_get(&w, req) != 0 ||
                  conditions(&w, req, "Expected", "ConditionExpression", joiner, false) != 0 ||
                  conditions(&w, req, "KeyConditions", "KeyConditionExpression", "AND", true) != 0 ||
                  conditions(&w, req, "QueryFilter", "FilterExpression", joiner, false) != 0 ||
                  conditions(&w, req, "ScanFilter", "FilterExpression", joiner, false) != 0 ||
                  attribute_updates(&w, req) != 0))
    rc = -1;
  if (rc == 0) {
    json_object_del(req, "ConditionalOperator");
    /* Merged with the request's own (a Query may pair KeyConditions with
     * a ProjectionExpression): #lN and :lN are new keys. */
    static const char *const dst[2] = {"ExpressionAttributeNames", "ExpressionAttributeValues"};
    json_t *src[2] = {w.names, w.values};
    for (int k = 0; k < 2 && rc == 0; k++) {
      if (json_object_size(src[k]) == 0)
        continue;
      json_t *have = json_object_get(req, dst[k]);
      if (json_is_object(have) ? json_object_update_missing(have, src[k]) != 0
                               : json_object_set(req, dst[k], src[k]) != 0)
        rc = tt_ddbw_invalid(err, "out of memory");
    }
  }
  json_decref(w.names);
  json_decref(w.values);
  return rc;
}

/* The expression rules (rw: and the rewrite) of each request object of op:
 * the body, or a BatchGetItem's table entries; the operations without
 * expressions have none. */
static int each_request(enum tt_ddb_op op, json_t *body, bool rw, struct tt_ddbw_error *err) {
  const struct params *p = params_of(op);
  if (p == NULL)
    return 0;
  if (op != TT_DDB_BATCH_GET_ITEM)
    return rw ? rewrite(body, op, err) : expression_params(body, p, err);
  const char *t;
  json_t *entry;
  json_object_foreach(json_object_get(body, "RequestItems"), t, entry) {
    if (json_is_object(entry) &&
        (rw ? rewrite(entry, op, err) : expression_params(entry, p, err)) != 0)
      return -1;
  }
  return 0;
}

int tt_ddbw_expression_params(enum tt_ddb_op op, json_t *body, struct tt_ddbw_error *err) {
  return each_request(op, body, false, err);
}

int tt_ddbw_legacy(enum tt_ddb_op op, json_t *body, struct tt_ddbw_error *err) {
  return each_request(op, body, true, err);
}
