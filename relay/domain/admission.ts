// Admission of POST /v1/emails: CONTRACT section 2, checks 5 to 12, in that order. Everything from
// the idempotency lookup on runs inside one group-committed write, so a replay, a rate window and
// a quota cap are decided against every admission committed or pending before it.
import { createHash } from 'node:crypto';
import { nextUtcMonthStart, utcMonth } from '../clock.js';
import { ApiError, validationError } from '../errors.js';
import { canonicalJson } from '../http/strict-json.js';
import { newId } from '../ids.js';
import type { RelayServices } from '../services.js';
import type { Queryable } from '../storage/db.js';
import type { KeyPrincipal } from './auth.js';
import { allRecipients, parseSendRequest, type SendRequest } from './send-request.js';
import { announceEvents, recordEvent, type EmailRef, type StoredEvent } from './timeline.js';

export interface AdmissionResult {
  status: 200 | 202;
  body: { id: string; status: 'queued'; test_mode: boolean } | { id: string; status: 'suppressed'; reason: string };
  replayed: boolean;
}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,128}$/;

export function checkIdempotencyKey(value: string | undefined): void {
  if (value !== undefined && !IDEMPOTENCY_KEY.test(value)) {
    throw validationError([{ field: 'Idempotency-Key', message: 'must be 1 to 128 printable ASCII characters without spaces' }]);
  }
}

async function verifiedDomains(services: RelayServices, projectId: string): Promise<Set<string>> {
  const rows = await services.db.all<{ name: string }>("SELECT name FROM domains WHERE project_id = ? AND status = 'verified'", [projectId]);
  return new Set(rows.map((r) => r.name));
}

