// Webhook endpoints, their outbox (webhook_deliveries, one row per event and endpoint, written in
// the transaction of the event) and the attempts made for each row.
import type { Db, Queryable, Reader } from './db.js';
import { BODIES_DUE_FOR_ERASURE } from './emails.js';
import { claimWebhookAttempt, releaseWebhookAttempt } from './postgres/queue.js';
import { inValues, insertRows, type Read } from './rows.js';

export interface WebhookRow {
  id: string;
  project_id: string;
  url: string;
  events_json: string;
  created_at: string;
  /** When an operator disabled it (null: enabled); listed, never inserted (a new endpoint is enabled). */
  disabled_at?: string | null;
}

export interface AttemptRow {
  event_id: string;
  event_type: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  attempted_at: string;
  /** Real milliseconds until the answer was read or the attempt failed (null: before migration 0017). */
  duration_ms: number | null;
  /** The first 1,024 bytes of the receiver's answer, as text; null without an answer. */
  response_body: string | null;
  /** Whether the answer was longer than what response_body keeps. */
  response_truncated: boolean;
  /** When the delivery's next attempt is due if this is its latest attempt and it is pending; null otherwise. */
  pending_next_at: string | null;
}

export interface DueDelivery {
  id: number;
  webhook_id: string;
  event_id: string;
  body: string;
  attempts: number;
  url: string;
  secret_enc: string;
  /** The secret before a rotation, used while previous_secret_until is ahead of the relay clock. */
  previous_secret_enc: string | null;
  previous_secret_until: string | null;
}

export interface NewDelivery {
  webhookId: string;
  eventId: string;
  eventType: string;
  body: string;
  /** The event's time: created and first due then. */
  at: string;
}

/** `secretEnc` is the signing secret sealed with the relay's secret key. */
export async function insertWebhook(tx: Queryable, row: WebhookRow, secretEnc: string): Promise<void> {
  await tx.run('INSERT INTO webhooks (id, project_id, url, events_json, secret_enc, created_at) VALUES (?, ?, ?, ?, ?, ?)', [
    row.id, row.project_id, row.url, row.events_json, secretEnc, row.created_at,
  ]);
}

/**
 * A new signing secret; the current one becomes the previous, used until `previousUntil` (null:
 * not at all). False when there is no such live endpoint.
 */
export async function rotateWebhookSecret(tx: Queryable, id: string, secretEnc: string, previousUntil: string | null): Promise<boolean> {
  const { changes } = await tx.run(
    'UPDATE webhooks SET previous_secret_enc = secret_enc, previous_secret_until = ?, secret_enc = ? WHERE id = ? AND deleted_at IS NULL',
    [previousUntil, secretEnc, id],
  );
  return changes > 0;
}

/**
 * Disables (now) or enables (null) a live endpoint; a disabled one gets no request, its deliveries
 * wait. False when there is no such live endpoint.
 */
export async function setWebhookDisabled(tx: Queryable, id: string, disabledAt: string | null): Promise<boolean> {
  const { changes } = await tx.run('UPDATE webhooks SET disabled_at = ? WHERE id = ? AND deleted_at IS NULL', [disabledAt, id]);
  return changes > 0;
}

export function listWebhooks(q: Reader, projectId: string): Promise<WebhookRow[]> {
  return q.all<WebhookRow>(
    'SELECT id, project_id, url, events_json, created_at, disabled_at FROM webhooks WHERE project_id = ? AND deleted_at IS NULL ORDER BY created_at, id',
    [projectId],
  );
}

export async function webhookExists(q: Reader, id: string): Promise<boolean> {
  return (await q.get<{ id: string }>('SELECT id FROM webhooks WHERE id = ? AND deleted_at IS NULL', [id])) !== undefined;
}

/** A live endpoint as the events recorded for its project need it (events_json: the event types, or ["*"]). */
export type ProjectWebhook = Pick<WebhookRow, 'id' | 'project_id' | 'events_json'>;

/** The live endpoints of these projects. */
export function webhooksOfProjects(q: Reader, projectIds: readonly string[]): Promise<ProjectWebhook[]> {
  const read = webhooksOfProjectsRead(q, projectIds);
  return q.all(read.sql, read.params);
}

