// What the worker reads to dispatch the emails it claimed: each email's message columns, its
// recipients still waiting, and the DKIM key of each sender's domain, for a whole claim in three
// statements (the keys' once the emails' senders are known).
import { senderDomain } from '../mail/mailbox.js';
import type { Reader } from './db.js';
import { signingKeysOf, type DomainKeyRow } from './domains.js';

/** The columns of an `emails` row the message is built from. */
export interface EmailForMime {
  id: string;
  from_address: string;
  to_json: string;
  cc_json: string;
  reply_to: string | null;
  subject: string;
  text_body: string | null;
  html_body: string | null;
  headers_json: string;
  /** A message submitted over SMTP: delivered as it is instead of composed from the columns. */
  submitted_raw?: Buffer | null;
}

export interface PendingRecipient {
  address: string;
  address_lc: string;
  position: number;
}

export interface DispatchEmail extends EmailForMime {
  project_id: string;
  /** In position order. */
  pending: PendingRecipient[];
}

export interface DispatchBatch {
  emails: Map<string, DispatchEmail>;
  /** The verified domains the emails are sent from (in their projects), no others. */
  domainKeys: DomainKeyRow[];
}

export async function loadDispatchBatch(db: Pick<Reader, 'dialect' | 'all'>, emailIds: readonly string[], pendingStatuses: readonly string[]): Promise<DispatchBatch> {
  const ids = JSON.stringify(emailIds);
  const emailRows = db.all<Omit<DispatchEmail, 'pending'>>(
    `SELECT e.id, e.project_id, e.from_address, e.to_json, e.cc_json, e.reply_to, e.subject, e.text_body, e.html_body, e.headers_json,
            s.raw AS submitted_raw
       FROM emails e LEFT JOIN submissions s ON s.email_id = e.id WHERE e.id IN (SELECT value FROM json_each(?))`,
    [ids],
  );
  // The keys by (project, sender domain), the unique key's index, once the senders are known: a
  // read by the batch's projects alone was planned on PostgreSQL as a scan of every stored email of
  // each verified domain's project, each batch (issue 24, session 14).
  const [rows, recipients, domainKeys] = await Promise.all([
    emailRows,
    db.all<PendingRecipient & { email_id: string }>(
      `SELECT email_id, address, address_lc, position FROM recipients
        WHERE email_id IN (SELECT value FROM json_each(?)) AND status IN (SELECT value FROM json_each(?))
        ORDER BY email_id, position`,
      [ids, JSON.stringify(pendingStatuses)],
    ),
    emailRows.then((emails) => signingKeysOf(db, emails.map((e) => [e.project_id, senderDomain(e.from_address)] as const))),
  ]);
  const emails = new Map<string, DispatchEmail>(rows.map((row) => [row.id, { ...row, pending: [] }]));
  for (const { email_id, ...recipient } of recipients) emails.get(email_id)?.pending.push(recipient);
  return { emails, domainKeys };
}
