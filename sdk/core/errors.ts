/**
 * Every error the SDK throws is a RavenError. Responses with a non-2xx status become an APIError
 * subclass chosen by the error code, built in one place: errorFromResponse().
 */
import type { ErrorCode } from '../types.js';

/** Response headers, names lower-cased, repeated values joined with ", ". */
export type ResponseHeaders = Record<string, string>;

/** One broken field rule of a `validation_error`. */
export interface ValidationErrorDetail {
  field: string;
  message: string;
}

export class RavenError extends Error {
  override name = 'RavenError';
}

export class APIError extends RavenError {
  override name = 'APIError';
  /** HTTP status of the response. */
  readonly status: number;
  /** Error code from the body (`invalid_api_key`, `validation_error`, ...); null when the body had none. */
  readonly code: string | null;
  /** The `Request-Id` response header: quote it when asking for help. */
  readonly requestId: string | null;
  readonly headers: ResponseHeaders;
  /** The parsed response body (or its text when it was not JSON). */
  readonly body: unknown;

  constructor(status: number, code: string | null, message: string, headers: ResponseHeaders, body: unknown) {
    super(message);
    this.status = status;
    this.code = code;
    this.headers = headers;
    this.requestId = headers['request-id'] ?? null;
    this.body = body;
  }
}

/** 400 `invalid_request`: the body is not a JSON object, a header is repeated, ... */
export class InvalidRequestError extends APIError {
  override name = 'InvalidRequestError';
}
/** 401 `invalid_api_key` (or `unauthorized` from the admin API). */
export class AuthenticationError extends APIError {
  override name = 'AuthenticationError';
}
/** 403 `forbidden`: the key lacks the permission. */
export class PermissionError extends APIError {
  override name = 'PermissionError';
}
/** 403 `production_not_enabled`: a `rr_live_` key in a workspace not activated. */
export class ProductionNotEnabledError extends PermissionError {
  override name = 'ProductionNotEnabledError';
}
/** 404 `not_found`. */
export class NotFoundError extends APIError {
  override name = 'NotFoundError';
}
/** 405 `method_not_allowed`. */
export class MethodNotAllowedError extends APIError {
  override name = 'MethodNotAllowedError';
}
/** 409 `idempotency_conflict`: the Idempotency-Key was used before with a different body. */
export class IdempotencyConflictError extends APIError {
  override name = 'IdempotencyConflictError';
}
/** 409 `conflict` (admin API): the resource is not in a state that allows the action; the message says why. */
export class ConflictError extends APIError {
  override name = 'ConflictError';
}
/** 413 `message_too_large`: the JSON request is over 10 MiB. */
export class MessageTooLargeError extends APIError {
  override name = 'MessageTooLargeError';
}
/** 408 `wait_timeout`: no captured message matched a wait (`admin.messages.wait`) in time; never retried. */
export class WaitTimeoutError extends APIError {
  override name = 'WaitTimeoutError';
}
/** 422 `validation_error`, with one entry per broken field rule. */
export class ValidationError extends APIError {
  override name = 'ValidationError';
  readonly details: ValidationErrorDetail[];
  constructor(status: number, code: string | null, message: string, headers: ResponseHeaders, body: unknown) {
    super(status, code, message, headers, body);
    this.details = readDetails(body);
  }
}
/** 422 `domain_not_verified`: the sender domain is not verified in the key's project. */
export class DomainNotVerifiedError extends APIError {
  override name = 'DomainNotVerifiedError';
}
/** 422 `test_recipient_not_allowed`: a development key may only send to the project's verified domains. */
export class TestRecipientNotAllowedError extends APIError {
  override name = 'TestRecipientNotAllowedError';
}

abstract class RetryAfterError extends APIError {
  /** Seconds to wait, from the `Retry-After` header or the body's `retry_after`; null when neither was given. */
  readonly retryAfter: number | null;
  constructor(status: number, code: string | null, message: string, headers: ResponseHeaders, body: unknown) {
    super(status, code, message, headers, body);
    this.retryAfter = retryAfterSeconds(headers, body);
  }
}
/** 429 `rate_limit_exceeded`: retried automatically; wait `retryAfter` seconds. */
export class RateLimitError extends RetryAfterError {
  override name = 'RateLimitError';
}
/** 429 `quota_exceeded`: the monthly allowance is used up; never retried. `retryAfter` counts to the month change. */
export class QuotaExceededError extends RetryAfterError {
  override name = 'QuotaExceededError';
}
/** 500 `internal_error`, and any other 5xx but 503. */
export class InternalServerError extends APIError {
  override name = 'InternalServerError';
}
/** 503 `service_unavailable`. */
export class ServiceUnavailableError extends APIError {
  override name = 'ServiceUnavailableError';
}

