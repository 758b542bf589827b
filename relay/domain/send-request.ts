// The field rules of POST /v1/emails (specification section 2, CONTRACT section 2), turning an
// untrusted JSON value into a SendRequest or a list of every broken rule. The one home of these
// rules: `ravenctl send` checks with the same functions, so its messages are the relay's.
import type { ErrorDetail } from '../errors.js';
import { CONTROL, LINE_BREAK, parseMailbox, type Mailbox } from '../mail/mailbox.js';
import { unstorableFields } from './storable-text.js';

export interface SendRequest {
  from: Mailbox;
  to: Mailbox[];
  cc: Mailbox[];
  bcc: Mailbox[];
  subject: string;
  text?: string;
  html?: string;
  replyTo?: Mailbox;
  headers: Record<string, string>;
  tags: Record<string, string>;
  metadata: Record<string, string>;
}

const KNOWN_FIELDS = new Set(['from', 'to', 'cc', 'bcc', 'subject', 'text', 'html', 'reply_to', 'headers', 'tags', 'metadata']);

// Fields other services' SDKs (Resend's) send for what the specification leaves out: say so, and
// where the relay does offer it.
const UNSUPPORTED_FIELDS = new Map([
  ['attachments', 'attachments are not supported by POST /v1/emails; send a message with attachments over SMTP submission (the relay\'s submission port, the API key as password)'],
  ['scheduled_at', 'scheduled sends are not supported; send the email when it should go'],
  ['template', 'templates are not supported; send the rendered subject, text and html'],
  ['topic_id', 'topics are not supported'],
]);

const RESERVED_HEADERS = new Set(
  [
    'from', 'to', 'cc', 'bcc', 'subject', 'reply-to', 'sender', 'date', 'message-id', 'return-path', 'received',
    'dkim-signature', 'mime-version', 'content-type', 'content-transfer-encoding',
  ],
);

const TAG = /^[A-Za-z0-9_-]{1,256}$/;
const HEADER_NAME = /^[\x21-\x39\x3b-\x7e]+$/; // printable ASCII except ':'

export interface Limits {
  maxRecipients: number;
}

/** The specification's recipient limit (To, CC and BCC together): the relay's default. */
export const SPEC_MAX_RECIPIENTS = 50;

/** Specification section 2: a subject is 1 to 998 characters. */
export const MAX_SUBJECT_LENGTH = 998;

/** Every reason a subject would be refused (none when it would not). */
export function subjectProblems(subject: string): string[] {
  const problems: string[] = [];
  const length = [...subject].length;
  if (length < 1 || length > MAX_SUBJECT_LENGTH) problems.push(`must be 1 to ${MAX_SUBJECT_LENGTH} characters`);
  if (LINE_BREAK.test(subject) || subject.includes('\u0000')) problems.push('must not contain line breaks or NUL');
  return problems;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function mailboxList(value: unknown, field: string, details: ErrorDetail[], required: boolean): Mailbox[] {
  if (value === undefined || value === null) {
    if (required) details.push({ field, message: 'is required' });
    return [];
  }
  const items = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(items)) {
    details.push({ field, message: 'must be a string or an array of strings' });
    return [];
  }
  if (required && items.length === 0) details.push({ field, message: 'must contain at least one recipient' });
  const out: Mailbox[] = [];
  items.forEach((item, i) => {
    const where = typeof value === 'string' ? field : `${field}[${i}]`;
    if (typeof item !== 'string') {
      details.push({ field: where, message: 'must be a string' });
      return;
    }
    const parsed = parseMailbox(item);
    if (typeof parsed === 'string') details.push({ field: where, message: parsed });
    else out.push(parsed);
  });
  return out;
}

function stringMap(
  value: unknown,
  field: string,
  details: ErrorDetail[],
  check: (key: string, v: unknown) => string | undefined,
  maxEntries: number,
): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  if (value === undefined || value === null) return out;
  if (!isPlainObject(value)) {
    details.push({ field, message: 'must be an object' });
    return out;
  }
  const entries = Object.entries(value);
  if (entries.length > maxEntries) details.push({ field, message: `must have at most ${maxEntries} entries` });
  for (const [key, v] of entries) {
    const problem = check(key, v);
    if (problem) details.push({ field: `${field}.${key}`, message: problem });
    else out[key] = v as string;
  }
  return out;
}

