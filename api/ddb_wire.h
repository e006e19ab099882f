/* SPDX-License-Identifier: Apache-2.0 */
/* ddb_wire.h -- the DynamoDB listener's request parsing, free of any I/O:
 * X-Amz-Target, the Authorization header's shape (dynalite's and
 * DynamoDB's checks, in their order), the JSON body, the member types and
 * constraints DynamoDB checks before any table is looked up, DynamoDB's
 * full error __types and the x-amz-crc32 checksum. api/ddb_listener.c hosts it. */
#ifndef TT_API_DDB_WIRE_H
#define TT_API_DDB_WIRE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "value/av.h"

/* A refusal decided before any backend call: DynamoDB's full __type,
 * its message ("" for none: the body then has no "message") and status. */
struct tt_ddbw_error {
  const char *type;
  char message[8448];
  unsigned status;
};

/* What a well-formed Authorization header says (SigV4). */
struct tt_ddbw_auth {
  char access_key[128];
  char scope[160];       /* date/region/service/aws4_request */
  char date[9];          /* YYYYMMDD of the scope */
  char region[64];
  char service[32];
  char signed_headers[512];
  char signature[129];
};

/* The request headers and body the parser looks at; all borrowed, each
 * NULL when absent. */
struct tt_ddbw_input {
  const char *method;
  const char *content_type;
  const char *target;        /* X-Amz-Target */
  const char *authorization;
  const char *amz_date;      /* X-Amz-Date */
  const char *date;          /* Date */
  bool query_auth;           /* X-Amz-Algorithm in the query string */
  /* The presigned request's query parameters X-Amz-Algorithm,
   * -Credential, -Signature, -SignedHeaders, -Date ("" when given empty). */
  const char *query[5];
  const char *body;
  size_t body_len;
};

/* A parsed request: the operation, its JSON body (new reference) and the
 * Authorization header's parts. */
struct tt_ddbw_request {
  enum tt_ddb_op op;
  json_t *body;
  bool json_1_0; /* Content-Type application/x-amz-json-1.0 (else application/json) */
  struct tt_ddbw_auth auth;
};

/* Parses a request in dynalite's order: method and Content-Type (404
 * UnknownOperationException, `*not_json` set: the answer is XML), body JSON
 * (SerializationException), X-Amz-Target (UnknownOperationException),
 * Authorization (MissingAuthenticationTokenException,
 * IncompleteSignatureException, InvalidSignatureException), an empty body
 * (SerializationException), a body that is not an object
 * (SerializationException), and for a tag operation DynamoDB's checks of
 * its members and ResourceArn. Returns 0 with *out filled, or -1 with *err. */
int tt_ddbw_parse(const struct tt_ddbw_input *in, struct tt_ddbw_request *out,
                  struct tt_ddbw_error *err, bool *not_json);

/* Whether a Content-Type is application/x-amz-json-1.0 (parameters aside). */
bool tt_ddbw_is_json_1_0(const char *content_type);

/* Whether a Content-Type is application/json (parameters aside). */
bool tt_ddbw_is_json(const char *content_type);

/* tt_ddbw_parse's checks of the Authorization header (or of a presigned
 * request's query parameters) alone, with its messages: 0 with *a filled
 * (for a header), or -1 with *err. */
int tt_ddbw_check_auth(const struct tt_ddbw_input *in, struct tt_ddbw_auth *a,
                       struct tt_ddbw_error *err);

/* Whether an N value's text passes tt_ddbw_check_values (digits,
 * magnitude, 38 significant digits). */
bool tt_ddbw_number_ok(const char *s);

/* The operation named by an X-Amz-Target value ("DynamoDB_20120810.GetItem");
 * -1 when it is not one the listener serves. */
int tt_ddbw_target(const char *target, enum tt_ddb_op *op);

/* DynamoDB's member types of the request (one table per operation, as
 * coral's deserializer has them), checked before any validation:
 * SerializationException with coral's messages ("NUMBER_VALUE cannot be
 * converted to String", ...). Members are checked in the table's order;
 * null members are dropped (null is absent) and Boolean members given as
 * "true"/"false"/"1"/"0"/"yes"/"no" become booleans. Members the table
 * does not list pass unchecked. Returns 0 or -1 with *err. */
