// What the dashboard's email log and usage chart read beyond the public read API: the project of
// an email, the webhook deliveries its events caused, daily sends, and resending a delivery now.
import type { Db, Queryable, Reader } from './db.js';
import { inValues } from './rows.js';
import { ATTEMPT_ANSWER_COLUMNS, attemptAnswer } from './webhooks.js';

export async function findProject(db: Pick<Db, 'get'>, projectId: string): Promise<{ workspace_id: string; environment: string } | undefined> {
  return db.get('SELECT workspace_id, environment FROM projects WHERE id = ?', [projectId]);
}

export async function workspaceExists(db: Pick<Db, 'get'>, workspaceId: string): Promise<boolean> {
  return (await db.get('SELECT 1 AS one FROM workspaces WHERE id = ?', [workspaceId])) !== undefined;
}

export async function projectOfEmail(db: Pick<Db, 'get'>, emailId: string): Promise<string | undefined> {
  return (await db.get<{ project_id: string }>('SELECT project_id FROM emails WHERE id = ?', [emailId]))?.project_id;
}

/** How an email came in: over SMTP submission when its message was submitted, else the HTTP API. */
export async function sourceOfEmail(db: Pick<Db, 'get'>, emailId: string): Promise<'api' | 'smtp'> {
  return (await db.get('SELECT 1 AS one FROM submissions WHERE email_id = ?', [emailId])) ? 'smtp' : 'api';
}

/** The emails among `emailIds` that came over SMTP submission (the email log's list, one query a page). */
export async function submittedAmong(db: Reader, emailIds: readonly string[]): Promise<Set<string>> {
  if (emailIds.length === 0) return new Set();
  const among = inValues(db, 'email_id', emailIds);
  const rows = await db.all<{ email_id: string }>(`SELECT email_id FROM submissions WHERE ${among.sql}`, among.params);
  return new Set(rows.map((r) => r.email_id));
}

export interface DeliveryAttemptView {
  attempt: number;
  status_code: number | null;
  error: string | null;
  attempted_at: string;
  duration_ms: number | null;
  response_body: string | null;
  response_truncated: boolean;
}

export interface EventDeliveryView {
  webhook_id: string;
  url: string;
  event_id: string;
  event_type: string;
  state: 'pending' | 'delivered' | 'failed';
  next_attempt_at: string | null;
  attempts: DeliveryAttemptView[];
}

/** Every webhook delivery of the email's events, with each attempt, in event order. */
export async function deliveriesOfEmail(db: Pick<Db, 'all'>, emailId: string): Promise<EventDeliveryView[]> {
  const rows = await db.all<{
    id: number;
    webhook_id: string;
    url: string;
    event_id: string;
    event_type: string;
    state: EventDeliveryView['state'];
    next_attempt_at: string | null;
    attempt: number | null;
    status_code: number | null;
    error: string | null;
    attempted_at: string | null;
    duration_ms: number | null;
    response_body: string | null;
    response_truncated: number | null;
  }>(
    `SELECT d.id, d.webhook_id, w.url, d.event_id, d.event_type, d.state, d.next_attempt_at,
            a.attempt, a.status_code, a.error, a.attempted_at, ${ATTEMPT_ANSWER_COLUMNS}
       FROM events e JOIN webhook_deliveries d ON d.event_id = e.id JOIN webhooks w ON w.id = d.webhook_id
       LEFT JOIN webhook_attempts a ON a.delivery_id = d.id
      WHERE e.email_id = ? ORDER BY e.seq, d.id, a.attempt`,
    [emailId],
  );
  const byId = new Map<number, EventDeliveryView>();
  for (const r of rows) {
    let view = byId.get(r.id);
    if (!view) {
      view = { webhook_id: r.webhook_id, url: r.url, event_id: r.event_id, event_type: r.event_type, state: r.state, next_attempt_at: r.next_attempt_at, attempts: [] };
      byId.set(r.id, view);
    }
    if (r.attempt !== null) {
      view.attempts.push({ attempt: r.attempt, status_code: r.status_code, error: r.error, attempted_at: r.attempted_at!, ...attemptAnswer(r) });
    }
  }
  return [...byId.values()];
}

/** Emails admitted (not suppressed) per UTC day since `sinceIso`, for one workspace. */
export async function dailySends(db: Pick<Db, 'all'>, workspaceId: string, sinceIso: string): Promise<Map<string, number>> {
  const rows = await db.all<{ day: string; n: number }>(
    `SELECT substr(created_at, 1, 10) AS day, count(*) AS n FROM emails
      WHERE workspace_id = ? AND created_at >= ? AND status != 'suppressed' GROUP BY day`,
    [workspaceId, sinceIso],
  );
  return new Map(rows.map((r) => [r.day, r.n]));
}

/** Makes a delivery of an endpoint due now (one more attempt); false when there is none. */
export async function resendDeliveryNow(tx: Queryable, webhookId: string, eventId: string, nowIso: string): Promise<boolean> {
  const { changes } = await tx.run(
    `UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = ?
      WHERE webhook_id = ? AND event_id = ? AND EXISTS (SELECT 1 FROM webhooks WHERE id = ? AND deleted_at IS NULL)`,
    [nowIso, webhookId, eventId, webhookId],
  );
  return changes > 0;
}
