// Mail captured by the SMTP sink: captured_messages + captured_recipients.
import { deleteCheckSummaries } from './check-summaries.js';
import type { Db, Queryable, Reader } from './db.js';
import { bySize, inValues, MAX_STATEMENT_BYTES } from './rows.js';

export interface CapturedSummary {
  id: string;
  from: string;
  header_from: string | null;
  to: string[];
  subject: string | null;
  received_at: string;
  size: number;
  /** The project it belongs to (CONTRACT section 10), or null when the relay cannot tell. */
  project_id: string | null;
}

export interface NewCapturedMessage {
  id: string;
  envelopeFrom: string;
  /** The decoded From header, or null. */
  headerFrom: string | null;
  envelopeTo: string[];
  subject: string | null;
  raw: Buffer;
  emailId: string | null;
  /** The project of the API key the client authenticated with; a delivery of `emailId` takes its email's. */
  projectId: string | null;
  receivedAt: string;
}

interface CapturedRow {
  id: string;
  envelope_from: string;
  header_from: string | null;
  envelope_to_json: string;
  subject: string | null;
  size: number;
  received_at: string;
  project_id: string | null;
}

function summary(row: CapturedRow): CapturedSummary {
  return {
    id: row.id,
    from: row.envelope_from,
    header_from: row.header_from,
    to: JSON.parse(row.envelope_to_json) as string[],
    subject: row.subject,
    received_at: row.received_at,
    size: row.size,
    project_id: row.project_id,
  };
}

/** Messages per statement at most. */
const MAX_ROWS_PER_INSERT = 64;

/**
 * The messages in as few statements as the caps allow (each statement binds its rows' raw bodies,
 * which the driver copies): runs of up to MAX_STATEMENT_BYTES (a larger message alone) and
 * MAX_ROWS_PER_INSERT messages, so a typical group is one statement (and at most 64 texts are
 * ever prepared).
 */
function insertRuns(messages: readonly NewCapturedMessage[]): NewCapturedMessage[][] {
  const pieces: NewCapturedMessage[][] = [];
  for (const run of bySize(messages, (m) => m.raw.length, MAX_STATEMENT_BYTES)) {
    for (let at = 0; at < run.length; at += MAX_ROWS_PER_INSERT) pieces.push(run.slice(at, at + MAX_ROWS_PER_INSERT));
  }
  return pieces;
}

/** Whether insertCapturedMessages stores these messages in one statement (then it commits alone). */
export function capturedInOneStatement(messages: readonly NewCapturedMessage[]): boolean {
  return insertRuns(messages).length === 1;
}

/**
 * The messages of one group commit and their recipients: a multi-row INSERT into captured_intake
 * per run of messages (one statement for a typical group), whose trigger (migration 0029) writes
 * captured_messages and captured_recipients. Every statement is a trip to the database and back;
 * a client waits for them before its 250.
 */
export async function insertCapturedMessages(tx: Queryable, messages: readonly NewCapturedMessage[]): Promise<void> {
  const tuple = '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';
  for (const run of insertRuns(messages)) {
    await tx.run(
      `INSERT INTO captured_intake (id, envelope_from, header_from, envelope_to_json, subject, size, raw, email_id, received_at, project_id, recipients_lc_json)
       VALUES ${run.map(() => tuple).join(', ')}`,
      run.flatMap((message) => [
        message.id,
        message.envelopeFrom,
        message.headerFrom,
        JSON.stringify(message.envelopeTo),
        message.subject,
        message.raw.length,
        message.raw,
        message.emailId,
        message.receivedAt,
        message.projectId,
        JSON.stringify([...new Set(message.envelopeTo.map((a) => a.toLowerCase()))]),
      ]),
    );
  }
}

/** The raw bytes of captured messages by id (one statement); deleted ones are left out. */
export async function capturedRaws(db: Reader, ids: readonly string[]): Promise<Map<string, Buffer>> {
  if (ids.length === 0) return new Map();
  const within = inValues(db, 'id', ids);
  const rows = await db.all<{ id: string; raw: Buffer }>(`SELECT id, raw FROM captured_messages WHERE ${within.sql}`, within.params);
  return new Map(rows.map((row) => [row.id, row.raw]));
}

const SUMMARY_COLUMNS = 'm.seq, m.id, m.envelope_from, m.header_from, m.envelope_to_json, m.subject, m.size, m.received_at, m.project_id';