int tt_ddbw_check_types(enum tt_ddb_op op, json_t *body, struct tt_ddbw_error *err);

/* DynamoDB's constraints on the members of a type-checked request (the
 * same per-operation table): a missing required member or a TableName of
 * the wrong length first, then up to 10 violations of notNull, length,
 * value bounds, patterns and enum sets in one ValidationException ("2
 * validation errors detected: Value 'x' at 'tableName' failed to satisfy
 * constraint: ..."). Returns 0 or -1 with *err. */
int tt_ddbw_validate(enum tt_ddb_op op, const json_t *body, struct tt_ddbw_error *err);

/* DynamoDB's rules on mixing expression and legacy parameters, and on
 * ExpressionAttributeNames/Values without an expression (the first checks
 * of tt_ddbw_legacy, made before the AttributeValues are). Returns 0 or -1
 * with *err. */
int tt_ddbw_expression_params(enum tt_ddb_op op, json_t *body, struct tt_ddbw_error *err);

/* DynamoDB's checks of the AttributeValues of a request before any table
 * is looked up (items, keys, AttributeUpdates values):
 * exactly one datatype, numbers (digits, magnitude), NULL true, sets not
 * empty nor with duplicates, and an item's size within 400 KB. Returns 0
 * or -1 with *err. */
int tt_ddbw_check_values(enum tt_ddb_op op, const json_t *body, struct tt_ddbw_error *err);

/* Sets *err to the __type `type` and `status` with the formatted message.
 * Returns -1. tt_ddbw_invalid: a ValidationException (400), the refusal of
 * most parameter checks. */
int tt_ddbw_fail(struct tt_ddbw_error *err, const char *type, unsigned status, const char *fmt,
                 ...) __attribute__((format(printf, 4, 5)));
#define tt_ddbw_invalid(err, ...) \
  tt_ddbw_fail((err), "com.amazon.coral.validate#ValidationException", 400, __VA_ARGS__)

/* The same checks of a Query's or Scan's ExclusiveStartKey, made after its
 * conditions are (most messages prefixed "The provided starting key is
 * invalid: "). Returns 0 or -1 with *err. */
int tt_ddbw_check_start_key(enum tt_ddb_op op, const json_t *body, struct tt_ddbw_error *err);
/* Query's and Scan's checks before the table lookup, in DynamoDB's order:
 * legacy conditions (each AttributeValue, argument count and types),
 * AttributesToGet duplicates, the starting key (tt_ddbw_check_start_key),
 * Scan's Segment and TotalSegments, Query's key conditions present, the
 * expression attribute maps. Returns 0 or -1 with *err. */
int tt_ddbw_check_read(enum tt_ddb_op op, const json_t *body, struct tt_ddbw_error *err);

/* DynamoDB's checks of a legacy condition's AttributeValueList `list` for
 * the ComparisonOperator `op`: the number of arguments, one type for all,
 * and the types the operator compares. Returns 0 or -1 with *err. */
int tt_ddbw_condition_args(const char *op, const json_t *list, struct tt_ddbw_error *err);

/* DynamoDB's checks of a CreateTable's or an UpdateTable's parameters
 * taken together, made after the member constraints (tt_ddbw_validate)
 * and before any table is looked up (api/ddb_table_check.c): BillingMode
 * against ProvisionedThroughput and its bounds, KeySchema against
 * AttributeDefinitions, the secondary indexes' keys, projections, names and
 * counts, and the GlobalSecondaryIndexUpdates' actions, in DynamoDB's order
 * and with its messages. Returns 0, or -1 with a ValidationException in
 * *err; 0 for other ops. */
int tt_ddbw_check_table(enum tt_ddb_op op, const json_t *body, struct tt_ddbw_error *err);

