// The dashboard's inbox: inbox_entries (one narrow row per captured message), its search and
// paging, read flags, and deleting captured mail with its entry.
import type { Db, Queryable } from './db.js';

export interface InboxEntry {
  id: string;
  from_name: string;
  from_address: string;
  to: string;
  subject: string;
  snippet: string;
  size: number;
  attachments: number;
  email_id: string | null;
  received_at: string;
  read: boolean;
}

/** What the indexer computes from a raw message; `seq` is the captured message's. */
export type NewInboxEntry = Omit<InboxEntry, 'read'> & { seq: number };

/** One search: every term must match (AND); each list holds lower-cased substrings. */
export interface InboxSearch {
  from: string[];
  to: string[];
  subject: string[];
  text: string[];
  unread?: boolean;
}

interface EntryRow {
  message_seq: number;
  id: string;
  from_name: string;
  from_address: string;
  to_text: string;
  subject: string;
  snippet: string;
  size: number;
  attachments: number;
  email_id: string | null;
  received_at: string;
  read_at: string | null;
}

const ENTRY_COLUMNS = 'message_seq, id, from_name, from_address, to_text, subject, snippet, size, attachments, email_id, received_at, read_at';

function entryView(row: EntryRow): InboxEntry {
  return {
    id: row.id,
    from_name: row.from_name,
    from_address: row.from_address,
    to: row.to_text,
    subject: row.subject,
    snippet: row.snippet,
    size: row.size,
    attachments: row.attachments,
    email_id: row.email_id,
    received_at: row.received_at,
    read: row.read_at !== null,
  };
}

/** Captured messages that have no inbox entry yet (captured while the indexer was behind or down). */
export async function unindexedMessages(db: Pick<Db, 'all'>, limit: number): Promise<Array<{ seq: number; id: string }>> {
  return db.all<{ seq: number; id: string }>(
    `SELECT m.seq, m.id FROM captured_messages m LEFT JOIN inbox_entries e ON e.message_seq = m.seq
      WHERE e.message_seq IS NULL ORDER BY m.seq LIMIT ?`,
    [limit],
  );
}

export async function capturedForIndexing(
  db: Pick<Db, 'get'>,
  id: string,
): Promise<{ seq: number; raw: Buffer; envelope_from: string; envelope_to_json: string; email_id: string | null; received_at: string } | undefined> {
  return db.get('SELECT seq, raw, envelope_from, envelope_to_json, email_id, received_at FROM captured_messages WHERE id = ?', [id]);
}

/** Inserts entries whose message still exists (a delete may have come first); returns those kept. */
export async function insertInboxEntries(tx: Queryable, entries: readonly NewInboxEntry[]): Promise<InboxEntry[]> {
  const kept: InboxEntry[] = [];
  for (const { seq, ...e } of entries) {
    const { changes } = await tx.run(
      // Integers through CAST: PostgreSQL types a SELECT's bare parameters as text.
      `INSERT INTO inbox_entries (message_seq, id, from_name, from_address, to_text, subject, snippet, size, attachments,
         email_id, received_at, from_lc, to_lc, subject_lc, snippet_lc)
       SELECT CAST(? AS INTEGER), ?, ?, ?, ?, ?, ?, CAST(? AS INTEGER), CAST(? AS INTEGER), ?, ?, ?, ?, ?, ?
        WHERE EXISTS (SELECT 1 FROM captured_messages WHERE seq = ?)
       ON CONFLICT DO NOTHING`,
      [
        seq,
        e.id,
        e.from_name,
        e.from_address,
        e.to,
        e.subject,
        e.snippet,
        e.size,
        e.attachments,
        e.email_id,
        e.received_at,
        `${e.from_name} ${e.from_address}`.toLowerCase(),
        e.to.toLowerCase(),
        e.subject.toLowerCase(),
        e.snippet.toLowerCase(),
        seq,
      ],
    );
    if (changes > 0) kept.push({ ...e, read: false });
  }
  return kept;
}

/**
 * A page of the inbox, newest first, after the entry with seq `before`. Every condition is an
 * instr() over lower-cased columns of the narrow table, walked in seq order from the cursor: a
 * page stops after `limit + 1` matches, so common terms are cheap and only rare ones scan far.
 */
export async function searchInbox(
  db: Pick<Db, 'dialect' | 'all'>,
  search: InboxSearch,
  page: { before?: number; limit: number },
): Promise<{ entries: InboxEntry[]; nextBefore: number | null }> {
  const where: string[] = [];
  const params: unknown[] = [];
  // instr() in SQLite is strpos() in PostgreSQL; LIKE would read % and _ in a term as wildcards.
  const find = db.dialect === 'postgres' ? 'strpos' : 'instr';
  const contains = (column: string, terms: string[]) => {
    for (const term of terms) {
      where.push(`${find}(${column}, ?) > 0`);
      params.push(term);
    }
  };
  contains('from_lc', search.from);
  contains('to_lc', search.to);
  contains('subject_lc', search.subject);
  for (const term of search.text) {
    where.push(`(${find}(subject_lc, ?) > 0 OR ${find}(from_lc, ?) > 0 OR ${find}(to_lc, ?) > 0 OR ${find}(snippet_lc, ?) > 0)`);
    params.push(term, term, term, term);
  }
  if (search.unread === true) where.push('read_at IS NULL');
  if (search.unread === false) where.push('read_at IS NOT NULL');
  if (page.before !== undefined) {
    where.push('message_seq < ?');
    params.push(page.before);
  }
  // The partial index serves is:unread; otherwise the primary key walks newest first. (SQLite
  // needs telling; PostgreSQL's planner has no such clause.)
  const indexed = search.unread === true && db.dialect === 'sqlite' ? 'INDEXED BY inbox_unread' : '';
  const rows = await db.all<EntryRow>(
    `SELECT ${ENTRY_COLUMNS} FROM inbox_entries ${indexed} ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY message_seq DESC LIMIT ?`,
    [...params, page.limit + 1],
  );
  const entries = rows.slice(0, page.limit);
  return {
    entries: entries.map(entryView),
    nextBefore: rows.length > page.limit ? entries[entries.length - 1]!.message_seq : null,
  };
}

export async function countUnread(db: Pick<Db, 'dialect' | 'get'>): Promise<number> {
  const indexed = db.dialect === 'sqlite' ? 'INDEXED BY inbox_unread' : '';
  const row = await db.get<{ n: number }>(`SELECT count(*) AS n FROM inbox_entries ${indexed} WHERE read_at IS NULL`);
  return Number(row?.n ?? 0);
}

export async function getInboxEntry(db: Pick<Db, 'get'>, id: string): Promise<InboxEntry | undefined> {
  const row = await db.get<EntryRow>(`SELECT ${ENTRY_COLUMNS} FROM inbox_entries WHERE id = ?`, [id]);
  return row ? entryView(row) : undefined;
}

/** Marks a message read or unread; false when there is no such message. */
export async function setRead(tx: Queryable, id: string, read: boolean, now: string): Promise<boolean> {
  const { changes } = await tx.run('UPDATE inbox_entries SET read_at = ? WHERE id = ?', [read ? now : null, id]);
  return changes > 0;
}

/** Deletes one captured message and its entry; false when there was none. */
export async function deleteCapturedMessage(tx: Queryable, id: string): Promise<boolean> {
  await tx.run('DELETE FROM inbox_entries WHERE id = ?', [id]);
  await tx.run('DELETE FROM captured_recipients WHERE message_id = ?', [id]);
  const { changes } = await tx.run('DELETE FROM captured_messages WHERE id = ?', [id]);
  return changes > 0;
}
