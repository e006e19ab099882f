/* SPDX-License-Identifier: Apache-2.0 */
/* test_ddb_wire.c -- the DynamoDB listener's request parser (api/ddb_wire.c)
 * and legacy-parameter rewrite (api/ddb_legacy.c). */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/ddb_wire.h"
#include "tests/unit/ddb_get_oracle.h"
#include "util/buf.h"
#include "value/codec_ddb.h"

#define AUTH                                                                                  \
  "AWS4-HMAC-SHA256 Credential=AKID/20260101/eu-west-3/dynamodb/aws4_request, "               \
  "SignedHeaders=host;x-amz-date, Signature=abcd"

static struct tt_ddbw_input input(const char *target, const char *auth, const char *body) {
  return (struct tt_ddbw_input){.method = "POST",
                                .content_type = "application/x-amz-json-1.0",
                                .target = target,
                                .authorization = auth,
                                .amz_date = "20260101T000000Z",
                                .body = body,
                                .body_len = body ? strlen(body) : 0};
}

/* The message of the type check of `body` for `op`, "" when it passes. */
static const char *type_refusal(enum tt_ddb_op op, const char *body) {
  static struct tt_ddbw_error err;
  json_t *b = json_loads(body, 0, NULL);
  ck_assert_ptr_nonnull(b);
  int rc = tt_ddbw_check_types(op, b, &err);
  json_decref(b);
  if (rc == 0)
    return "";
  ck_assert_str_eq(err.type, "com.amazon.coral.service#SerializationException");
  ck_assert_uint_eq(err.status, 400);
  return err.message;
}

START_TEST(member_types) {
  ck_assert_str_eq(type_refusal(TT_DDB_PUT_ITEM, "{\"TableName\":23}"),
                   "NUMBER_VALUE cannot be converted to String");
  ck_assert_str_eq(type_refusal(TT_DDB_PUT_ITEM, "{\"TableName\":34.56}"),
                   "DECIMAL_VALUE cannot be converted to String");
  ck_assert_str_eq(type_refusal(TT_DDB_PUT_ITEM, "{\"TableName\":true}"),
                   "TRUE_VALUE cannot be converted to String");
  ck_assert_str_eq(type_refusal(TT_DDB_PUT_ITEM, "{\"TableName\":[]}"),
                   "Unrecognized collection type class java.lang.String");
  ck_assert_str_eq(type_refusal(TT_DDB_PUT_ITEM, "{\"TableName\":{}}"),
                   "Start of structure or map found where not expected");
  ck_assert_str_eq(type_refusal(TT_DDB_GET_ITEM, "{\"ConsistentRead\":\"23\"}"),
                   "Unexpected token received from parser");
  ck_assert_str_eq(type_refusal(TT_DDB_GET_ITEM, "{\"ConsistentRead\":\"yes\"}"), "");
  ck_assert_str_eq(type_refusal(TT_DDB_QUERY, "{\"Limit\":\"23\"}"),
                   "STRING_VALUE cannot be converted to Integer");
  ck_assert_str_eq(type_refusal(TT_DDB_PUT_ITEM, "{\"Item\":[]}"),
                   "Unrecognized collection type java.util.Map<java.lang.String, "
                   "com.amazonaws.dynamodb.v20120810.AttributeValue>");
  ck_assert_str_eq(type_refusal(TT_DDB_PUT_ITEM, "{\"Item\":{\"a\":23}}"),
                   "Unexpected value type in payload");
  ck_assert_str_eq(type_refusal(TT_DDB_PUT_ITEM, "{\"Item\":{\"a\":{\"B\":\"23456\"}}}"),
                   "Base64 encoded length is expected a multiple of 4 bytes but found: 5");
  ck_assert_str_eq(type_refusal(TT_DDB_PUT_ITEM, "{\"Item\":{\"a\":{\"B\":\"+/+=\"}}}"),
                   "Invalid last non-pad Base64 character dectected");
  ck_assert_str_eq(type_refusal(TT_DDB_PUT_ITEM, "{\"Item\":{\"a\":{\"L\":[{\"BS\":[\"AQ==\"]}]}}}"),
                   "");
  ck_assert_str_eq(type_refusal(TT_DDB_PUT_ITEM, "{\"Item\":{\"a\":{\"M\":{\"b\":{\"SS\":5}}}}}"),
                   "Unexpected field type");
  ck_assert_str_eq(type_refusal(TT_DDB_CREATE_TABLE, "{\"KeySchema\":[\"a\"]}"),
                   "Unexpected value type in payload");
  ck_assert_str_eq(type_refusal(TT_DDB_CREATE_TABLE, "{\"ProvisionedThroughput\":[]}"),
                   "Unrecognized collection type class "
                   "com.amazonaws.dynamodb.v20120810.ProvisionedThroughput");
  ck_assert_str_eq(type_refusal(TT_DDB_PUT_ITEM, "{\"ExpressionAttributeNames\":[]}"),
                   "Unrecognized collection type java.util.Map<java.lang.String, "
                   "java.lang.String>");
  /* The table's order decides which member is reported. */
  ck_assert_str_eq(type_refusal(TT_DDB_PUT_ITEM, "{\"TableName\":1,\"ReturnConsumedCapacity\":true}"),
                   "TRUE_VALUE cannot be converted to String");
  /* A Boolean given as a string becomes a boolean; nulls are dropped. */
  json_t *b = json_loads("{\"ConsistentRead\":\"TRUE\",\"TableName\":null}", 0, NULL);
  struct tt_ddbw_error err;
  ck_assert_int_eq(tt_ddbw_check_types(TT_DDB_GET_ITEM, b, &err), 0);
  ck_assert(json_is_true(json_object_get(b, "ConsistentRead")));
  ck_assert_ptr_null(json_object_get(b, "TableName"));
  json_decref(b);
}
END_TEST

