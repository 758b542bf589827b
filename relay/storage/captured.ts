// Mail captured by the SMTP sink: captured_messages + captured_recipients.
import type { Db, Queryable } from './db.js';
import { allStatements, insertRows } from './rows.js';

export interface CapturedSummary {
  id: string;
  from: string;
  header_from: string | null;
  to: string[];
  subject: string | null;
  received_at: string;
  size: number;
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
  };
}

/** Many messages in a statement per table (a raw body each: the messages' own statements are issued together). */
export async function insertCapturedMessages(tx: Queryable, messages: readonly NewCapturedMessage[]): Promise<void> {
  const inserts = messages.map((message) =>
    tx.run(
      `INSERT INTO captured_messages (id, envelope_from, header_from, envelope_to_json, subject, size, raw, email_id, received_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        message.id,
        message.envelopeFrom,
        message.headerFrom,
        JSON.stringify(message.envelopeTo),
        message.subject,
        message.raw.length,
        message.raw,
        message.emailId,
        message.receivedAt,
      ],
    ),
  );
  await allStatements(inserts);
  const recipients = messages.flatMap((m) => [...new Set(m.envelopeTo.map((a) => a.toLowerCase()))].map((address) => ({ message_id: m.id, address_lc: address })));
  await insertRows(tx, 'captured_recipients', ['message_id', 'address_lc'], recipients);
}

/** Newest first; `to` matches an envelope recipient, case-insensitively. */
export async function listCapturedMessages(db: Pick<Db, 'all'>, options: { to?: string; limit: number }): Promise<CapturedSummary[]> {
  const columns = 'm.id, m.envelope_from, m.header_from, m.envelope_to_json, m.subject, m.size, m.received_at';
  const rows =
    options.to === undefined
      ? await db.all<CapturedRow>(`SELECT ${columns} FROM captured_messages m ORDER BY m.seq DESC LIMIT ?`, [options.limit])
      : await db.all<CapturedRow>(
          `SELECT ${columns} FROM captured_messages m
           WHERE m.id IN (SELECT message_id FROM captured_recipients WHERE address_lc = ?)
           ORDER BY m.seq DESC LIMIT ?`,
          [options.to.toLowerCase(), options.limit],
        );
  return rows.map(summary);
}

export async function getCapturedMessage(
  db: Pick<Db, 'get'>,
  id: string,
): Promise<(CapturedSummary & { raw: Buffer; email_id: string | null }) | undefined> {
  const row = await db.get<CapturedRow & { raw: Buffer; email_id: string | null }>(
    'SELECT id, envelope_from, header_from, envelope_to_json, subject, size, received_at, raw, email_id FROM captured_messages WHERE id = ?',
    [id],
  );
  return row ? { ...summary(row), raw: row.raw, email_id: row.email_id } : undefined;
}

export async function deleteAllCapturedMessages(tx: Queryable): Promise<void> {
  await tx.run('DELETE FROM inbox_entries');
  await tx.run('DELETE FROM captured_recipients');
  await tx.run('DELETE FROM captured_messages');
}
