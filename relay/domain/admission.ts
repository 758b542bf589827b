// Admission of POST /v1/emails and of messages submitted over SMTP: CONTRACT section 2, checks 5
// to 12, in that order (section 9 reads a submitted message as the same request; one set of rules,
// quotas, rate windows and idempotency keys for both ways in). Everything from
// the idempotency lookup on runs inside one group-committed write, so a replay, a rate window and
// a quota cap are decided against every admission committed or pending before it.
//
// The admissions that share a group commit are decided together (db.writeBatched): one read each
// for their idempotency keys, sender domains, suppressions and counters (rate windows, monthly
// usage), then each request decided in arrival order against that state and the requests before
// it in the batch, then one multi-row INSERT per table. Every statement is a trip to the sqlite3
// thread pool, so the cost of a group no longer grows with a dozen trips per request.
//
// Several relays on one PostgreSQL database admit at once. A batch holds its idempotency keys
// from its first statement (a repeat waits for the first to commit, then replays it); its counters
// (rate windows, monthly usage) it takes only while it decides, in a short transaction of their own
// that charges what was decided and lets them go without waiting for the disk; the batch's own
// durable COMMIT then confirms the charge (storage/counters.ts). Relays admitting for one
// workspace wait on each other only for that moment, never through a batch's writes or its flush.
import { ApiError, validationError } from '../errors.js';
import { newId } from '../ids.js';
import type { RelayServices } from '../services.js';
import type { Queryable, WriteBatch } from '../storage/db.js';
import { afterFirst, allStatements, readTogether, type Read } from '../storage/rows.js';
import { verifiedDomainsOf } from '../storage/domains.js';
import { insertEmails, insertRecipients, insertSubmissions, type NewEmailRow, type NewRecipientRow } from '../storage/emails.js';
import { takeCounters, type CounterRow, type RateWindowRef } from '../storage/counters.js';
import { idempotencyLock, insertIdempotencyRows, rememberedResults, type NewRememberedRow } from '../storage/idempotency.js';
import { insertReadyJobs, type NewJob } from '../storage/jobs.js';
import { suppressionsOf } from '../storage/suppressions.js';
import { webhooksOfProjectsRead, type ProjectWebhook } from '../storage/webhooks.js';
import type { KeyPrincipal } from './auth.js';
import {
  checkIdempotencyKey,
  idempotencyScope,
  idempotentBodyHash,
  rememberedUntil,
  replayRemembered,
  type Remembered,
} from './idempotency.js';
import { chargeQuota, chargedScopes, type QuotaCounts } from './quota.js';
import { allRecipients, parseSendRequest, type SendRequest } from './send-request.js';
import { readSubmission, submissionHash, type SubmittedMessage } from './submitted-message.js';
import { recordEvents, type EmailRef, type NewEvent, type StoredEvent } from './timeline.js';
import { announceEvents } from '../bus.js';
import { admissionWaiting } from './admission-load.js';

export interface AdmissionResult {
  status: 200 | 202;
  body: { id: string; status: 'queued'; test_mode: boolean } | { id: string; status: 'suppressed'; reason: string };
  replayed: boolean;
}

/** What is admitted: a JSON send request with its Idempotency-Key header, or a submitted message. */
export type AdmissionInput =
  | { kind: 'json'; body: unknown; idempotencyKey: string | undefined }
  | { kind: 'submission'; message: SubmittedMessage };

/** Check 5 (the field rules) and what idempotency compares, for either way in. */
function prepare(input: AdmissionInput, limits: RelayServices['config']['limits']): Omit<Admission, 'key'> {
  if (input.kind === 'json') {
    const parsed = parseSendRequest(input.body, limits);
    if (!parsed.ok) throw validationError(parsed.details);
    checkIdempotencyKey(input.idempotencyKey);
    return { request: parsed.value, idempotencyKey: input.idempotencyKey, bodyHash: idempotentBodyHash(input.idempotencyKey, input.body) };
  }
  const read = readSubmission(input.message);
  if (!read.ok) throw validationError(read.details);
  const { request, idempotencyKey } = read.value;
  checkIdempotencyKey(idempotencyKey);
  const bodyHash = idempotencyKey === undefined ? '' : submissionHash(input.message);
  return { request, idempotencyKey, bodyHash, submitted: input.message.raw };
}

