/**
 * Public types, named after the OpenAPI schemas (sdk/generated/openapi.ts). Wire names are kept
 * exactly as the API spells them; there is no renaming layer.
 */
import type { components } from './generated/openapi.js';

type Schemas = components['schemas'];

/** Body of `POST /v1/emails`. */
export type SendEmailRequest = Schemas['SendEmailRequest'];
export type SendEmailParams = SendEmailRequest;
/** 202: accepted for asynchronous delivery. */
export type SendEmailQueued = Schemas['SendEmailQueued'];
/** 200: a recipient is suppressed; nothing will be sent and nothing is charged. */
export type SendEmailSuppressed = Schemas['SendEmailSuppressed'];
/** The admission result: check `status` (`'queued'` or `'suppressed'`). */
export type SendEmailResult = SendEmailQueued | SendEmailSuppressed;

export type EmailList = Schemas['EmailList'];
/** `GET /v1/domains`: the key's project's domains, `{ domains: [{ name, status }] }`. */
export type SenderDomainList = Schemas['SenderDomainList'];
export type EmailSummary = Schemas['EmailSummary'];
export type EmailDetail = Schemas['EmailDetail'];
export type RecipientOutcome = Schemas['RecipientOutcome'];
export type EmailEvent = Schemas['EmailEvent'];
export type EmailStatus = Schemas['EmailStatus'];
export type RecipientStatus = Schemas['RecipientStatus'];
export type EventType = Schemas['EventType'];
export type ErrorCode = Schemas['ErrorCode'];
export type ErrorBody = Schemas['Error'];
/** The JSON body of a webhook request, returned by `verifyWebhook` once the signature checks out. */
export type WebhookEvent = Schemas['WebhookEvent'];

/** Query of `GET /v1/emails`. */
export interface EmailListQuery {
  /** Only emails in this status. */
  status?: EmailStatus;
  /** Only emails with this exact To address (case-insensitive; CC and BCC are not matched). */
  recipient?: string;
  /** The `next_cursor` of the previous page. */
  cursor?: string;
  /** Page size, 1 to 100. @default 50 (server side) */
  limit?: number;
}
