// Recording what happened to each recipient of an email, and the email's aggregate status
// (CONTRACT section 4): the recipient rows, the timeline events (with their webhook outbox rows),
// the suppressions a hard bounce or complaint creates, and terminal_at, all inside the caller's
// transaction. Callers announce the returned events after COMMIT (announceEvents).
import type { EmailStatus, RecipientStatus } from 'raven-email-sdk';
import { PENDING_RECIPIENT_STATUSES } from 'raven-email-sdk/enums';
import type { DeliveryResult, RecipientResult } from '../mail/delivery-result.js';
import { isHardBounceStatus } from '../mail/status-codes.js';
import type { Queryable } from '../storage/db.js';
import {
  applyOutcomeChanges,
  loadOutcomeRows,
  type EmailChange,
  type OutcomeChanges,
  type OutcomeEmailRow,
  type OutcomeRecipientRow,
  type RecipientChange,
} from '../storage/delivery-state.js';
import { insertDeliveryAttempts, type DeliveryAttemptRow } from '../storage/delivery-attempts.js';
import { allStatements } from '../storage/rows.js';
import { recordEvents, type EmailRef, type NewEvent, type StoredEvent } from './timeline.js';
import { announceEvents } from '../bus.js';

/** Recipients still waiting for an outcome: the email is not terminal while any is left. */
export const PENDING_STATUSES: readonly RecipientStatus[] = PENDING_RECIPIENT_STATUSES;

type RecipientRow = OutcomeRecipientRow;

/** The email's status from its recipients' statuses. */
export function aggregateStatus(statuses: RecipientStatus[]): { status: EmailStatus; terminal: boolean } {
  // A complaint comes after delivery and leaves the email delivered.
  const outcomes = statuses.map((s) => (s === 'complained' ? 'delivered' : s));
  if (outcomes.some((s) => PENDING_STATUSES.includes(s))) {
    return { status: outcomes.some((s) => s === 'sent' || s === 'delivered') ? 'sent' : 'queued', terminal: false };
  }
  const distinct = new Set(outcomes);
  if (distinct.size === 1) {
    const only = outcomes[0]!;
    if (only === 'delivered' || only === 'bounced' || only === 'failed' || only === 'delivery_unknown' || only === 'sent') {
      return { status: only, terminal: true };
    }
    if (only === 'suppressed') return { status: 'suppressed', terminal: true };
  }
  // Mixed recipient outcomes leave the email sent.
  return { status: 'sent', terminal: true };
}

/** One email as a recording session sees it: its row, its recipients, its waiting complaints. */
interface EmailState {
  row: OutcomeEmailRow;
  ref: EmailRef;
  recipients: RecipientRow[];
  pendingComplaints: Set<string>;
  events: StoredEvent[];
}

/**
 * Records outcomes for one or many emails inside a transaction: it reads their rows once, decides
 * in memory, and writes every change with a statement per table (storage/delivery-state.ts).
 */
class RecordingSession {
  private readonly recipientChanges = new Map<RecipientRow, RecipientChange>();
  private readonly emailChanges = new Map<string, EmailChange>();
  private readonly newEvents: Array<{ state: EmailState; event: NewEvent }> = [];
  /** The status each recipient's delivery attempt led to (before a waiting complaint applies). */
  readonly attemptOutcomes = new Map<RecipientRow, RecipientStatus>();
  readonly attempts: DeliveryAttemptRow[] = [];
  private readonly changes: Pick<OutcomeChanges, 'suppressions' | 'complaintsApplied' | 'complaintsWaiting'> = {
    suppressions: [],
    complaintsApplied: [],
    complaintsWaiting: [],
  };

  private constructor(
    readonly emails: Map<string, EmailState>,
    private readonly now: string,
  ) {}

  static async open(tx: Queryable, emailIds: readonly string[], now: string): Promise<RecordingSession> {
    const rows = await loadOutcomeRows(tx, emailIds);
    const emails = new Map<string, EmailState>();
    for (const row of rows.emails) {
      const ref = { id: row.id, projectId: row.project_id, testMode: row.test_mode === 1, tags: JSON.parse(row.tags_json) as Record<string, string> };
      emails.set(row.id, { row, ref, recipients: [], pendingComplaints: new Set(), events: [] });
    }
    for (const r of rows.recipients) emails.get(r.email_id)?.recipients.push(r);
    for (const c of rows.pendingComplaints) emails.get(c.email_id)?.pendingComplaints.add(c.address_lc);
    return new RecordingSession(emails, now);
  }

  event(state: EmailState, recipient: RecipientRow, type: NewEvent['type'], data?: Record<string, unknown>): void {
    const event: NewEvent = { type, occurredAt: this.now, recipient: { address: recipient.address, type: recipient.type } };
    if (data) event.data = data;
    this.newEvents.push({ state, event });
  }

