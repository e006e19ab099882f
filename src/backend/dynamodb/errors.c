/* SPDX-License-Identifier: Apache-2.0 */
/* errors.c -- DynamoDB responses and transport failures classified once into
 * the backend port's result or error. */
#include "backend/dynamodb/errors.h"
#include "value/json_exact.h"

#include <stdio.h>
#include <string.h>

/* x-amz-retry-after is kept up to an hour: the client layer waits it
 * out only when it fits the request's deadline and its backoff cap, and
 * otherwise passes it on as Retry-After. */
#define RETRY_AFTER_MAX_MS 3600000u

static int transport_error(enum tt_http_transport t, struct tt_backend_error *e) {
  /* The error type and message of each transport outcome. */
  static const char *const outcomes[][2] = {
      [TT_HTTP_TIMEOUT] = {"Timeout", "the DynamoDB endpoint did not answer in time"},
      [TT_HTTP_CONNECT] = {"ServiceUnavailable", "could not connect to the DynamoDB endpoint"},
      [TT_HTTP_RESET] = {"ConnectionReset",
                         "the connection to the DynamoDB endpoint was closed before the answer"},
      [TT_HTTP_TLS] = {"TlsError", "the TLS handshake with the DynamoDB endpoint failed "
                                   "(certificate or protocol)"},
      [TT_HTTP_CANCELED] = {"RequestCanceled", "the request was canceled"},
      [TT_HTTP_TOO_LARGE] = {"ResponseTooLarge",
                             "the DynamoDB answer exceeded the response size limit"}};
  static const char *const other[2] = {"TransportError",
                                       "the request to the DynamoDB endpoint failed"};
  const char *const *o = (size_t)t < sizeof(outcomes) / sizeof(outcomes[0]) && outcomes[t][0]
                             ? outcomes[t]
                             : other;
  tt_backend_error_set(e, o[0], 0, "%s", o[1]);
  /* Connection-level failures are transient (AWS standard retry mode);
   * a cancellation or an oversized answer would only repeat. */
  e->retryable = t != TT_HTTP_CANCELED && t != TT_HTTP_TOO_LARGE;
  return -1;
}

/* Copies a header-sourced token keeping only characters that are safe in a
 * log line and an error code: [A-Za-z0-9._:-]. Returns the length. */
static size_t copy_token(char *dst, size_t cap, const char *src, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n && k + 1 < cap; i++) {
    char c = src[i];
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
        c == '_' || c == '-' || c == ':')
      dst[k++] = c;
  }
  if (cap)
    dst[k] = '\0';
  return k;
}

/* The short type: "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException"
 * -> "ResourceNotFoundException"; x-amzn-ErrorType "X:http://..." -> "X". */
static void short_type(char *dst, size_t cap, const char *t, size_t n, char stop) {
  const char *hash = NULL;
  for (size_t i = 0; i < n; i++)
    if (t[i] == '#')
      hash = t + i;
  if (hash) {
    n -= (size_t)(hash + 1 - t);
    t = hash + 1;
  }
  if (stop) {
    const char *s = memchr(t, stop, n);
    if (s)
      n = (size_t)(s - t);
  }
  size_t k = copy_token(dst, cap, t, n);
  /* ':' is only legal in the header's suffix, which was cut above. */
  for (size_t i = 0; i < k; i++)
    if (dst[i] == ':')
      dst[i] = '_';
}

static const char *type_from_status(long status) {
  switch (status) {
  case 500:
    return "InternalServerError";
  case 502:
    return "BadGateway";
  case 503:
    return "ServiceUnavailable";
  case 504:
    return "GatewayTimeout";
  case 413:
    return "RequestEntityTooLarge";
  case 429:
    return "TooManyRequestsException";
  default:
    return "HttpError";
  }
}

static bool carries_data(json_t *obj) {
  const char *k;
  json_t *v;
  json_object_foreach(obj, k, v) {
    (void)v;
    if (strcmp(k, "__type") != 0 && strcmp(k, "message") != 0 && strcmp(k, "Message") != 0)
      return true;
  }
  return false;
}

