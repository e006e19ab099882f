// SPDX-License-Identifier: Apache-2.0

// The error of code RejectedDeployAuthorityEvidence.

package com.theorycloud.tabletheoryd;

/** 422: the item's provenance/confidence cannot authorize a deploy (deploy_authority check). */
public class RejectedDeployAuthorityEvidenceException extends TableTheoryException {
    private static final long serialVersionUID = 1L;

    public RejectedDeployAuthorityEvidenceException(TableTheoryException.Failure f) {
        super(f);
    }
}
