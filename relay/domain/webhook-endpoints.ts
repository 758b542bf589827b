// Webhook endpoints of a project, as the dashboard manages them: create (events checked against
// the event types, the URL against the URL policy; the signing secret is shown once and stored
// sealed), list, delete, and the delivery attempts of one endpoint with their next retry.
import type { WebhookEndpoint } from 'raven-email-sdk';
import { ApiError, validationError, type ErrorDetail } from '../errors.js';
import { newId, newSecret } from '../ids.js';
import type { RelayServices } from '../services.js';
import * as webhooks from '../storage/webhooks.js';
import type { WebhookRow } from '../storage/webhooks.js';
import { nextAttemptAtMs } from '../webhooks/schedule.js';
import { checkWebhookUrl, UrlPolicyError } from '../webhooks/url-policy.js';
import type { AdminBody } from './admin-body.js';
import { findProject } from './projects.js';
import { EVENT_TYPES } from './timeline.js';

/** The attempts listed per endpoint, newest first; older ones stay in the database. */
const MAX_LISTED_ATTEMPTS = 1000;

type EventSelector = WebhookEndpoint['events'][number];

const endpointView = (row: WebhookRow) => ({
  id: row.id,
  project_id: row.project_id,
  url: row.url,
  events: JSON.parse(row.events_json) as EventSelector[],
  enabled: !row.disabled_at,
  created_at: row.created_at,
});

function parseEvents(value: unknown, details: ErrorDetail[]): EventSelector[] {
  if (!Array.isArray(value) || value.length === 0) {
    details.push({ field: 'events', message: 'is required: a non-empty array of event types, or ["*"]' });
    return [];
  }
  const events: EventSelector[] = [];
  value.forEach((item, i) => {
    if (item === '*' || (typeof item === 'string' && (EVENT_TYPES as readonly string[]).includes(item))) {
      if (!events.includes(item as EventSelector)) events.push(item as EventSelector);
    } else {
      details.push({ field: `events[${i}]`, message: `must be one of ${EVENT_TYPES.join(', ')}, or "*"` });
    }
  });
  if (events.includes('*') && events.length > 1) {
    details.push({ field: 'events', message: '"*" already means every event type; give it alone' });
  }
  return events;
}

export async function createEndpoint(s: RelayServices, projectId: string, body: AdminBody) {
  await findProject(s, projectId);

  const details: ErrorDetail[] = [];
  for (const key of Object.keys(body)) {
    if (key !== 'url' && key !== 'events') details.push({ field: key, message: 'is not a known field' });
  }
  const events = parseEvents(body.events, details);
  let url: string | undefined;
  if (typeof body.url !== 'string' || body.url.length === 0) {
    details.push({ field: 'url', message: 'is required: an https URL' });
  } else if (details.length === 0) {
    // Resolving the host is the slow part: only once the rest of the request is valid.
    try {
      url = (await checkWebhookUrl(body.url, s.config.allowLocalWebhooks)).href;
    } catch (error) {
      if (!(error instanceof UrlPolicyError)) throw error;
      details.push({ field: 'url', message: error.message });
    }
  }
  if (details.length > 0 || url === undefined) throw validationError(details);

  const secret = newSecret('whsec_');
  const row: WebhookRow = { id: newId('whk'), project_id: projectId, url, events_json: JSON.stringify(events), created_at: s.clock.iso() };
  await s.db.write((tx) => webhooks.insertWebhook(tx, row, s.secrets.seal(secret)));
  s.log.info('webhook', 'endpoint created', { webhook_id: row.id, project_id: projectId });
  const view = endpointView(row);
  return { id: view.id, project_id: view.project_id, url: view.url, events: view.events, secret, created_at: view.created_at };
}

export async function listEndpoints(s: RelayServices, projectId: string) {
  await findProject(s, projectId);
  return { webhooks: (await webhooks.listWebhooks(s.db, projectId)).map(endpointView) };
}

