// The message of the email the relay composes most, written directly: one body (text or HTML),
// no custom headers, plain ASCII addresses. MailComposer's compile() builds a tree of MimeNodes and
// their buildHeaders() parses and re-encodes every header: about 0.04 of the 0.06 CPU ms a
// composed message costs (BENCHMARKS.md, issue 24, session 14). Here the same headers are written
// in the order MailComposer gives them, each value through the same nodemailer functions
// (encodeWords, encodeWord, quoteString, foldLines) in the steps MimeNode takes for it, and the
// body through mime-bytes.ts, as for a composed tree. Anything else (both bodies, none, custom
// headers, an address that nodemailer would normalise or bracket) returns undefined and is
// composed by MailComposer. test/unit/outbound-bytes.test.ts holds the two outputs equal.
import * as nodemailerMimeFuncs from 'nodemailer/lib/mime-funcs';
import { encodedContent, streamEnd } from './mime-bytes.js';

// The functions MimeNode calls that the published types leave out or narrow.
const mimeFuncs = nodemailerMimeFuncs as unknown as {
  encodeWord(value: string, encoding: 'Q' | 'B', maxLength: number): string;
  encodeWords(value: string, encoding: 'Q' | 'B', maxLength: number, encodeAll: boolean): string;
  quoteString(value: string): string;
  foldLines(line: string, lineLength: number): string;
  isPlainText(value: string): boolean;
  hasLongerLines(value: string, lineLength: number): boolean;
};

export interface PlainMailbox {
  name: string;
  address: string;
}

export interface PlainFields {
  from?: PlainMailbox;
  to?: PlainMailbox[];
  cc?: PlainMailbox[];
  replyTo?: PlainMailbox;
  subject: string;
  date: Date;
  messageId: string;
  headers: Record<string, string>;
  text?: string;
  html?: string;
}

// An address nodemailer writes as it is: a dot-atom local part, a lower-case ASCII domain (no
// punycode, no domain literal, nothing it would bracket or quote).
const PLAIN_ADDRESS = /^[A-Za-z0-9_+-]+(?:\.[A-Za-z0-9_+-]+)*@[a-z0-9-]+(?:\.[a-z0-9-]+)+$/;
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/;

/** MimeNode's _getTextEncoding: Q when Latin letters outnumber 8-bit and control characters. */
function textEncoding(value: string): 'Q' | 'B' {
  let nonLatin = 0;
  let latin = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code <= 0x08 || code === 0x0b || code === 0x0c || (code >= 0x0e && code <= 0x1f) || code >= 0x80) nonLatin++;
    else if ((code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)) latin++;
  }
  return nonLatin < latin ? 'Q' : 'B';
}

/** MimeNode's encoding of an unstructured header value (encodeHeaderValue's default case). */
function headerText(value: string): string {
  const line = value.replace(/\r?\n|\r/g, ' ');
  return CONTROL.test(line) ? mimeFuncs.encodeWord(line, textEncoding(line), 52) : mimeFuncs.encodeWords(line, textEncoding(line), 52, true);
}

/** MimeNode's _encodeAddressName. */
function addressName(name: string): string {
  if (/^[\w ]*$/.test(name)) return name;
  return /^[\x20-\x7e]*$/.test(name) ? mimeFuncs.quoteString(name) : mimeFuncs.encodeWord(name, textEncoding(name), 52);
}

/** An address header's value as MimeNode's _convertAddresses writes it; undefined outside scope. */
function addressList(list: PlainMailbox[]): string | undefined {
  const values: string[] = [];
  for (const { name, address } of list) {
    if (!PLAIN_ADDRESS.test(address) || name.includes('=?')) return undefined;
    values.push(name ? `${addressName(name)} <${address}>` : address);
  }
  return values.join(', ');
}

/**
 * The message MailComposer's compile() and mime-bytes.ts would give for these fields with
 * `newline: 'windows'`, or undefined when they are outside this path's scope.
 */
export function plainMessage(fields: PlainFields): Buffer | undefined {
  if (Object.keys(fields.headers).length > 0 || !fields.text === !fields.html) return undefined;
  const lines: string[] = [];
  const addresses: Array<[string, PlainMailbox[] | undefined]> = [
    ['From', fields.from && [fields.from]],
    ['To', fields.to],
    ['Cc', fields.cc],
    ['Reply-To', fields.replyTo && [fields.replyTo]],
  ];
  for (const [key, list] of addresses) {
    if (!list || list.length === 0) continue;
    const value = addressList(list);
    if (value === undefined) return undefined;
    lines.push(`${key}: ${value}`);
  }
  if (fields.subject) lines.push(`Subject: ${headerText(fields.subject)}`);
  if (CONTROL.test(fields.messageId) || /[\r\n]/.test(fields.messageId) || !/^<.*>$/.test(fields.messageId)) return undefined;
  lines.push(`Message-ID: ${fields.messageId}`, `Date: ${fields.date.toUTCString().replace(/GMT/, '+0000')}`);
  const content = (fields.text || fields.html)!;
  const contentType = fields.text ? 'text/plain' : 'text/html';
  const plain = mimeFuncs.isPlainText(content);
  const encoding = plain && !mimeFuncs.hasLongerLines(content, 76) ? '7bit' : textEncoding(content) === 'Q' ? 'quoted-printable' : 'base64';
  const body = encodedContent(content, encoding, contentType);
  if (!body) return undefined;
  lines.push(`Content-Transfer-Encoding: ${encoding}`, 'MIME-Version: 1.0', `Content-Type: ${contentType}; charset=utf-8`);
  // buildHeaders skips a value that is only whitespace, and folds every line at 76.
  const head = lines.filter((line) => line.slice(line.indexOf(':') + 1).trim()).map((line) => mimeFuncs.foldLines(line, 76));
  return streamEnd([Buffer.from(`${head.join('\r\n')}\r\n\r\n`), body]);
}