export async function admitEmail(
  services: RelayServices,
  key: KeyPrincipal,
  body: unknown,
  idempotencyKey: string | undefined,
): Promise<AdmissionResult> {
  const parsed = parseSendRequest(body, services.config.limits);
  if (!parsed.ok) throw validationError(parsed.details);
  checkIdempotencyKey(idempotencyKey);
  const request = parsed.value;
  const bodyHash = createHash('sha256').update(canonicalJson(body)).digest('hex');
  const domains = await verifiedDomains(services, key.projectId);
  const events: StoredEvent[] = [];

  const result = await services.db.write(async (tx) => {
    events.length = 0;
    if (idempotencyKey !== undefined) {
      const previous = await tx.get<{ body_hash: string; status_code: 200 | 202; response_json: string }>(
        'SELECT body_hash, status_code, response_json FROM idempotency_keys WHERE project_id = ? AND key = ?',
        [key.projectId, idempotencyKey],
      );
      if (previous) {
        if (previous.body_hash !== bodyHash) {
          throw new ApiError('idempotency_conflict', 'This Idempotency-Key was already used with a different request body.');
        }
        return { status: previous.status_code, body: JSON.parse(previous.response_json), replayed: true } as AdmissionResult;
      }
    }

    const nowMs = services.clock.nowMs();
    const limited = services.rateLimiter.check(key, nowMs);
    if (limited) {
      throw new ApiError(
        'rate_limit_exceeded',
        `Rate limit exceeded (${limited.label}); retry after ${limited.retryAfter} second${limited.retryAfter === 1 ? '' : 's'} with the same Idempotency-Key.`,
        { retryAfter: limited.retryAfter },
      );
    }

    if (!domains.has(request.from.domain)) {
      throw new ApiError('domain_not_verified', `The sender domain ${request.from.domain} is not verified in this key's project.`);
    }
    const recipients = allRecipients(request);
    if (key.testMode) {
      const outside = recipients.find((r) => !domains.has(r.mailbox.domain));
      if (outside) {
        throw new ApiError(
          'test_recipient_not_allowed',
          `A development key may only send to verified domains of its project; ${outside.mailbox.domain} is not one.`,
        );
      }
    }

    const now = new Date(nowMs).toISOString();
    const reason = await suppressionReason(tx, key.workspaceId, recipients.map((r) => r.mailbox.address.toLowerCase()));
    if (reason === undefined) await chargeQuota(services, tx, key, recipients.length, nowMs);

    const emailId = newId('em', nowMs);
    const outcome: AdmissionResult =
      reason === undefined
        ? { status: 202, body: { id: emailId, status: 'queued', test_mode: key.testMode }, replayed: false }
        : { status: 200, body: { id: emailId, status: 'suppressed', reason }, replayed: false };
    const ref = await insertEmail(tx, key, request, emailId, reason, now);
    if (reason === undefined) {
      await tx.run(
        "INSERT INTO jobs (email_id, state, run_at, attempts, created_at, updated_at) VALUES (?, 'ready', ?, 0, ?, ?)",
        [emailId, now, now, now],
      );
      events.push(await recordEvent(tx, ref, { type: 'email.queued', occurredAt: now }));
    } else {
      events.push(await recordEvent(tx, ref, { type: 'email.suppressed', occurredAt: now, data: { reason } }));
    }
    if (idempotencyKey !== undefined) {
      const expires = new Date(nowMs + services.config.limits.idempotencyRetentionDays * 86_400_000).toISOString();
      await tx.run(
        `INSERT INTO idempotency_keys (project_id, key, body_hash, email_id, status_code, response_json, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        [key.projectId, idempotencyKey, bodyHash, emailId, outcome.status, JSON.stringify(outcome.body), now, expires],
      );
    }
    services.rateLimiter.record(key, nowMs);
    return outcome;
  });

  if (!result.replayed) {
    announceEvents(services.bus, events);
    if (result.status === 202) services.bus.emit('jobs.ready');
  }
  return result;
}

/** The reason of the first suppressed address, in To, CC, BCC order. */
async function suppressionReason(tx: Queryable, workspaceId: string, addresses: string[]): Promise<string | undefined> {
  const rows = await tx.all<{ address_lc: string; reason: string }>(
    `SELECT address_lc, reason FROM suppressions WHERE workspace_id = ? AND address_lc IN (${addresses.map(() => '?').join(',')})`,
    [workspaceId, ...addresses],
  );
  if (rows.length === 0) return undefined;
  const byAddress = new Map(rows.map((r) => [r.address_lc, r.reason]));
  for (const address of addresses) {
    const reason = byAddress.get(address);
    if (reason) return reason;
  }
  return undefined;
}

/** Check 11: refuse the whole request if it would pass a monthly cap; otherwise charge it. */
async function chargeQuota(services: RelayServices, tx: Queryable, key: KeyPrincipal, recipients: number, nowMs: number): Promise<void> {
  const month = utcMonth(nowMs);
  const { limits } = services.config;
  const caps: Array<{ scope: string; limit: number; label: string }> = [
    { scope: `ws:${key.workspaceId}`, limit: limits.workspaceMonthlyRecipients, label: 'workspace' },
  ];
  if (key.testMode) caps.push({ scope: `key:${key.keyId}`, limit: limits.testKeyMonthlyRecipients, label: 'development key' });
  for (const cap of caps) {
    const row = await tx.get<{ used: number }>('SELECT used FROM usage_counters WHERE scope = ? AND month = ?', [cap.scope, month]);
    const used = row?.used ?? 0;
    if (used + recipients > cap.limit) {
      const resetMs = nextUtcMonthStart(nowMs);
      const retryAfter = Math.max(1, Math.ceil((resetMs - nowMs) / 1000));
      throw new ApiError(
        'quota_exceeded',
        `The monthly allowance of ${cap.limit} recipients for this ${cap.label} is used up (${used} used, ${recipients} requested); ` +
          `it resets at ${new Date(resetMs).toISOString()}, in ${retryAfter} seconds.`,
        { retryAfter },
      );
    }
  }
  // Live keys have no cap of their own, but their usage is still counted for the usage view.
  const scopes = [`ws:${key.workspaceId}`, `key:${key.keyId}`];
  for (const scope of scopes) {
    await tx.run(
      'INSERT INTO usage_counters (scope, month, used) VALUES (?, ?, ?) ON CONFLICT (scope, month) DO UPDATE SET used = used + excluded.used',
      [scope, month, recipients],
    );
  }
}

async function insertEmail(
  tx: Queryable,
  key: KeyPrincipal,
  request: SendRequest,
  emailId: string,
  suppressedReason: string | undefined,
  now: string,
): Promise<EmailRef> {
  const raws = (list: { raw: string }[]) => JSON.stringify(list.map((m) => m.raw));
  await tx.run(
    `INSERT INTO emails (id, project_id, workspace_id, key_id, status, from_address, to_json, cc_json, bcc_json, reply_to, subject,
       text_body, html_body, headers_json, tags_json, metadata_json, test_mode, suppression_reason, created_at, updated_at, terminal_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      emailId,
      key.projectId,
      key.workspaceId,
      key.keyId,
      suppressedReason === undefined ? 'queued' : 'suppressed',
      request.from.raw,
      raws(request.to),
      raws(request.cc),
      raws(request.bcc),
      request.replyTo?.raw ?? null,
      request.subject,
      request.text ?? null,
      request.html ?? null,
      JSON.stringify(request.headers),
      JSON.stringify(request.tags),
      JSON.stringify(request.metadata),
      key.testMode ? 1 : 0,
      suppressedReason ?? null,
      now,
      now,
      suppressedReason === undefined ? null : now,
    ],
  );
  const recipients = allRecipients(request);
  const status = suppressedReason === undefined ? 'queued' : 'suppressed';
  await tx.run(
    `INSERT INTO recipients (email_id, position, address, address_lc, type, status, updated_at) VALUES ${recipients
      .map(() => '(?, ?, ?, ?, ?, ?, ?)')
      .join(', ')}`,
    recipients.flatMap((r, i) => [emailId, i, r.mailbox.address, r.mailbox.address.toLowerCase(), r.type, status, now]),
  );
  return { id: emailId, projectId: key.projectId, testMode: key.testMode, tags: { ...request.tags } };
}
