/* SPDX-License-Identifier: Apache-2.0 */
/* test_expr_parse.c -- expression grammar, precedence, reserved words and DynamoDB's error texts. */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr.h"
#include "util/buf.h"
#include "value/codec_ddb.h"

/* An M value from DynamoDB wire JSON ({"a": {"N": "1"}}). */
static struct tt_av item_of(const char *wire) {
  struct tt_av v;
  struct tt_error err;
  json_t *j = json_loads(wire, 0, NULL);
  ck_assert_msg(j != NULL, "bad test JSON: %s", wire);
  ck_assert_int_eq(tt_ddb_item_from_json(j, "", &v, &err), 0);
  json_decref(j);
  return v;
}

/* ExpressionAttributeNames from {"#a": "name", ...}. */
static struct tt_av names_of(const char *plain) {
  struct tt_av v;
  struct tt_error err;
  json_t *j = json_loads(plain, 0, NULL);
  const char *k;
  json_t *s;
  size_t i = 0;
  ck_assert_ptr_nonnull(j);
  ck_assert_int_eq(tt_av_map(&v, json_object_size(j)), 0);
  json_object_foreach(j, k, s) {
    v.u.members[i].name = strdup(k);
    v.u.members[i].name_len = strlen(k);
    ck_assert_int_eq(tt_av_string(&v.u.members[i].value, json_string_value(s),
                                  json_string_length(s)),
                     0);
    i++;
  }
  ck_assert_int_eq(tt_av_map_finish(&v, NULL, &err), 0);
  json_decref(j);
  return v;
}

/* Parses and expects failure with exactly `msg`. */
static void expect_error(enum tt_expr_kind kind, const char *text, const struct tt_av *names,
                         const struct tt_av *values, const char *msg) {
  struct tt_expr *e = (struct tt_expr *)1;
  struct tt_error err;
  tt_error_clear(&err);
  ck_assert_int_eq(tt_expr_parse(kind, text, names, values, &e, &err), -1);
  ck_assert_ptr_null(e);
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
  ck_assert_str_eq(err.message, msg);
}

static struct tt_expr *expect_ok(enum tt_expr_kind kind, const char *text,
                                 const struct tt_av *names, const struct tt_av *values) {
  struct tt_expr *e = NULL;
  struct tt_error err;
  tt_error_clear(&err);
  int rc = tt_expr_parse(kind, text, names, values, &e, &err);
  ck_assert_msg(rc == 0, "parse of '%s' failed: %s", text, err.message);
  ck_assert_ptr_nonnull(e);
  return e;
}

START_TEST(test_reserved_table) {
  ck_assert(tt_expr_is_reserved("ABORT", 5));
  ck_assert(tt_expr_is_reserved("zone", 4));
  ck_assert(tt_expr_is_reserved("Status", 6));
  ck_assert(tt_expr_is_reserved("size", 4));
  ck_assert(tt_expr_is_reserved("FLATTERN", 8)); /* sic, as DynamoDB lists it */
  ck_assert(tt_expr_is_reserved("name", 4));
  ck_assert(!tt_expr_is_reserved("statuses", 8));
  ck_assert(!tt_expr_is_reserved("Price", 5));
  ck_assert(!tt_expr_is_reserved("", 0));
  ck_assert(!tt_expr_is_reserved("ZONES", 5));
  ck_assert(!tt_expr_is_reserved("AAA", 3));
}
END_TEST

START_TEST(test_reserved_rejected) {
  struct tt_av vals = item_of("{\":s\": {\"S\": \"x\"}}");
  struct tt_av names = names_of("{\"#s\": \"status\"}");
  expect_error(TT_EXPR_CONDITION, "status = :s", NULL, &vals,
               "Invalid ConditionExpression: Attribute name is a reserved keyword; reserved "
               "keyword: status");
  expect_error(TT_EXPR_FILTER, "a.Name = :s", NULL, &vals,
               "Invalid FilterExpression: Attribute name is a reserved keyword; reserved "
               "keyword: Name");
  expect_error(TT_EXPR_UPDATE, "SET #s = :s, Size = :s", &names, &vals,
               "Invalid UpdateExpression: Attribute name is a reserved keyword; reserved "
               "keyword: Size");
  expect_error(TT_EXPR_PROJECTION, "a, date", NULL, NULL,
               "Invalid ProjectionExpression: Attribute name is a reserved keyword; reserved "
               "keyword: date");
  /* The placeholder is the documented way around it. */
  struct tt_expr *e = expect_ok(TT_EXPR_CONDITION, "#s = :s", &names, &vals);
  tt_expr_free(e);
  tt_av_free(&vals);
  tt_av_free(&names);
}
END_TEST