/** The top-level field a detail names (`tags.x` -> `tags`, `to[1]` -> `to`). */
const topField = (field: string) => field.split(/[.[]/)[0];

export function parseSendRequest(body: unknown, limits: Limits): { ok: true; value: SendRequest } | { ok: false; details: ErrorDetail[] } {
  const details: ErrorDetail[] = [];
  if (!isPlainObject(body)) return { ok: false, details: [{ field: 'body', message: 'must be a JSON object' }] };

  for (const key of Object.keys(body)) {
    if (!KNOWN_FIELDS.has(key)) details.push({ field: key, message: UNSUPPORTED_FIELDS.get(key) ?? 'is not a supported field' });
  }

  let from: Mailbox | undefined;
  if (typeof body.from !== 'string') {
    details.push({ field: 'from', message: body.from === undefined ? 'is required' : 'must be a string' });
  } else {
    const parsed = parseMailbox(body.from);
    if (typeof parsed === 'string') details.push({ field: 'from', message: parsed });
    else from = parsed;
  }

  const to = mailboxList(body.to, 'to', details, true);
  const cc = mailboxList(body.cc, 'cc', details, false);
  const bcc = mailboxList(body.bcc, 'bcc', details, false);
  const total = countRecipients(body.to) + countRecipients(body.cc) + countRecipients(body.bcc);
  if (total > limits.maxRecipients) {
    details.push({ field: 'to', message: `To, CC and BCC together may contain at most ${limits.maxRecipients} recipients (got ${total})` });
  }

  const subject = body.subject;
  if (typeof subject !== 'string') {
    details.push({ field: 'subject', message: subject === undefined ? 'is required' : 'must be a string' });
  } else {
    for (const message of subjectProblems(subject)) details.push({ field: 'subject', message });
  }

  for (const field of ['text', 'html'] as const) {
    if (body[field] !== undefined && body[field] !== null && typeof body[field] !== 'string') {
      details.push({ field, message: 'must be a string' });
    }
  }
  const text = typeof body.text === 'string' ? body.text : undefined;
  const html = typeof body.html === 'string' ? body.html : undefined;
  if (!text && !html) details.push({ field: 'text', message: 'at least one of text or html must be non-empty' });

  let replyTo: Mailbox | undefined;
  if (body.reply_to !== undefined && body.reply_to !== null) {
    if (typeof body.reply_to !== 'string') details.push({ field: 'reply_to', message: 'must be a string' });
    else {
      const parsed = parseMailbox(body.reply_to);
      if (typeof parsed === 'string') details.push({ field: 'reply_to', message: parsed });
      else replyTo = parsed;
    }
  }

  const headers = stringMap(
    body.headers,
    'headers',
    details,
    (name, value) => {
      if (!HEADER_NAME.test(name)) return 'is not a valid header name';
      // The name, its colon and a space must fit on one 998-octet line.
      if (name.length > 996) return 'must be at most 996 characters';
      const lower = name.toLowerCase();
      if (RESERVED_HEADERS.has(lower) || lower.startsWith('service-')) return 'is a reserved header';
      if (typeof value !== 'string') return 'must be a string';
      if (LINE_BREAK.test(value) || CONTROL.test(value)) return 'must not contain line breaks or control characters';
      if (value.length > 998) return 'must be at most 998 characters';
      return undefined;
    },
    100,
  );

  const tags = stringMap(
    tagsObject(body.tags, details),
    'tags',
    details,
    (name, value) => {
      if (!TAG.test(name)) return 'tag names must be 1-256 ASCII letters, digits, _ or -';
      if (name.startsWith('rr_')) return 'tag names beginning rr_ are reserved';
      if (typeof value !== 'string' || !TAG.test(value)) return 'tag values must be 1-256 ASCII letters, digits, _ or -';
      return undefined;
    },
    20,
  );

  const metadata = stringMap(
    body.metadata,
    'metadata',
    details,
    (key, value) => {
      if (key.length < 1 || key.length > 40) return 'keys must be 1 to 40 characters';
      if (typeof value !== 'string') return 'values must be strings';
      if (value.length > 500) return 'values must be at most 500 characters';
      return undefined;
    },
    50,
  );

  // A NUL or an unpaired surrogate anywhere (text and html included: such a body is not mail), in
  // a field no rule above has refused already.
  for (const detail of unstorableFields(body)) {
    if (!details.some((d) => topField(d.field) === topField(detail.field))) details.push(detail);
  }

  if (details.length > 0 || !from) return { ok: false, details };
  return { ok: true, value: { from, to, cc, bcc, subject: subject as string, text, html, replyTo, headers, tags, metadata } };
}

/**
 * Tags as an object, or as the `[{name, value}]` list Resend's SDK sends (CONTRACT section 2): the
 * list becomes the same object, a name given twice is refused, and the object's rules then apply.
 */
function tagsObject(value: unknown, details: ErrorDetail[]): unknown {
  if (!Array.isArray(value)) return value;
  const out: Record<string, unknown> = Object.create(null);
  value.forEach((entry, i) => {
    const where = `tags[${i}]`;
    if (!isPlainObject(entry) || typeof entry.name !== 'string' || Object.keys(entry).some((k) => k !== 'name' && k !== 'value')) {
      details.push({ field: where, message: 'must be an object {"name", "value"} with string name and value' });
    } else if (Object.hasOwn(out, entry.name)) {
      details.push({ field: `${where}.name`, message: `names the tag ${entry.name} a second time` });
    } else out[entry.name] = entry.value;
  });
  return out;
}

function countRecipients(value: unknown): number {
  if (typeof value === 'string') return 1;
  return Array.isArray(value) ? value.length : 0;
}

/** Every To, CC and BCC mailbox, in that order. */
export function allRecipients(req: SendRequest): Array<{ mailbox: Mailbox; type: 'to' | 'cc' | 'bcc' }> {
  return [
    ...req.to.map((mailbox) => ({ mailbox, type: 'to' as const })),
    ...req.cc.map((mailbox) => ({ mailbox, type: 'cc' as const })),
    ...req.bcc.map((mailbox) => ({ mailbox, type: 'bcc' as const })),
  ];
}
