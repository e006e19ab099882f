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
  /* OpenMetrics (with exemplars: the trace ids of request latencies) when
   * the scraper asks for it, else the Prometheus text format. */
  const char *accept = MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, "Accept");
  bool om = accept && strstr(accept, "application/openmetrics-text") != NULL;
  if ((om ? tt_metrics_render_openmetrics(req->server->fams->registry, &out)
          : tt_metrics_render(req->server->fams->registry, &out)) != 0) {
    tt_buf_free(&out);
    tt_request_fail(req, TT_ERR_INTERNAL, NULL, "metrics exposition exceeded its buffer");
    return;
  }
  tt_request_respond_buf(req, 200, &out);
  req->resp.content_type = om ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                              : "text/plain; version=0.0.4; charset=utf-8";
}

void tt_handle_openapi(struct tt_request *req) {
  tt_request_respond_static(req, 200, "application/yaml", req->server->opts.openapi_text,
                            req->server->opts.openapi_len);
}
