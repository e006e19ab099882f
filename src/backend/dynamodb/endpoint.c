/* SPDX-License-Identifier: Apache-2.0 */
/* endpoint.c -- AWS region names and service endpoint URLs. */
#include "backend/dynamodb/endpoint.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

bool tt_aws_region_ok(const char *r) {
  size_t n = strlen(r);
  if (n == 0 || n >= 48)
    return false;
  for (size_t i = 0; i < n; i++)
    if (!((r[i] >= 'a' && r[i] <= 'z') || (r[i] >= '0' && r[i] <= '9') || r[i] == '-'))
      return false;
  return true;
}

int tt_aws_endpoint_parse(const char *endpoint, const char *service, const char *region,
                          const struct tt_aws_endpoint_msgs *m, char **url, char **host_out,
                          struct tt_error *err) {
  char def[128];
  if (endpoint == NULL || endpoint[0] == '\0') {
    /* China regions live under their own domain. */
    snprintf(def, sizeof(def), "https://%s.%s.amazonaws.com%s", service, region,
             strncmp(region, "cn-", 3) == 0 ? ".cn" : "");
    endpoint = def;
  }
  int rc = -1;
  char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL, *query = NULL, *user = NULL;
  char *h = NULL;
  CURLU *u = curl_url();
  if (u == NULL)
    return tt_error_set(err, TT_ERR_INTERNAL, m->field, "out of memory");
  if (curl_url_set(u, CURLUPART_URL, endpoint, 0) != CURLUE_OK ||
      curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
      curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
    tt_error_set(err, TT_ERR_VALIDATION, m->field, "%s", m->bad_url);
    goto done;
  }
  curl_url_get(u, CURLUPART_PORT, &port, 0);
  curl_url_get(u, CURLUPART_PATH, &path, 0);
  curl_url_get(u, CURLUPART_QUERY, &query, 0);
  curl_url_get(u, CURLUPART_USER, &user, 0);
  bool https = strcmp(scheme, "https") == 0;
  if (!https && strcmp(scheme, "http") != 0) {
    tt_error_set(err, TT_ERR_VALIDATION, m->field, "%s", m->bad_scheme);
    goto done;
  }
  if ((path && strcmp(path, "/") != 0 && path[0] != '\0') || query || user) {
    tt_error_set(err, TT_ERR_VALIDATION, m->field, "%s", m->bad_path);
    goto done;
  }
  bool default_port = port == NULL || strcmp(port, https ? "443" : "80") == 0;
  /* The URL is scheme://<host>/, the Host header its middle. */
  struct tt_buf b;
  tt_buf_init(&b, 0);
  size_t skip = strlen(scheme) + 3;
  if (tt_buf_printf(&b, "%s://%s%s%s/", scheme, host, default_port ? "" : ":",
                    default_port ? "" : port) != 0 ||
      (h = strndup(b.data + skip, b.len - skip - 1)) == NULL) {
    tt_buf_free(&b);
    tt_error_set(err, TT_ERR_INTERNAL, m->field, "out of memory");
    goto done;
  }
  *host_out = h;
  *url = tt_buf_steal(&b, NULL);
  rc = 0;
done:
  curl_free(scheme);
  curl_free(host);
  curl_free(port);
  curl_free(path);
  curl_free(query);
  curl_free(user);
  curl_url_cleanup(u);
  return rc;
}
