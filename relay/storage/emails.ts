// Emails and their recipients.
import type { RecipientOutcome } from 'raven-email-sdk';
import type { Queryable, Reader } from './db.js';
import { bySize, insertRows, insertValues, MAX_STATEMENT_BYTES, postgresRows, runWithRows, SQLITE_ROWS } from './rows.js';

export interface EmailSummaryRow {
  seq: number;
  id: string;
  status: string;
  from_address: string;
  to_json: string;
  cc_json: string;
  subject: string;
  tags_json: string;
  test_mode: number;
  created_at: string;
}

export interface EmailDetailRow extends EmailSummaryRow {
  reply_to: string | null;
  metadata_json: string;
  provider_message_id: string | null;
}

/** Whose emails a read sees: the project's, or only those one key created. */
export interface EmailScope {
  projectId: string;
  keyId?: string;
}

export interface EmailListFilter {
  status?: string;
  /** Lower-cased; matches the To recipients. */
  recipientLc?: string;
  /** Only emails before this seq (the cursor). */
  beforeSeq?: number;
  limit: number;
}

const SUMMARY_COLUMNS = ['seq', 'id', 'status', 'from_address', 'to_json', 'cc_json', 'subject', 'tags_json', 'test_mode', 'created_at'];

function scopeWhere(scope: EmailScope): { where: string[]; params: unknown[] } {
  return scope.keyId === undefined
    ? { where: ['e.project_id = ?'], params: [scope.projectId] }
    : { where: ['e.project_id = ?', 'e.key_id = ?'], params: [scope.projectId, scope.keyId] };
}

// seq is a bigint in PostgreSQL, which its driver hands over as a string.
const withNumericSeq = <T extends { seq: number }>(row: T): T => ({ ...row, seq: Number(row.seq) });

/** Newest first. */
export async function listEmailSummaries(q: Reader, scope: EmailScope, filter: EmailListFilter): Promise<EmailSummaryRow[]> {
  const { where, params } = scopeWhere(scope);
  // With a recipient, its To rows drive the page: their index is in list order (email_seq is the
  // email's seq), so the page costs the same whether the address has ten emails or all of them.
  // An address listed twice in one To gives two rows: GROUP BY keeps one (PostgreSQL groups by the
  // email's key, so that the email's other columns may be selected).
  let from = 'emails e';
  let order = 'e.seq';
  let group = '';
  if (filter.recipientLc !== undefined) {
    from = 'recipients r JOIN emails e ON e.seq = r.email_seq';
    order = 'r.email_seq';
    group = q.dialect === 'postgres' ? 'GROUP BY e.seq, r.email_seq' : 'GROUP BY r.email_seq';
    where.push("r.address_lc = ? AND r.type = 'to'");
    params.push(filter.recipientLc);
  }
  if (filter.status !== undefined) {
    where.push('e.status = ?');
    params.push(filter.status);
  }
  if (filter.beforeSeq !== undefined) {
    where.push(`${order} < ?`);
    params.push(filter.beforeSeq);
  }
  const rows = await q.all<EmailSummaryRow>(
    `SELECT ${SUMMARY_COLUMNS.map((c) => `e.${c}`).join(', ')} FROM ${from} WHERE ${where.join(' AND ')}
      ${group} ORDER BY ${order} DESC LIMIT ?`,
    [...params, filter.limit],
  );
  return rows.map(withNumericSeq);
}

export async function getEmailDetail(q: Reader, scope: EmailScope, emailId: string): Promise<EmailDetailRow | undefined> {
  const { where, params } = scopeWhere(scope);
  const row = await q.get<EmailDetailRow>(
    `SELECT ${SUMMARY_COLUMNS.map((c) => `e.${c}`).join(', ')}, e.reply_to, e.metadata_json, e.provider_message_id
       FROM emails e WHERE e.id = ? AND ${where.join(' AND ')}`,
    [emailId, ...params],
  );
  return row && withNumericSeq(row);
}

/** The To and Cc recipients, in order (BCC are never shown). */
export function listVisibleRecipients(q: Reader, emailId: string): Promise<Array<{ address: string; type: RecipientOutcome['type']; status: string; updated_at: string }>> {
  return q.all("SELECT address, type, status, updated_at FROM recipients WHERE email_id = ? AND type != 'bcc' ORDER BY position", [emailId]);
}

export interface RecipientRow<S extends string = string> {
  position: number;
  address: string;
  address_lc: string;
  type: 'to' | 'cc' | 'bcc';
  status: S;
}

/** Every recipient, in order. */
export function listRecipients<S extends string>(q: Reader, emailId: string): Promise<Array<RecipientRow<S>>> {
  return q.all<RecipientRow<S>>('SELECT position, address, address_lc, type, status FROM recipients WHERE email_id = ? ORDER BY position', [emailId]);
}

