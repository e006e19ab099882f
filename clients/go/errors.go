// SPDX-License-Identifier: Apache-2.0

// Errors of the daemon: one *Error type carrying the envelope, and a sentinel per code.

package tabletheoryd

import (
	"fmt"
	"time"
)

// Error is a non-2xx answer of the daemon (the envelope of docs/errors.md).
// Compare it with errors.Is against the sentinels below (ErrItemNotFound, ...),
// which match on Code, or take it apart with errors.As.
type Error struct {
	Status     int            // HTTP status
	Code       string         // stable error code, e.g. "VersionConflict"
	Message    string         // for people; never holds item values
	Retryable  bool           // the same request may succeed when sent again
	RequestID  string         // X-Request-Id of the failed attempt
	Details    map[string]any // code-specific facts; numbers are json.Number
	RetryAfter time.Duration  // from a Retry-After header (Throttled), else 0
}

func (e *Error) Error() string {
	s := fmt.Sprintf("tabletheoryd: %s (HTTP %d): %s", e.Code, e.Status, e.Message)
	if e.RequestID != "" {
		s += " [request_id " + e.RequestID + "]"
	}
	return s
}

// Is makes errors.Is(err, ErrVersionConflict) true for every error of that code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && t.Status == 0
}

// Field is details.field: the offending member of a ValidationError, if named.
func (e *Error) Field() string {
	s, _ := e.Details["field"].(string)
	return s
}

// Reason is one entry of a TransactionCanceled error's details.reasons.
type Reason struct {
	Index   int
	Code    string // "None", "ConditionalCheckFailed", "VersionConflict", ...
	Message string
	Raw     map[string]any
}

// Reasons returns details.reasons of a TransactionCanceled error, in item order.
func (e *Error) Reasons() []Reason {
	list, _ := e.Details["reasons"].([]any)
	out := make([]Reason, 0, len(list))
	for i, r := range list {
		m, _ := r.(map[string]any)
		rs := Reason{Index: i, Raw: m}
		rs.Code, _ = m["code"].(string)
		rs.Message, _ = m["message"].(string)
		out = append(out, rs)
	}
	return out
}

// sentinels holds every sentinel by its code, so a test can check that each code of
// the daemon's ErrorCode enum (openapi.yaml) has one.
var sentinels = map[string]*Error{}

func sentinel(code string) *Error {
	e := &Error{Code: code}
	sentinels[code] = e
	return e
}

// Sentinels, one per error code of docs/errors.md. Match with errors.Is.
var (
	ErrValidation                      = sentinel("ValidationError")
	ErrInvalidCursor                   = sentinel("InvalidCursor")
	ErrUnauthorized                    = sentinel("Unauthorized")
	ErrForbidden                       = sentinel("Forbidden")
	ErrReservedModel                   = sentinel("ReservedModel") // a job-ledger model or table
	ErrRouteNotFound                   = sentinel("RouteNotFound")
	ErrModelNotFound                   = sentinel("ModelNotFound")
	ErrItemNotFound                    = sentinel("ItemNotFound")
	ErrJobNotFound                     = sentinel("JobNotFound")
	ErrTableNotFound                   = sentinel("TableNotFound")
	ErrMethodNotAllowed                = sentinel("MethodNotAllowed")
	ErrConditionFailed                 = sentinel("ConditionFailed")
	ErrVersionConflict                 = sentinel("VersionConflict")
	ErrTransactionCanceled             = sentinel("TransactionCanceled")
	ErrLeaseHeld                       = sentinel("LeaseHeld")
	ErrLeaseNotOwned                   = sentinel("LeaseNotOwned")
	ErrInvalidTransition               = sentinel("InvalidTransition")
	ErrAlreadyExists                   = sentinel("AlreadyExists")
	ErrImmutableModelMutation          = sentinel("ImmutableModelMutation")          // a write_once model
	ErrProtectedFieldMutation          = sentinel("ProtectedFieldMutation")          // a protected attribute
	ErrUnsafeModelChange               = sentinel("UnsafeModelChange")               // a model replace stored items would not survive
	ErrRejectedDeployAuthorityEvidence = sentinel("RejectedDeployAuthorityEvidence") // provenance cannot authorize a deploy
	ErrPayloadTooLarge                 = sentinel("PayloadTooLarge")
	ErrUnsupportedMediaType            = sentinel("UnsupportedMediaType")
	ErrThrottled                       = sentinel("Throttled")
	ErrBackendUnavailable              = sentinel("BackendUnavailable")
	ErrBatchIncomplete                 = sentinel("BatchIncomplete")
	ErrDraining                        = sentinel("Draining")
	ErrBackendTimeout                  = sentinel("BackendTimeout")
	ErrUnknownPartner                  = sentinel("UnknownPartner") // X-TableTheory-Partner names no configured partner
	ErrInternal                        = sentinel("Internal")
	ErrEncryptedFieldNotQueryable      = sentinel("EncryptedFieldNotQueryable") // an encrypted attribute in a key, condition or filter
	ErrEncryptionNotConfigured         = sentinel("EncryptionNotConfigured")    // no KMS key configured
	ErrInvalidEncryptedEnvelope        = sentinel("InvalidEncryptedEnvelope")   // a stored envelope is malformed
	// ErrUnexpectedResponse: an answer that is not the daemon's envelope
	// (e.g. from a proxy in between).
	ErrUnexpectedResponse = sentinel("UnexpectedResponse")
)
