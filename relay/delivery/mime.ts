// Building the RFC 5322 message of an email with nodemailer's MailComposer: From, To, Cc,
// Reply-To, Subject (RFC 2047 encoded words when not ASCII), Date, Message-ID, the custom headers,
// and multipart/alternative when there are both text and HTML. BCC addresses never appear in the
// message: they only travel in the SMTP envelope.
import MailComposer from 'nodemailer/lib/mail-composer';
import type { OutboundMessage } from './provider.js';

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
}

/** The lower-cased domain of `addr@domain` or `Name <addr@domain>`. */
export function senderDomain(from: string): string {
  const angle = /<([^<>]*)>\s*$/.exec(from);
  const address = (angle ? angle[1]! : from).trim();
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase();
}

/**
 * VERP envelope sender on the custom MAIL FROM subdomain (`raven.`), carrying the email id, and
 * with a recipient's position the recipient too (`bounce+<email_id>.<position>@raven.<domain>`), so
 * whatever comes back to it (a bounce, a complaint) can be tied to the email and the recipient.
 */
export function envelopeSender(emailId: string, fromDomain: string, position?: number): string {
  return `bounce+${emailId}${position === undefined ? '' : `.${position}`}@raven.${fromDomain}`;
}

/** The email id and recipient position in a VERP address, if it is one of ours. */
export function parseVerpAddress(address: string): { emailId: string; position?: number } | undefined {
  const match = /^bounce\+(em_[0-9a-z]{26})(?:\.(\d{1,4}))?@/i.exec(address);
  if (!match) return undefined;
  return match[2] === undefined ? { emailId: match[1]!.toLowerCase() } : { emailId: match[1]!.toLowerCase(), position: Number(match[2]) };
}

/** The email id in a VERP envelope sender, if it is one of ours. */
export function emailIdFromEnvelopeSender(sender: string): string | undefined {
  return parseVerpAddress(sender)?.emailId;
}

/** A recipient still waiting for an outcome, and its position among the email's recipients. */
export interface OutboundRecipient {
  address: string;
  position: number;
}

export async function buildOutboundMessage(email: EmailForMime, recipients: OutboundRecipient[], date: Date): Promise<OutboundMessage> {
  const domain = senderDomain(email.from_address);
  const messageId = `<${email.id}@${domain}>`;
  const to = JSON.parse(email.to_json) as string[];
  const cc = JSON.parse(email.cc_json) as string[];
  const composer = new MailComposer({
    from: email.from_address,
    to: to.length > 0 ? to : undefined,
    cc: cc.length > 0 ? cc : undefined,
    replyTo: email.reply_to ?? undefined,
    subject: email.subject,
    date,
    messageId,
    headers: JSON.parse(email.headers_json) as Record<string, string>,
    text: email.text_body || undefined,
    html: email.html_body || undefined,
    // CRLF on the wire whatever the platform.
    newline: 'windows',
  });
  const raw = await composer.compile().build();
  return {
    emailId: email.id,
    messageId,
    envelope: {
      from: envelopeSender(email.id, domain),
      to: recipients.map((r) => r.address),
      recipientSenders: recipients.map((r) => envelopeSender(email.id, domain, r.position)),
    },
    raw,
  };
}
