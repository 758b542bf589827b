// A small MIME walker for the reports that come back to the `raven.` MX: multipart/report with a
// machine-readable part (message/delivery-status, message/feedback-report) and the returned
// message or its headers. mailparser flattens these parts into text, so we walk the tree here.
import { parseHeaders } from '../../mail/headers.js';

export interface MimePart {
  headers: Array<[string, string]>;
  /** Lower-cased `type/subtype`; text/plain when absent (RFC 2045 section 5.2). */
  contentType: string;
  params: Record<string, string>;
  /** The body, transfer-decoded. */
  body: Buffer;
  parts: MimePart[];
}

// Reports are shallow; a deeper tree is not one of them and is not worth walking.
const MAX_DEPTH = 4;
const MAX_PARTS = 32;

/** `multipart/report; report-type=delivery-status; boundary="x"` -> type and lower-cased params. */
export function parseContentType(value: string | null): { type: string; params: Record<string, string> } {
  if (!value) return { type: 'text/plain', params: {} };
  const [type, ...rest] = value.split(';');
  const params: Record<string, string> = {};
  for (const match of rest.join(';').matchAll(/([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;]+))/g)) {
    params[match[1]!.toLowerCase()] = match[2] !== undefined ? match[2].replace(/\\(.)/g, '$1') : match[3]!;
  }
  return { type: type!.trim().toLowerCase() || 'text/plain', params };
}

function splitHeaderAndBody(raw: Buffer): { head: Buffer; body: Buffer } {
  const crlf = raw.indexOf('\r\n\r\n');
  const lf = raw.indexOf('\n\n');
  if (crlf < 0 && lf < 0) return { head: raw, body: Buffer.alloc(0) };
  if (crlf >= 0 && (lf < 0 || crlf <= lf)) return { head: raw.subarray(0, crlf), body: raw.subarray(crlf + 4) };
  return { head: raw.subarray(0, lf), body: raw.subarray(lf + 2) };
}

function decodeQuotedPrintable(body: Buffer): Buffer {
  const text = body.toString('latin1').replace(/=\r?\n/g, '');
  return Buffer.from(
    text.replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    'latin1',
  );
}

function transferDecode(body: Buffer, encoding: string | null): Buffer {
  switch ((encoding ?? '').trim().toLowerCase()) {
    case 'base64':
      return Buffer.from(body.toString('latin1').replace(/[^A-Za-z0-9+/=]/g, ''), 'base64');
    case 'quoted-printable':
      return decodeQuotedPrintable(body);
    default:
      return body;
  }
}

/** The bodies between `--boundary` lines, without the preamble and epilogue. */
function splitMultipart(body: Buffer, boundary: string): Buffer[] {
  const text = body.toString('latin1');
  const delimiter = new RegExp(`(?:^|\\r?\\n)--${boundary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(--)?[ \\t]*(?=\\r?\\n|$)`, 'g');
  const parts: Buffer[] = [];
  let start: number | undefined;
  for (const match of text.matchAll(delimiter)) {
    if (start !== undefined) parts.push(Buffer.from(text.slice(start, match.index), 'latin1'));
    if (match[1] === '--' || parts.length >= MAX_PARTS) return parts;
    start = match.index + match[0].length;
    start += text.startsWith('\r\n', start) ? 2 : text.startsWith('\n', start) ? 1 : 0;
  }
  return parts;
}

export function parseMimeTree(raw: Buffer, depth = 0): MimePart {
  const { head, body } = splitHeaderAndBody(raw);
  const headers = parseHeaders(Buffer.concat([head, Buffer.from('\r\n\r\n')]));
  const field = (name: string) => headers.find(([n]) => n.toLowerCase() === name)?.[1] ?? null;
  const { type, params } = parseContentType(field('content-type'));
  const part: MimePart = { headers, contentType: type, params, body, parts: [] };
  if (type.startsWith('multipart/') && params.boundary && depth < MAX_DEPTH) {
    part.parts = splitMultipart(body, params.boundary).map((child) => parseMimeTree(child, depth + 1));
  } else {
    part.body = transferDecode(body, field('content-transfer-encoding'));
  }
  return part;
}

/** Every part of the tree, depth first, the root included. */
export function allParts(root: MimePart): MimePart[] {
  return [root, ...root.parts.flatMap(allParts)];
}