/* The message of the constraint check of `body` for `op`, "" when it passes. */
static const char *validation(enum tt_ddb_op op, const char *body) {
  static struct tt_ddbw_error err;
  json_t *b = json_loads(body, 0, NULL);
  ck_assert_ptr_nonnull(b);
  int rc = tt_ddbw_validate(op, b, &err);
  json_decref(b);
  if (rc == 0)
    return "";
  ck_assert_str_eq(err.type, "com.amazon.coral.validate#ValidationException");
  return err.message;
}

START_TEST(member_constraints) {
  ck_assert_str_eq(validation(TT_DDB_DESCRIBE_TABLE, "{}"),
                   "The parameter 'TableName' is required but was not present in the request");
  ck_assert_str_eq(validation(TT_DDB_DESCRIBE_TABLE, "{\"TableName\":\"ab\"}"),
                   "TableName must be at least 3 characters long and at most 255 characters long");
  ck_assert_str_eq(validation(TT_DDB_GET_ITEM, "{\"TableName\":\"abc\",\"Key\":{}}"), "");
  ck_assert_str_eq(
      validation(TT_DDB_GET_ITEM, "{\"TableName\":\"a;\",\"ReturnConsumedCapacity\":\"hi\"}"),
      "4 validation errors detected: Value 'hi' at 'returnConsumedCapacity' failed to satisfy "
      "constraint: Member must satisfy enum value set: [INDEXES, TOTAL, NONE]; Value 'a;' at "
      "'tableName' failed to satisfy constraint: Member must satisfy regular expression pattern: "
      "[a-zA-Z0-9_.-]+; Value 'a;' at 'tableName' failed to satisfy constraint: Member must have "
      "length greater than or equal to 3; Value null at 'key' failed to satisfy constraint: "
      "Member must not be null");
  /* Every operation's table parses (a broken one would check nothing). */
  ck_assert_str_ne(validation(TT_DDB_UPDATE_TABLE, "{\"TableName\":\"abc\","
                                                   "\"GlobalSecondaryIndexUpdates\":[{\"Create\":{}}]}"),
                   "");
  ck_assert_str_ne(validation(TT_DDB_CREATE_TABLE, "{\"TableName\":\"abc\"}"), "");
  ck_assert_str_ne(validation(TT_DDB_QUERY, "{\"TableName\":\"abc\",\"Limit\":0}"), "");
  ck_assert_str_ne(validation(TT_DDB_SCAN, "{\"TableName\":\"abc\",\"Limit\":0}"), "");
  ck_assert_str_ne(validation(TT_DDB_UPDATE_ITEM, "{\"TableName\":\"abc\"}"), "");
  ck_assert_str_ne(validation(TT_DDB_DELETE_ITEM, "{\"TableName\":\"abc\"}"), "");
  ck_assert_str_ne(validation(TT_DDB_PUT_ITEM, "{\"TableName\":\"abc\"}"), "");
  ck_assert_str_ne(validation(TT_DDB_BATCH_WRITE_ITEM, "{}"), "");
  ck_assert_str_ne(validation(TT_DDB_DELETE_TABLE, "{}"), "");
  ck_assert_str_ne(validation(TT_DDB_DESCRIBE_TIME_TO_LIVE, "{}"), "");
  /* A member without constraints of its own still has its children's. */
  ck_assert_str_eq(validation(TT_DDB_BATCH_GET_ITEM, "{\"RequestItems\":{\"abc\":{}}}"),
                   "1 validation error detected: Value null at 'requestItems.abc.member.keys' "
                   "failed to satisfy constraint: Member must not be null");
  ck_assert_str_eq(validation(TT_DDB_LIST_TABLES, "{\"Limit\":0}"),
                   "1 validation error detected: Value '0' at 'limit' failed to satisfy "
                   "constraint: Member must have value greater than or equal to 1");
  ck_assert_str_eq(
      validation(TT_DDB_BATCH_WRITE_ITEM, "{\"RequestItems\":{\"ab\":[{}]}}"),
      "1 validation error detected: Value '{\"ab\":[{}]}' at 'requestItems' failed to satisfy "
      "constraint: Map keys must satisfy constraint: [Member must have length less than or equal "
      "to 255, Member must have length greater than or equal to 3, Member must satisfy regular "
      "expression pattern: [a-zA-Z0-9_.-]+]");
}
END_TEST

/* The message of the AttributeValue checks of `body` for `op`, "" when
 * they pass. */
static const char *value_refusal(enum tt_ddb_op op, const char *body) {
  static struct tt_ddbw_error err;
  json_t *b = json_loads(body, 0, NULL);
  ck_assert_ptr_nonnull(b);
  int rc = tt_ddbw_check_values(op, b, &err);
  if (rc == 0)
    rc = tt_ddbw_check_start_key(op, b, &err);
  json_decref(b);
  return rc == 0 ? "" : err.message;
}