/* Every check of a parsed request before legacy parameters are rewritten,
 * in DynamoDB's order: tt_ddbw_check_types, tt_ddbw_validate,
 * tt_ddbw_expression_params, tt_ddbw_check_values, tt_ddbw_check_table_name,
 * tt_ddbw_check_table, tt_ddbw_check_read. Returns 0 or -1 with *err. */
int tt_ddbw_check_request(enum tt_ddb_op op, json_t *body, struct tt_ddbw_error *err);

/* DynamoDB's checks of UpdateTimeToLive's TableName (length 3..255,
 * [a-zA-Z0-9_.-]+), made before the table is looked up, with its messages;
 * the other operations' are their member constraints' (tt_ddbw_validate).
 * Returns 0 or -1. */
int tt_ddbw_check_table_name(enum tt_ddb_op op, const json_t *body, struct tt_ddbw_error *err);

/* Rewrites DynamoDB's legacy parameters of `body` in place as expressions
 * (api/ddb_legacy.c): AttributesToGet as ProjectionExpression, Expected as
 * ConditionExpression, KeyConditions as KeyConditionExpression,
 * QueryFilter/ScanFilter as FilterExpression, AttributeUpdates as
 * UpdateExpression, joined by ConditionalOperator; placeholders #lN and :lN.
 * A request that mixes both forms, or whose legacy parameters break
 * DynamoDB's rules, is refused (ValidationException). Returns 0 or -1 with
 * *err. */
int tt_ddbw_legacy(enum tt_ddb_op op, json_t *body, struct tt_ddbw_error *err);

/* The message DynamoDB gives for a backend's `message` when the request's
 * update came as AttributeUpdates (rewritten by tt_ddbw_legacy): an ADD or
 * DELETE of a value of another type than the attribute's is "Type mismatch
 * for attribute to update" there. Other messages are returned as given. */
const char *tt_ddbw_legacy_message(const char *message);

/* DynamoDB's full __type for a backend's short error type:
 * com.amazon.coral.validate#ValidationException,
 * com.amazon.coral.service#SerializationException, ...,
 * com.amazonaws.dynamodb.v20120810#<type> for the rest. */
const char *tt_ddbw_full_type(const char *short_type, char *buf, size_t n);

/* The error body DynamoDB sends: {"__type": ..., "message": ...} plus the
 * backend's extra members (CancellationReasons, Item). New reference or NULL. */
json_t *tt_ddbw_error_body(const char *full_type, const char *message, const json_t *extra);

/* A GetItem the backend takes typed (api/ddb_get.c): the request the
 * backend port takes as struct tt_ddb_item_request, read either from a
 * parsed and checked JSON body or, for a plain well-formed GetItem, in one
 * pass straight from the request text (no JSON tree, no walk of the
 * operation's member types and constraints). The one-pass reader takes
 * only requests the generic path (the parse and checks above, then
 * ddb_items.h) accepts with the same typed request; it declines
 * everything else, which then takes the generic path unchanged, so every
 * refusal is the generic path's. */
struct tt_ddbw_get {
  char table[256];    /* TableName: 3..255 of [a-zA-Z0-9_.-] once checked */
  struct tt_av key;   /* M; tt_av_free it */
  bool consistent_read;
};

/* The one-pass reader: true when `in` is a POST of JSON (either
 * Content-Type) with X-Amz-Target GetItem, a well-formed Authorization
 * header (*auth filled) and a body of exactly the members TableName (a
 * valid table name), Key (a non-empty map of S or N key values) and
 * optionally ConsistentRead (true or false) and ReturnConsumedCapacity
 * ("NONE"), each once, with strings free of escapes and of invalid UTF-8.
 * *out is then what the generic path would make of the request. False
 * (out zeroed) for anything else. */
bool tt_ddbw_fast_get(const struct tt_ddbw_input *in, struct tt_ddbw_get *out,
                      struct tt_ddbw_auth *auth);

/* CRC32 (IEEE 802.3, as zlib's crc32) of a buffer: x-amz-crc32. */
uint32_t tt_ddbw_crc32(const void *p, size_t n);

#endif
