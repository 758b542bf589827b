// The timeline: one row per thing that happened to an email, in order.
import type { Queryable, Reader } from './db.js';
import { insertRows } from './rows.js';

export interface EventRow {
  id: string;
  email_id: string;
  project_id: string;
  type: string;
  /** Kept for webhooks; the read API never shows it for BCC. */
  recipient: string | null;
  recipient_type: string | null;
  payload_json: string;
  occurred_at: string;
}

const COLUMNS = ['id', 'email_id', 'project_id', 'type', 'recipient', 'recipient_type', 'payload_json', 'occurred_at'] as const;

export function insertEvents(tx: Queryable, events: readonly EventRow[]): Promise<void> {
  return insertRows(tx, 'events', COLUMNS, events);
}

/** The email's timeline, oldest first. */
export function listEmailEvents(q: Reader, emailId: string): Promise<Array<Pick<EventRow, 'id' | 'type' | 'occurred_at' | 'payload_json'>>> {
  return q.all('SELECT id, type, occurred_at, payload_json FROM events WHERE email_id = ? ORDER BY seq', [emailId]);
}