/* The message of the checks made before the table lookup (values, then
 * Query's and Scan's in DynamoDB's order), "" when they pass. */
static const char *read_refusal(enum tt_ddb_op op, const char *body) {
  static struct tt_ddbw_error err;
  json_t *b = json_loads(body, 0, NULL);
  ck_assert_ptr_nonnull(b);
  int rc = tt_ddbw_check_values(op, b, &err);
  if (rc == 0)
    rc = tt_ddbw_check_read(op, b, &err);
  json_decref(b);
  return rc == 0 ? "" : err.message;
}

START_TEST(checks_before_lookup) {
  /* Expression attribute maps: keys first, then values, named. */
  ck_assert_str_eq(read_refusal(TT_DDB_DELETE_ITEM, "{\"Key\":{},\"ExpressionAttributeValues\":"
                                                    "{\":b\":{\"a\":\"\"},\"b\":{\"S\":\"a\"}}}"),
                   "ExpressionAttributeValues contains invalid key: Syntax error; key: \"b\"");
  ck_assert_str_eq(read_refusal(TT_DDB_GET_ITEM,
                                "{\"Key\":{},\"ExpressionAttributeValues\":{\":b\":{\"NULL\":false}}}"),
                   "ExpressionAttributeValues contains invalid value: One or more parameter values "
                   "were invalid: Null attribute value types must have the value of true for key :b");
  ck_assert_str_eq(read_refusal(TT_DDB_PUT_ITEM, "{\"Item\":{},\"ExpressionAttributeNames\":{},"
                                                 "\"ExpressionAttributeValues\":{}}"),
                   "ExpressionAttributeNames must not be empty");
  /* AttributeUpdates: a value unless DELETE; DELETE of sets only; ADD of
   * numbers, sets and lists. */
  ck_assert_str_eq(read_refusal(TT_DDB_UPDATE_ITEM, "{\"Key\":{},\"AttributeUpdates\":"
                                                    "{\"a\":{\"x\":\"y\"}}}"),
                   "One or more parameter values were invalid: Only DELETE action is allowed when "
                   "no attribute value is specified");
  ck_assert_str_eq(read_refusal(TT_DDB_UPDATE_ITEM, "{\"Key\":{},\"AttributeUpdates\":{\"a\":"
                                                    "{\"Action\":\"DELETE\",\"Value\":{\"S\":\"1\"}}}}"),
                   "One or more parameter values were invalid: DELETE action with value is not "
                   "supported for the type S");
  ck_assert_str_eq(read_refusal(TT_DDB_UPDATE_ITEM, "{\"Key\":{},\"AttributeUpdates\":{\"a\":"
                                                    "{\"Action\":\"ADD\",\"Value\":{\"B\":\"Yg==\"}}}}"),
                   "One or more parameter values were invalid: ADD action is not supported for "
                   "the type B");
  ck_assert_str_eq(read_refusal(TT_DDB_UPDATE_ITEM, "{\"Key\":{},\"AttributeUpdates\":{\"a\":"
                                                    "{\"Action\":\"ADD\",\"Value\":{\"L\":[]}}}}"),
                   "");
  /* Query: QueryFilter's values before AttributesToGet, before the
   * starting key, before the key conditions. */
  ck_assert_str_eq(read_refusal(TT_DDB_QUERY,
                                "{\"ExclusiveStartKey\":{\"a\":{}},\"AttributesToGet\":[\"a\",\"a\"],"
                                "\"KeyConditions\":{\"a\":{\"ComparisonOperator\":\"EQ\","
                                "\"AttributeValueList\":[{}]}},\"QueryFilter\":{\"a\":{"
                                "\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"S\":\"a\"},"
                                "{\"S\":\"b\"}]}}}"),
                   "One or more parameter values were invalid: Invalid number of argument(s) for "
                   "the EQ ComparisonOperator");
  ck_assert_str_eq(read_refusal(TT_DDB_QUERY,
                                "{\"ExclusiveStartKey\":{\"a\":{}},\"AttributesToGet\":[\"a\",\"a\"]}"),
                   "One or more parameter values were invalid: Duplicate value in attribute name: a");
  ck_assert_str_eq(read_refusal(TT_DDB_QUERY, "{\"ExclusiveStartKey\":{\"a\":{}}}"),
                   "The provided starting key is invalid: Supplied AttributeValue is empty, must "
                   "contain exactly one of the supported datatypes");
  ck_assert_str_eq(read_refusal(TT_DDB_QUERY, "{\"ExpressionAttributeValues\":{}}"),
                   "Either the KeyConditions or KeyConditionExpression parameter must be "
                   "specified in the request.");
  ck_assert_str_eq(read_refusal(TT_DDB_QUERY, "{\"KeyConditions\":{}}"),
                   "Conditions can be of length 1 or 2 only");
  ck_assert_str_eq(read_refusal(TT_DDB_QUERY,
                                "{\"KeyConditions\":{\"a\":{\"ComparisonOperator\":\"BEGINS_WITH\","
                                "\"AttributeValueList\":[{\"N\":\"1\"}]}}}"),
                   "One or more parameter values were invalid: ComparisonOperator BEGINS_WITH is "
                   "not valid for N AttributeValue type");
  /* Scan: segments before the expression maps. */
  ck_assert_str_eq(read_refusal(TT_DDB_SCAN, "{\"Segment\":1,\"ExpressionAttributeNames\":{}}"),
                   "The TotalSegments parameter is required but was not present in the request "
                   "when Segment parameter is present");
  ck_assert_str_eq(read_refusal(TT_DDB_SCAN, "{\"Segment\":1,\"TotalSegments\":1}"),
                   "The Segment parameter is zero-based and must be less than parameter "
                   "TotalSegments: Segment: 1 is not less than TotalSegments: 1");
  ck_assert_str_eq(read_refusal(TT_DDB_SCAN, "{\"Segment\":0,\"TotalSegments\":2}"), "");
}
END_TEST

