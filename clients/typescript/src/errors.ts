// SPDX-License-Identifier: Apache-2.0
// One error class per error code of the daemon's envelope (docs/errors.md).

export interface ErrorInit {
  code?: string;
  retryable?: boolean;
  requestId?: string;
  details?: Record<string, unknown>;
  status?: number;
  headers?: Record<string, string>;
  cause?: unknown;
}

/** Base of every error this client throws. Branch on `code` or on the class. */
export class TableTheoryError extends Error {
  static readonly code: string = "Unknown";
  static readonly defaultRetryable: boolean = false;
  /** The daemon's stable error code. */
  readonly code: string;
  /** The same request may succeed when sent again. */
  readonly retryable: boolean;
  /** The X-Request-Id of the failed request: quote it in reports. */
  readonly requestId?: string;
  /** Code-specific facts, e.g. details.field. */
  readonly details: Record<string, unknown>;
  /** The HTTP status (0 for transport errors). */
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(message: string, init: ErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    const ctor = new.target as typeof TableTheoryError;
    this.name = ctor.code === "Unknown" ? "TableTheoryError" : ctor.code;
    this.code = init.code ?? ctor.code;
    this.retryable = init.retryable ?? ctor.defaultRetryable;
    this.requestId = init.requestId;
    this.details = init.details ?? {};
    this.status = init.status ?? 0;
    this.headers = init.headers ?? {};
  }
}

/** The daemon could not be reached, or the connection failed before an answer. */
export class TransportError extends TableTheoryError {
  static override readonly code = "TransportError";
  static override readonly defaultRetryable = true;
}
/** Base of the 404 codes. */
export class NotFoundError extends TableTheoryError {}
/** Base of the 409 codes. */
export class ConflictError extends TableTheoryError {}
/** Base of the codes the daemon marks retryable (429, 503, 504). */
export class RetryableError extends TableTheoryError {
  static override readonly defaultRetryable = true;
}

export class ValidationError extends TableTheoryError { static override readonly code = "ValidationError"; }
export class InvalidCursor extends TableTheoryError { static override readonly code = "InvalidCursor"; }
/** 400: X-TableTheory-Partner names no configured partner. */
export class UnknownPartner extends TableTheoryError { static override readonly code = "UnknownPartner"; }
export class Unauthorized extends TableTheoryError { static override readonly code = "Unauthorized"; }
export class Forbidden extends TableTheoryError { static override readonly code = "Forbidden"; }
/** 403: a job-ledger model or table; use the jobs API. */
export class ReservedModel extends TableTheoryError { static override readonly code = "ReservedModel"; }
export class RouteNotFound extends NotFoundError { static override readonly code = "RouteNotFound"; }
export class ModelNotFound extends NotFoundError { static override readonly code = "ModelNotFound"; }
export class ItemNotFound extends NotFoundError { static override readonly code = "ItemNotFound"; }
export class JobNotFound extends NotFoundError { static override readonly code = "JobNotFound"; }
export class TableNotFound extends NotFoundError { static override readonly code = "TableNotFound"; }
export class MethodNotAllowed extends TableTheoryError { static override readonly code = "MethodNotAllowed"; }
export class ConditionFailed extends ConflictError { static override readonly code = "ConditionFailed"; }
export class VersionConflict extends ConflictError { static override readonly code = "VersionConflict"; }
export class LeaseHeld extends ConflictError { static override readonly code = "LeaseHeld"; }
export class LeaseNotOwned extends ConflictError { static override readonly code = "LeaseNotOwned"; }
export class InvalidTransition extends ConflictError { static override readonly code = "InvalidTransition"; }
export class AlreadyExists extends ConflictError { static override readonly code = "AlreadyExists"; }
/** 409: the model is write_once; its items can only be created. */
export class ImmutableModelMutation extends ConflictError { static override readonly code = "ImmutableModelMutation"; }
/** 409: the write sets, removes or replaces a protected attribute. */
export class ProtectedFieldMutation extends ConflictError { static override readonly code = "ProtectedFieldMutation"; }
/** 409: a model replace that stored items would not survive; details.field names it. */
export class UnsafeModelChange extends ConflictError { static override readonly code = "UnsafeModelChange"; }
/** 422: the item's provenance/confidence cannot authorize a deploy (deploy_authority check). */
export class RejectedDeployAuthorityEvidence extends TableTheoryError { static override readonly code = "RejectedDeployAuthorityEvidence"; }
export class PayloadTooLarge extends TableTheoryError { static override readonly code = "PayloadTooLarge"; }
export class UnsupportedMediaType extends TableTheoryError { static override readonly code = "UnsupportedMediaType"; }
export class Throttled extends RetryableError { static override readonly code = "Throttled"; }
export class BackendUnavailable extends RetryableError { static override readonly code = "BackendUnavailable"; }
export class BatchIncomplete extends RetryableError { static override readonly code = "BatchIncomplete"; }
export class Draining extends RetryableError { static override readonly code = "Draining"; }
export class BackendTimeout extends RetryableError { static override readonly code = "BackendTimeout"; }
export class Internal extends TableTheoryError { static override readonly code = "Internal"; }
/** 400: an encrypted attribute cannot be a key, condition, filter or partial update. */
export class EncryptedFieldNotQueryable extends TableTheoryError { static override readonly code = "EncryptedFieldNotQueryable"; }
/** 501: the daemon has no KMS key for the model's encrypted attributes. */
export class EncryptionNotConfigured extends TableTheoryError { static override readonly code = "EncryptionNotConfigured"; }
/** 500: a stored encrypted value is not a valid envelope. */
export class InvalidEncryptedEnvelope extends TableTheoryError { static override readonly code = "InvalidEncryptedEnvelope"; }

