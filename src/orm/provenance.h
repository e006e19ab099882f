/* SPDX-License-Identifier: Apache-2.0 */
/* provenance.h -- the deploy-authority check of release-state provenance and
 * confidence (TableTheory's ValidateDeployAuthorityMetadata), run before any
 * I/O on the writes that ask for it. */
#ifndef TT_ORM_PROVENANCE_H
#define TT_ORM_PROVENANCE_H

#include <jansson.h>

#include "util/error.h"

/* Checks the `provenance` and `confidence` members of `item` (a request's
 * item object, borrowed) as TableTheory's release-state helper does before
 * a row is stored as deploy authority. An item with neither passes.
 *   - ValidationError (TableTheory's ErrInvalidModel) for a malformed shape:
 *     only one of the two, a member that is not an object, an unknown key,
 *     a missing or empty string, a time that is not RFC 3339, an unknown
 *     provenance.mode, evidence that is not a list of objects, reasons that
 *     are not a list of strings;
 *   - RejectedDeployAuthorityEvidence for evidence that cannot authorize a
 *     deploy: no evidence, entries that disagree (kind, source, ref or
 *     digest), a source/kind pair outside the vocabulary, a provenance
 *     identity (kind, system, ref, digest) other than the evidence's, a
 *     confidence level other than "high", or reasons other than exactly the
 *     one the evidence implies.
 * `field` (borrowed, may be NULL or "") prefixes the error's field
 * ("items[0].item"). Returns 0, or -1 with *err set. */
int tt_orm_provenance_check(const json_t *item, const char *field, struct tt_error *err);

#endif
