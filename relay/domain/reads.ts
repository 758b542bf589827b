// GET /v1/emails and GET /v1/emails/{id} (CONTRACT section 3). A key with email:send reads only
// what it created, email:read the whole project; anything else is "not found", never "forbidden",
// so the existence of another key's email is not revealed.
import { ApiError, validationError, type ErrorDetail } from '../errors.js';
import type { Db } from '../storage/db.js';
import type { KeyPrincipal } from './auth.js';

export const EMAIL_STATUSES = ['queued', 'suppressed', 'sent', 'delivered', 'bounced', 'failed', 'delivery_unknown'] as const;

interface EmailRow {
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
  reply_to: string | null;
  metadata_json: string;
  provider_message_id: string | null;
}

const SUMMARY_COLUMNS = 'seq, id, status, from_address, to_json, cc_json, subject, tags_json, test_mode, created_at';

function summary(row: EmailRow) {
  return {
    id: row.id,
    status: row.status,
    from: row.from_address,
    to: JSON.parse(row.to_json) as string[],
    cc: JSON.parse(row.cc_json) as string[],
    subject: row.subject,
    tags: JSON.parse(row.tags_json) as Record<string, string>,
    test_mode: row.test_mode === 1,
    created_at: row.created_at,
  };
}

export interface ListQuery {
  status?: string;
  recipient?: string;
  cursor?: string;
  limit: number;
}

export function parseListQuery(params: URLSearchParams): ListQuery {
  const details: ErrorDetail[] = [];
  const single = (name: string): string | undefined => {
    const all = params.getAll(name);
    if (all.length > 1) details.push({ field: name, message: 'must be given once' });
    return all[0];
  };
  const status = single('status');
  const recipient = single('recipient');
  const cursor = single('cursor');
  const limitRaw = single('limit');
  let limit = 50;
  if (limitRaw !== undefined) {
    if (!/^\d{1,3}$/.test(limitRaw) || Number(limitRaw) < 1 || Number(limitRaw) > 100) {
      details.push({ field: 'limit', message: 'must be an integer from 1 to 100' });
    } else limit = Number(limitRaw);
  }
  if (status !== undefined && !(EMAIL_STATUSES as readonly string[]).includes(status)) {
    details.push({ field: 'status', message: `must be one of ${EMAIL_STATUSES.join(', ')}` });
  }
  if (recipient !== undefined && (recipient.length === 0 || recipient.length > 254)) {
    details.push({ field: 'recipient', message: 'must be an email address' });
  }
  if (cursor !== undefined && decodeCursor(cursor) === undefined) details.push({ field: 'cursor', message: 'is not a valid cursor' });
  if (details.length > 0) throw validationError(details);
  return { status, recipient, cursor, limit };
}

function encodeCursor(seq: number): string {
  return Buffer.from(`v1:${seq}`).toString('base64url');
}

function decodeCursor(cursor: string): number | undefined {
  const m = /^v1:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return m ? Number(m[1]) : undefined;
}

function scope(key: KeyPrincipal): { where: string; params: unknown[] } {
  return key.permission === 'email:read'
    ? { where: 'e.project_id = ?', params: [key.projectId] }
    : { where: 'e.project_id = ? AND e.key_id = ?', params: [key.projectId, key.keyId] };
}

export async function listEmails(db: Db, key: KeyPrincipal, query: ListQuery) {
  const s = scope(key);
  const where = [s.where];
  const params = [...s.params];
  // With a recipient, its To rows drive the page: their index is in list order (email_seq is the
  // email's seq), so the page costs the same whether the address has ten emails or all of them.
  // An address listed twice in one To gives two rows: GROUP BY keeps one.
  let from = 'emails e';
  let order = 'e.seq';
  if (query.recipient) {
    from = 'recipients r JOIN emails e ON e.seq = r.email_seq';
    order = 'r.email_seq';
    where.push("r.address_lc = ? AND r.type = 'to'");
    params.push(query.recipient.trim().toLowerCase());
  }
  if (query.status) {
    where.push('e.status = ?');
    params.push(query.status);
  }
  if (query.cursor) {
    where.push(`${order} < ?`);
    params.push(decodeCursor(query.cursor));
  }
  const rows = await db.all<EmailRow>(
    `SELECT ${SUMMARY_COLUMNS.split(', ').map((c) => `e.${c}`).join(', ')} FROM ${from} WHERE ${where.join(' AND ')}
      ${query.recipient ? `GROUP BY ${order}, e.seq` : ''} ORDER BY ${order} DESC LIMIT ?`,
    [...params, query.limit + 1],
  );
  const page = rows.slice(0, query.limit);
  return {
    emails: page.map(summary),
    next_cursor: rows.length > query.limit ? encodeCursor(page[page.length - 1]!.seq) : null,
  };
}

export async function getEmail(db: Db, key: KeyPrincipal, emailId: string) {
  const s = scope(key);
  const row = await db.get<EmailRow>(
    `SELECT e.${SUMMARY_COLUMNS.split(', ').join(', e.')}, e.reply_to, e.metadata_json, e.provider_message_id
       FROM emails e WHERE e.id = ? AND ${s.where}`,
    [emailId, ...s.params],
  );
  if (!row) throw new ApiError('not_found', `No email ${emailId} readable by this key.`);
  const [recipients, events] = await Promise.all([
    db.all<{ address: string; type: 'to' | 'cc'; status: string; updated_at: string }>(
      "SELECT address, type, status, updated_at FROM recipients WHERE email_id = ? AND type != 'bcc' ORDER BY position",
      [emailId],
    ),
    db.all<{ id: string; type: string; occurred_at: string; payload_json: string }>(
      'SELECT id, type, occurred_at, payload_json FROM events WHERE email_id = ? ORDER BY seq',
      [emailId],
    ),
  ]);
  return {
    ...summary(row),
    reply_to: row.reply_to,
    metadata: JSON.parse(row.metadata_json) as Record<string, string>,
    providerMessageId: row.provider_message_id,
    recipients: recipients.map((r) => ({ email: r.address, type: r.type, status: r.status, updated_at: r.updated_at })),
    events: events.map((e) => ({ id: e.id, type: e.type, occurredAt: e.occurred_at, payload: JSON.parse(e.payload_json) })),
  };
}
