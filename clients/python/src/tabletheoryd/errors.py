# SPDX-License-Identifier: Apache-2.0
"""One exception class per error code of the daemon's envelope (docs/errors.md)."""


class TableTheoryError(Exception):
    """Base of every error this client raises.

    code       -- the daemon's stable error code (branch on it, or on the class)
    message    -- for people; never holds item values
    retryable  -- the same request may succeed when sent again
    request_id -- the X-Request-Id of the failed request (quote it in reports)
    details    -- code-specific facts, e.g. details["field"]
    status     -- the HTTP status (0 for transport errors)
    """

    code = "Unknown"
    default_retryable = False

    def __init__(self, message, *, code=None, retryable=None, request_id=None, details=None,
                 status=0, headers=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.retryable = self.default_retryable if retryable is None else bool(retryable)
        self.request_id = request_id
        self.details = details if details is not None else {}
        self.status = status
        self.headers = headers or {}

    def __str__(self):
        return "%s: %s (request_id=%s)" % (self.code, self.message, self.request_id)


class TransportError(TableTheoryError):
    """The daemon could not be reached, or the connection broke before an answer."""
    code = "TransportError"
    default_retryable = True


class NotFoundError(TableTheoryError):
    """Base of the 404 codes."""


class ConflictError(TableTheoryError):
    """Base of the 409 codes."""


class RetryableError(TableTheoryError):
    """Base of the codes the daemon marks retryable (429, 503, 504)."""
    default_retryable = True


def _make(name, base, doc):
    return type(name, (base,), {"code": name, "__doc__": doc})


ValidationError = _make("ValidationError", TableTheoryError, "400: fix details['field'].")
InvalidCursor = _make("InvalidCursor", TableTheoryError, "400: the cursor does not fit.")
UnknownPartner = _make("UnknownPartner", TableTheoryError,
                       "400: X-TableTheory-Partner names no configured partner.")
Unauthorized = _make("Unauthorized", TableTheoryError, "401: missing or wrong token.")
Forbidden = _make("Forbidden", TableTheoryError, "403: not allowed by configuration.")
ReservedModel = _make("ReservedModel", TableTheoryError,
                      "403: a job-ledger model or table; use the jobs API.")
RouteNotFound = _make("RouteNotFound", NotFoundError, "404: no such endpoint.")
ModelNotFound = _make("ModelNotFound", NotFoundError, "404: no such model.")
ItemNotFound = _make("ItemNotFound", NotFoundError, "404: no item has this key.")
JobNotFound = _make("JobNotFound", NotFoundError, "404: no job has this id.")
TableNotFound = _make("TableNotFound", NotFoundError, "404: the model's table is missing.")
MethodNotAllowed = _make("MethodNotAllowed", TableTheoryError, "405: see headers['allow'].")
ConditionFailed = _make("ConditionFailed", ConflictError, "409: key taken or condition false.")
VersionConflict = _make("VersionConflict", ConflictError, "409: optimistic-lock mismatch.")
LeaseHeld = _make("LeaseHeld", ConflictError, "409: another owner holds the lease.")
LeaseNotOwned = _make("LeaseNotOwned", ConflictError, "409: the lease is not ours (any more).")
InvalidTransition = _make("InvalidTransition", ConflictError, "409: job status move refused.")
AlreadyExists = _make("AlreadyExists", ConflictError, "409: the id is taken.")
ImmutableModelMutation = _make("ImmutableModelMutation", ConflictError,
                               "409: a write_once model's items can only be created.")
ProtectedFieldMutation = _make("ProtectedFieldMutation", ConflictError,
                               "409: the write changes a protected attribute.")
UnsafeModelChange = _make("UnsafeModelChange", ConflictError,
                          "409: a model replace that stored items would not survive; "
                          "details['field'] names it.")
RejectedDeployAuthorityEvidence = _make(
    "RejectedDeployAuthorityEvidence", TableTheoryError,
    "422: the item's provenance/confidence cannot authorize a deploy (deploy_authority check).")
PayloadTooLarge = _make("PayloadTooLarge", TableTheoryError, "413: send less.")
UnsupportedMediaType = _make("UnsupportedMediaType", TableTheoryError, "415: not JSON.")
Throttled = _make("Throttled", RetryableError, "429: backend throttled; see Retry-After.")
BackendUnavailable = _make("BackendUnavailable", RetryableError, "503: backend failed.")
BatchIncomplete = _make("BatchIncomplete", RetryableError,
                        "503: details['unprocessed'] names what was not written.")
Draining = _make("Draining", RetryableError, "503: the daemon is shutting down.")
BackendTimeout = _make("BackendTimeout", RetryableError, "504: the request deadline passed.")
Internal = _make("Internal", TableTheoryError, "500: a daemon bug; report the request_id.")
EncryptedFieldNotQueryable = _make("EncryptedFieldNotQueryable", TableTheoryError,
                                    "400: an encrypted attribute cannot be a key, condition, filter or partial update.")
EncryptionNotConfigured = _make("EncryptionNotConfigured", TableTheoryError,
                                 "501: the daemon has no KMS key for the model's encrypted attributes.")
InvalidEncryptedEnvelope = _make("InvalidEncryptedEnvelope", TableTheoryError,
                                  "500: a stored encrypted value is not a valid envelope.")


class TransactionCanceled(ConflictError):
    """409: nothing was written; reasons[i] says why for item i."""
    code = "TransactionCanceled"

    @property
    def reasons(self):
        return self.details.get("reasons", [])


BY_CODE = {cls.code: cls for cls in (
    ValidationError, InvalidCursor, UnknownPartner, Unauthorized, Forbidden, ReservedModel, RouteNotFound,
    ModelNotFound, ItemNotFound, JobNotFound, TableNotFound, MethodNotAllowed, ConditionFailed,
    VersionConflict, TransactionCanceled, LeaseHeld, LeaseNotOwned, InvalidTransition,
    AlreadyExists, ImmutableModelMutation, ProtectedFieldMutation, UnsafeModelChange,
    RejectedDeployAuthorityEvidence, PayloadTooLarge, UnsupportedMediaType, Throttled,
    BackendUnavailable,
    BatchIncomplete, Draining, BackendTimeout, Internal, EncryptedFieldNotQueryable,
    EncryptionNotConfigured, InvalidEncryptedEnvelope)}


def from_envelope(status, body, headers, request_id):
    """Builds the exception for a non-2xx answer; body is the parsed JSON or None."""
    err = body.get("error") if isinstance(body, dict) else None
    if not isinstance(err, dict):
        code = "Internal" if status >= 500 else "Unknown"
        return BY_CODE.get(code, TableTheoryError)(
            "HTTP %d without an error envelope" % status, code=code, retryable=status in (
                429, 503, 504), request_id=headers.get("x-request-id", request_id),
            status=status, headers=headers)
    code = err.get("code") or "Unknown"
    cls = BY_CODE.get(code, TableTheoryError)
    rid = body.get("request_id") or headers.get("x-request-id") or request_id
    return cls(err.get("message", ""), code=code, retryable=err.get("retryable"),
               request_id=rid, details=err.get("details") or {}, status=status,
               headers=headers)
