/**
 * The API's enumerations as values, for code that must list them at run time (flag choices,
 * request validation, subscriptions). Each list is checked against the generated type it mirrors
 * (sdk/generated/openapi.ts): a value added to or removed from openapi.yaml without updating the
 * list here fails `npm run typecheck`.
 */
import type { EmailStatus, EventType, RecipientStatus } from './types.js';

/** A compile-time error unless `List` names every member of `Union` (`satisfies` rules out extras). */
type Exhaustive<Union, List extends readonly Union[]> = [Exclude<Union, List[number]>] extends [never] ? true : Exclude<Union, List[number]>;

/** Every event type, in the order an email's life goes through them. */
export const EVENT_TYPES = [
  'email.queued',
  'email.suppressed',
  'email.sent',
  'email.delivered',
  'email.delivery_delayed',
  'email.bounced',
  'email.complained',
  'email.failed',
  'email.delivery_unknown',
] as const satisfies readonly EventType[];
const everyEventType: Exhaustive<EventType, typeof EVENT_TYPES> = true;

/** Every status an email (the aggregate of its recipients) can have. */
export const EMAIL_STATUSES = ['queued', 'suppressed', 'sent', 'delivered', 'bounced', 'failed', 'delivery_unknown'] as const satisfies readonly EmailStatus[];
const everyEmailStatus: Exhaustive<EmailStatus, typeof EMAIL_STATUSES> = true;

/** Recipient statuses that may still change (CONTRACT section 4); every other one is final. */
export const PENDING_RECIPIENT_STATUSES = ['queued', 'delivery_delayed'] as const satisfies readonly RecipientStatus[];

void everyEventType;
void everyEmailStatus;
