// Recording what happened to each recipient of an email, and the email's aggregate status
// (CONTRACT section 4): the recipient rows, the timeline events (with their webhook outbox rows),
// the suppressions a hard bounce or complaint creates, and terminal_at, all inside the caller's
// transaction. Callers announce the returned events after COMMIT (announceEvents).
import type { DeliveryResult, RecipientResult } from '../delivery/provider.js';
import type { Queryable } from '../storage/db.js';
import { recordEvent, type EmailRef, type NewEvent, type StoredEvent } from './timeline.js';

export type RecipientStatus =
  | 'queued'
  | 'suppressed'
  | 'sent'
  | 'delivered'
  | 'delivery_delayed'
  | 'bounced'
  | 'complained'
  | 'failed'
  | 'delivery_unknown';

export type EmailStatus = 'queued' | 'suppressed' | 'sent' | 'delivered' | 'bounced' | 'failed' | 'delivery_unknown';

/** Recipients still waiting for an outcome: the email is not terminal while any is left. */
export const PENDING_STATUSES: readonly RecipientStatus[] = ['queued', 'delivery_delayed'];

interface EmailRow {
  id: string;
  project_id: string;
  workspace_id: string;
  test_mode: number;
  tags_json: string;
  terminal_at: string | null;
}

interface RecipientRow {
  position: number;
  address: string;
  address_lc: string;
  type: 'to' | 'cc' | 'bcc';
  status: RecipientStatus;
}

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

async function loadEmail(tx: Queryable, emailId: string): Promise<{ row: EmailRow; ref: EmailRef } | undefined> {
  const row = await tx.get<EmailRow>(
    'SELECT id, project_id, workspace_id, test_mode, tags_json, terminal_at FROM emails WHERE id = ?',
    [emailId],
  );
  if (!row) return undefined;
  return {
    row,
    ref: { id: row.id, projectId: row.project_id, testMode: row.test_mode === 1, tags: JSON.parse(row.tags_json) as Record<string, string> },
  };
}

function loadRecipients(tx: Queryable, emailId: string): Promise<RecipientRow[]> {
  return tx.all<RecipientRow>('SELECT position, address, address_lc, type, status FROM recipients WHERE email_id = ? ORDER BY position', [emailId]);
}

/** One email's recording session inside a transaction. */
class OutcomeRecorder {
  readonly events: StoredEvent[] = [];

  constructor(
    private readonly tx: Queryable,
    private readonly email: { row: EmailRow; ref: EmailRef },
    readonly recipients: RecipientRow[],
    private readonly now: string,
  ) {}

  async event(recipient: RecipientRow, type: NewEvent['type'], data?: Record<string, unknown>): Promise<void> {
    const event: NewEvent = { type, occurredAt: this.now, recipient: { address: recipient.address, type: recipient.type } };
    if (data) event.data = data;
    this.events.push(await recordEvent(this.tx, this.email.ref, event));
  }

  async setStatus(recipient: RecipientRow, status: RecipientStatus, attempted: boolean): Promise<void> {
    recipient.status = status;
    await this.tx.run(
      `UPDATE recipients SET status = ?, updated_at = ?${attempted ? ', attempts = attempts + 1' : ''} WHERE email_id = ? AND position = ?`,
      [status, this.now, this.email.row.id, recipient.position],
    );
  }

  async suppress(recipient: RecipientRow, reason: 'hard_bounce' | 'complaint'): Promise<void> {
    // An existing suppression (manual, or an earlier bounce) is kept as it is.
    await this.tx.run(
      `INSERT INTO suppressions (workspace_id, address_lc, reason, created_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (workspace_id, address_lc) DO NOTHING`,
      [this.email.row.workspace_id, recipient.address_lc, reason, this.now],
    );
  }

  async complain(recipient: RecipientRow, data?: Record<string, unknown>): Promise<void> {
    await this.setStatus(recipient, 'complained', false);
    await this.event(recipient, 'email.complained', data);
    await this.suppress(recipient, 'complaint');
  }

  /** Applies complaints the sink reported before this delivery was recorded. */
  async applyPendingComplaint(recipient: RecipientRow): Promise<void> {
    const pending = await this.tx.run('DELETE FROM pending_complaints WHERE email_id = ? AND address_lc = ?', [
      this.email.row.id,
      recipient.address_lc,
    ]);
    if (pending.changes > 0) await this.complain(recipient);
  }