export async function admitEmail(services: RelayServices, key: KeyPrincipal, input: AdmissionInput): Promise<AdmissionResult> {
  const admission: Admission = { key, ...prepare(input, services.config.limits) };
  const waited = admissionWaiting(services);
  const { result, events } = await services.db.writeBatched(admissionBatch(services), admission).finally(waited);
  if (!result.replayed) {
    announceEvents(services.bus, events);
    if (result.status === 202) services.bus.emit('jobs.ready');
  }
  return result;
}

interface Admission {
  key: KeyPrincipal;
  request: SendRequest;
  idempotencyKey: string | undefined;
  bodyHash: string;
  /** A message submitted over SMTP, kept and delivered as it is. */
  submitted?: Buffer;
}

interface Admitted {
  result: AdmissionResult;
  /** Empty for a replay: nothing new happened. */
  events: StoredEvent[];
}

const batches = new WeakMap<RelayServices, WriteBatch<Admission, Admitted>>();

function admissionBatch(services: RelayServices): WriteBatch<Admission, Admitted> {
  let batch = batches.get(services);
  if (!batch) {
    batch = { run: (tx, items) => admitBatch(services, tx, items), ahead: true };
    batches.set(services, batch);
  }
  return batch;
}

const unique = <T>(xs: T[]) => [...new Set(xs)];
const suppressionScope = (workspaceId: string, addressLc: string) => `${workspaceId}\n${addressLc}`;

/** The rate windows of the batch's keys, each once. */
function rateWindowsOf(services: RelayServices, items: Admission[]): RateWindowRef[] {
  const windows = new Map<string, RateWindowRef>();
  for (const { key } of items) {
    for (const w of services.rateLimiter.windows(key)) windows.set(w.scope, { scope: w.scope, windowMs: w.windowMs, limit: w.limit });
  }
  return [...windows.values()];
}

/** What the batch needs to know from the database, read once for all its admissions, in one trip with its counters. */
async function readState(tx: Queryable, items: Admission[], counters: Read<CounterRow>) {
  const idempotencyKeys = items.flatMap((a) => (a.idempotencyKey === undefined ? [] : [[a.key.projectId, a.idempotencyKey] as const]));
  // Across relays on one database, the keys this batch decides on are its own until it commits
  // (taken in one order, so two batches never wait on each other in a circle).
  // The lock is issued with the reads, which run once it is taken (one trip for both).
  const locked = tx.lock(unique(idempotencyKeys.map(([projectId, key]) => idempotencyLock(projectId, key))).sort());
  // One trip for the five (storage/rows.ts readTogether). The webhook endpoints of the batch's
  // projects are read here, not with its events: a statement fewer.
  const projects = unique(items.map((a) => a.key.projectId));
  const reading = readTogether(tx, [
    rememberedResults(tx, idempotencyKeys),
    verifiedDomainsOf(tx, projects),
    suppressionsOf(tx, items.flatMap((a) => allRecipients(a.request).map((r) => [a.key.workspaceId, r.mailbox.address.toLowerCase()] as const))),
    counters,
    webhooksOfProjectsRead(tx, projects),
  ] as const);
  await allStatements([locked, reading]);
  const [remembered, domains, suppressions, held, webhooks] = await reading;
  const verified = new Map<string, Set<string>>();
  for (const d of domains) {
    const names = verified.get(d.project_id) ?? new Set<string>();
    verified.set(d.project_id, names.add(d.name));
  }
  const state = {
    remembered: new Map<string, Remembered>(remembered.map((r) => [idempotencyScope(r.project_id, r.key), r])),
    verified,
    suppressed: new Map(suppressions.map((s) => [suppressionScope(s.workspace_id, s.address_lc), s.reason])),
    webhooks,
  };
  return [state, held] as const;
}

type BatchState = Awaited<ReturnType<typeof readState>>[0] & {
  quota: QuotaCounts;
  /** The batch's time as its rows store it, and when its remembered results expire: the same for every admission of the batch, so made once (a toISOString is about a microsecond). */
  now: string;
  expires: string;
};


/** The rows a batch writes, gathered while its admissions are decided. */
class BatchRows {
  readonly emails: NewEmailRow[] = [];
  readonly recipients: NewRecipientRow[] = [];
  readonly jobs: NewJob[] = [];
  readonly events: Array<{ email: EmailRef; event: NewEvent }> = [];
  readonly idempotency: NewRememberedRow[] = [];
  readonly submissions: Array<{ emailId: string; raw: Buffer }> = [];

