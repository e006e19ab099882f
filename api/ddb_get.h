/* SPDX-License-Identifier: Apache-2.0 */
/* ddb_get.h -- the DynamoDB listener's typed GetItem: the request the
 * backend port takes as struct tt_ddb_item_request, read either from a
 * parsed and checked JSON body or, for a plain well-formed GetItem, in one
 * pass straight from the request text (no JSON tree, no walk of the
 * operation's member types and constraints). The one-pass reader takes
 * only requests the generic path (ddb_wire.h's parse and checks, then
 * ddb_items.h) accepts with the same typed request; it declines
 * everything else, which then takes the generic path unchanged, so every
 * refusal is the generic path's. */
#ifndef TT_API_DDB_GET_H
#define TT_API_DDB_GET_H

#include <jansson.h>
#include <stdbool.h>

#include "api/ddb_wire.h"
#include "value/av.h"

/* A GetItem the backend takes typed. */
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

#endif
