// The error catalogue: every code the API can answer, with its HTTP status and the SMTP reply code
// and enhanced status code a refused submission answers with (CONTRACT section 9), defined once.
// The domain throws ApiError; errorReply in relay/http/error-reply.ts is the one place it becomes a response.
// `satisfies` ties it to openapi.yaml's ErrorCode enum: a code missing here or one the spec does not
// list fails `npm run typecheck`.
import type { ErrorBody, ErrorCode as SpecErrorCode } from 'raven-email-sdk';

export const ERROR_CATALOGUE = {
  invalid_request: { status: 400, meaning: 'The body is not a JSON object, repeats a key, or a header is malformed or repeated.', smtp: '550 5.6.0' },
  invalid_api_key: { status: 401, meaning: 'The API key is missing, invalid or revoked.', smtp: '535 5.7.8' },
  unauthorized: { status: 401, meaning: 'The admin token is missing or wrong.', smtp: '535 5.7.8' },
  forbidden: { status: 403, meaning: 'The key lacks the permission for this operation.', smtp: '535 5.7.8' },
  production_not_enabled: { status: 403, meaning: 'The workspace is not activated for production.', smtp: '550 5.7.1' },
  not_found: { status: 404, meaning: 'No such route or resource, or the key may not read it.', smtp: '550 5.5.0' },
  method_not_allowed: { status: 405, meaning: 'The path exists but not with this method.', smtp: '502 5.5.1' },
  idempotency_conflict: { status: 409, meaning: 'The Idempotency-Key was used with a different body.', smtp: '554 5.7.0' },
  conflict: { status: 409, meaning: 'The resource is not in a state that allows the action; the message says why.', smtp: '451 4.3.0' },
  message_too_large: { status: 413, meaning: 'The complete JSON request exceeds the size limit.', smtp: '552 5.3.4' },
  wait_timeout: { status: 408, meaning: 'No captured message matched a wait before its time-out.', smtp: '451 4.4.7' },
  validation_error: { status: 422, meaning: 'A field rule is broken; details name each field.', smtp: '550 5.6.0' },
  domain_not_verified: { status: 422, meaning: "The sender domain is not verified in the key's project.", smtp: '550 5.7.1' },
  test_recipient_not_allowed: { status: 422, meaning: 'A development key may only send to verified domains of its project.', smtp: '550 5.7.1' },
  rate_limit_exceeded: { status: 429, meaning: 'Too many accepted requests; retry after the stated seconds.', smtp: '451 4.7.1' },
  quota_exceeded: { status: 429, meaning: 'The monthly allowance is used up; it resets at the UTC month change.', smtp: '452 4.3.1' },
  internal_error: { status: 500, meaning: 'A bug in the relay; the message never leaks internals.', smtp: '451 4.3.0' },
  service_unavailable: { status: 503, meaning: 'Storage is unavailable (busy or full); retry after the stated seconds.', smtp: '451 4.3.0' },
} as const satisfies Record<SpecErrorCode, { status: number; meaning: string; smtp: `${2 | 4 | 5}${number} ${number}.${number}.${number}` }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** One broken field rule of a validation_error (openapi.yaml's ErrorDetail). */
export type ErrorDetail = NonNullable<ErrorBody['error']['details']>[number];

export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: { retryAfter?: number; details?: ErrorDetail[]; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_CATALOGUE[code].status;
  }
}

export function validationError(details: ErrorDetail[]): ApiError {
  const first = details[0];
  const summary = first ? `${first.field}: ${first.message}` : 'invalid request';
  const more = details.length > 1 ? ` (and ${details.length - 1} more)` : '';
  return new ApiError('validation_error', `Validation failed: ${summary}${more}.`, { details });
}