START_TEST(attribute_values) {
  ck_assert_str_eq(value_refusal(TT_DDB_GET_ITEM, "{\"Key\":{\"a\":{}}}"),
                   "Supplied AttributeValue is empty, must contain exactly one of the supported "
                   "datatypes");
  ck_assert_str_eq(value_refusal(TT_DDB_GET_ITEM, "{\"Key\":{\"a\":{\"S\":\"x\",\"N\":\"1\"}}}"),
                   "Supplied AttributeValue has more than one datatypes set, must contain exactly "
                   "one of the supported datatypes");
  ck_assert_str_eq(value_refusal(TT_DDB_PUT_ITEM, "{\"Item\":{\"a\":{\"N\":\"1e126\"}}}"),
                   "Number overflow. Attempting to store a number with magnitude larger than "
                   "supported range");
  ck_assert_str_eq(value_refusal(TT_DDB_PUT_ITEM, "{\"Item\":{\"a\":{\"N\":\"1e-131\"}}}"),
                   "Number underflow. Attempting to store a number with magnitude smaller than "
                   "supported range");
  ck_assert_str_eq(value_refusal(TT_DDB_PUT_ITEM, "{\"Item\":{\"a\":{\"N\":\"0.0001e126\"}}}"), "");
  ck_assert_str_eq(value_refusal(TT_DDB_PUT_ITEM, "{\"Item\":{\"a\":{\"N\":\"12x\"}}}"),
                   "The parameter cannot be converted to a numeric value: 12x");
  ck_assert_str_eq(value_refusal(TT_DDB_PUT_ITEM, "{\"Item\":{\"a\":{\"SS\":[\"x\",\"x\"]}}}"),
                   "One or more parameter values were invalid: Input collection [x, x] contains "
                   "duplicates.");
  ck_assert_str_eq(value_refusal(TT_DDB_PUT_ITEM, "{\"Item\":{\"a\":{\"NULL\":false}}}"),
                   "One or more parameter values were invalid: Null attribute value types must "
                   "have the value of true");
  ck_assert_str_eq(value_refusal(TT_DDB_SCAN, "{\"ExclusiveStartKey\":{\"a\":{\"SS\":[]}}}"),
                   "The provided starting key is invalid: One or more parameter values were "
                   "invalid: An string set  may not be empty");
  ck_assert_str_eq(value_refusal(TT_DDB_SCAN, "{\"ExclusiveStartKey\":{\"a\":{\"NS\":[]}}}"),
                   "One or more parameter values were invalid: An number set  may not be empty");
  /* 400 KB: an attribute name counts, its value's UTF-8 bytes too. */
  size_t big = 409600 - 1 - 1;
  char *body = malloc(big + 64);
  ck_assert_ptr_nonnull(body);
  int n = snprintf(body, 64, "{\"Item\":{\"a\":{\"S\":\"x\"},\"b\":{\"S\":\"");
  memset(body + n, 'y', big - 1);
  memcpy(body + n + big - 1, "\"}}}", 5);
  ck_assert_str_eq(value_refusal(TT_DDB_PUT_ITEM, body), "");
  memcpy(body + n + big - 1, "y\"}}}", 6);
  ck_assert_str_eq(value_refusal(TT_DDB_PUT_ITEM, body),
                   "Item size has exceeded the maximum allowed size");
  free(body);
}
END_TEST

/* DynamoDB's refusals of malformed tag operations. */
static const char *tag_refusal(const char *op, const char *body, const char **type) {
  static struct tt_ddbw_error err;
  char target[64];
  snprintf(target, sizeof(target), "DynamoDB_20120810.%s", op);
  struct tt_ddbw_input in = input(target, AUTH, body);
  struct tt_ddbw_request req;
  bool xml;
  ck_assert_int_eq(tt_ddbw_parse(&in, &req, &err, &xml), -1);
  *type = err.type;
  return err.message;
}