  /**
   * The emails first (the other rows refer to them), then the rest together (one trip for all where
   * the backend keeps their order: afterFirst); `webhooks`: the endpoints of the batch's projects.
   */
  async write(tx: Queryable, webhooks: readonly ProjectWebhook[]): Promise<StoredEvent[]> {
    let events: Promise<StoredEvent[]> | undefined;
    await afterFirst(tx, insertEmails(tx, this.emails), () => [
      (events = recordEvents(tx, this.events, webhooks)),
      insertRecipients(tx, this.recipients),
      insertReadyJobs(tx, this.jobs),
      insertIdempotencyRows(tx, this.idempotency),
      insertSubmissions(tx, this.submissions),
    ]);
    return events!;
  }
}

async function admitBatch(services: RelayServices, tx: Queryable, items: Admission[]): Promise<Array<PromiseSettledResult<Admitted>>> {
  const windows = rateWindowsOf(services, items);
  const counters = {
    windows,
    usageScopes: unique(items.flatMap((a) => chargedScopes(a.key))),
    nowMs: () => services.clock.nowMs(),
    // Each admission records at most one hit in each window.
    maxHits: items.length,
  };
  const taken = await takeCounters(services.db, tx, counters, (held) => readState(tx, items, held), (held, read, nowMs) => {
    // This may run twice (storage/counters.ts): each run starts from what was read, keeping
    // nothing of the one before (a key remembered by its first run would replay an email never
    // written).
    services.rateLimiter.drainRecorded();
    // Where the database keeps the rate windows, the limiter decides on what it holds.
    if (held.rate) for (const w of windows) services.rateLimiter.adopt(w.scope, held.rate.get(w.scope) ?? []);
    const state: BatchState = {
      ...read,
      remembered: new Map(read.remembered),
      quota: { used: new Map(held.used), charges: new Map(), caps: new Map() },
      now: new Date(nowMs).toISOString(),
      expires: rememberedUntil(nowMs, services.config.limits.idempotencyRetentionDays),
    };
    const rows = new BatchRows();
    const decided = items.map((item): PromiseSettledResult<{ result: AdmissionResult; event?: number }> => {
      try {
        const result = decide(services, state, rows, item, nowMs);
        // A new admission adds exactly one event to rows.events; a replay adds none.
        return { status: 'fulfilled', value: { result, event: result.replayed ? undefined : rows.events.length - 1 } };
      } catch (reason) {
        return { status: 'rejected', reason };
      }
    });
    const hits = services.rateLimiter.drainRecorded();
    return {
      value: { rows, decided, webhooks: read.webhooks },
      rate: windows.map((w) => ({ ...w, hits: hits.get(w.scope) ?? 0 })),
      usage: [...state.quota.charges].map(([scope, recipients]) => ({ scope, recipients, cap: state.quota.caps.get(scope) ?? null })),
    };
  });
  const { rows, decided, webhooks } = taken.value;
  try {
    // The charge is issued with the rows: on SQLite it then costs no trip of its own.
    const writing = rows.write(tx, webhooks);
    await allStatements([writing, taken.confirm(tx)]);
    const stored = await writing;
    return decided.map((d) =>
      d.status === 'rejected'
        ? d
        : { status: 'fulfilled', value: { result: d.value.result, events: d.value.event === undefined ? [] : [stored[d.value.event]!] } },
    );
  } catch (error) {
    taken.giveBack();
    throw error;
  }
}