/** Rotation overlaps: a day by default, a week at most (CONTRACT section 11). */
const DEFAULT_OVERLAP_SECONDS = 86_400;
const MAX_OVERLAP_SECONDS = 604_800;

/**
 * A new signing secret, shown only here. The old one keeps signing beside it (a second `v1=`
 * entry) for `overlap_seconds` on the relay clock, so a receiver can switch without losing events.
 */
export async function rotateSecret(s: RelayServices, webhookId: string, body: AdminBody): Promise<{ id: string; secret: string }> {
  const details: ErrorDetail[] = [];
  for (const key of Object.keys(body)) {
    if (key !== 'overlap_seconds') details.push({ field: key, message: 'is not a known field' });
  }
  const overlap = body.overlap_seconds ?? DEFAULT_OVERLAP_SECONDS;
  if (!Number.isInteger(overlap) || (overlap as number) < 0 || (overlap as number) > MAX_OVERLAP_SECONDS) {
    details.push({ field: 'overlap_seconds', message: `must be a whole number of seconds from 0 to ${MAX_OVERLAP_SECONDS}` });
  }
  if (details.length > 0) throw validationError(details);
  const seconds = overlap as number;
  const secret = newSecret('whsec_');
  const until = seconds === 0 ? null : new Date(s.clock.nowMs() + seconds * 1000).toISOString();
  const rotated = await s.db.write((tx) => webhooks.rotateWebhookSecret(tx, webhookId, s.secrets.seal(secret), until));
  if (!rotated) throw new ApiError('not_found', `No webhook endpoint ${webhookId}.`);
  s.log.info('webhook', 'signing secret rotated', { webhook_id: webhookId, overlap_seconds: seconds });
  return { id: webhookId, secret };
}

/** Disables or enables an endpoint: while disabled nothing is sent to it and its deliveries wait. */
export async function setEndpointEnabled(s: RelayServices, webhookId: string, enabled: boolean): Promise<{ id: string; enabled: boolean }> {
  const found = await s.db.write((tx) => webhooks.setWebhookDisabled(tx, webhookId, enabled ? null : s.clock.iso()));
  if (!found) throw new ApiError('not_found', `No webhook endpoint ${webhookId}.`);
  if (enabled) s.bus.emit('webhooks.ready');
  s.log.info('webhook', enabled ? 'endpoint enabled' : 'endpoint disabled', { webhook_id: webhookId });
  return { id: webhookId, enabled };
}

async function requireEndpoint(s: RelayServices, webhookId: string): Promise<void> {
  if (!(await webhooks.webhookExists(s.db, webhookId))) throw new ApiError('not_found', `No webhook endpoint ${webhookId}.`);
}

export async function deleteEndpoint(s: RelayServices, webhookId: string): Promise<void> {
  const deleted = await s.db.write((tx) => webhooks.deleteWebhook(tx, webhookId, s.clock.iso()));
  if (!deleted) throw new ApiError('not_found', `No webhook endpoint ${webhookId}.`);
  s.log.info('webhook', 'endpoint deleted', { webhook_id: webhookId });
}

const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/;

/** An ISO 8601 time with a zone (`2026-11-27T09:00:00Z`, `...+01:00`) that exists, in ms; else undefined. */
function parseIsoTime(value: unknown): number | undefined {
  const m = typeof value === 'string' ? ISO_TIME.exec(value) : null;
  if (!m) return undefined;
  const [year, month, day, hour, minute, second = '0', offH = '0', offM = '0'] = m.slice(1).map((v) => v ?? undefined) as string[];
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  const dateExists = date.getUTCFullYear() === Number(year) && date.getUTCMonth() === Number(month) - 1 && date.getUTCDate() === Number(day);
  if (!dateExists || Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59 || Number(offH) > 23 || Number(offM) > 59) return undefined;
  const ms = Date.parse(value as string);
  return Number.isNaN(ms) ? undefined : ms;
}

export interface RecoverResult {
  id: string;
  since: string;
  until: string;
  dry_run: boolean;
  count: number;
}