START_TEST(tag_operations) {
  const char *type;
  ck_assert_str_eq(tag_refusal("TagResource", "{\"Tags\":5}", &type), "Unexpected field type");
  ck_assert_str_eq(type, "com.amazon.coral.service#SerializationException");
  ck_assert_str_eq(tag_refusal("UntagResource", "{}", &type), "Invalid TableArn");
  ck_assert_str_eq(tag_refusal("ListTagsOfResource", "{\"ResourceArn\":\"abcd\"}", &type),
                   "User: arn:aws:iam::000000000000:user/local is not authorized to perform: "
                   "dynamodb:ListTagsOfResource on resource: abcd");
  ck_assert_str_eq(type, "com.amazon.coral.service#AccessDeniedException");
  ck_assert_str_eq(tag_refusal("TagResource", "{\"ResourceArn\":\"a:b:c:d:e:f/g\"}", &type),
                   "1 validation error detected: Value null at 'tags' failed to satisfy "
                   "constraint: Member must not be null");
  ck_assert_str_eq(
      tag_refusal("TagResource", "{\"ResourceArn\":\"a:b:c:d:e:f/g\",\"Tags\":[]}", &type),
      "Invalid TableArn: Invalid ResourceArn provided as input a:b:c:d:e:f/g");
  ck_assert_str_eq(tag_refusal("TagResource",
                               "{\"ResourceArn\":\"arn:aws:dynamodb:us-east-1:1:table/abc\","
                               "\"Tags\":[]}",
                               &type),
                   "Atleast one Tag needs to be provided as Input.");
  /* A well-formed one parses. */
  struct tt_ddbw_error err;
  struct tt_ddbw_input in = input("DynamoDB_20120810.ListTagsOfResource", AUTH,
                                  "{\"ResourceArn\":\"arn:aws:dynamodb:us-east-1:1:table/abc\"}");
  struct tt_ddbw_request req;
  bool xml;
  ck_assert_int_eq(tt_ddbw_parse(&in, &req, &err, &xml), 0);
  ck_assert_int_eq(req.op, TT_DDB_LIST_TAGS_OF_RESOURCE);
  json_decref(req.body);
}
END_TEST

START_TEST(crc32_is_zlibs) {
  ck_assert_uint_eq(tt_ddbw_crc32("123456789", 9), 0xCBF43926u);
  ck_assert_uint_eq(tt_ddbw_crc32("", 0), 0);
  /* Five blocks of eight and a tail of three. */
  ck_assert_uint_eq(tt_ddbw_crc32("The quick brown fox jumps over the lazy dog", 43), 0x414FA339u);
  /* Every length and alignment up to 700 bytes against the bitwise
   * definition (the long ones fold blocks with carry-less multiplication
   * where the CPU has it). */
  static unsigned char data[720];
  uint32_t x = 12345;
  for (size_t i = 0; i < sizeof(data); i++) {
    x = x * 1103515245u + 12345u;
    data[i] = (unsigned char)(x >> 16);
  }
  for (size_t off = 0; off < 16; off += 5)
    for (size_t n = 0; n <= 700; n++) {
      uint32_t c = 0xFFFFFFFFu;
      for (size_t i = 0; i < n; i++) {
        c ^= data[off + i];
        for (int k = 0; k < 8; k++)
          c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      }
      ck_assert_uint_eq(tt_ddbw_crc32(data + off, n), c ^ 0xFFFFFFFFu);
    }
}
END_TEST

START_TEST(a_good_request_parses) {
  struct tt_ddbw_input in = input("DynamoDB_20120810.GetItem", AUTH, "{\"TableName\":\"abc\"}");
  struct tt_ddbw_request req;
  struct tt_ddbw_error err;
  bool xml;
  ck_assert_int_eq(tt_ddbw_parse(&in, &req, &err, &xml), 0);
  ck_assert_int_eq(req.op, TT_DDB_GET_ITEM);
  ck_assert(req.json_1_0);
  ck_assert_str_eq(req.auth.access_key, "AKID");
  ck_assert_str_eq(req.auth.region, "eu-west-3");
  ck_assert_str_eq(req.auth.service, "dynamodb");
  ck_assert_str_eq(req.auth.signed_headers, "host;x-amz-date");
  ck_assert_str_eq(req.auth.signature, "abcd");
  json_decref(req.body);
}
END_TEST

static const char *refusal(struct tt_ddbw_input in, unsigned *status) {
  static struct tt_ddbw_error err;
  struct tt_ddbw_request req;
  bool xml;
  ck_assert_int_eq(tt_ddbw_parse(&in, &req, &err, &xml), -1);
  *status = err.status;
  return err.type;
}

START_TEST(refusals_in_dynalites_order) {
  unsigned st;
  struct tt_ddbw_input in = input("DynamoDB_20120810.Nope", AUTH, "{}");
  ck_assert_str_eq(refusal(in, &st), "com.amazon.coral.service#UnknownOperationException");
  ck_assert_uint_eq(st, 400);
  /* The body is parsed before the target is looked at. */
  in = input("DynamoDB_20120810.Nope", AUTH, "{oops");
  ck_assert_str_eq(refusal(in, &st), "com.amazon.coral.service#SerializationException");
  in = input("DynamoDB_20120810.ListTables", NULL, "{}");
  ck_assert_str_eq(refusal(in, &st),
                   "com.amazon.coral.service#MissingAuthenticationTokenException");
  in = input("DynamoDB_20120810.ListTables", "Bearer x", "{}");
  ck_assert_str_eq(refusal(in, &st),
                   "com.amazon.coral.service#MissingAuthenticationTokenException");
  in = input("DynamoDB_20120810.ListTables", "AWS4-HMAC-SHA256 Signature=x", "{}");
  ck_assert_str_eq(refusal(in, &st), "com.amazon.coral.service#IncompleteSignatureException");
  in = input("DynamoDB_20120810.ListTables",
             "AWS4-HMAC-SHA256 Credential=a/b/c, SignedHeaders=host, Signature=x", "{}");
  ck_assert_str_eq(refusal(in, &st), "com.amazon.coral.service#IncompleteSignatureException");
  in = input("DynamoDB_20120810.ListTables", AUTH, NULL);
  ck_assert_str_eq(refusal(in, &st), "com.amazon.coral.service#SerializationException");
  in = input("DynamoDB_20120810.ListTables", AUTH, "[1]");
  ck_assert_str_eq(refusal(in, &st), "com.amazon.coral.service#SerializationException");
  in = input("DynamoDB_20120810.ListTables", AUTH, "{}");
  in.method = "GET";
  ck_assert_str_eq(refusal(in, &st), "com.amazon.coral.service#UnknownOperationException");
  ck_assert_uint_eq(st, 404);
}
END_TEST

