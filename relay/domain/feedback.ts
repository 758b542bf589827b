// Reports that come back to the `raven.` MX after the provider took a message: delivery status
// notifications (RFC 3464) and abuse feedback reports (RFC 5965 ARF). The SMTP listener parses
// them into a FeedbackReport; this module finds the email and the recipient they are about and
// records the outcome (bounces, delays, late deliveries, complaints) inside the caller's
// transaction.
import { emailIdFromEnvelopeSender } from '../delivery/mime.js';
import type { Queryable } from '../storage/db.js';
import { recordComplaint, recordRemoteReport, type RemoteReport } from './outcomes.js';
import type { StoredEvent } from './timeline.js';

/** What is left of the original message in a report: its headers, or the whole of it. */
export interface ReturnedMessage {
  messageId?: string;
  returnPath?: string;
  to: string[];
}

export interface DsnRecipient {
  /** Original-Recipient (what we sent to) when given, then Final-Recipient (after any forwarding). */
  addresses: string[];
  /** failed, delayed, delivered, relayed or expanded (RFC 3464 section 2.3.3). */
  action: string;
  /** The enhanced status code, e.g. `5.1.1`. */
  status?: string;
}

export type FeedbackReport =
  | { kind: 'dsn'; envelopeId?: string; recipients: DsnRecipient[]; returned: ReturnedMessage }
  | { kind: 'arf'; feedbackType: string; originalMailFrom?: string; originalRecipients: string[]; returned: ReturnedMessage };

export interface FeedbackOutcome {
  /** The email the report is about, when one of ours was found. */
  emailId?: string;
  /** Recipients the report named that are not recipients of that email. */
  unmatched: string[];
  events: StoredEvent[];
}

// Feedback types that are a recipient's complaint (RFC 5965 section 7.3); `not-spam` and
// `auth-failure` reports are not.
const COMPLAINT_TYPES = new Set(['abuse', 'fraud', 'virus', 'other']);

const EMAIL_ID = /^em_[0-9a-z]{26}$/;

/** `<em_...@domain>` -> `em_...`: our Message-IDs carry the email id. */
function emailIdFromMessageId(messageId: string | undefined): string | undefined {
  const local = /^<?([^@<>]+)@/.exec(messageId?.trim() ?? '')?.[1]?.toLowerCase();
  return local && EMAIL_ID.test(local) ? local : undefined;
}

/** Every id the report offers, the most trustworthy first: the VERP address it was sent to. */
function candidateEmailIds(report: FeedbackReport, inboundRecipients: string[]): string[] {
  const ids = inboundRecipients.map(emailIdFromEnvelopeSender);
  if (report.kind === 'dsn') ids.push(report.envelopeId && EMAIL_ID.test(report.envelopeId) ? report.envelopeId : undefined);
  else ids.push(emailIdFromEnvelopeSender(report.originalMailFrom ?? ''));
  ids.push(emailIdFromEnvelopeSender(report.returned.returnPath ?? ''), emailIdFromMessageId(report.returned.messageId));
  return [...new Set(ids.filter((id): id is string => id !== undefined))];
}

async function findEmail(tx: Queryable, ids: string[]): Promise<{ id: string; recipients: string[] } | undefined> {
  for (const id of ids) {
    const rows = await tx.all<{ address_lc: string }>('SELECT address_lc FROM recipients WHERE email_id = ? ORDER BY position', [id]);
    if (rows.length > 0) return { id, recipients: rows.map((r) => r.address_lc) };
  }
  return undefined;
}

function remoteReport(recipient: DsnRecipient): RemoteReport | undefined {
  switch (recipient.action) {
    case 'failed':
      return { kind: 'bounce', enhancedStatus: recipient.status };
    case 'delayed':
      return { kind: 'delay', enhancedStatus: recipient.status };
    case 'delivered':
      return { kind: 'delivery' };
    default:
      return undefined; // relayed, expanded: the message went on somewhere we cannot follow
  }
}

/**
 * Who a complaint is about: the reported recipients; else the returned message's To when it names
 * one of ours (mailbox providers often redact it); else the only recipient of a one-recipient email.
 */
function complainants(report: Extract<FeedbackReport, { kind: 'arf' }>, recipients: string[]): string[] {
  const named = report.originalRecipients.length > 0 ? report.originalRecipients : report.returned.to.filter((a) => recipients.includes(a.toLowerCase()));
  if (named.length > 0) return named;
  return recipients.length === 1 ? recipients : [];
}

export async function applyFeedbackReport(
  tx: Queryable,
  report: FeedbackReport,
  inboundRecipients: string[],
  now: string,
): Promise<FeedbackOutcome> {
  const email = await findEmail(tx, candidateEmailIds(report, inboundRecipients));
  if (!email) return { unmatched: [], events: [] };
  const events: StoredEvent[] = [];
  const unmatched: string[] = [];
  /** The first of the addresses that is a recipient of the email. */
  const known = (addresses: string[]): string | undefined => {
    const found = addresses.find((a) => email.recipients.includes(a.toLowerCase()));
    if (found === undefined) unmatched.push(...addresses.slice(0, 1));
    return found;
  };
  if (report.kind === 'dsn') {
    for (const recipient of report.recipients) {
      const outcome = remoteReport(recipient);
      const address = outcome && known(recipient.addresses);
      if (outcome && address) events.push(...(await recordRemoteReport(tx, email.id, address, outcome, now)));
    }
  } else if (COMPLAINT_TYPES.has(report.feedbackType)) {
    for (const complainant of complainants(report, email.recipients)) {
      const address = known([complainant]);
      if (address) events.push(...(await recordComplaint(tx, email.id, address, now, { source: 'arf', feedback_type: report.feedbackType })));
    }
  }
  return { emailId: email.id, unmatched, events };
}
