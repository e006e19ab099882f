/* SPDX-License-Identifier: Apache-2.0 */
/* sts_xml.h -- the few fields tabletheoryd reads from STS's XML answers
 * (AssumeRole, AssumeRoleWithWebIdentity): a minimal, bounded extractor,
 * not an XML parser. */
#ifndef TT_BACKEND_DYNAMODB_STS_XML_H
#define TT_BACKEND_DYNAMODB_STS_XML_H

#include <stddef.h>

#include "backend/dynamodb/credentials.h"

/* Reads Credentials/{AccessKeyId, SecretAccessKey, SessionToken,
 * Expiration} from an STS success body (`body` need not be NUL-terminated;
 * borrowed). Element text may use the five named entities and numeric
 * ASCII references; nested markup, attributes on these elements and
 * non-ASCII references are refused. Returns 0 with *out filled (source
 * copied from `source`), or -1 with *out wiped and *why a static message
 * naming the missing or invalid field, never a value. */
int tt_sts_parse_credentials(const char *body, size_t len, const char *source,
                             struct tt_creds *out, const char **why);

/* The <Code> of an STS error body, restricted to identifier characters
 * (letters, digits, '.', '_'), into out[n] ("" when none). `body` may be
 * NULL. */
void tt_sts_error_code(const char *body, size_t len, char *out, size_t n);

#endif