  setStatus(recipient: RecipientRow, status: RecipientStatus, attempted: boolean): void {
    recipient.status = status;
    if (attempted) this.attemptOutcomes.set(recipient, status);
    const change = this.recipientChanges.get(recipient);
    if (change) {
      change.status = status;
      change.attempts += attempted ? 1 : 0;
    } else {
      this.recipientChanges.set(recipient, { emailId: recipient.email_id, position: recipient.position, status, attempts: attempted ? 1 : 0 });
    }
  }

  suppress(state: EmailState, recipient: RecipientRow, reason: 'hard_bounce' | 'complaint'): void {
    this.changes.suppressions.push({ workspaceId: state.row.workspace_id, addressLc: recipient.address_lc, reason });
  }

  complain(state: EmailState, recipient: RecipientRow, data?: Record<string, unknown>): void {
    this.setStatus(recipient, 'complained', false);
    this.event(state, recipient, 'email.complained', data);
    this.suppress(state, recipient, 'complaint');
  }

  /** A complaint about a recipient still pending waits for its delivery to be recorded. */
  waitForDelivery(state: EmailState, recipient: RecipientRow): void {
    if (state.pendingComplaints.has(recipient.address_lc)) return;
    state.pendingComplaints.add(recipient.address_lc);
    this.changes.complaintsWaiting.push({ emailId: state.row.id, addressLc: recipient.address_lc });
  }

  /** Applies complaints the sink reported before this delivery was recorded. */
  applyPendingComplaint(state: EmailState, recipient: RecipientRow): void {
    if (!state.pendingComplaints.delete(recipient.address_lc)) return;
    this.changes.complaintsApplied.push({ emailId: state.row.id, addressLc: recipient.address_lc });
    this.complain(state, recipient);
  }

  /** Recomputes the email's status; sets terminal_at once nothing is pending; keeps the first provider id. */
  finish(state: EmailState, providerMessageId?: string | null): { status: EmailStatus; terminal: boolean } {
    const aggregate = aggregateStatus(state.recipients.map((r) => r.status));
    const previous = this.emailChanges.get(state.row.id);
    this.emailChanges.set(state.row.id, {
      emailId: state.row.id,
      ...aggregate,
      providerMessageId: previous?.providerMessageId ?? providerMessageId ?? null,
    });
    return aggregate;
  }

  /**
   * Writes everything decided, and `alongside` (other writes of the same unit); each email's state
   * then holds the events stored for it. The writes are independent of each other, so they are
   * issued together: on SQLite one trip to the thread pool instead of one each, and a writer trip
   * is what the single writer's time goes to (BENCHMARKS.md, issue 24, session 12).
   */
  async commit(tx: Queryable, alongside: Promise<unknown> = Promise.resolve()): Promise<void> {
    const events = this.newEvents.length === 0 ? Promise.resolve([]) : recordEvents(tx, this.newEvents.map(({ state, event }) => ({ email: state.ref, event })));
    // Every write settled before a failure is thrown: the writer's ROLLBACK TO must not overtake one.
    await allStatements([
      applyOutcomeChanges(tx, { ...this.changes, recipients: [...this.recipientChanges.values()], emails: [...this.emailChanges.values()] }, this.now),
      insertDeliveryAttempts(tx, this.attempts),
      events,
      alongside,
    ]);
    const stored = await events;
    stored.forEach((event, i) => this.newEvents[i]!.state.events.push(event));
  }
}

export interface DeliveryRecordInput {
  emailId: string;
  result: DeliveryResult;
  /** What the provider's acceptance means: the sink is the receiving server (delivered), an upstream only sent. */
  acceptedMeans: 'delivered' | 'sent';
  /** 1-based attempt number of this dispatch. */
  attempt: number;
  /** When the dispatch began (relay clock), and through which provider: for the attempts view. */
  startedAt: string;
  provider: 'sink' | 'smtp';
  /** When the deferred recipients will be tried again; undefined when retries are exhausted. */
  nextAttemptAt?: string;
}

export interface RecordedOutcome {
  events: StoredEvent[];
  status: EmailStatus;
  terminal: boolean;
  /** Recipients still waiting (queued or delivery_delayed). */
  pending: number;
}

const NOTHING_RECORDED: RecordedOutcome = { events: [], status: 'failed', terminal: true, pending: 0 };

/**
 * Opens a session over the emails, lets decide() fill it, writes it together with what
 * `alongside` writes given the decision; decide's result then holds the stored events.
 */
async function recordWith<T>(
  tx: Queryable,
  emailIds: readonly string[],
  now: string,
  decide: (session: RecordingSession) => T,
  alongside: (decided: T) => Promise<unknown> = async () => undefined,
): Promise<T> {
  const session = await RecordingSession.open(tx, emailIds, now);
  const decided = decide(session);
  await session.commit(tx, alongside(decided));
  return decided;
}

