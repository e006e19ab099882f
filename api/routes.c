/* SPDX-License-Identifier: Apache-2.0 */
/* routes.c -- the route table of the HTTP API (API.md). */
#include "api/handlers.h"

const struct tt_route tt_api_routes[] = {
    {TT_METHOD_GET, "/healthz", tt_handle_healthz, 0},
    {TT_METHOD_GET, "/readyz", tt_handle_readyz, 0},
    {TT_METHOD_GET, "/metrics", tt_handle_metrics, 0},
    {TT_METHOD_GET, "/openapi.yaml", tt_handle_openapi, 0},
    {TT_METHOD_POST, "/v1/_test/sleep", tt_handle_test_sleep, TT_ROUTE_FAULTS | TT_ROUTE_AUTH},
};

const size_t tt_api_nroutes = sizeof(tt_api_routes) / sizeof(tt_api_routes[0]);
