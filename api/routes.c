/* SPDX-License-Identifier: Apache-2.0 */
/* routes.c -- the route table of the HTTP API (docs/api.md). */
#include "api/handlers.h"
#include "ledger/ledger.h"

const struct tt_route tt_api_routes[] = {
    {TT_METHOD_GET, "/healthz", tt_handle_healthz, 0},
    {TT_METHOD_GET, "/readyz", tt_handle_readyz, 0},
    {TT_METHOD_GET, "/metrics", tt_handle_metrics, 0},
    {TT_METHOD_GET, "/openapi.yaml", tt_handle_openapi, 0},
    {TT_METHOD_GET, "/v1/models", tt_handle_models_list, TT_ROUTE_AUTH},
    {TT_METHOD_GET, "/v1/models/{model}", tt_handle_model_get, TT_ROUTE_AUTH},
    {TT_METHOD_PUT, "/v1/models/{model}", tt_handle_model_put, TT_ROUTE_AUTH},
    {TT_METHOD_PUT, "/v1/models/{model}/table", tt_handle_table_put, TT_ROUTE_AUTH},
    {TT_METHOD_GET, "/v1/models/{model}/table", tt_handle_table_get, TT_ROUTE_AUTH},
    {TT_METHOD_DELETE, "/v1/models/{model}/table", tt_handle_table_delete, TT_ROUTE_AUTH},
    {TT_METHOD_POST, "/v1/models/{model}/items", tt_handle_item_create, TT_ROUTE_AUTH},
    {TT_METHOD_PUT, "/v1/models/{model}/items/{key+}", tt_handle_item_put, TT_ROUTE_AUTH},
    {TT_METHOD_GET, "/v1/models/{model}/items/{key+}", tt_handle_item_get, TT_ROUTE_AUTH},
    {TT_METHOD_PATCH, "/v1/models/{model}/items/{key+}", tt_handle_item_patch, TT_ROUTE_AUTH},
    {TT_METHOD_DELETE, "/v1/models/{model}/items/{key+}", tt_handle_item_delete, TT_ROUTE_AUTH},
    {TT_METHOD_POST, "/v1/models/{model}/query", tt_handle_query, TT_ROUTE_AUTH},
    {TT_METHOD_POST, "/v1/models/{model}/scan", tt_handle_scan, TT_ROUTE_AUTH},
/* Features keep their own entries, so parallel work touches different files. */
#include "api/routes_batch.inc"
#include "api/routes_jobs.inc"
#include "api/routes_faults.inc"
#include "api/routes_clock.inc"
    {TT_METHOD_POST, "/v1/_test/sleep", tt_handle_test_sleep, TT_ROUTE_FAULTS | TT_ROUTE_AUTH},
};

const size_t tt_api_nroutes = sizeof(tt_api_routes) / sizeof(tt_api_routes[0]);