/** The admin's record of one recipient's attempt (CONTRACT section 11). */
function attemptRow(input: DeliveryRecordInput, recipient: RecipientRow, answer: RecipientResult, outcome: RecipientStatus): DeliveryAttemptRow {
  return {
    email_id: input.emailId,
    position: recipient.position,
    attempt: input.attempt,
    recipient: recipient.address,
    started_at: input.startedAt,
    provider: input.provider,
    host: answer.session?.host ?? null,
    port: answer.session?.port ?? null,
    tls: answer.session?.tls ? 1 : 0,
    tls_version: answer.session?.tlsVersion ?? null,
    certificate_verified: answer.session?.certificateVerified == null ? null : answer.session.certificateVerified ? 1 : 0,
    outcome,
    reply: answer.diagnostic ?? null,
    transcript_json: JSON.stringify(answer.session?.transcript ?? []),
    next_attempt_at: outcome === 'delivery_delayed' ? (input.nextAttemptAt ?? null) : null,
  };
}

function decideDelivery(session: RecordingSession, input: DeliveryRecordInput): RecordedOutcome {
  const state = session.emails.get(input.emailId);
  if (!state) return { ...NOTHING_RECORDED, events: [] };
  const byAddress = new Map<string, RecipientResult>();
  for (const r of input.result.recipients) byAddress.set(r.address.toLowerCase(), r);

  for (const recipient of state.recipients) {
    if (!PENDING_STATUSES.includes(recipient.status)) continue;
    const answer = byAddress.get(recipient.address_lc);
    if (answer === undefined) continue;
    switch (answer.outcome) {
      case 'accepted':
        session.setStatus(recipient, input.acceptedMeans, true);
        session.event(state, recipient, 'email.sent');
        if (input.acceptedMeans === 'delivered') {
          session.event(state, recipient, 'email.delivered');
          session.applyPendingComplaint(state, recipient);
        }
        break;
      case 'deferred':
        if (input.nextAttemptAt === undefined) {
          session.setStatus(recipient, 'failed', true);
          session.event(state, recipient, 'email.failed', {
            reason: 'retries_exhausted',
            attempts: input.attempt,
            ...(answer.reason ? { last_reason: answer.reason } : {}),
          });
        } else {
          session.setStatus(recipient, 'delivery_delayed', true);
          session.event(state, recipient, 'email.delivery_delayed', {
            attempt: input.attempt,
            next_attempt_at: input.nextAttemptAt,
            ...(answer.reason ? { reason: answer.reason } : {}),
          });
        }
        break;
      case 'bounced':
        session.setStatus(recipient, 'bounced', true);
        session.event(state, recipient, 'email.bounced', {
          bounce_type: 'hard',
          ...(answer.enhancedCode ? { enhanced_status_code: answer.enhancedCode } : {}),
        });
        session.suppress(state, recipient, 'hard_bounce');
        break;
      case 'rejected':
        session.setStatus(recipient, 'failed', true);
        session.event(state, recipient, 'email.failed', { reason: 'rejected' });
        break;
      case 'unknown': // maybe sent: delivery/delivery-unknown.ts decides when
        session.setStatus(recipient, 'delivery_unknown', true);
        session.event(state, recipient, 'email.delivery_unknown');
        break;
    }
    session.attempts.push(attemptRow(input, recipient, answer, session.attemptOutcomes.get(recipient)!));
  }
  const accepted = input.result.recipients.some((r) => r.outcome === 'accepted');
  const aggregate = session.finish(state, accepted ? input.result.providerMessageId : null);
  const pending = state.recipients.filter((r) => PENDING_STATUSES.includes(r.status)).length;
  return { events: state.events, ...aggregate, pending };
}

/** Records the provider's per-recipient answers for one dispatch of an email. */
export async function recordDeliveryResult(tx: Queryable, input: DeliveryRecordInput, now: string): Promise<RecordedOutcome> {
  return (await recordDeliveryResults(tx, [input], now))[0]!;
}

/** recordDeliveryResult for the dispatches of many emails (one each), in a statement per table. */
/**
 * Records the answers; `alongside` writes what follows from the outcomes (the worker: its jobs'
 * next state) in the same trips as the outcomes' own writes.
 */
export function recordDeliveryResults(
  tx: Queryable,
  inputs: readonly DeliveryRecordInput[],
  now: string,
  alongside?: (outcomes: RecordedOutcome[]) => Promise<unknown>,
): Promise<RecordedOutcome[]> {
  return recordWith(tx, inputs.map((i) => i.emailId), now, (session) => inputs.map((input) => decideDelivery(session, input)), alongside);
}

