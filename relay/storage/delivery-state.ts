// The rows an outcome reads and changes (emails, recipients, suppressions, pending complaints),
// read and written for many emails at once: a statement per table, whatever the number of emails,
// because every statement is a trip to the sqlite3 thread pool and back. JSON fields are text on
// PostgreSQL: numbers go through CAST, which SQLite accepts as well.
import type { RecipientStatus } from 'raven-email-sdk';
import type { Queryable } from './db.js';
import { allStatements, insertRows, readTogether, runWithRows, type Read } from './rows.js';

export interface OutcomeEmailRow {
  id: string;
  project_id: string;
  workspace_id: string;
  test_mode: number;
  tags_json: string;
  terminal_at: string | null;
}

export interface OutcomeRecipientRow {
  email_id: string;
  position: number;
  address: string;
  address_lc: string;
  type: 'to' | 'cc' | 'bcc';
  status: RecipientStatus;
}

export interface OutcomeRows {
  emails: OutcomeEmailRow[];
  /** In (email, position) order. */
  recipients: OutcomeRecipientRow[];
  pendingComplaints: Array<{ email_id: string; address_lc: string }>;
}

/**
 * The emails, their recipients and the complaints waiting for them; three statements issued
 * together. On PostgreSQL the emails' rows are locked first (in id order), so two units of work
 * deciding outcomes of one email (its delivery, a complaint, a lease recovery on another relay)
 * take turns, the second reading what the first committed; SQLite's single writer already does.
 */
export async function loadOutcomeRows(tx: Queryable, emailIds: readonly string[]): Promise<OutcomeRows> {
  const ids = JSON.stringify([...new Set(emailIds)]);
  const postgres = tx.dialect === 'postgres';
  const reads = [
    selectOf<OutcomeEmailRow>(
      ['id', 'project_id', 'workspace_id', 'test_mode', 'tags_json', 'terminal_at'],
      `FROM emails WHERE id IN (SELECT value FROM json_each(?))${postgres ? ' ORDER BY id FOR UPDATE' : ''}`,
      ids,
    ),
    selectOf<OutcomeRecipientRow>(
      ['email_id', 'position', 'address', 'address_lc', 'type', 'status'],
      'FROM recipients WHERE email_id IN (SELECT value FROM json_each(?)) ORDER BY email_id, position',
      ids,
    ),
    selectOf<{ email_id: string; address_lc: string }>(['email_id', 'address_lc'], 'FROM pending_complaints WHERE email_id IN (SELECT value FROM json_each(?))', ids),
  ] as const;
  // SQLite: one statement (readTogether), not three, each a wake-up of the writer's thread. The
  // locking read stays a statement of its own on PostgreSQL.
  const [emails, recipients, pendingComplaints] = postgres
    ? await Promise.all(reads.map((r) => tx.all(r.sql, r.params)))
    : await readTogether(tx, reads);
  return { emails, recipients, pendingComplaints } as OutcomeRows;
}

/** `SELECT columns rest`, named for readTogether. */
function selectOf<T>(columns: ReadonlyArray<keyof T & string>, rest: string, ids: string): Read<T> {
  return { sql: `SELECT ${columns.join(', ')} ${rest}`, params: [ids], columns };
}

export interface RecipientChange {
  emailId: string;
  position: number;
  status: RecipientStatus;
  /** Delivery attempts to add to the recipient's count. */
  attempts: number;
}

export interface EmailChange {
  emailId: string;
  status: string;
  /** Kept only when the email has none yet. */
  providerMessageId: string | null;
  /** terminal_at is set to now unless it is set already. */
  terminal: boolean;
}

/** The changes of one recording session; each list holds at most one entry per row it changes. */
export interface OutcomeChanges {
  recipients: RecipientChange[];
  emails: EmailChange[];
  suppressions: Array<{ workspaceId: string; addressLc: string; reason: 'hard_bounce' | 'complaint' }>;
  complaintsApplied: Array<{ emailId: string; addressLc: string }>;
  complaintsWaiting: Array<{ emailId: string; addressLc: string }>;
}

/** Writes the changes, one statement per kind of change (none for an empty kind). */
export async function applyOutcomeChanges(tx: Queryable, changes: OutcomeChanges, now: string): Promise<void> {
  const writes: Array<Promise<void>> = [];
  if (changes.recipients.length > 0) {
    writes.push(
      runWithRows(
        tx,
        `UPDATE recipients SET status = value->>'status', attempts = attempts + CAST(value->>'attempts' AS INTEGER), updated_at = value->>'now'
           FROM json_each(?) WHERE email_id = value->>'emailId' AND position = CAST(value->>'position' AS INTEGER)`,
        changes.recipients.map((r) => ({ ...r, now })),
      ),
    );
  }
  if (changes.emails.length > 0) {
    writes.push(
      runWithRows(
        tx,
        `UPDATE emails SET status = value->>'status', updated_at = value->>'now',
           provider_message_id = COALESCE(provider_message_id, value->>'providerMessageId'),
           terminal_at = COALESCE(terminal_at, value->>'terminalAt')
         FROM json_each(?) WHERE emails.id = value->>'emailId'`,
        changes.emails.map((e) => ({ emailId: e.emailId, status: e.status, providerMessageId: e.providerMessageId, now, terminalAt: e.terminal ? now : null })),
      ),
    );
  }
  // An existing suppression (manual, or an earlier bounce) is kept as it is.
  writes.push(
    insertRows(
      tx,
      'suppressions',
      ['workspace_id', 'address_lc', 'reason', 'created_at'],
      changes.suppressions.map((s) => ({ workspace_id: s.workspaceId, address_lc: s.addressLc, reason: s.reason, created_at: now })),
      'ON CONFLICT (workspace_id, address_lc) DO NOTHING',
    ),
  );
  if (changes.complaintsApplied.length > 0) {
    writes.push(
      runWithRows(
        tx,
        "DELETE FROM pending_complaints WHERE (email_id, address_lc) IN (SELECT value->>'emailId', value->>'addressLc' FROM json_each(?))",
        changes.complaintsApplied,
      ),
    );
  }
  writes.push(
    insertRows(
      tx,
      'pending_complaints',
      ['email_id', 'address_lc', 'created_at'],
      changes.complaintsWaiting.map((c) => ({ email_id: c.emailId, address_lc: c.addressLc, created_at: now })),
      'ON CONFLICT DO NOTHING',
    ),
  );
  await allStatements(writes);
}