  /** Recomputes the email's status; sets terminal_at once nothing is pending; keeps the first provider id. */
  async finish(providerMessageId?: string | null): Promise<{ status: EmailStatus; terminal: boolean }> {
    const aggregate = aggregateStatus(this.recipients.map((r) => r.status));
    await this.tx.run(
      `UPDATE emails SET status = ?, updated_at = ?,
         provider_message_id = COALESCE(provider_message_id, ?),
         terminal_at = CASE WHEN ? AND terminal_at IS NULL THEN ? ELSE terminal_at END
       WHERE id = ?`,
      [aggregate.status, this.now, providerMessageId ?? null, aggregate.terminal ? 1 : 0, this.now, this.email.row.id],
    );
    return aggregate;
  }
}

async function recorder(tx: Queryable, emailId: string, now: string): Promise<OutcomeRecorder | undefined> {
  const email = await loadEmail(tx, emailId);
  if (!email) return undefined;
  return new OutcomeRecorder(tx, email, await loadRecipients(tx, emailId), now);
}

export interface DeliveryRecordInput {
  emailId: string;
  result: DeliveryResult;
  /** What the provider's acceptance means: the sink is the receiving server (delivered), an upstream only sent. */
  acceptedMeans: 'delivered' | 'sent';
  /** 1-based attempt number of this dispatch. */
  attempt: number;
  /** When the deferred recipients will be tried again; undefined when retries are exhausted. */
  nextAttemptAt?: string;
  now: string;
}

export interface RecordedOutcome {
  events: StoredEvent[];
  status: EmailStatus;
  terminal: boolean;
  /** Recipients still waiting (queued or delivery_delayed). */
  pending: number;
}

/** Records the provider's per-recipient answers for one dispatch of an email. */
export async function recordDeliveryResult(tx: Queryable, input: DeliveryRecordInput): Promise<RecordedOutcome> {
  const rec = await recorder(tx, input.emailId, input.now);
  if (!rec) return { events: [], status: 'failed', terminal: true, pending: 0 };
  const byAddress = new Map<string, RecipientResult>();
  for (const r of input.result.recipients) byAddress.set(r.address.toLowerCase(), r);

  for (const recipient of rec.recipients) {
    if (!PENDING_STATUSES.includes(recipient.status)) continue;
    const answer = byAddress.get(recipient.address_lc);
    if (answer === undefined) continue;
    switch (answer.outcome) {
      case 'accepted':
        await rec.setStatus(recipient, input.acceptedMeans, true);
        await rec.event(recipient, 'email.sent');
        if (input.acceptedMeans === 'delivered') {
          await rec.event(recipient, 'email.delivered');
          await rec.applyPendingComplaint(recipient);
        }
        break;
      case 'deferred':
        if (input.nextAttemptAt === undefined) {
          await rec.setStatus(recipient, 'failed', true);
          await rec.event(recipient, 'email.failed', { reason: 'retries_exhausted', attempts: input.attempt });
        } else {
          await rec.setStatus(recipient, 'delivery_delayed', true);
          await rec.event(recipient, 'email.delivery_delayed', { attempt: input.attempt, next_attempt_at: input.nextAttemptAt });
        }
        break;
      case 'bounced':
        await rec.setStatus(recipient, 'bounced', true);
        await rec.event(recipient, 'email.bounced', {
          bounce_type: 'hard',
          ...(answer.enhancedCode ? { enhanced_status_code: answer.enhancedCode } : {}),
        });
        await rec.suppress(recipient, 'hard_bounce');
        break;
      case 'rejected':
        await rec.setStatus(recipient, 'failed', true);
        await rec.event(recipient, 'email.failed', { reason: 'rejected' });
        break;
      case 'unknown':
        await rec.setStatus(recipient, 'delivery_unknown', true);
        await rec.event(recipient, 'email.delivery_unknown');
        break;
    }
  }
  const accepted = input.result.recipients.some((r) => r.outcome === 'accepted');
  const aggregate = await rec.finish(accepted ? input.result.providerMessageId : null);
  const pending = rec.recipients.filter((r) => PENDING_STATUSES.includes(r.status)).length;
  return { events: rec.events, ...aggregate, pending };
}

/**
 * Ends every pending recipient of an email with one outcome, without a provider answer: the
 * worker died mid-dispatch (delivery_unknown, never resent), or the message could not be built
 * (failed).
 */
