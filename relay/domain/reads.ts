// GET /v1/emails and GET /v1/emails/{id} (CONTRACT section 3). A key with email:send reads only
// what it created, email:read the whole project; anything else is "not found", never "forbidden",
// so the existence of another key's email is not revealed.
import { EMAIL_STATUSES } from 'raven-email-sdk/enums';
import { ApiError } from '../errors.js';
import type { Db } from '../storage/db.js';
import { getEmailDetail, listEmailSummaries, listVisibleRecipients, type EmailScope, type EmailSummaryRow } from '../storage/emails.js';
import { listEmailEvents } from '../storage/events.js';
import type { KeyPrincipal } from './auth.js';
import { QueryParams } from './query-params.js';

function summary(row: EmailSummaryRow) {
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
  /** A filter no stored email can match (a recipient with a NUL): the page is empty. */
  matchesNothing: boolean;
}

export function parseListQuery(params: URLSearchParams): ListQuery {
  const query = new QueryParams(params);
  const status = query.single('status');
  const recipient = query.filter('recipient');
  const cursor = query.single('cursor');
  const limit = query.integer('limit', { min: 1, max: 100, fallback: 50 });
  if (status !== undefined && !(EMAIL_STATUSES as readonly string[]).includes(status)) {
    query.details.push({ field: 'status', message: `must be one of ${EMAIL_STATUSES.join(', ')}` });
  }
  if (recipient !== undefined && (recipient.length === 0 || recipient.length > 254)) {
    query.details.push({ field: 'recipient', message: 'must be an email address' });
  }
  if (cursor !== undefined && decodeCursor(cursor) === undefined) query.details.push({ field: 'cursor', message: 'is not a valid cursor' });
  const { matchesNothing } = query.finish();
  return { status, recipient, cursor, limit, matchesNothing };
}

function encodeCursor(seq: number): string {
  return Buffer.from(`v1:${seq}`).toString('base64url');
}

function decodeCursor(cursor: string): number | undefined {
  const m = /^v1:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return m ? Number(m[1]) : undefined;
}

function scope(key: KeyPrincipal): EmailScope {
  return key.permission === 'email:read' ? { projectId: key.projectId } : { projectId: key.projectId, keyId: key.keyId };
}

export async function listEmails(db: Db, key: KeyPrincipal, query: ListQuery) {
  if (query.matchesNothing) return { emails: [], next_cursor: null };
  const rows = await listEmailSummaries(db, scope(key), {
    status: query.status,
    recipientLc: query.recipient?.trim().toLowerCase(),
    beforeSeq: query.cursor === undefined ? undefined : decodeCursor(query.cursor),
    limit: query.limit + 1,
  });
  const page = rows.slice(0, query.limit);
  return {
    emails: page.map(summary),
    next_cursor: rows.length > query.limit ? encodeCursor(page[page.length - 1]!.seq) : null,
  };
}

export async function getEmail(db: Db, key: KeyPrincipal, emailId: string) {
  const row = await getEmailDetail(db, scope(key), emailId);
  if (!row) throw new ApiError('not_found', `No email ${emailId} readable by this key.`);
  const [recipients, events] = await Promise.all([listVisibleRecipients(db, emailId), listEmailEvents(db, emailId)]);
  return {
    ...summary(row),
    reply_to: row.reply_to,
    metadata: JSON.parse(row.metadata_json) as Record<string, string>,
    providerMessageId: row.provider_message_id,
    recipients: recipients.map((r) => ({ email: r.address, type: r.type, status: r.status, updated_at: r.updated_at })),
    events: events.map((e) => ({ id: e.id, type: e.type, occurredAt: e.occurred_at, payload: JSON.parse(e.payload_json) })),
  };
}
