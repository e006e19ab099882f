// SPDX-License-Identifier: Apache-2.0

// Maps an error code to its exception class.

package com.theorycloud.tabletheoryd;

final class ErrorFactory {
    private ErrorFactory() {}

    static TableTheoryException of(TableTheoryException.Failure f) {
        return switch (f.code()) {
            case "ValidationError" -> new ValidationException(f);
            case "InvalidCursor" -> new InvalidCursorException(f);
            case "UnknownPartner" -> new UnknownPartnerException(f);
            case "Unauthorized" -> new UnauthorizedException(f);
            case "Forbidden" -> new ForbiddenException(f);
            case "ReservedModel" -> new ReservedModelException(f);
            case "RouteNotFound" -> new RouteNotFoundException(f);
            case "ModelNotFound" -> new ModelNotFoundException(f);
            case "ItemNotFound" -> new ItemNotFoundException(f);
            case "JobNotFound" -> new JobNotFoundException(f);
            case "TableNotFound" -> new TableNotFoundException(f);
            case "MethodNotAllowed" -> new MethodNotAllowedException(f);
            case "ConditionFailed" -> new ConditionFailedException(f);
            case "VersionConflict" -> new VersionConflictException(f);
            case "TransactionCanceled" -> new TransactionCanceledException(f);
            case "LeaseHeld" -> new LeaseHeldException(f);
            case "LeaseNotOwned" -> new LeaseNotOwnedException(f);
            case "InvalidTransition" -> new InvalidTransitionException(f);
            case "AlreadyExists" -> new AlreadyExistsException(f);
            case "ImmutableModelMutation" -> new ImmutableModelMutationException(f);
            case "ProtectedFieldMutation" -> new ProtectedFieldMutationException(f);
            case "UnsafeModelChange" -> new UnsafeModelChangeException(f);
            case "RejectedDeployAuthorityEvidence" -> new RejectedDeployAuthorityEvidenceException(f);
            case "PayloadTooLarge" -> new PayloadTooLargeException(f);
            case "UnsupportedMediaType" -> new UnsupportedMediaTypeException(f);
            case "Throttled" -> new ThrottledException(f);
            case "BackendUnavailable" -> new BackendUnavailableException(f);
            case "BatchIncomplete" -> new BatchIncompleteException(f);
            case "Draining" -> new DrainingException(f);
            case "BackendTimeout" -> new BackendTimeoutException(f);
            case "Internal" -> new InternalException(f);
            case "EncryptedFieldNotQueryable" -> new EncryptedFieldNotQueryableException(f);
            case "EncryptionNotConfigured" -> new EncryptionNotConfiguredException(f);
            case "InvalidEncryptedEnvelope" -> new InvalidEncryptedEnvelopeException(f);
            case "UnexpectedResponse" -> new UnexpectedResponseException(f);
            case "ConnectionError" -> new ConnectionException(f);
            default -> new TableTheoryException(f);
        };
    }
}