export async function settlePendingRecipients(
  tx: Queryable,
  emailId: string,
  outcome: 'delivery_unknown' | 'failed',
  now: string,
  data?: Record<string, unknown>,
): Promise<RecordedOutcome> {
  const rec = await recorder(tx, emailId, now);
  if (!rec) return { events: [], status: 'failed', terminal: true, pending: 0 };
  for (const recipient of rec.recipients) {
    if (!PENDING_STATUSES.includes(recipient.status)) continue;
    await rec.setStatus(recipient, outcome, false);
    await rec.event(recipient, outcome === 'failed' ? 'email.failed' : 'email.delivery_unknown', data);
  }
  const aggregate = await rec.finish();
  return { events: rec.events, ...aggregate, pending: 0 };
}

/**
 * A spam complaint from the receiving side's feedback loop (the sink simulates one). A delivered
 * recipient becomes complained and is suppressed; the email stays delivered. A complaint that
 * arrives before the delivery is recorded waits in pending_complaints and is applied with it.
 */
export async function recordComplaint(
  tx: Queryable,
  emailId: string,
  address: string,
  now: string,
  data?: Record<string, unknown>,
): Promise<StoredEvent[]> {
  const rec = await recorder(tx, emailId, now);
  if (!rec) return [];
  const addressLc = address.toLowerCase();
  const matching = rec.recipients.filter((r) => r.address_lc === addressLc);
  let complained = false;
  for (const recipient of matching) {
    if (recipient.status === 'delivered' || recipient.status === 'sent') {
      await rec.complain(recipient, data);
      complained = true;
    } else if (PENDING_STATUSES.includes(recipient.status)) {
      await tx.run(
        'INSERT INTO pending_complaints (email_id, address_lc, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
        [emailId, addressLc, now],
      );
    }
  }
  if (complained) await rec.finish();
  return rec.events;
}

// Permanent failures that say the address does not exist or is disabled (RFC 3463): a hard bounce,
// which suppresses. Other permanent failures (policy, content, a full mailbox) may pass later.
const HARD_BOUNCE_STATUSES = new Set(['5.1.0', '5.1.1', '5.1.2', '5.1.3', '5.1.6', '5.1.10', '5.2.1']);

/** Whether an enhanced status code (`5.1.1`) names a hard bounce. */
export function isHardBounceStatus(enhancedStatus: string | undefined): boolean {
  return enhancedStatus !== undefined && HARD_BOUNCE_STATUSES.has(enhancedStatus);
}

/** What a report from the receiving side (a delivery status notification) says about a recipient. */
export type RemoteReport =
  | { kind: 'bounce'; enhancedStatus?: string }
  | { kind: 'delay'; enhancedStatus?: string }
  | { kind: 'delivery' };

// A bounce may overtake the worker's own record of the acceptance (the recipient still pending),
// and proves that an unknown outcome did reach the provider.
const BOUNCEABLE: readonly RecipientStatus[] = ['queued', 'delivery_delayed', 'sent', 'delivered', 'delivery_unknown'];

/**
 * Applies a delivery status notification to one recipient of an email: a failure is a bounce
 * (hard ones suppress, soft ones do not), a delay only adds an event, a delivery moves `sent` to
 * `delivered`. A report that repeats what is already known changes nothing.
 */
export async function recordRemoteReport(
  tx: Queryable,
  emailId: string,
  address: string,
  report: RemoteReport,
  now: string,
): Promise<StoredEvent[]> {
  const rec = await recorder(tx, emailId, now);
  if (!rec) return [];
  const addressLc = address.toLowerCase();
  for (const recipient of rec.recipients.filter((r) => r.address_lc === addressLc)) {
    const detail = report.kind !== 'delivery' && report.enhancedStatus ? { enhanced_status_code: report.enhancedStatus } : {};
    if (report.kind === 'bounce' && BOUNCEABLE.includes(recipient.status)) {
      const hard = isHardBounceStatus(report.enhancedStatus);
      await rec.setStatus(recipient, 'bounced', false);
      await rec.event(recipient, 'email.bounced', { bounce_type: hard ? 'hard' : 'soft', source: 'dsn', ...detail });
      if (hard) await rec.suppress(recipient, 'hard_bounce');
    } else if (report.kind === 'delay' && recipient.status === 'sent') {
      await rec.event(recipient, 'email.delivery_delayed', { source: 'dsn', ...detail });
    } else if (report.kind === 'delivery' && recipient.status === 'sent') {
      await rec.setStatus(recipient, 'delivered', false);
      await rec.event(recipient, 'email.delivered', { source: 'dsn' });
    }
  }
  if (rec.events.length > 0) await rec.finish();
  return rec.events;
}