/** Checks 6 to 12 for one request, against the batch's state; records what an admission writes. */
function decide(services: RelayServices, state: BatchState, rows: BatchRows, item: Admission, nowMs: number): AdmissionResult {
  const { key, request, idempotencyKey, bodyHash } = item;
  const idempotency = idempotencyKey === undefined ? undefined : idempotencyScope(key.projectId, idempotencyKey);
  const previous = idempotency === undefined ? undefined : state.remembered.get(idempotency);
  if (previous) return { ...replayRemembered<AdmissionResult['body']>(previous, bodyHash), replayed: true };

  const limited = services.rateLimiter.check(key, nowMs);
  if (limited) {
    throw new ApiError(
      'rate_limit_exceeded',
      `Rate limit exceeded (${limited.label}); retry after ${limited.retryAfter} second${limited.retryAfter === 1 ? '' : 's'} with the same Idempotency-Key.`,
      { retryAfter: limited.retryAfter },
    );
  }

  const domains = state.verified.get(key.projectId) ?? new Set<string>();
  if (!domains.has(request.from.domain)) {
    throw new ApiError('domain_not_verified', domainNotVerifiedMessage(request.from.domain, domains));
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

  // The reason of the first suppressed address, in To, CC, BCC order.
  const reason = recipients
    .map((r) => state.suppressed.get(suppressionScope(key.workspaceId, r.mailbox.address.toLowerCase())))
    .find((r) => r !== undefined);
  if (reason === undefined) chargeQuota(services.config.limits, state.quota, key, recipients.length, nowMs);

  const { now } = state;
  const emailId = newId('em', nowMs);
  const outcome: AdmissionResult =
    reason === undefined
      ? { status: 202, body: { id: emailId, status: 'queued', test_mode: key.testMode }, replayed: false }
      : { status: 200, body: { id: emailId, status: 'suppressed', reason }, replayed: false };
  const ref = addEmail(rows, key, request, emailId, reason, now);
  if (item.submitted) rows.submissions.push({ emailId, raw: item.submitted });
  if (reason === undefined) {
    rows.jobs.push({ emailId, runAt: now });
    rows.events.push({ email: ref, event: { type: 'email.queued', occurredAt: now } });
  } else {
    rows.events.push({ email: ref, event: { type: 'email.suppressed', occurredAt: now, data: { reason } } });
  }
  if (idempotency !== undefined && idempotencyKey !== undefined) {
    const { expires } = state;
    const remembered: Remembered = { body_hash: bodyHash, status_code: outcome.status, response_json: JSON.stringify(outcome.body) };
    rows.idempotency.push({ project_id: key.projectId, key: idempotencyKey, ...remembered, email_id: emailId, created_at: now, expires_at: expires });
    // A later request of this batch with the same key is a replay of this one.
    state.remembered.set(idempotency, remembered);
  }
  services.rateLimiter.record(key, nowMs);
  return outcome;
}

/** A list of mailboxes as stored: their raw forms, a JSON array. */
const raws = (list: { raw: string }[]) => JSON.stringify(list.map((m) => m.raw));

function addEmail(
  rows: BatchRows,
  key: KeyPrincipal,
  request: SendRequest,
  emailId: string,
  suppressedReason: string | undefined,
  now: string,
): EmailRef {
  const status = suppressedReason === undefined ? 'queued' : 'suppressed';
  rows.emails.push({
    id: emailId,
    project_id: key.projectId,
    workspace_id: key.workspaceId,
    key_id: key.keyId,
    status,
    from_address: request.from.raw,
    to_json: raws(request.to),
    cc_json: raws(request.cc),
    bcc_json: raws(request.bcc),
    reply_to: request.replyTo?.raw ?? null,
    subject: request.subject,
    text_body: request.text ?? null,
    html_body: request.html ?? null,
    headers_json: JSON.stringify(request.headers),
    tags_json: JSON.stringify(request.tags),
    metadata_json: JSON.stringify(request.metadata),
    test_mode: key.testMode ? 1 : 0,
    suppression_reason: suppressedReason ?? null,
    created_at: now,
    updated_at: now,
    terminal_at: suppressedReason === undefined ? null : now,
  });
  allRecipients(request).forEach((r, i) =>
    rows.recipients.push({
      email_id: emailId,
      position: i,
      address: r.mailbox.address,
      address_lc: r.mailbox.address.toLowerCase(),
      type: r.type,
      status,
      updated_at: now,
    }),
  );
  return { id: emailId, projectId: key.projectId, testMode: key.testMode, tags: { ...request.tags } };
}

/** Names what would work: the project's verified domains, or how to add one when it has none. */
function domainNotVerifiedMessage(domain: string, verified: ReadonlySet<string>): string {
  const names = [...verified].sort();
  const known =
    names.length === 0
      ? 'it has no verified domain yet (add one with `ravenctl relay domains add`)'
      : `its verified domain${names.length === 1 ? ' is' : 's are'} ${names.join(', ')}`;
  return `The sender domain ${domain} is not verified in this key's project: ${known}.`;
}
