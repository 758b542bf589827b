// The inbox entry of a plain message without mailparser's stream machinery: what the relay itself
// composes for a text-only email (one text/plain part, ASCII headers) is most of
// what its own sink captures, and mailparser's parse of it (a chain of Transform streams, a tree of
// nodes, the headers of every kind) cost more CPU than composing it (0.23 against 0.17 ms a
// message, session 12). Summarised here from the same pieces mailparser uses (its addressparser,
// libqp), taking the same steps, so the entry is the one mailparser's parse gives
// (test/unit/quick-summary.test.ts compares them); anything outside that narrow shape answers
// undefined and goes through mailparser as before.
import { createRequire } from 'node:module';
import { summarizeText, type MessageSummary } from './read-message.js';

// mailparser's own copies (it may carry its own nodemailer), so an address reads as it reads it.
const fromMailparser = createRequire(createRequire(import.meta.url).resolve('mailparser'));
type ParsedAddress = { name: string; address?: string; group?: unknown[] };
const addressparser = fromMailparser('nodemailer/lib/addressparser') as (value: string) => ParsedAddress[];
const libqp = fromMailparser('libqp') as { decode(input: Buffer): Buffer };

/** A header line: printable ASCII and tab only (no encoded word is checked apart), a name, a colon. */
const PLAIN_HEADER_LINE = /^[!-9;-~]+:[\t -~]*$/;
/** A folded header's next line (RFC 5322 section 2.2.3), ASCII as well. */
const CONTINUATION_LINE = /^[\t ][\t -~]*$/;
const TEXT_PLAIN = /^text\/plain(?:;\s*charset="?(?:utf-8|us-ascii)"?)?$/i;
const PASSTHROUGH_ENCODINGS = new Set(['7bit', '8bit']);
/** Headers whose presence makes a message something else than one inline text part. */
const OTHER_SHAPES = new Set(['content-disposition']);
/** Headers mailparser reads that the summary takes; each may appear once. */
const ONCE = new Set(['from', 'to', 'subject', 'content-type', 'content-transfer-encoding']);

/** A mailbox list as mailparser leaves it, or undefined when its reading could differ (groups, IDN domains). */
function plainAddresses(value: string | undefined): Array<{ name: string; address: string }> | undefined {
  // mailparser keeps no header whose value is empty: the summary then falls back to the envelope.
  if (value === undefined || value === '') return [];
  const parsed = addressparser(value);
  if (parsed.some((a) => a.group !== undefined || /@xn--/i.test(a.address ?? ''))) return undefined;
  return parsed.map((a) => ({ name: (a.name || '').toString().trim(), address: a.address ?? '' }));
}

/**
 * The summary mailparser's parse would give, for a single text/plain part (UTF-8 or US-ASCII, 7bit,
 * 8bit or quoted-printable, no other parameter) with ASCII headers free of encoded words (folded or
 * not: the relay's DKIM-Signature always is); undefined for anything else.
 */
export function quickSummary(raw: Buffer, envelope: { from: string; to: string[] }): MessageSummary | undefined {
  const end = raw.indexOf('\r\n\r\n');
  if (end <= 0) return undefined;
  const head = raw.toString('latin1', 0, end);
  if (head.includes('=?')) return undefined;
  // Each field's lines as mailsplit joins them; then unfolded and trimmed as libmime's decodeHeader does.
  const fields: Array<{ key: string; line: string }> = [];
  for (const line of head.split('\r\n')) {
    if (CONTINUATION_LINE.test(line)) {
      const field = fields[fields.length - 1];
      if (field === undefined) return undefined;
      field.line += `\r\n${line}`;
    } else if (PLAIN_HEADER_LINE.test(line)) {
      fields.push({ key: line.slice(0, line.indexOf(':')).toLowerCase(), line });
    } else return undefined; // 8-bit, a bare CR or LF, no colon
  }
  const headers = new Map<string, string>();
  for (const { key, line } of fields) {
    if (OTHER_SHAPES.has(key)) return undefined;
    if (!ONCE.has(key)) continue;
    if (headers.has(key)) return undefined;
    const unfolded = line.replace(/(?:\r?\n|\r)[ \t]*/g, ' ').trim();
    headers.set(key, unfolded.slice(unfolded.indexOf(':') + 1).trim());
  }
  const type = headers.get('content-type');
  if (type === undefined || !TEXT_PLAIN.test(type)) return undefined;
  const encoding = headers.get('content-transfer-encoding')?.toLowerCase();
  if (encoding !== undefined && encoding !== 'quoted-printable' && !PASSTHROUGH_ENCODINGS.has(encoding)) return undefined;
  const from = plainAddresses(headers.get('from'));
  const to = plainAddresses(headers.get('to'));
  if (from === undefined || to === undefined) return undefined;
  const body = raw.subarray(end + 4);
  const decoded = encoding === 'quoted-printable' ? libqp.decode(body) : body;
  const text = decoded.toString().replace(/\r?\n/g, '\n');
  return summarizeText({ from: from[0], to, subject: headers.get('subject') || undefined, text: text || undefined, attachments: 0 }, envelope);
}