START_TEST(full_types) {
  char buf[160];
  ck_assert_str_eq(tt_ddbw_full_type("ValidationException", buf, sizeof(buf)),
                   "com.amazon.coral.validate#ValidationException");
  ck_assert_str_eq(tt_ddbw_full_type("ConditionalCheckFailedException", buf, sizeof(buf)),
                   "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException");
  ck_assert_str_eq(tt_ddbw_full_type("SerializationException", buf, sizeof(buf)),
                   "com.amazon.coral.service#SerializationException");
  /* Messages that are not UTF-8 never make invalid JSON. */
  json_t *b = tt_ddbw_error_body("x#Y", "bad \xff byte", NULL);
  char *text = json_dumps(b, 0);
  json_t *back = json_loads(text, 0, NULL);
  ck_assert_ptr_nonnull(back);
  json_decref(back);
  free(text);
  json_decref(b);
}
END_TEST

static json_t *rewritten(enum tt_ddb_op op, const char *body, struct tt_ddbw_error *err,
                         int want) {
  json_t *j = json_loads(body, 0, NULL);
  ck_assert_ptr_nonnull(j);
  ck_assert_int_eq(tt_ddbw_legacy(op, j, err), want);
  return j;
}

START_TEST(legacy_becomes_expressions) {
  struct tt_ddbw_error err;
  json_t *j = rewritten(TT_DDB_PUT_ITEM,
                        "{\"Expected\":{\"a\":{\"Exists\":false},"
                        "\"b\":{\"ComparisonOperator\":\"BETWEEN\","
                        "\"AttributeValueList\":[{\"N\":\"1\"},{\"N\":\"2\"}]}},"
                        "\"ConditionalOperator\":\"OR\"}",
                        &err, 0);
  ck_assert_str_eq(json_string_value(json_object_get(j, "ConditionExpression")),
                   "attribute_not_exists(#l0) OR #l1 BETWEEN :l2 AND :l3");
  ck_assert_ptr_null(json_object_get(j, "Expected"));
  ck_assert_ptr_null(json_object_get(j, "ConditionalOperator"));
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j,
                                                                     "ExpressionAttributeNames"),
                                                     "#l1")),
                   "b");
  json_decref(j);
  j = rewritten(TT_DDB_UPDATE_ITEM,
                "{\"AttributeUpdates\":{\"a\":{\"Value\":{\"S\":\"x\"}},"
                "\"b\":{\"Action\":\"DELETE\"},\"c\":{\"Action\":\"ADD\",\"Value\":{\"N\":\"1\"}}}}",
                &err, 0);
  ck_assert_str_eq(json_string_value(json_object_get(j, "UpdateExpression")),
                   "SET #l0 = :l1 REMOVE #l2 ADD #l3 :l4");
  json_decref(j);
  /* A KeyConditions operator no key is queried by becomes an equality
   * with a :l_ni placeholder, refused once the keys are known. */
  j = rewritten(TT_DDB_QUERY, "{\"KeyConditions\":{\"z\":{\"ComparisonOperator\":\"NULL\"}}}",
                &err, 0);
  ck_assert_str_eq(json_string_value(json_object_get(j, "KeyConditionExpression")),
                   "#l1 = :l_ni0");
  json_decref(j);
  /* ADD of a list appends to it, the attribute absent or not. */
  j = rewritten(TT_DDB_UPDATE_ITEM,
                "{\"AttributeUpdates\":{\"f\":{\"Action\":\"ADD\",\"Value\":{\"L\":[{\"N\":\"1\"}]}}}}",
                &err, 0);
  ck_assert_str_eq(json_string_value(json_object_get(j, "UpdateExpression")),
                   "SET #l0 = list_append(if_not_exists(#l1, :l2), :l3)");
  json_decref(j);
  j = rewritten(TT_DDB_GET_ITEM, "{\"AttributesToGet\":[\"a\",\"b\"]}", &err, 0);
  ck_assert_str_eq(json_string_value(json_object_get(j, "ProjectionExpression")), "#l0, #l1");
  json_decref(j);
}
END_TEST