export interface CancellationReason {
  index: number;
  code: string;
  message?: string;
  [k: string]: unknown;
}

/** 409: nothing was written; reasons[i] says why for item i. */
export class TransactionCanceled extends ConflictError {
  static override readonly code = "TransactionCanceled";
  get reasons(): CancellationReason[] {
    return (this.details.reasons as CancellationReason[] | undefined) ?? [];
  }
}

export const errorClasses: Record<string, typeof TableTheoryError> = Object.fromEntries(
  [ValidationError, InvalidCursor, UnknownPartner, Unauthorized, Forbidden, ReservedModel, RouteNotFound,
    ModelNotFound, ItemNotFound, JobNotFound, TableNotFound, MethodNotAllowed, ConditionFailed,
    VersionConflict, TransactionCanceled, LeaseHeld, LeaseNotOwned, InvalidTransition,
    AlreadyExists, ImmutableModelMutation, ProtectedFieldMutation, UnsafeModelChange,
    RejectedDeployAuthorityEvidence, PayloadTooLarge, UnsupportedMediaType, Throttled,
    BackendUnavailable,
    BatchIncomplete, Draining, BackendTimeout, Internal, EncryptedFieldNotQueryable,
    EncryptionNotConfigured, InvalidEncryptedEnvelope].map((c) => [c.code, c]));

/** The error for a non-2xx answer (body: the parsed JSON, or undefined). */
export function fromEnvelope(status: number, body: unknown, headers: Record<string, string>,
  requestId: string): TableTheoryError {
  const env = body as { error?: { code?: string; message?: string; retryable?: boolean;
    details?: Record<string, unknown> }; request_id?: string } | undefined;
  const err = env?.error;
  if (!err || typeof err !== "object") {
    const code = status >= 500 ? "Internal" : "Unknown";
    const Cls = errorClasses[code] ?? TableTheoryError;
    return new Cls(`HTTP ${status} without an error envelope`, {
      code, retryable: [429, 503, 504].includes(status), status, headers,
      requestId: headers["x-request-id"] ?? requestId,
    });
  }
  const code = err.code ?? "Unknown";
  const Cls = errorClasses[code] ?? TableTheoryError;
  return new Cls(err.message ?? "", {
    code, retryable: err.retryable, details: err.details ?? {}, status, headers,
    requestId: env?.request_id ?? headers["x-request-id"] ?? requestId,
  });
}
