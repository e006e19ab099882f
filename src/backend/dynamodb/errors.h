/* SPDX-License-Identifier: Apache-2.0 */
/* errors.h -- DynamoDB responses and transport failures classified once into
 * the backend port's result or struct tt_backend_error. */
#ifndef TT_BACKEND_DYNAMODB_ERRORS_H
#define TT_BACKEND_DYNAMODB_ERRORS_H

#include <jansson.h>

#include "backend/backend.h"
#include "backend/dynamodb/http.h"

/* Turns one HTTP response of DynamoDB's JSON protocol into the port's
 * terms. Borrows `resp`. On a 2xx answer with a JSON object body returns 0
 * and *out (a new reference). Otherwise returns -1 with *e filled (it is
 * cleared first): `type` is the short __type (after the last '#') or, when
 * the body has none, x-amzn-ErrorType or a type derived from the status /
 * transport ("Timeout", "ConnectionReset", "ServiceUnavailable", ...);
 * `message` is DynamoDB's message/Message (never our own copy of a body or
 * key); http_status, request_id (x-amzn-RequestId), retry_after_ms
 * (x-amz-retry-after, milliseconds) are set, retryable/throttling come from
 * tt_backend_error_set (transport failures are always retryable), and
 * `body` keeps the parsed error object when it carries more than
 * __type/message (CancellationReasons, Item). TT_HTTP_CANCELED gives
 * "RequestCanceled". */
int tt_ddb_response_classify(const struct tt_http_response *resp, json_t **out,
                             struct tt_backend_error *e);

/* Whether resp is a 2xx answer that arrived: the typed operations read its
 * body with wire_reader.h instead of tt_ddb_response_classify. */
bool tt_ddb_response_ok(const struct tt_http_response *resp);

/* Fills *e (cleared first) as tt_ddb_response_classify does for a 2xx
 * answer whose body is not a JSON object: InvalidResponse with the status
 * and x-amzn-RequestId. Returns -1. */
int tt_ddb_response_not_object(const struct tt_http_response *resp,
                               struct tt_backend_error *e);

#endif