/** The request did not get a response: refused connection, reset socket, DNS failure... */
export class ConnectionError extends RavenError {
  override name = 'ConnectionError';
  constructor(message = 'connection error', options?: { cause?: unknown }) {
    super(message, options);
  }
}
/** An attempt took longer than `timeout`. */
export class TimeoutError extends ConnectionError {
  override name = 'TimeoutError';
  constructor(message = 'request timed out', options?: { cause?: unknown }) {
    super(message, options);
  }
}
/** The caller's AbortSignal fired. `cause` is the signal's reason. Never retried. */
export class AbortError extends RavenError {
  override name = 'AbortError';
  constructor(message = 'request aborted', options?: { cause?: unknown }) {
    super(message, options);
  }
}

type APIErrorClass = new (
  status: number,
  code: string | null,
  message: string,
  headers: ResponseHeaders,
  body: unknown,
) => APIError;

/**
 * The catalogue: one class per error code (CONTRACT section 1 and the specification's section 7),
 * keyed by openapi.yaml's ErrorCode enum so a code added or removed there fails the typecheck.
 */
const BY_CODE: Record<ErrorCode, APIErrorClass> = {
  invalid_request: InvalidRequestError,
  invalid_api_key: AuthenticationError,
  unauthorized: AuthenticationError,
  forbidden: PermissionError,
  production_not_enabled: ProductionNotEnabledError,
  not_found: NotFoundError,
  method_not_allowed: MethodNotAllowedError,
  idempotency_conflict: IdempotencyConflictError,
  conflict: ConflictError,
  message_too_large: MessageTooLargeError,
  wait_timeout: WaitTimeoutError,
  validation_error: ValidationError,
  domain_not_verified: DomainNotVerifiedError,
  test_recipient_not_allowed: TestRecipientNotAllowedError,
  rate_limit_exceeded: RateLimitError,
  quota_exceeded: QuotaExceededError,
  internal_error: InternalServerError,
  service_unavailable: ServiceUnavailableError,
};

/** For codes this SDK does not know (a newer server, a proxy in between): pick by status. */
function classForStatus(status: number): APIErrorClass {
  switch (status) {
    case 400:
      return InvalidRequestError;
    case 401:
      return AuthenticationError;
    case 403:
      return PermissionError;
    case 404:
      return NotFoundError;
    case 405:
      return MethodNotAllowedError;
    case 413:
      return MessageTooLargeError;
    case 429:
      return RateLimitError;
    case 503:
      return ServiceUnavailableError;
    default:
      return status >= 500 ? InternalServerError : APIError;
  }
}

/** The one factory: a non-2xx response becomes the matching APIError subclass. */
export function errorFromResponse(status: number, body: unknown, headers: ResponseHeaders): APIError {
  const error = errorObject(body);
  const code = typeof error?.code === 'string' ? error.code : null;
  const message =
    typeof error?.message === 'string' && error.message !== '' ? error.message : `HTTP ${status} with no error message`;
  const Class = (code !== null && Object.hasOwn(BY_CODE, code) ? BY_CODE[code as ErrorCode] : undefined) ?? classForStatus(status);
  return new Class(status, code, message, headers, body);
}

function errorObject(body: unknown): Record<string, unknown> | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const error = (body as { error?: unknown }).error;
  return typeof error === 'object' && error !== null ? (error as Record<string, unknown>) : undefined;
}

function readDetails(body: unknown): ValidationErrorDetail[] {
  const details = errorObject(body)?.details;
  if (!Array.isArray(details)) return [];
  return details
    .filter((d): d is Record<string, unknown> => typeof d === 'object' && d !== null)
    .map((d) => ({ field: String(d.field ?? ''), message: String(d.message ?? '') }));
}

/**
 * Seconds to wait before retrying, from `Retry-After` (delta-seconds or an HTTP date), else the
 * body's `error.retry_after`. Null when neither is usable.
 */
export function retryAfterSeconds(headers: ResponseHeaders, body: unknown, now = Date.now()): number | null {
  const header = headers['retry-after']?.trim();
  if (header) {
    if (/^\d+(\.\d+)?$/.test(header)) return Number(header);
    const date = Date.parse(header);
    if (!Number.isNaN(date)) return Math.max(0, (date - now) / 1000);
  }
  const fromBody = errorObject(body)?.retry_after;
  return typeof fromBody === 'number' && Number.isFinite(fromBody) && fromBody >= 0 ? fromBody : null;
}