START_TEST(test_syntax_errors) {
  struct tt_av vals = item_of("{\":v\": {\"N\": \"1\"}, \":w\": {\"N\": \"2\"}}");
  expect_error(TT_EXPR_CONDITION, "a =", NULL, &vals,
               "Invalid ConditionExpression: Syntax error; token: \"<EOF>\", near: \"=\"");
  expect_error(TT_EXPR_CONDITION, "a = = :v", NULL, &vals,
               "Invalid ConditionExpression: Syntax error; token: \"=\", near: \"= = :v\"");
  expect_error(TT_EXPR_UPDATE, "SET a = a + 1", NULL, &vals,
               "Invalid UpdateExpression: Syntax error; token: \"1\", near: \"+ 1\"");
  expect_error(TT_EXPR_UPDATE, "SET my-attr = :v", NULL, &vals,
               "Invalid UpdateExpression: Syntax error; token: \"-\", near: \"my-attr\"");
  expect_error(TT_EXPR_CONDITION, "a = :v AND", NULL, &vals,
               "Invalid ConditionExpression: Syntax error; token: \"<EOF>\", near: \"AND\"");
  expect_error(TT_EXPR_CONDITION, "a = @", NULL, &vals,
               "Invalid ConditionExpression: Syntax error; token: \"@\", near: \"= @\"");
  expect_error(TT_EXPR_CONDITION, "(a = :v", NULL, &vals,
               "Invalid ConditionExpression: Syntax error; token: \"<EOF>\", near: \":v\"");
  expect_error(TT_EXPR_CONDITION, "a[x] = :v", NULL, &vals,
               "Invalid ConditionExpression: Syntax error; token: \"x\", near: \"[x]\"");
  expect_error(TT_EXPR_UPDATE, "SET a = :v + :w + :v", NULL, &vals,
               "Invalid UpdateExpression: Syntax error; token: \"+\", near: \":w + :v\"");
  expect_error(TT_EXPR_UPDATE, "PUT a = :v", NULL, &vals,
               "Invalid UpdateExpression: Syntax error; token: \"PUT\", near: \"PUT a\"");
  expect_error(TT_EXPR_CONDITION, "", NULL, &vals,
               "Invalid ConditionExpression: The expression can not be empty;");
  expect_error(TT_EXPR_UPDATE, "   ", NULL, &vals,
               "Invalid UpdateExpression: The expression can not be empty;");
  char big[TT_EXPR_MAX_TEXT + 20];
  memset(big, ' ', sizeof(big));
  memcpy(big, "a = :v", 6);
  big[sizeof(big) - 1] = '\0';
  expect_error(TT_EXPR_CONDITION, big, NULL, &vals,
               "Invalid ConditionExpression: Expression size has exceeded the maximum allowed "
               "size; expression size: 4115");
  tt_av_free(&vals);
}
END_TEST