/** webhooksOfProjects as a read to issue with others (readTogether: its columns named). */
export function webhooksOfProjectsRead(q: Pick<Reader, 'dialect'>, projectIds: readonly string[]): Read<ProjectWebhook> {
  const projects = inValues(q, 'project_id', projectIds);
  return { sql: `SELECT id, project_id, events_json FROM webhooks WHERE ${projects.sql} AND deleted_at IS NULL`, params: projects.params, columns: ['id', 'project_id', 'events_json'] };
}

/**
 * Deletes the endpoint and abandons its pending deliveries (openapi.yaml: nothing will send them
 * any more). False when there is no such live endpoint.
 */
export async function deleteWebhook(tx: Queryable, id: string, now: string): Promise<boolean> {
  const { changes } = await tx.run('UPDATE webhooks SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL', [now, id]);
  if (changes === 0) return false;
  await tx.run("UPDATE webhook_deliveries SET state = 'failed', next_attempt_at = NULL WHERE webhook_id = ? AND state = 'pending'", [id]);
  return true;
}

/** The columns of an attempt's answer, read by every view of attempts (a.: webhook_attempts). */
export const ATTEMPT_ANSWER_COLUMNS = 'a.duration_ms, a.response_body, a.response_truncated';

/** An attempt's answer columns as the views give them (PostgreSQL's integers and 0/1 flags normalised). */
export function attemptAnswer(r: { duration_ms: number | string | null; response_body: string | null; response_truncated: number | string | null }) {
  return {
    duration_ms: r.duration_ms === null ? null : Number(r.duration_ms),
    response_body: r.response_body,
    response_truncated: Number(r.response_truncated ?? 0) === 1,
  };
}

/** The endpoint's attempts, newest first. */
export async function listAttempts(q: Reader, webhookId: string, limit: number): Promise<AttemptRow[]> {
  const rows = await q.all<Omit<AttemptRow, 'response_truncated'> & { response_truncated: number | null }>(
    `SELECT d.event_id, d.event_type, a.attempt, a.status_code, a.error, a.attempted_at, ${ATTEMPT_ANSWER_COLUMNS},
            CASE WHEN d.state = 'pending' AND a.attempt = d.attempts THEN d.next_attempt_at END AS pending_next_at
       FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
      WHERE d.webhook_id = ?
      ORDER BY a.attempted_at DESC, a.id DESC
      LIMIT ?`,
    [webhookId, limit],
  );
  return rows.map((r) => ({ ...r, ...attemptAnswer(r) }));
}

/**
 * Forgets the receivers' answers to the webhook deliveries of the emails whose body the retention
 * rule is about to erase (terminal at or before `cutoff`): the receiver's text is kept no longer
 * than the email's. The attempts stay, with their status and time taken.
 */
export async function eraseAnswersTerminalBefore(tx: Queryable, cutoff: string): Promise<void> {
  await tx.run(
    `UPDATE webhook_attempts SET response_body = NULL, response_truncated = 0
      WHERE response_body IS NOT NULL AND delivery_id IN (
        SELECT d.id FROM webhook_deliveries d JOIN events ev ON ev.id = d.event_id WHERE ev.email_id IN (${BODIES_DUE_FOR_ERASURE}))`,
    [cutoff],
  );
}

/** A window of deliveries by their event's time: from `since` (inclusive) to `until` (exclusive). */
export interface DeliveryWindow {
  since: string;
  until: string;
}

/** How many of the endpoint's deliveries of events in the window have failed (every attempt made). */
export async function countFailedDeliveries(q: Reader, webhookId: string, window: DeliveryWindow): Promise<number> {
  const row = await q.get<{ n: number | string }>(
    "SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id = ? AND state = 'failed' AND created_at >= ? AND created_at < ?",
    [webhookId, window.since, window.until],
  );
  return Number(row?.n ?? 0);
}

/**
 * Makes every failed delivery of the endpoint in the window due at `now` for one more attempt
 * (Svix's recover), and answers how many. Nothing for an endpoint that was deleted meanwhile.
 */