static uint32_t parse_retry_after(const char *v, size_t n) {
  uint64_t ms = 0;
  size_t i = 0;
  while (i < n && v[i] >= '0' && v[i] <= '9') {
    ms = ms * 10 + (uint64_t)(v[i] - '0');
    if (ms > RETRY_AFTER_MAX_MS)
      return RETRY_AFTER_MAX_MS;
    i++;
  }
  return i == n ? (uint32_t)ms : 0; /* not a plain integer: ignored */
}

static unsigned status_of(const struct tt_http_response *resp) {
  return resp->status > 0 && resp->status < 1000 ? (unsigned)resp->status : 0;
}

bool tt_ddb_response_ok(const struct tt_http_response *resp) {
  unsigned status = status_of(resp);
  return resp->transport == TT_HTTP_OK && status >= 200 && status < 300;
}

int tt_ddb_response_not_object(const struct tt_http_response *resp,
                               struct tt_backend_error *e) {
  unsigned status = status_of(resp);
  size_t n = 0;
  const char *v = tt_http_response_header(resp, "x-amzn-requestid", &n);
  tt_backend_error_set(e, "InvalidResponse", status,
                       "the DynamoDB endpoint answered %u without a JSON object", status);
  if (v != NULL)
    copy_token(e->request_id, sizeof(e->request_id), v, n);
  return -1;
}

int tt_ddb_response_classify(const struct tt_http_response *resp, json_t **out,
                             struct tt_backend_error *e) {
  *out = NULL;
  tt_backend_error_clear(e);
  if (resp->transport != TT_HTTP_OK)
    return transport_error(resp->transport, e);

  size_t n = 0;
  const char *v;
  char request_id[sizeof(e->request_id)] = "";
  if ((v = tt_http_response_header(resp, "x-amzn-requestid", &n)) != NULL)
    copy_token(request_id, sizeof(request_id), v, n);
  uint32_t retry_after = 0;
  if ((v = tt_http_response_header(resp, "x-amz-retry-after", &n)) != NULL)
    retry_after = parse_retry_after(v, n);

  json_t *j = NULL;
  if (resp->body.len > 0) {
    json_error_t jerr;
    /* DynamoDB strings may hold U+0000, which jansson refuses by default. */
    j = json_loadb(resp->body.data, resp->body.len, JSON_ALLOW_NUL, &jerr);
    /* Our readers of DynamoDB JSON take strings beginning with NUL for marked
     * ones (json_exact.h): mark them, when the text can hold one at all. */
    if (j && memmem(resp->body.data, resp->body.len, "\\u0000", 6) != NULL &&
        tt_json_mark_plain_strings(j) != 0) {
      json_decref(j);
      j = NULL;
    }
    if (j && !json_is_object(j)) {
      json_decref(j);
      j = NULL;
    }
  }
  unsigned status = status_of(resp);
  if (status >= 200 && status < 300) {
    if (j == NULL)
      return tt_ddb_response_not_object(resp, e);
    *out = j;
    return 0;
  }

  char type[sizeof(e->type)] = "";
  const char *tv = j ? json_string_value(json_object_get(j, "__type")) : NULL;
  if (tv)
    short_type(type, sizeof(type), tv, strlen(tv), 0);
  if (type[0] == '\0' && (v = tt_http_response_header(resp, "x-amzn-errortype", &n)) != NULL)
    short_type(type, sizeof(type), v, n, ':');
  if (type[0] == '\0')
    snprintf(type, sizeof(type), "%s", type_from_status(resp->status));

  const char *msg = NULL;
  if (j) {
    msg = json_string_value(json_object_get(j, "message"));
    if (msg == NULL)
      msg = json_string_value(json_object_get(j, "Message"));
  }
  if (msg)
    tt_backend_error_set(e, type, status, "%s", msg);
  else
    tt_backend_error_set(e, type, status, "the DynamoDB endpoint answered HTTP %u", status);
  snprintf(e->request_id, sizeof(e->request_id), "%s", request_id);
  e->retry_after_ms = retry_after;
  if (j && carries_data(j))
    e->body = json_incref(j);
  json_decref(j);
  return -1;
}