START_TEST(legacy_refusals) {
  struct tt_ddbw_error err;
  json_decref(rewritten(TT_DDB_GET_ITEM,
                        "{\"AttributesToGet\":[\"a\"],\"ProjectionExpression\":\"a\"}", &err, -1));
  ck_assert_str_eq(err.message,
                   "Can not use both expression and non-expression parameters in the same "
                   "request: Non-expression parameters: {AttributesToGet} Expression "
                   "parameters: {ProjectionExpression}");
  json_decref(rewritten(TT_DDB_DELETE_ITEM, "{\"Expected\":{\"a\":{\"Exists\":true}}}", &err, -1));
  ck_assert_str_eq(err.message, "One or more parameter values were invalid: Value must be "
                                "provided when Exists is true for Attribute: a");
  json_decref(rewritten(TT_DDB_SCAN,
                        "{\"ScanFilter\":{\"a\":{\"ComparisonOperator\":\"EQ\"}}}", &err, -1));
  ck_assert_str_eq(err.message, "One or more parameter values were invalid: Invalid number of "
                                "argument(s) for the EQ ComparisonOperator");
  json_decref(rewritten(TT_DDB_GET_ITEM, "{\"ExpressionAttributeNames\":{\"#a\":\"a\"}}", &err,
                        -1));
  ck_assert_str_eq(err.message,
                   "ExpressionAttributeNames can only be specified when using expressions");
  ck_assert_str_eq(err.type, "com.amazon.coral.validate#ValidationException");
}
END_TEST

START_TEST(table_names) {
  struct tt_ddbw_error err;
  static const char two[] =
      "2 validation errors detected: Value 'a;' at 'tableName' failed to satisfy "
      "constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+; "
      "Value 'a;' at 'tableName' failed to satisfy constraint: Member must have "
      "length greater than or equal to 3";
  json_t *j = json_pack("{s:s}", "TableName", "a;");
  /* The table operations check the length first, with a message of their own. */
  ck_assert_int_eq(tt_ddbw_check_request(TT_DDB_DESCRIBE_TABLE, j, &err), -1);
  ck_assert_str_eq(err.message,
                   "TableName must be at least 3 characters long and at most 255 characters long");
  ck_assert_int_eq(tt_ddbw_check_request(TT_DDB_SCAN, j, &err), -1);
  ck_assert_str_eq(err.message, two);
  ck_assert_int_eq(tt_ddbw_check_table_name(TT_DDB_UPDATE_TIME_TO_LIVE, j, &err), -1);
  ck_assert_str_eq(err.message, two);
  json_decref(j);
  j = json_pack("{s:s}", "TableName", "good.name-1");
  ck_assert_int_eq(tt_ddbw_check_request(TT_DDB_SCAN, j, &err), 0);
  ck_assert_int_eq(tt_ddbw_check_table_name(TT_DDB_UPDATE_TIME_TO_LIVE, j, &err), 0);
  json_decref(j);
}
END_TEST

/* The listener's generic path for a GetItem (parse, every check, then the
 * typed request): the Key as written back, or NULL when refused or sent to
 * the backend as JSON. */
static char *generic_get(const struct tt_ddbw_input *in, struct tt_ddbw_get *g) {
  struct tt_ddbw_request req;
  struct tt_ddbw_error err;
  bool xml;
  memset(g, 0, sizeof(*g));
  if (tt_ddbw_parse(in, &req, &err, &xml) != 0)
    return NULL;
  bool ok = tt_ddbw_check_request(req.op, req.body, &err) == 0 &&
            tt_ddbw_legacy(req.op, req.body, &err) == 0 &&
            tt_test_generic_get(req.body, g) == 0;
  json_decref(req.body);
  if (!ok)
    return NULL;
  struct tt_buf b;
  tt_buf_init(&b, 0);
  ck_assert_int_eq(tt_ddb_item_write(&b, &g->key, 0), 0);
  ck_assert_int_eq(tt_buf_append(&b, "", 1), 0);
  return tt_buf_steal(&b, NULL);
}

/* Whether the one-pass reader takes `body`; when it does, the generic path
 * makes the same typed request of it. */
static bool fast_takes(const char *content_type, const char *body) {
  struct tt_ddbw_input in = input("DynamoDB_20120810.GetItem", AUTH, body);
  in.content_type = content_type;
  struct tt_ddbw_get fast, slow;
  struct tt_ddbw_auth auth;
  if (!tt_ddbw_fast_get(&in, &fast, &auth)) {
    ck_assert_int_eq(fast.key.type, 0);
    return false;
  }
  ck_assert_str_eq(auth.access_key, "AKID");
  ck_assert_str_eq(auth.signature, "abcd");
  char *want = generic_get(&in, &slow);
  ck_assert_ptr_nonnull(want);
  struct tt_buf b;
  tt_buf_init(&b, 0);
  ck_assert_int_eq(tt_ddb_item_write(&b, &fast.key, 0), 0);
  ck_assert_int_eq(tt_buf_append(&b, "", 1), 0);
  ck_assert_str_eq(b.data, want);
  ck_assert_str_eq(fast.table, slow.table);
  ck_assert_int_eq(fast.consistent_read, slow.consistent_read);
  tt_buf_free(&b);
  free(want);
  tt_av_free(&fast.key);
  tt_av_free(&slow.key);
  return true;
}