export async function recoverFailedDeliveries(tx: Queryable, webhookId: string, window: DeliveryWindow, now: string): Promise<number> {
  const { changes } = await tx.run(
    `UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = ?
      WHERE webhook_id = ? AND state = 'failed' AND created_at >= ? AND created_at < ?
        AND EXISTS (SELECT 1 FROM webhooks WHERE id = ? AND deleted_at IS NULL)`,
    [now, webhookId, window.since, window.until, webhookId],
  );
  return changes;
}

export function insertDeliveries(tx: Queryable, deliveries: readonly NewDelivery[]): Promise<void> {
  return insertRows(
    tx,
    'webhook_deliveries',
    ['webhook_id', 'event_id', 'event_type', 'body', 'state', 'attempts', 'next_attempt_at', 'created_at'],
    deliveries.map((d) => ({
      webhook_id: d.webhookId,
      event_id: d.eventId,
      event_type: d.eventType,
      body: d.body,
      state: 'pending',
      attempts: 0,
      next_attempt_at: d.at,
      created_at: d.at,
    })),
  );
}

/**
 * On PostgreSQL, where several relays share the outbox, a row under another relay's live lease
 * (postgres/queue.ts claimWebhookAttempt) is left out: that relay is attempting it.
 */
function unleased(q: Reader): { sql: string; params: string[] } {
  return q.dialect === 'postgres'
    ? { sql: ' AND (d.lease_expires_at IS NULL OR d.lease_expires_at < ?)', params: [new Date().toISOString()] }
    : { sql: '', params: [] };
}

/** The oldest pending rows due at `now`, at most `perEndpoint` per live endpoint. */
export function dueDeliveries(q: Reader, now: string, perEndpoint: number, limit: number): Promise<DueDelivery[]> {
  const free = unleased(q);
  return q.all<DueDelivery>(
    `SELECT id, webhook_id, event_id, body, attempts, url, secret_enc, previous_secret_enc, previous_secret_until FROM (
       SELECT d.id, d.webhook_id, d.event_id, d.body, d.attempts, d.next_attempt_at, w.url, w.secret_enc, w.previous_secret_enc, w.previous_secret_until,
              ROW_NUMBER() OVER (PARTITION BY d.webhook_id ORDER BY d.next_attempt_at, d.id) AS rank
         FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
        WHERE d.state = 'pending' AND d.next_attempt_at <= ? AND w.deleted_at IS NULL AND w.disabled_at IS NULL${free.sql}) due
      WHERE rank <= ?
      ORDER BY next_attempt_at, id
      LIMIT ?`,
    [now, ...free.params, perEndpoint, limit],
  );
}

/** When the first pending row of a live endpoint due after `after` is due ('' counts every row). */
export async function nextDeliveryDueAfter(q: Reader, after: string): Promise<string | null> {
  const free = unleased(q);
  const row = await q.get<{ at: string | null }>(
    `SELECT MIN(d.next_attempt_at) AS at FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
      WHERE d.state = 'pending' AND w.deleted_at IS NULL AND w.disabled_at IS NULL AND d.next_attempt_at > ?${free.sql}`,
    [after, ...free.params],
  );
  return row?.at ?? null;
}

/**
 * When the first live lease on a pending delivery of a live endpoint runs out (real time): a relay
 * that died mid-attempt, or whose outcome write failed, left it, and the row is due again then. Null
 * when there is none, and on SQLite, where one relay owns the outbox and takes no leases.
 */
export async function nextLeaseEnd(q: Reader): Promise<string | null> {
  if (q.dialect !== 'postgres') return null;
  const row = await q.get<{ at: string | null }>(
    `SELECT MIN(d.lease_expires_at) AS at FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
      WHERE d.state = 'pending' AND w.deleted_at IS NULL AND w.disabled_at IS NULL AND d.lease_expires_at >= ?`,
    [new Date().toISOString()],
  );
  return row?.at ?? null;
}

export interface AttemptClaim {
  id: number;
  /** The row's attempts when it was scanned. */
  attempts: number;
  /** The relay clock's now: the row must be due by then. */
  clockNow: string;
  /** Real time: a lease held by another relay that ran out by then is free again. */
  realNow: string;
  /** Real time: where several relays share the outbox, the claim's lease lasts until then. */
  leaseUntil: string;
}

