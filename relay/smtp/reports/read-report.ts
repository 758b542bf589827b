// Reads a message sent to the `raven.` MX as a delivery status notification (RFC 3464, and its
// internationalized form, RFC 6533) or an abuse feedback report (RFC 5965 ARF). Anything else is
// not a report, and the listener refuses it.
import type { DsnRecipient, FeedbackReport, ReturnedMessage } from '../../domain/feedback.js';
import { headerValue, parseHeaders } from '../../mail/headers.js';
import { allParts, parseMimeTree, type MimePart } from './mime-tree.js';

type Fields = Array<[string, string]>;

const DSN_TYPES = new Set(['message/delivery-status', 'message/global-delivery-status']);
const ARF_TYPE = 'message/feedback-report';
const RETURNED_TYPES = new Set(['message/rfc822', 'message/global', 'text/rfc822-headers', 'message/rfc822-headers', 'message/global-headers']);

/** The field groups of a delivery-status or feedback-report body, split at empty lines. */
function fieldGroups(body: Buffer): Fields[] {
  return body
    .toString('utf8')
    .split(/\r?\n(?:[ \t]*\r?\n)+/)
    .map((group) => parseHeaders(Buffer.from(`${group.trim()}\r\n\r\n`)))
    .filter((fields) => fields.length > 0);
}

/** `rfc822; <User@Example.org>` -> `User@Example.org`; other address types are not ours. */
function mailbox(value: string | null): string | undefined {
  if (!value) return undefined;
  const semicolon = value.indexOf(';');
  const type = semicolon >= 0 ? value.slice(0, semicolon).trim().toLowerCase() : 'rfc822';
  if (type !== 'rfc822' && type !== 'utf-8') return undefined;
  const address = value.slice(semicolon + 1).trim().replace(/^<|>$/g, '').trim();
  return /^[^\s@<>]+@[^\s@<>]+$/.test(address) ? address : undefined;
}

/** The bare addresses of an address-list header (To), enough to match one of our recipients. */
function addressList(value: string | null): string[] {
  return [...(value ?? '').matchAll(/[^\s<>,;:"()]+@[^\s<>,;:"()]+/g)].map((m) => m[0]);
}

function returnedMessage(parts: MimePart[]): ReturnedMessage {
  const part = parts.find((p) => RETURNED_TYPES.has(p.contentType));
  if (!part) return { to: [] };
  const headers = parseHeaders(part.body);
  return {
    messageId: headerValue(headers, 'message-id')?.trim() || undefined,
    returnPath: addressList(headerValue(headers, 'return-path'))[0],
    to: addressList(headerValue(headers, 'to')),
  };
}

function readDsn(part: MimePart, returned: ReturnedMessage): FeedbackReport | undefined {
  const [perMessage, ...perRecipient] = fieldGroups(part.body);
  if (!perMessage) return undefined;
  const recipients: DsnRecipient[] = [];
  for (const fields of perRecipient) {
    const addresses = [mailbox(headerValue(fields, 'original-recipient')), mailbox(headerValue(fields, 'final-recipient'))].filter(
      (a): a is string => a !== undefined,
    );
    const action = headerValue(fields, 'action')?.trim().toLowerCase().split(/[\s(]/)[0];
    if (addresses.length === 0 || !action) continue;
    const status = /\b([245]\.\d{1,3}\.\d{1,3})\b/.exec(headerValue(fields, 'status') ?? '')?.[1];
    recipients.push({ addresses, action, status });
  }
  if (recipients.length === 0) return undefined;
  const envelopeId = headerValue(perMessage, 'original-envelope-id')?.trim() || undefined;
  return { kind: 'dsn', envelopeId, recipients, returned };
}

function readArf(part: MimePart, returned: ReturnedMessage): FeedbackReport | undefined {
  const fields = fieldGroups(part.body).flat();
  const feedbackType = headerValue(fields, 'feedback-type')?.trim().toLowerCase();
  if (!feedbackType) return undefined;
  return {
    kind: 'arf',
    feedbackType,
    originalMailFrom: addressList(headerValue(fields, 'original-mail-from'))[0],
    originalRecipients: fields.filter(([name]) => name.toLowerCase() === 'original-rcpt-to').flatMap(([, value]) => addressList(value)),
    returned,
  };
}

export function readFeedbackReport(raw: Buffer): FeedbackReport | undefined {
  const parts = allParts(parseMimeTree(raw));
  const returned = returnedMessage(parts);
  const dsn = parts.find((p) => DSN_TYPES.has(p.contentType));
  if (dsn) return readDsn(dsn, returned);
  const arf = parts.find((p) => p.contentType === ARF_TYPE);
  if (arf) return readArf(arf, returned);
  return undefined;
}
