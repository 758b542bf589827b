// DKIM signing of one raw message (RFC 6376): rsa-sha256, relaxed/relaxed, in one synchronous pass
// over the bytes. Pure work, run on a worker thread (relay/threads/tasks.ts) or, when no thread can,
// inline.
//
// The signature is the one nodemailer's DKIM signer writes, byte for byte (the same signed header
// fields, tags in the same order, the same folding; test/unit/outbound-bytes.test.ts compares the two):
// its signer streams the message through a header parser and a body hasher, Transform streams
// whose machinery cost more than the RSA signature itself (BENCHMARKS.md, issue 24, session 9).
import { sign, createHash, type KeyObject } from 'node:crypto';
import { domainToASCII } from 'node:url';
import { foldLines } from 'nodemailer/lib/mime-funcs';

export interface DkimSigning {
  domainName: string;
  keySelector: string;
  privateKey: KeyObject;
}

// The fields signed when present (RFC 4871 section 5.5's list, as nodemailer signs them), in this order.
const SIGNED_FIELDS = (
  'From:Sender:Reply-To:Subject:Date:Message-ID:To:Cc:MIME-Version:Content-Type:Content-Transfer-Encoding:Content-ID:' +
  'Content-Description:Resent-Date:Resent-From:Resent-Sender:Resent-To:Resent-Cc:Resent-Message-ID:In-Reply-To:References:' +
  'List-Id:List-Help:List-Unsubscribe:List-Subscribe:List-Post:List-Owner:List-Archive:OTP-Token'
)
  .toLowerCase()
  .split(':');

const CR = 0x0d;
const LF = 0x0a;
const SP = 0x20;
const TAB = 0x09;
const CRLF = Buffer.from('\r\n');

/** Where the header section ends: just after the first empty line (LF LF or LF CR LF), or the whole message. */
function headerEnd(raw: Buffer): number {
  for (let i = raw.indexOf(LF, 1); i >= 0; i = raw.indexOf(LF, i + 1)) {
    if (raw[i - 1] === LF || (i >= 2 && raw[i - 1] === CR && raw[i - 2] === LF)) return i + 1;
  }
  return raw.length;
}

const blank = (code: number) => code === SP || code === TAB;

/** SP and HTAB off both ends of a field name (only those: an NBSP stays); a scan, not a regex that backtracks over long runs. */
function trimFieldName(name: string): string {
  let start = 0;
  let end = name.length;
  while (start < end && blank(name.charCodeAt(start))) start++;
  while (end > start && blank(name.charCodeAt(end - 1))) end--;
  return name.slice(start, end);
}

/** The header fields, unfolded into one string each (latin1, so bytes stay bytes), with their lower-case names. */
function headerFields(head: Buffer): Array<{ key: string; line: string }> {
  const lines: string[] = [];
  for (const raw of head.toString('latin1').split(/\r?\n/)) {
    if (lines.length > 0 && /^[ \t]/.test(raw)) lines[lines.length - 1] += `\n${raw}`;
    else lines.push(raw);
  }
  return lines.filter((line) => /[^ \t\r]/.test(line)).map((line) => ({ key: trimFieldName(line.substring(0, Math.max(0, line.indexOf(':')))).toLowerCase(), line }));
}

/** A field's value in relaxed canonical form (RFC 6376 section 3.4.2). */
function relaxedValue(line: string): string {
  return line
    .substring(line.indexOf(':') + 1)
    .replace(/\r?\n/g, '')
    .replace(/[ \t]+/g, ' ')
    .replace(/^ | $/g, '');
}

/**
 * Whether the body is already in relaxed canonical form but for its trailing empty lines: every
 * line ends CRLF (no lone CR or LF), no TAB, no run of spaces, no space at the end of a line or of
 * the body. A composed message's body almost always is (quoted-printable and base64 write no such
 * whitespace), and then the hash reads it as it is instead of copying it byte by byte.
 */
function canonicalAsItIs(body: Buffer): boolean {
  if (body.indexOf(TAB) >= 0 || body.indexOf('  ') >= 0 || body.indexOf(' \r') >= 0 || body[body.length - 1] === SP) return false;
  for (let i = body.indexOf(LF); i >= 0; i = body.indexOf(LF, i + 1)) if (body[i - 1] !== CR) return false;
  for (let i = body.indexOf(CR); i >= 0; i = body.indexOf(CR, i + 1)) if (body[i + 1] !== LF) return false;
  return true;
}

/**
 * The body hash, relaxed canonicalization (RFC 6376 section 3.4.4): whitespace at the end of a line
 * dropped, runs of it inside a line one space, every line ending CRLF, empty lines at the end
 * ignored. A lone CR is content; LF alone ends a line.
 */