/**
 * Whether this relay makes the row's next attempt: only while the row is still pending with the
 * attempts it was scanned with, and due. A scan's read can start before another attempt of the
 * same row commits and be handled after it: this fresh look (after that commit) keeps the row from
 * being sent twice. On PostgreSQL, where other relays scan the same outbox, one conditional UPDATE
 * decides which of them, with a lease in case this relay dies mid-attempt.
 */
export async function claimDeliveryAttempt(db: Db, claim: AttemptClaim): Promise<boolean> {
  if (db.dialect === 'postgres') {
    return claimWebhookAttempt(db, claim.id, claim.attempts, claim.clockNow, claim.realNow, claim.leaseUntil);
  }
  const now = await db.get<{ attempts: number; state: string; next_attempt_at: string | null }>(
    'SELECT attempts, state, next_attempt_at FROM webhook_deliveries WHERE id = ?',
    [claim.id],
  );
  return now !== undefined && now.state === 'pending' && now.attempts === claim.attempts && (now.next_attempt_at ?? '') <= claim.clockNow;
}

/** Gives up this relay's claim without an attempt (shutdown cut it short): another relay may make it. */
export async function abandonDeliveryAttempt(db: Db, id: number): Promise<void> {
  if (db.dialect === 'postgres') await db.write((tx) => releaseWebhookAttempt(tx, id));
}

export interface AttemptRecord {
  deliveryId: number;
  /** The attempt's number: the row's attempts before it, plus one. */
  attempt: number;
  statusCode: number | null;
  error: string | null;
  attemptedAt: string;
  durationMs: number;
  responseBody: string | null;
  responseTruncated: boolean;
  state: 'pending' | 'delivered' | 'failed';
  nextAttemptAt: string | null;
}

/** Whether the email of the delivery (the one parameter) has had its body erased (migration 0023 finds the event's deliveries). */
const EMAIL_BODY_ERASED = `EXISTS (SELECT 1 FROM webhook_deliveries d JOIN events ev ON ev.id = d.event_id JOIN emails e ON e.id = ev.email_id
                  WHERE d.id = ? AND e.body_erased_at IS NOT NULL)`;

/**
 * The attempt's row, and the delivery moved on, unless another attempt already moved it. The
 * receiver's answer is kept as long as the email's body: an attempt made after the body was erased
 * (a recover, a resend, a late event) keeps its status and time, not the answer.
 */
export async function recordAttempt(tx: Queryable, a: AttemptRecord): Promise<void> {
  // Once: the same record written again (a retry after a COMMIT whose answer was lost with its
  // connection) finds its row, its delivery moved on and its claim released already.
  await tx.run(
    `INSERT INTO webhook_attempts (delivery_id, attempt, status_code, error, attempted_at, duration_ms, response_body, response_truncated)
     SELECT CAST(? AS bigint), CAST(? AS integer), CAST(? AS integer), CAST(? AS text), CAST(? AS text), CAST(? AS integer),
            CASE WHEN ${EMAIL_BODY_ERASED} THEN NULL ELSE CAST(? AS text) END, CASE WHEN ${EMAIL_BODY_ERASED} THEN 0 ELSE CAST(? AS integer) END
      WHERE NOT EXISTS (SELECT 1 FROM webhook_attempts WHERE delivery_id = ? AND attempt = ? AND attempted_at = ?)`,
    [
      a.deliveryId, a.attempt, a.statusCode, a.error, a.attemptedAt, a.durationMs, a.deliveryId, a.responseBody, a.deliveryId, a.responseTruncated ? 1 : 0,
      a.deliveryId, a.attempt, a.attemptedAt,
    ],
  );
  await tx.run(
    `UPDATE webhook_deliveries SET state = ?, attempts = ?, next_attempt_at = ? WHERE id = ? AND state = 'pending' AND attempts = ?`,
    [a.state, a.attempt, a.nextAttemptAt, a.deliveryId, a.attempt - 1],
  );
  // The attempting relay's claim ends with its record (PostgreSQL: postgres/queue.ts).
  if (tx.dialect === 'postgres') await releaseWebhookAttempt(tx, a.deliveryId);
}