/**
 * Ends every pending recipient of the emails with one outcome, without a provider answer: maybe
 * sent (delivery_unknown, never resent: through settleMaybeSent in delivery/delivery-unknown.ts),
 * or the message could not be built (failed).
 */
export function settlePendingRecipients(
  tx: Queryable,
  emailIds: readonly string[],
  outcome: 'delivery_unknown' | 'failed',
  now: string,
  data?: Record<string, unknown>,
): Promise<RecordedOutcome[]> {
  return recordWith(tx, emailIds, now, (session) =>
    emailIds.map((emailId) => {
      const state = session.emails.get(emailId);
      if (!state) return { ...NOTHING_RECORDED, events: [] };
      for (const recipient of state.recipients) {
        if (!PENDING_STATUSES.includes(recipient.status)) continue;
        session.setStatus(recipient, outcome, false);
        session.event(state, recipient, outcome === 'failed' ? 'email.failed' : 'email.delivery_unknown', data);
      }
      return { events: state.events, ...session.finish(state), pending: 0 };
    }),
  );
}

/**
 * A spam complaint from the receiving side's feedback loop (the sink simulates one). A delivered
 * recipient becomes complained and is suppressed; the email stays delivered. A complaint that
 * arrives before the delivery is recorded waits in pending_complaints and is applied with it.
 */
export function recordComplaint(
  tx: Queryable,
  emailId: string,
  address: string,
  now: string,
  data?: Record<string, unknown>,
): Promise<StoredEvent[]> {
  return recordForAddress(tx, emailId, address, now, (session, state, recipient) => {
    if (recipient.status === 'delivered' || recipient.status === 'sent') {
      session.complain(state, recipient, data);
      return true;
    }
    if (PENDING_STATUSES.includes(recipient.status)) session.waitForDelivery(state, recipient);
    return false;
  });
}

/**
 * Lets decide() act on each recipient of the email with that address; it answers whether it
 * changed the recipient, and the email's status is recomputed if any was.
 */
function recordForAddress(
  tx: Queryable,
  emailId: string,
  address: string,
  now: string,
  decide: (session: RecordingSession, state: EmailState, recipient: RecipientRow) => boolean,
): Promise<StoredEvent[]> {
  return recordWith(tx, [emailId], now, (session) => {
    const state = session.emails.get(emailId);
    if (!state) return [];
    const addressLc = address.toLowerCase();
    let changed = false;
    for (const recipient of state.recipients.filter((r) => r.address_lc === addressLc)) {
      if (decide(session, state, recipient)) changed = true;
    }
    if (changed) session.finish(state);
    return state.events;
  });
}

/** What a report from the receiving side (a delivery status notification) says about a recipient. */
export type RemoteReport =
  | { kind: 'bounce'; enhancedStatus?: string }
  | { kind: 'delay'; enhancedStatus?: string }
  | { kind: 'delivery' };

// A bounce may overtake the worker's own record of the acceptance (the recipient still pending),
// and proves that a maybe-sent (delivery_unknown) message did reach the provider.
const BOUNCEABLE: readonly RecipientStatus[] = ['queued', 'delivery_delayed', 'sent', 'delivered', 'delivery_unknown'];

/**
 * Applies a delivery status notification to one recipient of an email: a failure is a bounce
 * (hard ones suppress, soft ones do not), a delay only adds an event, a delivery moves `sent` to
 * `delivered`. A report that repeats what is already known changes nothing.
 */
export function recordRemoteReport(
  tx: Queryable,
  emailId: string,
  address: string,
  report: RemoteReport,
  now: string,
): Promise<StoredEvent[]> {
  const detail = report.kind !== 'delivery' && report.enhancedStatus ? { enhanced_status_code: report.enhancedStatus } : {};
  return recordForAddress(tx, emailId, address, now, (session, state, recipient) => {
    if (report.kind === 'bounce' && BOUNCEABLE.includes(recipient.status)) {
      const hard = isHardBounceStatus(report.enhancedStatus);
      session.setStatus(recipient, 'bounced', false);
      session.event(state, recipient, 'email.bounced', { bounce_type: hard ? 'hard' : 'soft', source: 'dsn', ...detail });
      if (hard) session.suppress(state, recipient, 'hard_bounce');
      return true;
    }
    if (report.kind === 'delay' && recipient.status === 'sent') {
      session.event(state, recipient, 'email.delivery_delayed', { source: 'dsn', ...detail });
      return true;
    }
    if (report.kind === 'delivery' && recipient.status === 'sent') {
      session.setStatus(recipient, 'delivered', false);
      session.event(state, recipient, 'email.delivered', { source: 'dsn' });
      return true;
    }
    return false;
  });
}
