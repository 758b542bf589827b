// Recording what happened to an email: the timeline row, and in the same transaction the webhook
// outbox rows for every endpoint of the project subscribed to that event type. After the commit
// the caller announces the events on the bus (announceEvents) for the dispatcher and listen hub.
import type { EventType } from 'raven-email-sdk';
import { newId } from '../ids.js';
import type { Queryable } from '../storage/db.js';
import { insertEvents } from '../storage/events.js';
import { insertDeliveries, webhooksOfProjects, type NewDelivery, type ProjectWebhook } from '../storage/webhooks.js';

export { EVENT_TYPES } from 'raven-email-sdk/enums';
export type { EventType } from 'raven-email-sdk';

export interface EmailRef {
  id: string;
  projectId: string;
  testMode: boolean;
  tags: Record<string, string>;
}

export interface NewEvent {
  type: EventType;
  occurredAt: string;
  /** The recipient concerned, if any; kept for webhooks, hidden from the read API when BCC. */
  recipient?: { address: string; type: 'to' | 'cc' | 'bcc' };
  /** Sanitized extra data: never a body, a BCC address or a raw SMTP reply. */
  data?: Record<string, unknown>;
}

export interface StoredEvent {
  id: string;
  type: EventType;
  emailId: string;
  projectId: string;
  occurredAt: string;
  /** The exact webhook body (the listen hub forwards the same bytes). */
  webhookBody: string;
  /** Outbox rows written for it: one per subscribed webhook endpoint. */
  deliveries: number;
}

/** The webhook payload (CONTRACT section 5); data.recipient names the address even for BCC. */
export function webhookBody(eventId: string, email: EmailRef, event: NewEvent): string {
  return JSON.stringify({
    id: eventId,
    type: event.type,
    created_at: event.occurredAt,
    data: {
      email_id: email.id,
      test_mode: email.testMode,
      ...(event.recipient ? { recipient: event.recipient.address } : {}),
      tags: email.tags,
      ...event.data,
    },
  });
}

/** The payload shown in the read API's timeline: BCC recipients are not named. */
export function timelinePayload(event: NewEvent): Record<string, unknown> {
  const payload: Record<string, unknown> = { ...event.data };
  if (event.recipient && event.recipient.type !== 'bcc') payload.recipient = event.recipient.address;
  return payload;
}

export async function recordEvent(tx: Queryable, email: EmailRef, event: NewEvent): Promise<StoredEvent> {
  return (await recordEvents(tx, [{ email, event }]))[0]!;
}

/**
 * recordEvent for many events at once: one INSERT for the timeline, one for the outbox. `webhooks`:
 * the live endpoints of the events' projects, when the caller read them already in this unit of
 * work with its other reads (admission: webhooksOfProjectsRead); otherwise they are read here.
 */
export async function recordEvents(tx: Queryable, records: Array<{ email: EmailRef; event: NewEvent }>, webhooks?: readonly ProjectWebhook[]): Promise<StoredEvent[]> {
  const stored = records.map(({ email, event }): StoredEvent => {
    const id = newId('evt', Date.parse(event.occurredAt));
    const body = webhookBody(id, email, event);
    return { id, type: event.type, emailId: email.id, projectId: email.projectId, occurredAt: event.occurredAt, webhookBody: body, deliveries: 0 };
  });
  const timeline = records.map(({ event }, i) => ({
    id: stored[i]!.id,
    email_id: stored[i]!.emailId,
    project_id: stored[i]!.projectId,
    type: event.type,
    recipient: event.recipient?.address ?? null,
    recipient_type: event.recipient?.type ?? null,
    payload_json: JSON.stringify(timelinePayload(event)),
    occurred_at: event.occurredAt,
  }));
  const projects = [...new Set(stored.map((e) => e.projectId))];
  // Independent statements, issued together: one trip to the sqlite3 thread pool.
  const [, hooks] = await Promise.all([insertEvents(tx, timeline), webhooks ?? webhooksOfProjects(tx, projects)]);
  const subscribed = hooks.map((hook) => ({ hook, events: JSON.parse(hook.events_json) as string[] }));
  const deliveries: NewDelivery[] = [];
  for (const e of stored) {
    for (const { hook, events } of subscribed) {
      if (hook.project_id !== e.projectId || !(events.includes('*') || events.includes(e.type))) continue;
      deliveries.push({ webhookId: hook.id, eventId: e.id, eventType: e.type, body: e.webhookBody, at: e.occurredAt });
      e.deliveries++;
    }
  }
  await insertDeliveries(tx, deliveries);
  return stored;
}
