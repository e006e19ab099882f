/* SPDX-License-Identifier: Apache-2.0 */
/* endpoint.h -- AWS region names and service endpoints: the one check of a
 * region name and the one endpoint parser that the dynamodb backend, the
 * AssumeRole provider and the daemon's configuration share. */
#ifndef TT_BACKEND_DYNAMODB_ENDPOINT_H
#define TT_BACKEND_DYNAMODB_ENDPOINT_H

#include <stdbool.h>

#include "util/error.h"

/* Whether `r` looks like a region name: 1 to 47 characters of [a-z0-9-]. */
bool tt_aws_region_ok(const char *r);

/* What a caller calls its endpoint in errors: the field path and the three
 * messages (bad URL, scheme not http(s), a path, query or user part). */
struct tt_aws_endpoint_msgs {
  const char *field;
  const char *bad_url;
  const char *bad_scheme;
  const char *bad_path;
};

/* Splits `endpoint` (NULL or "" = https://<service>.<region>.amazonaws.com,
 * ".cn" appended in China regions) into the URL we post to ("scheme://host/")
 * and the Host header we sign (host, plus the port when one was given and it
 * is not the scheme's). Returns 0 with new strings in *url and *host (the
 * caller frees them), or -1 with *err (nothing allocated). */
int tt_aws_endpoint_parse(const char *endpoint, const char *service, const char *region,
                          const struct tt_aws_endpoint_msgs *m, char **url, char **host,
                          struct tt_error *err);

#endif
