// Filling a relay's database with delivered-looking emails, for the reads and memory figures.
import type { Bootstrap } from '../relay/domain/first-run.js';
import { StorageUnavailableError, type Db, type Queryable } from '../relay/storage/db.js';
import { EMAIL_COLUMNS, type NewEmailRow } from '../relay/storage/emails.js';
import { insertRows } from '../relay/storage/rows.js';

// The reads section's data set, written straight through the relay's own writer code and schema
// (not through the API, which would take minutes), from the bench's process, so the relay's
// memory holds what serving the emails costs and not the fill's garbage. Emails from the past 30
// days, oldest first, with the rows a delivered email has (recipients, its events, a finished job). Statuses are mostly delivered;
// the first To address comes from 10,000 customers, so a recipient filter matches about 10 emails.
/**
 * The relay keeps writing while the fill runs (its maintenance erases old bodies, at a million
 * emails for longer than SQLite's busy timeout): a fill transaction that found the database busy
 * was rolled back whole, so it is simply run again.
 */
async function writeRetryingBusy(db: Db, fn: (tx: Queryable) => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.write(fn);
    } catch (error) {
      if (!(error instanceof StorageUnavailableError) || attempt >= 20) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

const RECIPIENT_COLUMNS = ['email_id', 'email_seq', 'position', 'address', 'address_lc', 'type', 'status', 'updated_at'] as const;
const EVENT_COLUMNS = ['id', 'email_id', 'project_id', 'type', 'recipient', 'recipient_type', 'payload_json', 'occurred_at'] as const;
const JOB_COLUMNS = ['email_id', 'state', 'run_at', 'attempts', 'created_at', 'updated_at'] as const;

export async function fillEmails(db: Db, b: Bootstrap, n: number): Promise<void> {
  const STATUSES = [['delivered', 85], ['sent', 5], ['bounced', 4], ['failed', 2], ['suppressed', 2], ['delivery_unknown', 2]] as const;
  const statusOf = (i: number) => {
    let r = (i * 7919) % 100;
    for (const [status, share] of STATUSES) if ((r -= share) < 0) return status;
    return 'delivered';
  };
  const outcomeEvent: Record<string, string> = { delivered: 'email.delivered', sent: 'email.sent', bounced: 'email.bounced', failed: 'email.failed', delivery_unknown: 'email.delivery_unknown' };
  const startMs = Date.now() - 30 * 86_400_000;
  const stepMs = (30 * 86_400_000) / n;
  const PER_STATEMENT = 2_500;
  const PER_TRANSACTION = 10_000;
  // seq is given, not left to AUTOINCREMENT, so the recipients can carry it (email_seq).
  const firstSeq = ((await db.get<{ seq: number | null }>('SELECT MAX(seq) AS seq FROM emails'))?.seq ?? 0) + 1;
  for (let from = 0; from < n; from += PER_TRANSACTION) {
    await writeRetryingBusy(db, async (tx) => {
      for (let chunk = from; chunk < Math.min(n, from + PER_TRANSACTION); chunk += PER_STATEMENT) {
        const emails: Array<NewEmailRow & { seq: number }> = [];
        const recipients: Array<Record<(typeof RECIPIENT_COLUMNS)[number], unknown>> = [];
        const events: Array<Record<(typeof EVENT_COLUMNS)[number], unknown>> = [];
        const jobs: Array<Record<(typeof JOB_COLUMNS)[number], unknown>> = [];
        for (let i = chunk; i < Math.min(n, chunk + PER_STATEMENT); i++) {
          const id = `em_fill${String(i).padStart(19, '0')}`;
          const at = new Date(startMs + i * stepMs).toISOString();
          const status = statusOf(i);
          const to = [`customer${(i * 31) % 10_000}@${b.domain}`, `ops${i % 7}@${b.domain}`];
          const suppressed = status === 'suppressed';
          const seq = firstSeq + i;
          emails.push({
            seq, id, project_id: b.projectId, workspace_id: b.workspaceId, key_id: b.keyId, status: status as NewEmailRow['status'],
            from_address: `Shop <shop@${b.domain}>`, to_json: JSON.stringify(to), cc_json: '[]', bcc_json: '[]', reply_to: null,
            subject: `Your receipt #${i}`, text_body: 'Thanks for your order. '.repeat(38), html_body: null, headers_json: '{}',
            tags_json: JSON.stringify({ category: i % 3 ? 'receipt' : 'shipping' }), metadata_json: '{}', test_mode: 1,
            suppression_reason: suppressed ? 'hard_bounce' : null, created_at: at, updated_at: at, terminal_at: at,
          });
          to.forEach((address, position) =>
            recipients.push({ email_id: id, email_seq: seq, position, address, address_lc: address, type: 'to', status, updated_at: at }),
          );
          const event = (suffix: string, type: string | undefined, recipient: string | null) => ({
            id: `evt_fill${String(i).padStart(18, '0')}${suffix}`, email_id: id, project_id: b.projectId, type, recipient,
            recipient_type: recipient === null ? null : 'to', payload_json: '{}', occurred_at: at,
          });
          events.push(event('a', suppressed ? 'email.suppressed' : 'email.queued', null));
          if (!suppressed) {
            to.forEach((address, position) => events.push(event(String(position), outcomeEvent[status], address)));
            jobs.push({ email_id: id, state: 'done', run_at: at, attempts: 1, created_at: at, updated_at: at });
          }
        }
        await insertRows(tx, 'emails', ['seq', ...EMAIL_COLUMNS], emails);
        await insertRows(tx, 'recipients', RECIPIENT_COLUMNS, recipients);
        await insertRows(tx, 'events', EVENT_COLUMNS, events);
        await insertRows(tx, 'jobs', JOB_COLUMNS, jobs);
      }
    });
  }
}
