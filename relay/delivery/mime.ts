// Building the RFC 5322 message of an email with nodemailer's MailComposer: From, To, Cc,
// Reply-To, Subject (RFC 2047 encoded words when not ASCII), Date, Message-ID, the custom headers,
// and multipart/alternative when there are both text and HTML. BCC addresses never appear in the
// message: they only travel in the SMTP envelope.
import MailComposer from 'nodemailer/lib/mail-composer';
import { encodeWord } from 'nodemailer/lib/mime-funcs';
import { parseMailbox, senderDomain } from '../mail/mailbox.js';
import { mimeBytes } from './mime-bytes.js';
import { plainMessage } from './mime-plain.js';
import { envelopeSender } from '../mail/verp.js';
import type { EmailForMime } from '../storage/dispatch.js';
import type { OutboundMessage } from './provider.js';

/** A recipient still waiting for an outcome, and its position among the email's recipients. */
export interface OutboundRecipient {
  address: string;
  position: number;
}

/**
 * A header text that already looks like an RFC 2047 encoded word (`=?utf-8?b?...?=`) would be
 * decoded by the reader into something else, even a line break: encode it ourselves, so it reads
 * back as the literal text that was sent. Other text is left to the composer.
 */
function literalHeaderText(text: string): string {
  return text.includes('=?') ? encodeWord(text, 'B', 52) : text;
}

type ParsedMailbox = { name: string; address: string };

/**
 * The mailboxes as admission parsed them. The composer must not parse the stored strings again:
 * its parser is looser, and `x@evil.test, Bob <bob@ours.test>` (one mailbox with an odd name to
 * us) would become two addresses in the header.
 */
function mailboxes(values: string[]): ParsedMailbox[] {
  return values.map((value) => {
    const parsed = parseMailbox(value);
    if (typeof parsed === 'string') throw new Error(`stored address no longer parses: ${parsed}`);
    return { name: parsed.name ?? '', address: parsed.address };
  });
}

/**
 * An address header whose display names look like encoded words: the composer would put them in
 * a quoted string, which readers decode anyway. Built here instead, each name encoded by us,
 * one address per folded line.
 */
function literalAddressHeader(list: ParsedMailbox[]): string | undefined {
  if (!list.some((m) => m.name.includes('=?'))) return undefined;
  return list
    .map((m) => (m.name ? `${encodeWord(m.name, 'B', 52).split(' ').join('\r\n ')} <${m.address}>` : `<${m.address}>`))
    .join(',\r\n ');
}

function outbound(email: EmailForMime, domain: string, messageId: string, recipients: OutboundRecipient[], raw: Buffer): OutboundMessage {
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

/** Where the header section of a raw message ends (the blank line's start), or its length. */
function headerEnd(raw: Buffer): number {
  if (raw.subarray(0, 2).toString('latin1') === '\r\n' || raw[0] === 0x0a) return 0;
  const crlf = raw.indexOf('\r\n\r\n');
  const lf = raw.indexOf('\n\n');
  const ends = [crlf >= 0 ? crlf + 2 : -1, lf >= 0 ? lf + 1 : -1].filter((i) => i >= 0);
  return ends.length > 0 ? Math.min(...ends) : raw.length;
}

/**
 * A submitted message as it came, with a Message-ID added when it has none and its Bcc header
 * fields left out (BCC recipients only travel in the envelope, as in a composed message).
 */
export function submittedOutboundMessage(email: EmailForMime & { submitted_raw: Buffer }, recipients: OutboundRecipient[]): OutboundMessage {
  const raw = email.submitted_raw;
  const domain = senderDomain(email.from_address);
  const end = headerEnd(raw);
  const lines = raw.subarray(0, end).toString('latin1').split(/(?<=\n)/);
  const kept: string[] = [];
  let dropping = false;
  let messageId: string | undefined;
  for (const line of lines) {
    if (!/^[ \t]/.test(line)) dropping = /^bcc\s*:/i.test(line);
    if (dropping) continue;
    const id = /^message-id\s*:\s*(<[^<>\s]+>)/i.exec(line);
    if (id) messageId ??= id[1];
    kept.push(line);
  }
  const added = messageId === undefined ? `Message-ID: <${email.id}@${domain}>\r\n` : '';
  const head = Buffer.from(added + kept.join(''), 'latin1');
  return outbound(email, domain, messageId ?? `<${email.id}@${domain}>`, recipients, Buffer.concat([head, raw.subarray(end)]));
}

export async function buildOutboundMessage(email: EmailForMime, recipients: OutboundRecipient[], date: Date): Promise<OutboundMessage> {
  const domain = senderDomain(email.from_address);
  const messageId = `<${email.id}@${domain}>`;
  const addressFields = {
    From: [email.from_address],
    To: JSON.parse(email.to_json) as string[],
    Cc: JSON.parse(email.cc_json) as string[],
    'Reply-To': email.reply_to ? [email.reply_to] : [],
  };
  const headers: Record<string, string> = {};
  // The composer manages address headers itself; these are written by us, ahead of its own.
  const ownLines: string[] = [];
  for (const [name, value] of Object.entries(JSON.parse(email.headers_json) as Record<string, string>)) headers[name] = literalHeaderText(value);
  const composed: Partial<Record<keyof typeof addressFields, ParsedMailbox[]>> = {};
  for (const [name, values] of Object.entries(addressFields) as Array<[keyof typeof addressFields, string[]]>) {
    if (values.length === 0) continue;
    const list = mailboxes(values);
    const prepared = literalAddressHeader(list);
    if (prepared) ownLines.push(`${name}: ${prepared}\r\n`);
    else composed[name] = list;
  }
  const fields = {
    from: composed.From?.[0],
    to: composed.To,
    cc: composed.Cc,
    replyTo: composed['Reply-To']?.[0],
    subject: literalHeaderText(email.subject),
    date,
    messageId,
    headers,
    text: email.text_body || undefined,
    html: email.html_body || undefined,
  };
  // The common email is written directly (mime-plain.ts); the rest is composed by MailComposer.
  const direct = ownLines.length === 0 ? plainMessage(fields) : undefined;
  if (direct) return outbound(email, domain, messageId, recipients, direct);
  // CRLF on the wire whatever the platform.
  const tree = new MailComposer({ ...fields, newline: 'windows' }).compile();
  const raw = Buffer.concat([Buffer.from(ownLines.join('')), mimeBytes(tree) ?? (await tree.build())]);
  return outbound(email, domain, messageId, recipients, raw);
}
