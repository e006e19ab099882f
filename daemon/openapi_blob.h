/* SPDX-License-Identifier: Apache-2.0 */
/* openapi_blob.h -- openapi.yaml compiled into the binary (generated .c). */
#ifndef TT_DAEMON_OPENAPI_BLOB_H
#define TT_DAEMON_OPENAPI_BLOB_H

#include <stddef.h>

extern const char tt_openapi_yaml[];
extern const size_t tt_openapi_yaml_len;

#endif
