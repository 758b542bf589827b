/**
 * Building and checking a send request from flags: `--header "K: V"`, `--tag k=v`,
 * `--metadata k=v`, and the local checks `send --dry-run` runs (CONTRACT section 2 field rules),
 * so a dry run predicts what the API would answer without a network call.
 */
import { UsageError } from './errors.js';

export interface SendBody {
  from: string;
  to: string[];
  subject: string;
  text?: string;
  html?: string;
  cc?: string[];
  bcc?: string[];
  reply_to?: string;
  headers?: Record<string, string>;
  tags?: Record<string, string>;
  metadata?: Record<string, string>;
}

export interface Detail {
  field: string;
  message: string;
}

/** `--header "X-Campaign: spring"` -> ['X-Campaign', 'spring']. Split at the first colon. */
export function parseHeaderFlag(raw: string): [string, string] {
  const colon = raw.indexOf(':');
  if (colon <= 0) throw new UsageError(`invalid --header "${raw}": expected "Name: value"`);
  const name = raw.slice(0, colon).trim();
  const value = raw.slice(colon + 1).trim();
  if (name === '') throw new UsageError(`invalid --header "${raw}": the name is empty`);
  return [name, value];
}

/** `--tag k=v` / `--metadata k=v`: split at the first `=`; the value may hold more `=`. */
export function parseKeyValueFlag(flag: '--tag' | '--metadata', raw: string): [string, string] {
  const eq = raw.indexOf('=');
  if (eq <= 0) throw new UsageError(`invalid ${flag} "${raw}": expected key=value`);
  return [raw.slice(0, eq), raw.slice(eq + 1)];
}

/** Repeated flags into one object; a repeated name is a usage error (which one would win?). */
export function collectPairs(
  flag: '--header' | '--tag' | '--metadata',
  values: string[] | undefined,
): Record<string, string> | undefined {
  if (!values || values.length === 0) return undefined;
  const out: Record<string, string> = {};
  const seen = new Set<string>();
  for (const raw of values) {
    const [k, v] = flag === '--header' ? parseHeaderFlag(raw) : parseKeyValueFlag(flag, raw);
    const key = flag === '--header' ? k.toLowerCase() : k;
    if (seen.has(key)) throw new UsageError(`${flag} "${k}" given twice`);
    seen.add(key);
    out[k] = v;
  }
  return out;
}

const LINE_BREAK = /[\r\n\u0085\u2028\u2029]/;
const RESERVED_HEADERS = new Set(
  [
    'from', 'to', 'cc', 'bcc', 'subject', 'reply-to', 'sender', 'date', 'message-id', 'return-path',
    'received', 'dkim-signature', 'mime-version', 'content-type', 'content-transfer-encoding',
  ],
);
const TAG_PART = /^[A-Za-z0-9_-]{1,256}$/;

/** The address inside `Name <addr>` or the bare address; null when it is not one. */
export function mailboxAddress(value: string): string | null {
  if (/[\r\n]/.test(value)) return null;
  const angle = /^\s*(?:"[^"]*"|[^<>"]*?)\s*<([^<>]+)>\s*$/.exec(value);
  const addr = (angle ? angle[1] : value)?.trim() ?? '';
  if (addr.length === 0 || addr.length > 254) return null;
  const at = addr.lastIndexOf('@');
  if (at <= 0 || at === addr.length - 1) return null;
  const local = addr.slice(0, at);
  const domain = addr.slice(at + 1);
  if (local.length > 64 || domain.length > 255) return null;
  if (/\s/.test(addr) || local.includes('@')) return null;
  if (!/^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(domain)) return null;
  return addr;
}

/** Why the API would refuse this subject, or null when it would not. */
export function subjectProblem(subject: string): string | null {
  const length = [...subject].length;
  if (length < 1 || length > 998) return 'must be 1 to 998 characters';
  if (LINE_BREAK.test(subject) || subject.includes('\u0000')) return 'must not contain line breaks or NUL';
  return null;
}

/** Why the API would refuse this mailbox, or null when it would not. */
export function mailboxProblem(value: string): string | null {
  return mailboxAddress(value) === null ? `"${value}" is not an address or Name <address>` : null;
}

/** Every broken rule, as the API's validation_error details would name them. */
export function validateSendBody(body: SendBody): Detail[] {
  const details: Detail[] = [];
  const address = (field: string, value: string) => {
    const problem = mailboxProblem(value);
    if (problem) details.push({ field, message: problem });
  };

  address('from', body.from);
  if (body.to.length === 0) details.push({ field: 'to', message: 'at least one recipient is required' });
  body.to.forEach((a, i) => address(`to[${i}]`, a));
  (body.cc ?? []).forEach((a, i) => address(`cc[${i}]`, a));
  (body.bcc ?? []).forEach((a, i) => address(`bcc[${i}]`, a));
  if (body.reply_to !== undefined) address('reply_to', body.reply_to);
  const total = body.to.length + (body.cc?.length ?? 0) + (body.bcc?.length ?? 0);
  if (total > 50) details.push({ field: 'to', message: `to, cc and bcc hold ${total} recipients; at most 50 are allowed` });

  const subject = subjectProblem(body.subject);
  if (subject) details.push({ field: 'subject', message: subject });
  if (!body.text && !body.html) details.push({ field: 'text', message: 'at least one of text or html must be non-empty' });

  for (const [name, value] of Object.entries(body.headers ?? {})) {
    const lower = name.toLowerCase();
    if (!/^[\x21-\x39\x3b-\x7e]+$/.test(name)) details.push({ field: `headers.${name}`, message: 'not a valid header name' });
    else if (RESERVED_HEADERS.has(lower) || lower.startsWith('service-')) {
      details.push({ field: `headers.${name}`, message: 'reserved header; set it through its own field' });
    }
    if (/[\r\n]/.test(value)) details.push({ field: `headers.${name}`, message: 'value must not contain CR or LF' });
  }

  const tags = Object.entries(body.tags ?? {});
  if (tags.length > 20) details.push({ field: 'tags', message: `${tags.length} tags; at most 20 are allowed` });
  for (const [name, value] of tags) {
    if (!TAG_PART.test(name)) details.push({ field: `tags.${name}`, message: 'name must be 1-256 ASCII letters, digits, _ or -' });
    else if (name.startsWith('rr_')) details.push({ field: `tags.${name}`, message: 'names starting rr_ are reserved' });
    if (!TAG_PART.test(value)) details.push({ field: `tags.${name}`, message: 'value must be 1-256 ASCII letters, digits, _ or -' });
  }

  const metadata = Object.entries(body.metadata ?? {});
  if (metadata.length > 50) details.push({ field: 'metadata', message: `${metadata.length} keys; at most 50 are allowed` });
  for (const [key, value] of metadata) {
    if (key.length > 40) details.push({ field: `metadata.${key}`, message: 'key longer than 40 characters' });
    if (value.length > 500) details.push({ field: `metadata.${key}`, message: 'value longer than 500 characters' });
  }
  return details;
}

/** Idempotency-Key: 1-128 characters from 0x21-0x7E. */
export function validIdempotencyKey(key: string): boolean {
  return /^[\x21-\x7e]{1,128}$/.test(key);
}