function relaxedBodyHash(body: Buffer): string {
  const hash = createHash('sha256');
  if (canonicalAsItIs(body)) {
    let end = body.length;
    while (end >= 2 && body[end - 1] === LF && body[end - 2] === CR) end -= 2;
    // The content, and the line ending of its last line (written when the body has none).
    if (end > 0) hash.update(body.subarray(0, end)).update(CRLF);
    return hash.digest('base64');
  }
  const out = Buffer.allocUnsafe(body.length * 2 + 2);
  let pos = 0;
  let lineHasContent = false;
  let pendingSpace = false;
  let pendingCr = false;
  let emptyLines = 0;
  const content = (c: number) => {
    if (!lineHasContent) {
      for (; emptyLines > 0; emptyLines--) (out[pos++] = CR), (out[pos++] = LF);
      lineHasContent = true;
    }
    if (pendingSpace) out[pos++] = SP;
    pendingSpace = false;
    out[pos++] = c;
  };
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === LF) {
      if (lineHasContent) (out[pos++] = CR), (out[pos++] = LF);
      else emptyLines++;
      lineHasContent = pendingSpace = pendingCr = false;
      continue;
    }
    if (pendingCr) {
      content(CR);
      pendingCr = false;
    }
    if (c === CR) pendingCr = true;
    else if (c === SP || c === TAB) pendingSpace = true;
    else content(c);
  }
  if (pendingCr) content(CR);
  if (lineHasContent) (out[pos++] = CR), (out[pos++] = LF);
  // The empty lines flushed before content are at most the body's own LFs: `out` holds them.
  return hash.update(out.subarray(0, pos)).digest('base64');
}

/**
 * The signature's base64 folded as nodemailer folds it (`replace(/(^.{73}|.{75}(?!\r?\n|\r))/g,
 * '$&\r\n ').trim()` over text without line breaks): 73 characters on the field's first line of
 * it, then lines of 75, each continued with CRLF and a space.
 */
function foldSignature(signature: string): string {
  if (signature.length < 73) return signature;
  let folded = signature.slice(0, 73);
  for (let i = 73; i < signature.length; i += 75) folded += `\r\n ${signature.slice(i, i + 75)}`;
  return folded;
}

const cleanTag = (value: string) => value.replace(/[\x00-\x1f\x7f;=]/g, '');

// The d= tag of each signing domain, worked out once (a relay signs for a handful of domains).
const MAX_DOMAINS = 1_000;
const asciiDomains = new Map<string, string>();
function asciiDomain(domain: string): string {
  let ascii = asciiDomains.get(domain);
  if (ascii === undefined) {
    if (asciiDomains.size >= MAX_DOMAINS) asciiDomains.clear();
    ascii = domainToASCII(domain) || domain.toLowerCase();
    asciiDomains.set(domain, ascii);
  }
  return ascii;
}

/** The message with its DKIM-Signature field first; unsigned, as nodemailer leaves it, if the key cannot sign. */
export function signMessage(raw: Buffer, signing: DkimSigning): Buffer {
  const end = headerEnd(raw);
  const head = raw.subarray(0, end);
  const fields = headerFields(head);
  // Each name once, its last occurrence (the bottom-most field is the one signed).
  const chosen = new Map<string, string>();
  for (let i = fields.length - 1; i >= 0; i--) {
    const { key, line } = fields[i]!;
    if (!chosen.has(key) && SIGNED_FIELDS.includes(key)) chosen.set(key, relaxedValue(line));
  }
  const names = SIGNED_FIELDS.filter((name) => chosen.has(name));
  const domain = cleanTag(signing.domainName);
  const tags = [
    'v=1',
    'a=rsa-sha256',
    'c=relaxed/relaxed',
    `d=${asciiDomain(domain)}`,
    'q=dns/txt',
    `s=${cleanTag(signing.keySelector)}`,
    `bh=${relaxedBodyHash(raw.subarray(end))}`,
    `h=${cleanTag(names.join(':'))}`,
  ];
  const field = `${foldLines(`DKIM-Signature: ${tags.join('; ')}`, 76)};\r\n b=`;
  const signed = `${names.map((name) => `${name}:${chosen.get(name)}`).join('\r\n')}\r\ndkim-signature:${relaxedValue(field)}`;
  let signature: string;
  try {
    signature = sign('sha256', Buffer.from(signed, 'latin1'), signing.privateKey).toString('base64');
  } catch {
    return raw;
  }
  const folded = field + foldSignature(signature);
  return Buffer.concat([Buffer.from(`${folded}\r\n`, 'latin1'), raw]);
}