/** What a list or a wait asks of captured mail; every given filter must hold. */
export interface CapturedFilter {
  /** An envelope recipient, case-insensitively. */
  to?: string;
  project?: string;
  /** Only messages captured after the one with this seq. */
  afterSeq?: number;
  /** Only messages captured before the one with this seq. */
  beforeSeq?: number;
}

function filterSql(filter: CapturedFilter): { where: string; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  if (filter.to !== undefined) {
    clauses.push('m.id IN (SELECT message_id FROM captured_recipients WHERE address_lc = ?)');
    params.push(filter.to.toLowerCase());
  }
  if (filter.project !== undefined) {
    clauses.push('m.project_id = ?');
    params.push(filter.project);
  }
  if (filter.afterSeq !== undefined) {
    clauses.push('m.seq > ?');
    params.push(filter.afterSeq);
  }
  if (filter.beforeSeq !== undefined) {
    clauses.push('m.seq < ?');
    params.push(filter.beforeSeq);
  }
  return { where: clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : '', params };
}

/** Newest first; `to` matches an envelope recipient, case-insensitively. */
export async function listCapturedMessages(db: Pick<Db, 'all'>, options: CapturedFilter & { limit: number }): Promise<CapturedSummary[]> {
  const { where, params } = filterSql(options);
  const rows = await db.all<CapturedRow>(`SELECT ${SUMMARY_COLUMNS} FROM captured_messages m ${where} ORDER BY m.seq DESC LIMIT ?`, [...params, options.limit]);
  return rows.map(summary);
}

/** A captured message as a wait matches it: its place in capture order and its summary. */
export type SequencedSummary = CapturedSummary & { seq: number };

/**
 * Captured messages in capture order from just after `afterSeq`, at most `limit`: what a round
 * of waits matches against (relay/inbox/message-waits.ts).
 */
export async function capturedSince(db: Pick<Db, 'all'>, filter: CapturedFilter & { limit: number }, order: 'asc' | 'desc' = 'asc'): Promise<SequencedSummary[]> {
  const { where, params } = filterSql(filter);
  const rows = await db.all<CapturedRow & { seq: number }>(
    `SELECT ${SUMMARY_COLUMNS} FROM captured_messages m ${where} ORDER BY m.seq ${order === 'asc' ? 'ASC' : 'DESC'} LIMIT ?`,
    [...params, filter.limit],
  );
  return rows.map((row) => ({ ...summary(row), seq: Number(row.seq) }));
}

/** The seq of the newest captured message (0 when there is none). */
export async function lastCapturedSeq(db: Pick<Db, 'get'>): Promise<number> {
  const row = await db.get<{ seq: number | string | null }>('SELECT max(seq) AS seq FROM captured_messages');
  return Number(row?.seq ?? 0);
}

/** The seq of a captured message, or undefined when there is none with that id. */
export async function capturedSeq(db: Pick<Db, 'get'>, id: string): Promise<number | undefined> {
  const row = await db.get<{ seq: number | string }>('SELECT seq FROM captured_messages WHERE id = ?', [id]);
  return row ? Number(row.seq) : undefined;
}

/** The raw size of a captured message, without reading it; undefined when there is none. */
export async function capturedSize(db: Pick<Db, 'get'>, id: string): Promise<number | undefined> {
  const row = await db.get<{ size: number | string }>('SELECT size FROM captured_messages WHERE id = ?', [id]);
  return row ? Number(row.size) : undefined;
}

export async function getCapturedMessage(
  db: Pick<Db, 'get'>,
  id: string,
): Promise<(CapturedSummary & { raw: Buffer; email_id: string | null }) | undefined> {
  const row = await db.get<CapturedRow & { raw: Buffer; email_id: string | null }>(
    'SELECT id, envelope_from, header_from, envelope_to_json, subject, size, received_at, project_id, raw, email_id FROM captured_messages WHERE id = ?',
    [id],
  );
  return row ? { ...summary(row), raw: row.raw, email_id: row.email_id } : undefined;
}

export async function deleteAllCapturedMessages(tx: Queryable): Promise<void> {
  await tx.run('DELETE FROM inbox_tags');
  await tx.run('DELETE FROM inbox_entries');
  await deleteCheckSummaries(tx);
  await tx.run('DELETE FROM captured_recipients');
  await tx.run('DELETE FROM captured_messages');
}