START_TEST(test_placeholders) {
  struct tt_av vals = item_of("{\":v\": {\"N\": \"1\"}, \":unused\": {\"N\": \"2\"}}");
  struct tt_av names = names_of("{\"#a\": \"a\", \"#b\": \"b\"}");
  struct tt_error err;
  expect_error(TT_EXPR_CONDITION, "a = :x", NULL, &vals,
               "Invalid ConditionExpression: An expression attribute value used in expression "
               "is not defined; attribute value: :x");
  expect_error(TT_EXPR_UPDATE, "SET #zz = :v", &names, &vals,
               "Invalid UpdateExpression: An expression attribute name used in the document "
               "path is not defined; attribute name: #zz");
  expect_error(TT_EXPR_CONDITION, "a = :v", NULL, NULL,
               "Invalid ConditionExpression: An expression attribute value used in expression "
               "is not defined; attribute value: :v");

  /* Unused entries are reported across all expressions of the request. */
  struct tt_expr *c = expect_ok(TT_EXPR_CONDITION, "#a = :v", &names, &vals);
  struct tt_expr *u = expect_ok(TT_EXPR_UPDATE, "REMOVE #b", &names, &vals);
  const struct tt_expr *both[] = {c, u, NULL};
  ck_assert_int_eq(tt_expr_check_unused(both, 3, &names, &vals, &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
  ck_assert_str_eq(err.message,
                   "Value provided in ExpressionAttributeValues unused in expressions: keys: "
                   "{:unused}");
  const struct tt_expr *only_c[] = {c};
  ck_assert_int_eq(tt_expr_check_unused(only_c, 1, &names, NULL, &err), -1);
  ck_assert_str_eq(err.message,
                   "Value provided in ExpressionAttributeNames unused in expressions: keys: {#b}");
  tt_expr_free(c);
  tt_expr_free(u);

  struct tt_expr *all = expect_ok(TT_EXPR_CONDITION, "#a = :v OR #b = :unused", &names, &vals);
  const struct tt_expr *one[] = {all};
  ck_assert_int_eq(tt_expr_check_unused(one, 1, &names, &vals, &err), 0);
  tt_expr_free(all);

  /* Map-level rules. */
  struct tt_av bad_names = names_of("{\"x\": \"a\"}");
  struct tt_av bad_vals = item_of("{\"v\": {\"N\": \"1\"}}");
  struct tt_av empty;
  tt_av_map(&empty, 0);
  ck_assert_int_eq(tt_expr_check_maps(&bad_names, NULL, &err), -1);
  ck_assert_str_eq(err.message, "ExpressionAttributeNames contains invalid key: Syntax error; key: \"x\"");
  ck_assert_int_eq(tt_expr_check_maps(NULL, &bad_vals, &err), -1);
  ck_assert_str_eq(err.message, "ExpressionAttributeValues contains invalid key: Syntax error; key: \"v\"");
  ck_assert_int_eq(tt_expr_check_maps(NULL, &empty, &err), -1);
  ck_assert_str_eq(err.message, "ExpressionAttributeValues must not be empty");
  ck_assert_int_eq(tt_expr_check_maps(&empty, NULL, &err), -1);
  ck_assert_str_eq(err.message, "ExpressionAttributeNames must not be empty");
  ck_assert_int_eq(tt_expr_check_maps(&names, &vals, &err), 0);
  tt_av_free(&bad_names);
  tt_av_free(&bad_vals);
  tt_av_free(&empty);
  tt_av_free(&vals);
  tt_av_free(&names);
}
END_TEST

START_TEST(test_function_errors) {
  struct tt_av vals = item_of("{\":v\": {\"N\": \"1\"}, \":s\": {\"S\": \"x\"}, "
                              "\":t\": {\"S\": \"STRING\"}, \":b\": {\"BOOL\": true}, "
                              "\":ss\": {\"SS\": [\"a\"]}, \":lo\": {\"N\": \"9\"}}");
  expect_error(TT_EXPR_CONDITION, "foo(a)", NULL, &vals,
               "Invalid ConditionExpression: Invalid function name; function: foo");
  expect_error(TT_EXPR_CONDITION, "SIZE(a) > :v", NULL, &vals,
               "Invalid ConditionExpression: Invalid function name; function: SIZE");
  expect_error(TT_EXPR_CONDITION, "size(a)", NULL, &vals,
               "Invalid ConditionExpression: The function is not allowed to be used this way in "
               "an expression; function: size");
  expect_error(TT_EXPR_CONDITION, "attribute_exists(a) = :v", NULL, &vals,
               "Invalid ConditionExpression: The function is not allowed to be used this way in "
               "an expression; function: attribute_exists");
  expect_error(TT_EXPR_CONDITION, "a = attribute_exists(b)", NULL, &vals,
               "Invalid ConditionExpression: The function is not allowed to be used this way in "
               "an expression; function: attribute_exists");
  expect_error(TT_EXPR_CONDITION, "begins_with(a)", NULL, &vals,
               "Invalid ConditionExpression: Incorrect number of operands for operator or "
               "function; operator or function: begins_with, number of operands: 1");
  expect_error(TT_EXPR_CONDITION, "attribute_exists(:v)", NULL, &vals,
               "Invalid ConditionExpression: Operator or function requires a document path; "
               "operator or function: attribute_exists");
  expect_error(TT_EXPR_CONDITION, "attribute_type(a, :t)", NULL, &vals,
               "Invalid ConditionExpression: Invalid attribute type name found; type: :t, valid "
               "types: { B; NULL; SS; BOOL; L; BS; N; NS; S; M }");
  expect_error(TT_EXPR_CONDITION, "begins_with(a, :v)", NULL, &vals,
               "Invalid ConditionExpression: Incorrect operand type for operator or function; "
               "operator or function: begins_with, operand type: N");
  expect_error(TT_EXPR_FILTER, "a < :b", NULL, &vals,
               "Invalid FilterExpression: Incorrect operand type for operator or function; "
               "operator or function: <, operand type: BOOL");
  expect_error(TT_EXPR_CONDITION, "a = a", NULL, &vals,
               "Invalid ConditionExpression: The first operand must be distinct from the "
               "remaining operands for this operator or function; operator: =, first operand: "
               "[a]");
  expect_error(TT_EXPR_CONDITION, "a BETWEEN :lo AND :v", NULL, &vals,
               "Invalid ConditionExpression: The BETWEEN operator requires upper bound to be "
               "greater than or equal to lower bound; lower bound operand: :lo, upper bound "
               "operand: :v");
  expect_error(TT_EXPR_CONDITION, "list_append(a, :v) = :v", NULL, &vals,
               "Invalid ConditionExpression: The function is not allowed in a condition "
               "expression; function: list_append");
  expect_error(TT_EXPR_UPDATE, "SET a = size(b)", NULL, &vals,
               "Invalid UpdateExpression: The function is not allowed in an update expression; "
               "function: size");
  expect_error(TT_EXPR_UPDATE, "SET a = if_not_exists(:v, :v)", NULL, &vals,
               "Invalid UpdateExpression: Operator or function requires a document path; "
               "operator or function: if_not_exists");
  expect_error(TT_EXPR_UPDATE, "SET a = list_append(a, :s)", NULL, &vals,
               "Invalid UpdateExpression: Incorrect operand type for operator or function; "
               "operator or function: list_append, operand type: S");
  expect_error(TT_EXPR_UPDATE, "SET a = a + :s", NULL, &vals,
               "Invalid UpdateExpression: Incorrect operand type for operator or function; "
               "operator or function: +, operand type: S");

  /* IN takes at most 100 operands. */
  struct tt_buf text;
  tt_buf_init(&text, 0);
  tt_buf_puts(&text, "a IN (");
  for (int i = 0; i < 101; i++)
    tt_buf_puts(&text, i ? ", :v" : ":v");
  tt_buf_puts(&text, ")");
  expect_error(TT_EXPR_CONDITION, text.data, NULL, &vals,
               "Invalid ConditionExpression: The IN operator is provided with too many operands; "
               "number of operands: 101");
  text.data[text.len - 5] = ')';
  text.data[text.len - 4] = '\0';
  struct tt_expr *e = expect_ok(TT_EXPR_CONDITION, text.data, NULL, &vals);
  tt_expr_free(e);
  tt_buf_free(&text);
  tt_av_free(&vals);
}
END_TEST

START_TEST(test_update_rules) {
  struct tt_av vals = item_of("{\":v\": {\"N\": \"1\"}, \":s\": {\"S\": \"x\"}, "
                              "\":ss\": {\"SS\": [\"a\"]}, \":m\": {\"M\": {}}}");
  expect_error(TT_EXPR_UPDATE, "SET a = :v, a.b = :v", NULL, &vals,
               "Invalid UpdateExpression: Two document paths overlap with each other; must "
               "remove or rewrite one of these paths; path one: [a], path two: [a, b]");
  expect_error(TT_EXPR_UPDATE, "SET a[0] = :v REMOVE a.b", NULL, &vals,
               "Invalid UpdateExpression: Two document paths conflict with each other; must "
               "remove or rewrite one of these paths; path one: [a, [0]], path two: [a, b]");
  expect_error(TT_EXPR_UPDATE, "SET a = :v REMOVE a", NULL, &vals,
               "Invalid UpdateExpression: Two document paths overlap with each other; must "
               "remove or rewrite one of these paths; path one: [a], path two: [a]");
  expect_error(TT_EXPR_UPDATE, "SET a = :v SET b = :v", NULL, &vals,
               "Invalid UpdateExpression: The \"SET\" section can only be used once in an update "
               "expression;");
  expect_error(TT_EXPR_UPDATE, "remove a ADD b :v remove c", NULL, &vals,
               "Invalid UpdateExpression: The \"REMOVE\" section can only be used once in an "
               "update expression;");
  expect_error(TT_EXPR_UPDATE, "ADD a :s", NULL, &vals,
               "Invalid UpdateExpression: Incorrect operand type for operator or function; "
               "operator: ADD, operand type: STRING, typeSet: ALLOWED_FOR_ADD_OPERAND");
  expect_error(TT_EXPR_UPDATE, "DELETE a :v", NULL, &vals,
               "Invalid UpdateExpression: Incorrect operand type for operator or function; "
               "operator: DELETE, operand type: NUMBER, typeSet: ALLOWED_FOR_DELETE_OPERAND");
  expect_error(TT_EXPR_UPDATE, "ADD a b", NULL, &vals,
               "Invalid UpdateExpression: Syntax error; token: \"b\", near: \"a b\"");
  struct tt_expr *e = expect_ok(TT_EXPR_UPDATE,
                                "set a = :v, b[1].c = :s remove d, e[2] add f :v delete g :ss",
                                NULL, &vals);
  ck_assert_str_eq(tt_expr_update_target(e, 0), "a");
  ck_assert_str_eq(tt_expr_update_target(e, 1), "b");
  ck_assert_str_eq(tt_expr_update_target(e, 4), "f");
  ck_assert_str_eq(tt_expr_update_target(e, 5), "g");
  ck_assert_ptr_null(tt_expr_update_target(e, 6));
  tt_expr_free(e);
  tt_av_free(&vals);
}
END_TEST

START_TEST(test_key_condition_rules) {
  struct tt_av vals = item_of("{\":p\": {\"S\": \"x\"}, \":s\": {\"S\": \"y\"}, "
                              "\":n\": {\"N\": \"3\"}}");
  struct tt_error err;
  /* What is wrong in a parsed key condition comes without the prefix. */
  expect_error(TT_EXPR_KEY_CONDITION, "pk = :p OR sk = :s", NULL, &vals,
               "Invalid operator used in KeyConditionExpression: OR");
  expect_error(TT_EXPR_KEY_CONDITION, "pk = :p AND sk <> :s", NULL, &vals,
               "Invalid operator used in KeyConditionExpression: <>");
  expect_error(TT_EXPR_KEY_CONDITION, "pk = :p AND contains(sk, :s)", NULL, &vals,
               "Invalid operator used in KeyConditionExpression: contains");
  expect_error(TT_EXPR_KEY_CONDITION, "pk = :p AND sk = :s AND x = :n", NULL, &vals,
               "Conditions can be of length 1 or 2 only");
  expect_error(TT_EXPR_KEY_CONDITION, "pk = :p AND pk = :s", NULL, &vals,
               "KeyConditionExpressions must only contain one condition per key");
  expect_error(TT_EXPR_KEY_CONDITION, "pk = :p AND size(sk) = :n", NULL, &vals,
               "KeyConditionExpressions cannot contain nested operations");
  expect_error(TT_EXPR_KEY_CONDITION, "pk.x = :p", NULL, &vals,
               "KeyConditionExpressions cannot have conditions on nested attributes");
  expect_error(TT_EXPR_KEY_CONDITION, ":p BETWEEN sk AND :s", NULL, &vals,
               "Invalid condition in KeyConditionExpression: BETWEEN operator must have the key "
               "attribute as its first operand");
  expect_error(TT_EXPR_KEY_CONDITION, ":p = :s", NULL, &vals,
               "Invalid condition in KeyConditionExpression: No key attribute specified");
  expect_error(TT_EXPR_KEY_CONDITION, "pk = sk", NULL, &vals,
               "Invalid condition in KeyConditionExpression: Multiple attribute names used in "
               "one condition");
  /* A syntax error comes first, then reserved words, then undefined
   * placeholders, whatever their order in the text. */
  expect_error(TT_EXPR_CONDITION, "abort = :p AND", NULL, &vals,
               "Invalid ConditionExpression: Syntax error; token: \"<EOF>\", near: \"AND\"");
  expect_error(TT_EXPR_CONDITION, "#a = :p AND abort = :p", NULL, &vals,
               "Invalid ConditionExpression: Attribute name is a reserved keyword; reserved "
               "keyword: abort");
  expect_error(TT_EXPR_CONDITION, ":zz = a AND #a = :p", NULL, &vals,
               "Invalid ConditionExpression: An expression attribute value used in expression "
               "is not defined; attribute value: :zz");
  expect_error(TT_EXPR_CONDITION, "a = :zz AND whatever(a)", NULL, &vals,
               "Invalid ConditionExpression: Invalid function name; function: whatever");
  tt_expr_free(expect_ok(TT_EXPR_UPDATE, "SET a = ((b) + (:n)), c = (:n)", NULL, &vals));
  expect_error(TT_EXPR_CONDITION, "((a = :p))", NULL, &vals,
               "Invalid ConditionExpression: The expression has redundant parentheses;");
  expect_error(TT_EXPR_CONDITION, "a > between", NULL, &vals,
               "Invalid ConditionExpression: Syntax error; token: \"between\", near: \"> between\"");

  struct tt_expr *e = expect_ok(TT_EXPR_KEY_CONDITION, "(pk = :p) AND (begins_with(sk, :s))",
                                NULL, &vals);
  struct tt_expr_key_range r;
  ck_assert_int_eq(tt_expr_key_range(e, "pk", "sk", &r, &err), 0);
  ck_assert_int_eq(r.op, TT_EXPR_KEY_BEGINS_WITH);
  ck_assert_str_eq(r.pk->u.bytes, "x");
  ck_assert_str_eq(r.lo->u.bytes, "y");
  ck_assert_int_eq(tt_expr_key_range(e, "id", "sk", &r, &err), -1);
  ck_assert_str_eq(err.message, "Query condition missed key schema element: id");
  ck_assert_int_eq(tt_expr_key_range(e, "pk", "other", &r, &err), -1);
  ck_assert_str_eq(err.message, "Query condition missed key schema element: other");
  ck_assert_int_eq(tt_expr_key_range(e, "pk", NULL, &r, &err), -1);
  ck_assert_str_eq(err.message, "Query key condition not supported");
  tt_expr_free(e);

  /* A legacy operator no key is queried by (":l_ni" placeholder) is refused
   * when it names a key, and a condition on another attribute misses the
   * key. */
  struct tt_av ni = item_of("{\":p\": {\"S\": \"x\"}, \":l_ni0\": {\"NULL\": true}}");
  e = expect_ok(TT_EXPR_KEY_CONDITION, "pk = :p AND sk = :l_ni0", NULL, &ni);
  ck_assert_int_eq(tt_expr_key_range(e, "pk", "sk", &r, &err), -1);
  ck_assert_str_eq(err.message, "Attempted conditional constraint is not an indexable operation");
  ck_assert_int_eq(tt_expr_key_range(e, "pk", "other", &r, &err), -1);
  ck_assert_str_eq(err.message, "Query condition missed key schema element: other");
  tt_expr_free(e);
  tt_av_free(&ni);

  /* The value may come first; the operator is mirrored. */
  e = expect_ok(TT_EXPR_KEY_CONDITION, ":p = pk and :n > sk", NULL, &vals);
  ck_assert_int_eq(tt_expr_key_range(e, "pk", "sk", &r, &err), 0);
  ck_assert_int_eq(r.op, TT_EXPR_KEY_LT);
  ck_assert_str_eq(r.lo->u.bytes, "3");
  tt_expr_free(e);

  e = expect_ok(TT_EXPR_KEY_CONDITION, "sk BETWEEN :s AND :s AND pk = :p", NULL, &vals);
  ck_assert_int_eq(tt_expr_key_range(e, "pk", "sk", &r, &err), 0);
  ck_assert_int_eq(r.op, TT_EXPR_KEY_BETWEEN);
  ck_assert_ptr_nonnull(r.hi);
  tt_expr_free(e);

  e = expect_ok(TT_EXPR_KEY_CONDITION, "pk > :p", NULL, &vals);
  ck_assert_int_eq(tt_expr_key_range(e, "pk", NULL, &r, &err), -1);
  ck_assert_str_eq(err.message, "Query key condition not supported");
  tt_expr_free(e);
  tt_av_free(&vals);
}
END_TEST

START_TEST(test_projection_rules) {
  struct tt_av names = names_of("{\"#c\": \"Comment\"}");
  expect_error(TT_EXPR_PROJECTION, "a, a.b", NULL, NULL,
               "Invalid ProjectionExpression: Two document paths overlap with each other; must "
               "remove or rewrite one of these paths; path one: [a], path two: [a, b]");
  expect_error(TT_EXPR_PROJECTION, "a, b,", NULL, NULL,
               "Invalid ProjectionExpression: Syntax error; token: \"<EOF>\", near: \",\"");
  expect_error(TT_EXPR_PROJECTION, "a b", NULL, NULL,
               "Invalid ProjectionExpression: Syntax error; token: \"b\", near: \"a b\"");
  struct tt_expr *e = expect_ok(TT_EXPR_PROJECTION,
                                "Description, RelatedItems[0], ProductReviews.FiveStar, #c",
                                &names, NULL);
  ck_assert_int_eq(tt_expr_kind(e), TT_EXPR_PROJECTION);
  tt_expr_free(e);
  tt_av_free(&names);
}
END_TEST

/* DynamoDB reads the whole text and then reports one error by category:
 * a syntax error anywhere first, then (conditions) redundant parentheses,
 * unknown functions, misused functions, reserved words, then the first
 * condition read with an undefined placeholder, a wrong operand count,
 * non-distinct operands or a wrong operand type. */
START_TEST(test_error_precedence) {
  struct tt_av names = names_of("{\"#a\": \"a\", \"#d\": \"[3]\"}");
  struct tt_av vals = item_of("{\":n\": {\"N\": \"1\"}, \":s\": {\"S\": \"x\"}}");
  /* A syntax error found after an error of another category wins. */
  expect_error(TT_EXPR_FILTER, "(size(a)).b > a", NULL, &vals,
               "Invalid FilterExpression: Syntax error; token: \"(\", near: \"size(a\"");
  expect_error(TT_EXPR_FILTER, "size(a) AND b > ", NULL, &vals,
               "Invalid FilterExpression: Syntax error; token: \"<EOF>\", near: \">\"");
  /* Parenthesized operands; doubled ones are redundant. */
  struct tt_expr *e = expect_ok(TT_EXPR_FILTER, "(a) BETWEEN (b.c) AND (:n)", NULL, &vals);
  tt_expr_free(e);
  e = expect_ok(TT_EXPR_FILTER, "(b.c).d > :n AND (size(a)) < :n", NULL, &vals);
  tt_expr_free(e);
  expect_error(TT_EXPR_FILTER, "(a)between(((b.c)).d)and(c)", NULL, &vals,
               "Invalid FilterExpression: The expression has redundant parentheses;");
  expect_error(TT_EXPR_FILTER, "a > whatever((:s), ((a)))", NULL, &vals,
               "Invalid FilterExpression: The expression has redundant parentheses;");
  expect_error(TT_EXPR_FILTER, "a=a and whatever((:s)) > a", NULL, &vals,
               "Invalid FilterExpression: Invalid function name; function: whatever");
  expect_error(TT_EXPR_FILTER, "a=a and attribute_exists((v), (#x)) > b", NULL, &vals,
               "Invalid FilterExpression: The function is not allowed to be used this way in "
               "an expression; function: attribute_exists");
  expect_error(TT_EXPR_FILTER, "attribute_type(a, size(a)) and a=a", NULL, &vals,
               "Invalid FilterExpression: Incorrect operand type for operator or function; "
               "operator or function: attribute_type, operand type: N");
  expect_error(TT_EXPR_FILTER, "attribute_not_exists(size(:s))", NULL, &vals,
               "Invalid FilterExpression: Operator or function requires a document path; "
               "operator or function: attribute_not_exists");
  expect_error(TT_EXPR_FILTER, "size(:n) > a", NULL, &vals,
               "Invalid FilterExpression: Incorrect operand type for operator or function; "
               "operator or function: size, operand type: N");
  expect_error(TT_EXPR_FILTER, "a = a AND #a = b AND :x > a", &names, &vals,
               "Invalid FilterExpression: The first operand must be distinct from the "
               "remaining operands for this operator or function; operator: =, first operand: "
               "[a]");
  expect_error(TT_EXPR_CONDITION, "a BETWEEN :n AND :s", NULL, &vals,
               "Invalid ConditionExpression: The BETWEEN operator requires same data type for "
               "lower and upper bounds; lower bound operand: :n, upper bound operand: :s");
  expect_error(TT_EXPR_FILTER, "contains(a, b, c, d, e, f, g, h, i, j)", NULL, &vals,
               "Invalid FilterExpression: Incorrect number of operands for operator or "
               "function; operator or function: contains, number of operands: 10");
  /* Update expressions: reserved words, unknown functions, sections,
   * undefined names, undefined values, overlaps, conflicts, ADD/DELETE
   * operands, then functions. */
  expect_error(TT_EXPR_UPDATE, "set #c = :c set abOrt = :s", &names, &vals,
               "Invalid UpdateExpression: Attribute name is a reserved keyword; reserved "
               "keyword: abOrt");
  expect_error(TT_EXPR_UPDATE, "set a = #c set c = :d", &names, &vals,
               "Invalid UpdateExpression: The \"SET\" section can only be used once in an "
               "update expression;");
  expect_error(TT_EXPR_UPDATE, "set a=set", NULL, &vals,
               "Invalid UpdateExpression: Syntax error; token: \"set\", near: \"=set\"");
  expect_error(TT_EXPR_UPDATE, "set d[1] = b, d.b = b, a[1].c = b, #a = if_not_exists(b)",
               &names, &vals,
               "Invalid UpdateExpression: Two document paths overlap with each other; must "
               "remove or rewrite one of these paths; path one: [a, [1], c], path two: [a]");
  expect_error(TT_EXPR_UPDATE, "set #a[3].#d = b, #a.#d[3] = if_not_exists(b)", &names, &vals,
               "Invalid UpdateExpression: Two document paths conflict with each other; must "
               "remove or rewrite one of these paths; path one: [a, [3], [3]], path two: [a, "
               "[3], [3]]");
  expect_error(TT_EXPR_UPDATE, "set b = list_append(:s, a) add a.b :s", NULL, &vals,
               "Invalid UpdateExpression: Incorrect operand type for operator or function; "
               "operator: ADD, operand type: STRING, typeSet: ALLOWED_FOR_ADD_OPERAND");
  /* Projections: the first overlap, each path against the ones before it. */
  expect_error(TT_EXPR_PROJECTION, "b[1], b.a, #a.b, a", &names, NULL,
               "Invalid ProjectionExpression: Two document paths overlap with each other; must "
               "remove or rewrite one of these paths; path one: [a, b], path two: [a]");
  tt_av_free(&vals);
  tt_av_free(&names);
}
END_TEST

START_TEST(test_limits) {
  struct tt_av vals = item_of("{\":v\": {\"N\": \"1\"}}");
  char text[4096];
  struct tt_buf deep;
  /* 33 levels of document path */
  tt_buf_init(&deep, 0);
  tt_buf_puts(&deep, "a");
  for (int i = 0; i < 32; i++)
    tt_buf_puts(&deep, ".b");
  tt_buf_puts(&deep, " = :v");
  expect_error(TT_EXPR_CONDITION, deep.data, NULL, &vals,
               "Invalid ConditionExpression: The document path has too many nesting levels; "
               "nesting levels: 33");
  tt_buf_free(&deep);
  /* Deep parentheses stop early instead of recursing on. */
  memset(text, '(', 1000);
  text[1000] = '\0';
  expect_error(TT_EXPR_CONDITION, text, NULL, &vals,
               "Invalid ConditionExpression: The expression is nested too deeply");
  tt_av_free(&vals);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("expr_parse");
  TCase *tc = tcase_create("parse");
  tcase_add_test(tc, test_reserved_table);
  tcase_add_test(tc, test_reserved_rejected);
  tcase_add_test(tc, test_syntax_errors);
  tcase_add_test(tc, test_placeholders);
  tcase_add_test(tc, test_function_errors);
  tcase_add_test(tc, test_update_rules);
  tcase_add_test(tc, test_key_condition_rules);
  tcase_add_test(tc, test_projection_rules);
  tcase_add_test(tc, test_error_precedence);
  tcase_add_test(tc, test_limits);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
