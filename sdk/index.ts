/**
 * Raven SDK: the public entry point.
 *
 * ```ts
 * import Raven from 'raven-email-sdk';  // or: import { Raven } from 'raven-email-sdk'
 * const raven = new Raven();            // RAVEN_API_KEY, RAVEN_BASE_URL
 * ```
 */
import { Raven } from './client.js';

export { Raven };
export default Raven;
export { RavenAdmin } from './admin.js';
export type * from './admin.js';

export {
  RavenError,
  APIError,
  AuthenticationError,
  PermissionError,
  ProductionNotEnabledError,
  NotFoundError,
  MethodNotAllowedError,
  InvalidRequestError,
  ValidationError,
  DomainNotVerifiedError,
  TestRecipientNotAllowedError,
  IdempotencyConflictError,
  ConflictError,
  RateLimitError,
  QuotaExceededError,
  MessageTooLargeError,
  WaitTimeoutError,
  InternalServerError,
  ServiceUnavailableError,
  ConnectionError,
  TimeoutError,
  AbortError,
  errorFromResponse,
} from './core/errors.js';
export type { ResponseHeaders, ValidationErrorDetail } from './core/errors.js';

export {
  verifyWebhook,
  signWebhook,
  computeSignature,
  WebhookVerificationError,
  Webhooks,
  TIMESTAMP_HEADER,
  SIGNATURE_HEADER,
  EVENT_ID_HEADER,
  DEFAULT_TOLERANCE_SECONDS,
} from './webhooks.js';
export type {
  WebhookVerificationReason,
  WebhookPayload,
  WebhookHeaders,
  VerifyWebhookOptions,
  SignWebhookOptions,
  SignedWebhook,
} from './webhooks.js';

export { APIPromise } from './core/api-promise.js';
export type { ResponseInfo, WithResponse } from './core/api-promise.js';
export { CursorPage, PagePromise } from './core/pagination.js';
export { EmailPage, Emails } from './resources/emails.js';
export type { EmailPagePromise } from './resources/emails.js';
export { Domains } from './resources/domains.js';
export type {
  ClientOptions,
  AdminClientOptions,
  TransportOptions,
  RequestOptions,
  SendRequestOptions,
  Logger,
  LogLevel,
} from './core/options.js';
export type * from './types.js';
export { EVENT_TYPES, EMAIL_STATUSES, PENDING_RECIPIENT_STATUSES } from './enums.js';
export { VERSION } from './version.js';