/** The columns of an email row as admission writes it. */
export const EMAIL_COLUMNS = [
  'id', 'project_id', 'workspace_id', 'key_id', 'status', 'from_address', 'to_json', 'cc_json', 'bcc_json', 'reply_to', 'subject',
  'text_body', 'html_body', 'headers_json', 'tags_json', 'metadata_json', 'test_mode', 'suppression_reason', 'created_at',
  'updated_at', 'terminal_at',
] as const;

export interface NewEmailRow {
  id: string;
  project_id: string;
  workspace_id: string;
  key_id: string;
  status: 'queued' | 'suppressed';
  from_address: string;
  /** JSON arrays of the addresses as given. */
  to_json: string;
  cc_json: string;
  bcc_json: string;
  reply_to: string | null;
  subject: string;
  text_body: string | null;
  html_body: string | null;
  headers_json: string;
  tags_json: string;
  metadata_json: string;
  test_mode: 0 | 1;
  suppression_reason: string | null;
  created_at: string;
  updated_at: string;
  terminal_at: string | null;
}

export function insertEmails(tx: Queryable, rows: readonly NewEmailRow[]): Promise<void> {
  return insertRows(tx, 'emails', EMAIL_COLUMNS, rows);
}

export interface NewRecipientRow {
  email_id: string;
  position: number;
  address: string;
  address_lc: string;
  type: 'to' | 'cc' | 'bcc';
  status: string;
  updated_at: string;
}

/**
 * Recipients, after their emails. email_seq is copied from the email: the ?recipient= list reads
 * it from its index (migration 0003).
 */
export function insertRecipients(tx: Queryable, rows: readonly NewRecipientRow[]): Promise<void> {
  const head = 'INSERT INTO recipients (email_id, email_seq, position, address, address_lc, type, status, updated_at)';
  if (tx.dialect === 'postgres') {
    return runWithRows(
      tx,
      `${head} SELECT r.email_id, (SELECT seq FROM emails WHERE id = r.email_id), r.position, r.address, r.address_lc, r.type, r.status, r.updated_at
         FROM ${postgresRows('recipients')} AS r`,
      rows,
    );
  }
  return runWithRows(
    tx,
    `${head}
     SELECT value->>'email_id', (SELECT seq FROM emails WHERE id = value->>'email_id'), CAST(value->>'position' AS INTEGER),
            value->>'address', value->>'address_lc', value->>'type', value->>'status', value->>'updated_at'
       FROM ${SQLITE_ROWS}`,
    rows,
  );
}

/**
 * The messages submitted over SMTP, kept as they came. Many in one statement: the runs of one
 * prepared statement follow each other, each a trip of its own to the sqlite3 thread pool.
 */
export async function insertSubmissions(tx: Queryable, rows: ReadonlyArray<{ emailId: string; raw: Buffer }>): Promise<void> {
  for (const chunk of bySize(rows, (r) => r.raw.length, MAX_STATEMENT_BYTES)) {
    await insertValues(tx, 'INSERT INTO submissions (email_id, size, raw) VALUES', '(?, ?, ?)', chunk.map((r) => [r.emailId, r.raw.length, r.raw]));
  }
}

/**
 * The ids of the emails whose body the retention rule erases next: terminal at or before the one
 * parameter (the cutoff), body not yet erased. What is kept as long as the body (a submitted
 * message, delivery attempts, receivers' answers to webhooks) goes with `id IN (this)`.
 */
export const BODIES_DUE_FOR_ERASURE = 'SELECT id FROM emails WHERE body_erased_at IS NULL AND terminal_at IS NOT NULL AND terminal_at <= ?';

/** Erases the bodies of emails terminal at or before `cutoff` (a submitted message too); answers how many. */
export async function eraseBodiesTerminalBefore(tx: Queryable, cutoff: string, now: string): Promise<number> {
  await tx.run(`UPDATE submissions SET raw = NULL WHERE raw IS NOT NULL AND email_id IN (${BODIES_DUE_FOR_ERASURE})`, [cutoff]);
  const { changes } = await tx.run(
    `UPDATE emails SET text_body = NULL, html_body = NULL, body_erased_at = ?
     WHERE body_erased_at IS NULL AND terminal_at IS NOT NULL AND terminal_at <= ?`,
    [now, cutoff],
  );
  return changes;
}

/** Forgets complaints still waiting for their delivery since before `cutoff`. */
export async function deletePendingComplaintsBefore(tx: Queryable, cutoff: string): Promise<void> {
  await tx.run('DELETE FROM pending_complaints WHERE created_at <= ?', [cutoff]);
}