/**
 * Recover (Svix's): every delivery to the endpoint of an event between `since` and `until`
 * (default: now, on the relay clock) that failed gets one more attempt, due now. With `dry_run`
 * only the count, which a person confirms before the action. Times ahead of the relay clock are
 * refused: nothing can have failed there yet.
 */
export async function recoverDeliveries(s: RelayServices, webhookId: string, body: AdminBody): Promise<RecoverResult> {
  const details: ErrorDetail[] = [];
  for (const key of Object.keys(body)) {
    if (key !== 'since' && key !== 'until' && key !== 'dry_run') details.push({ field: key, message: 'is not a known field' });
  }
  const nowMs = s.clock.nowMs();
  const since = parseIsoTime(body.since);
  if (since === undefined) details.push({ field: 'since', message: 'is required: an ISO 8601 time with a zone, e.g. 2026-11-27T09:00:00Z' });
  else if (since > nowMs) details.push({ field: 'since', message: `must not be in the future (the relay's clock says ${new Date(nowMs).toISOString()})` });
  let until = nowMs;
  if (body.until !== undefined) {
    const given = parseIsoTime(body.until);
    if (given === undefined) details.push({ field: 'until', message: 'must be an ISO 8601 time with a zone, e.g. 2026-11-27T12:00:00Z' });
    else if (given > nowMs) details.push({ field: 'until', message: `must not be in the future (the relay's clock says ${new Date(nowMs).toISOString()})` });
    else if (since !== undefined && given <= since) details.push({ field: 'until', message: 'must be after since' });
    else until = given;
  }
  if (body.dry_run !== undefined && typeof body.dry_run !== 'boolean') details.push({ field: 'dry_run', message: 'must be true or false' });
  if (details.length > 0) throw validationError(details);
  // until is exclusive: the deliveries of an event at the relay clock's very now are in the window.
  const window = { since: new Date(since!).toISOString(), until: new Date(until + (body.until === undefined ? 1 : 0)).toISOString() };
  const answer = (count: number) => ({ id: webhookId, since: window.since, until: new Date(until).toISOString(), dry_run: body.dry_run === true, count });
  if (body.dry_run === true) {
    await requireEndpoint(s, webhookId);
    return answer(await webhooks.countFailedDeliveries(s.db, webhookId, window));
  }
  const count = await s.db.write(async (tx) => {
    if (!(await webhooks.webhookExists(tx, webhookId))) return undefined;
    return webhooks.recoverFailedDeliveries(tx, webhookId, window, s.clock.iso());
  });
  if (count === undefined) throw new ApiError('not_found', `No webhook endpoint ${webhookId}.`);
  if (count > 0) s.bus.emit('webhooks.ready');
  s.log.info('webhook', 'failed deliveries recovered', { webhook_id: webhookId, since: window.since, count });
  return answer(count);
}

export async function listDeliveries(s: RelayServices, webhookId: string) {
  await requireEndpoint(s, webhookId);
  const rows = await webhooks.listAttempts(s.db, webhookId, MAX_LISTED_ATTEMPTS);
  return {
    deliveries: rows.map((r) => {
      const delivered = r.status_code !== null && r.status_code >= 200 && r.status_code < 300;
      // The latest attempt of a pending delivery shows when the next one is due (a resend or a
      // recover makes it due now); an earlier attempt's follows from the schedule.
      const next = r.pending_next_at !== null ? Date.parse(r.pending_next_at) : delivered ? null : nextAttemptAtMs(r.attempt, Date.parse(r.attempted_at));
      return {
        event_id: r.event_id,
        event_type: r.event_type,
        attempt: r.attempt,
        status_code: r.status_code,
        error: r.error,
        attempted_at: r.attempted_at,
        next_attempt_at: next === null ? null : new Date(next).toISOString(),
        duration_ms: r.duration_ms,
        response_body: r.response_body,
        response_truncated: r.response_truncated,
      };
    }),
  };
}
