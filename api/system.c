/* SPDX-License-Identifier: Apache-2.0 */
/* system.c -- handlers of /healthz, /readyz, /metrics and /openapi.yaml. */
#include "api/handlers.h"

#include <string.h>

void tt_handle_healthz(struct tt_request *req) {
  static const char body[] = "{\"status\":\"ok\"}";
  tt_request_respond_static(req, 200, "application/json", body, sizeof(body) - 1);
}

void tt_handle_readyz(struct tt_request *req) {
  static const char body[] = "{\"status\":\"ready\"}";
  if (req->server->draining) {
    tt_request_fail(req, TT_ERR_DRAINING, NULL, "the daemon is shutting down");
    return;
  }
  if (!req->server->ready) {
    tt_request_fail(req, TT_ERR_BACKEND_UNAVAILABLE, NULL, "models are not loaded yet");
    return;
  }
  tt_request_respond_static(req, 200, "application/json", body, sizeof(body) - 1);
}

void tt_handle_metrics(struct tt_request *req) {
  struct tt_buf out;
  tt_buf_init(&out, 16u << 20);
  if (tt_metrics_render(req->server->fams->registry, &out) != 0) {
    tt_buf_free(&out);
    tt_request_fail(req, TT_ERR_INTERNAL, NULL, "metrics exposition exceeded its buffer");
    return;
  }
  size_t len;
  char *text = tt_buf_steal(&out, &len);
  tt_request_respond_json_text(req, 200, text, len);
  req->resp.content_type = "text/plain; version=0.0.4; charset=utf-8";
}

void tt_handle_openapi(struct tt_request *req) {
  tt_request_respond_static(req, 200, "application/yaml", req->server->opts.openapi_text,
                            req->server->opts.openapi_len);
}