START_TEST(one_pass_get_item) {
  const char *j10 = "application/x-amz-json-1.0";
  ck_assert(fast_takes(j10, "{\"TableName\":\"bench\",\"Key\":{\"PK\":{\"S\":\"ITEM#1\"},"
                            "\"SK\":{\"S\":\"A\"}}}"));
  ck_assert(fast_takes("application/json; charset=utf-8",
                       " {\"Key\" :{ \"id\":{\"N\":\"-012.50E3\"}},\n\"TableName\":\"a.b_c-1\","
                       "\"ConsistentRead\":true,\"ReturnConsumedCapacity\":\"NONE\"}\r\n"));
  ck_assert(fast_takes(j10, "{\"TableName\":\"bench\",\"Key\":{\"k\":{\"S\":\"\xc3\xa9\xe2\x82\xac"
                            "\xf0\x9f\x98\x80\"}},\"ConsistentRead\":false}"));
  ck_assert(fast_takes(j10, "{\"TableName\":\"bench\",\"Key\":{\"k\":{\"S\":\"\"}}}"));
  /* Anything else takes the generic path, whose refusals and messages
   * stay the only ones. */
  static const char *const declined[] = {
      "{\"TableName\":\"bench\"}",
      "{\"TableName\":\"bench\",\"Key\":{}}",
      "{\"TableName\":\"be\",\"Key\":{\"k\":{\"S\":\"x\"}}}",
      "{\"TableName\":\"b;ad\",\"Key\":{\"k\":{\"S\":\"x\"}}}",
      "{\"TableName\":\"bench\",\"TableName\":\"bench\",\"Key\":{\"k\":{\"S\":\"x\"}}}",
      "{\"TableName\":\"bench\",\"Key\":{\"k\":{\"S\":\"x\"},\"k\":{\"S\":\"y\"}}}",
      "{\"TableName\":\"bench\",\"Key\":{\"\":{\"S\":\"x\"}}}",
      "{\"TableName\":\"bench\",\"Key\":{\"k\":{\"S\":\"a\\\"b\"}}}",
      "{\"TableName\":\"bench\",\"Key\":{\"k\":{\"S\":\"\xc0\xaf\"}}}",
      "{\"TableName\":\"bench\",\"Key\":{\"k\":{\"S\":\"\xed\xa0\x80\"}}}",
      "{\"TableName\":\"bench\",\"Key\":{\"k\":{\"N\":\"1e126\"}}}",
      "{\"TableName\":\"bench\",\"Key\":{\"k\":{\"N\":\"12a\"}}}",
      "{\"TableName\":\"bench\",\"Key\":{\"k\":{\"B\":\"AAAA\"}}}",
      "{\"TableName\":\"bench\",\"Key\":{\"k\":{\"S\":\"x\",\"N\":\"1\"}}}",
      "{\"TableName\":\"bench\",\"Key\":{\"k\":{\"S\":\"x\"}},\"ConsistentRead\":\"yes\"}",
      "{\"TableName\":\"bench\",\"Key\":{\"k\":{\"S\":\"x\"}},\"ConsistentRead\":null}",
      "{\"TableName\":\"bench\",\"Key\":{\"k\":{\"S\":\"x\"}},\"ReturnConsumedCapacity\":\"TOTAL\"}",
      "{\"TableName\":\"bench\",\"Key\":{\"k\":{\"S\":\"x\"}},\"ProjectionExpression\":\"k\"}",
      "{\"TableName\":\"bench\",\"Key\":{\"k\":{\"S\":\"x\"}},}",
      "{\"TableName\":\"bench\",\"Key\":{\"k\":{\"S\":\"x\"}}} x",
      "{\"TableName\":\"bench\",\"Key\":{\"k\":{\"S\":\"x\"}}",
  };
  for (size_t i = 0; i < sizeof(declined) / sizeof(declined[0]); i++)
    ck_assert_msg(!fast_takes(j10, declined[i]), "taken: %s", declined[i]);
  ck_assert(!fast_takes("text/plain", "{\"TableName\":\"bench\",\"Key\":{\"k\":{\"S\":\"x\"}}}"));
  /* A malformed Authorization header: the generic path refuses it. */
  struct tt_ddbw_input in = input("DynamoDB_20120810.GetItem", "AWS4-HMAC-SHA256 Credential=x",
                                  "{\"TableName\":\"bench\",\"Key\":{\"k\":{\"S\":\"x\"}}}");
  struct tt_ddbw_get g;
  struct tt_ddbw_auth auth;
  ck_assert(!tt_ddbw_fast_get(&in, &g, &auth));
  in = input("DynamoDB_20120810.Query", AUTH,
             "{\"TableName\":\"bench\",\"Key\":{\"k\":{\"S\":\"x\"}}}");
  ck_assert(!tt_ddbw_fast_get(&in, &g, &auth));
}
END_TEST

int main(void) {
  Suite *s = suite_create("ddb_wire");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, crc32_is_zlibs);
  tcase_add_test(tc, a_good_request_parses);
  tcase_add_test(tc, refusals_in_dynalites_order);
  tcase_add_test(tc, full_types);
  tcase_add_test(tc, legacy_becomes_expressions);
  tcase_add_test(tc, legacy_refusals);
  tcase_add_test(tc, table_names);
  tcase_add_test(tc, member_types);
  tcase_add_test(tc, member_constraints);
  tcase_add_test(tc, attribute_values);
  tcase_add_test(tc, checks_before_lookup);
  tcase_add_test(tc, tag_operations);
  tcase_add_test(tc, one_pass_get_item);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
