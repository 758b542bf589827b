// A message submitted over SMTP (CONTRACT section 9), read as the send request admission decides
// on: the sender is the From header (exactly one mailbox), the subject the decoded Subject header,
// and the envelope decides who receives it (To when the To header names the address, CC when Cc
// does, BCC otherwise). The message itself is kept as submitted; only these fields are read.
import { createHash } from 'node:crypto';
import addressparser from 'nodemailer/lib/addressparser';
import type { ErrorDetail } from '../errors.js';
import { decodeEncodedWords, parseHeaders } from '../mail/headers.js';
import { parseMailbox, type Mailbox } from '../mail/mailbox.js';
import { subjectProblems, type SendRequest } from './send-request.js';

export interface SubmittedMessage {
  /** The message as the client sent it (DATA, dot-unstuffed). */
  raw: Buffer;
  /** RCPT TO addresses, in order. */
  envelopeTo: string[];
}

/** What admission needs of a submitted message. */
export interface ReadSubmission {
  request: SendRequest;
  /** The value of its Idempotency-Key header, if it has one. */
  idempotencyKey: string | undefined;
}

type Headers = Array<[string, string]>;

const all = (headers: Headers, name: string) => headers.filter(([n]) => n.toLowerCase() === name).map(([, v]) => v);

/** `Name <addr>` for a parsed header mailbox (the name quoted when it must be). */
function mailboxText(name: string, address: string): string {
  if (!name) return address;
  const plain = !/["\\<>,;:@()[\]]/.test(name);
  return `${plain ? name : `"${name.replace(/(["\\])/g, '\\$1')}"`} <${address}>`;
}

/** The mailboxes of address headers, parsed before their names are decoded (groups flattened). */
function headerMailboxes(values: string[]): Array<{ name: string; address: string }> {
  return values
    .flatMap((v) => addressparser(v, { flatten: true }))
    .filter((m) => m.address)
    .map((m) => ({ name: decodeEncodedWords(m.name), address: m.address }));
}

function readFrom(headers: Headers, details: ErrorDetail[]): Mailbox | undefined {
  const values = all(headers, 'from');
  const boxes = headerMailboxes(values);
  if (values.length === 0 || boxes.length === 0) {
    details.push({ field: 'from', message: 'the message needs a From header with one mailbox' });
    return undefined;
  }
  if (values.length > 1 || boxes.length > 1) {
    details.push({ field: 'from', message: 'the From header must name exactly one mailbox' });
    return undefined;
  }
  const parsed = parseMailbox(mailboxText(boxes[0]!.name, boxes[0]!.address));
  if (typeof parsed === 'string') {
    details.push({ field: 'from', message: parsed });
    return undefined;
  }
  return parsed;
}

/** Reads the fields admission decides on; `details` for every rule the message breaks. */
export function readSubmission(message: SubmittedMessage): { ok: true; value: ReadSubmission } | { ok: false; details: ErrorDetail[] } {
  // One reading of the header block, undecoded (address fields are parsed before their names are
  // decoded); the few other values admission reads are decoded on their own.
  const undecoded = parseHeaders(message.raw, false);
  const decoded = (name: string) => all(undecoded, name).map(decodeEncodedWords);
  const details: ErrorDetail[] = [];
  const from = readFrom(undecoded, details);

  const subjects = decoded('subject');
  const subject = subjects[0] ?? '';
  for (const problem of subjectProblems(subject)) details.push({ field: 'subject', message: problem });
  if (subjects.length > 1) details.push({ field: 'subject', message: 'the message must have one Subject header' });

  const named = (name: string) => new Map(headerMailboxes(all(undecoded, name)).map((m) => [m.address.toLowerCase(), m.name]));
  const toHeader = named('to');
  const ccHeader = named('cc');
  const request: SendRequest = { from: from!, to: [], cc: [], bcc: [], subject, headers: {}, tags: {}, metadata: {} };
  message.envelopeTo.forEach((address, i) => {
    const lc = address.toLowerCase();
    const type = toHeader.has(lc) ? 'to' : ccHeader.has(lc) ? 'cc' : 'bcc';
    const name = type === 'to' ? toHeader.get(lc) : type === 'cc' ? ccHeader.get(lc) : '';
    const parsed = parseMailbox(mailboxText(name ?? '', address));
    if (typeof parsed === 'string') details.push({ field: `RCPT TO[${i}]`, message: parsed });
    else request[type].push(parsed);
  });
  if (message.envelopeTo.length === 0) details.push({ field: 'RCPT TO', message: 'at least one recipient is required' });

  const replyTo = headerMailboxes(all(undecoded, 'reply-to'));
  if (replyTo.length === 1) {
    const parsed = parseMailbox(mailboxText(replyTo[0]!.name, replyTo[0]!.address));
    if (typeof parsed !== 'string') request.replyTo = parsed;
  }

  const keys = decoded('idempotency-key');
  if (keys.length > 1) details.push({ field: 'Idempotency-Key', message: 'the message must have at most one Idempotency-Key header' });
  if (details.length > 0 || !from) return { ok: false, details };
  return { ok: true, value: { request, idempotencyKey: keys[0]?.trim() } };
}

// Headers a client may write afresh when it sends the same message again.
const REGENERATED = /^(date|message-id)\s*:/i;

/**
 * What a repeated submission is compared by (CONTRACT section 9): the envelope recipients and the
 * message bytes without its Date and Message-ID header fields (continuation lines included).
 */
export function submissionHash(message: SubmittedMessage): string {
  const hash = createHash('sha256').update(JSON.stringify(message.envelopeTo.map((a) => a.toLowerCase()))).update('\n');
  const raw = message.raw;
  let offset = 0;
  let skipping = false;
  while (offset < raw.length) {
    const lf = raw.indexOf(0x0a, offset);
    const end = lf < 0 ? raw.length : lf + 1;
    const line = raw.subarray(offset, end);
    if (line.length <= 2 && (line[0] === 0x0a || (line[0] === 0x0d && line[1] === 0x0a))) {
      hash.update(raw.subarray(offset)); // the blank line and the body
      break;
    }
    const continuation = line[0] === 0x20 || line[0] === 0x09;
    if (!continuation) skipping = REGENERATED.test(line.subarray(0, 16).toString('latin1'));
    if (!skipping) hash.update(line);
    offset = end;
  }
  return hash.digest('hex');
}
