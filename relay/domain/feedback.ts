// Reports that come back to the `raven.` MX after the provider took a message: delivery status
// notifications (RFC 3464) and abuse feedback reports (RFC 5965 ARF). The SMTP listener parses
// them into a FeedbackReport; this module finds the email and the recipient they are about and
// records the outcome (bounces, delays, late deliveries, complaints) inside the caller's
// transaction.
import { parseVerpAddress } from '../mail/verp.js';
import type { Queryable } from '../storage/db.js';
import { listRecipients } from '../storage/emails.js';
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

type VerpTarget = { emailId: string; position?: number };

/** Every email (and recipient position) the report points at, the most trustworthy first: the VERP address it was sent to. */
function candidateTargets(report: FeedbackReport, inboundRecipients: string[]): VerpTarget[] {
  const addresses = [...inboundRecipients, report.kind === 'arf' ? report.originalMailFrom : undefined, report.returned.returnPath];
  const targets: Array<VerpTarget | undefined> = addresses.map((a) => (a ? parseVerpAddress(a) : undefined));
  if (report.kind === 'dsn' && report.envelopeId && EMAIL_ID.test(report.envelopeId)) targets.push({ emailId: report.envelopeId });
  const fromMessageId = emailIdFromMessageId(report.returned.messageId);
  if (fromMessageId) targets.push({ emailId: fromMessageId });
  return targets.filter((t): t is VerpTarget => t !== undefined);
}

interface FoundEmail {
  id: string;
  /** Lower-cased recipient addresses. */
  recipients: string[];
  /** The recipient a per-recipient VERP address names, if any. */
  verpRecipient?: string;
}

async function findEmail(tx: Queryable, targets: VerpTarget[]): Promise<FoundEmail | undefined> {
  for (const emailId of new Set(targets.map((t) => t.emailId))) {
    const rows = await listRecipients(tx, emailId);
    if (rows.length === 0) continue;
    const position = targets.find((t) => t.emailId === emailId && t.position !== undefined)?.position;
    const verpRecipient = rows.find((r) => r.position === position)?.address_lc;
    return { id: emailId, recipients: rows.map((r) => r.address_lc), verpRecipient };
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
 * Who a complaint is about: the reported recipients; else the one our VERP address names; else the
 * returned message's To when it names one of ours (mailbox providers often redact it); else the
 * only recipient of a one-recipient email.
 */
function complainants(report: Extract<FeedbackReport, { kind: 'arf' }>, email: FoundEmail): string[] {
  if (report.originalRecipients.length > 0) return report.originalRecipients;
  if (email.verpRecipient) return [email.verpRecipient];
  const named = report.returned.to.filter((a) => email.recipients.includes(a.toLowerCase()));
  if (named.length > 0) return named;
  return email.recipients.length === 1 ? email.recipients : [];
}

export async function applyFeedbackReport(
  tx: Queryable,
  report: FeedbackReport,
  inboundRecipients: string[],
  now: string,
): Promise<FeedbackOutcome> {
  const email = await findEmail(tx, candidateTargets(report, inboundRecipients));
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
    // A report about one recipient sent back to a per-recipient VERP address is about that
    // recipient, even when it names only where the message was forwarded to.
    const single = report.recipients.length === 1 && email.verpRecipient ? [email.verpRecipient] : [];
    for (const recipient of report.recipients) {
      const outcome = remoteReport(recipient);
      const address = outcome && known([...recipient.addresses, ...single]);
      if (outcome && address) events.push(...(await recordRemoteReport(tx, email.id, address, outcome, now)));
    }
  } else if (COMPLAINT_TYPES.has(report.feedbackType)) {
    for (const complainant of complainants(report, email)) {
      const address = known([complainant]);
      if (address) events.push(...(await recordComplaint(tx, email.id, address, now, { source: 'arf', feedback_type: report.feedbackType })));
    }
  }
  return { emailId: email.id, unmatched, events };
}
