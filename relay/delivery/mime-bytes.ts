// A composed MIME tree (nodemailer's MailComposer) written out in one synchronous pass. The tree's
// own build() streams every node through a chain of Transform streams (encoders, a last-newline
// and a line-ending stage, each a pipeline with its abort signals): about two thirds of a
// message's composition, for a few kilobytes of text (BENCHMARKS.md, issue 24, session 9). Here the
// same steps run as plain functions: each node's headers from the node itself (buildHeaders, so
// every header rule stays nodemailer's), its text through nodemailer's own encoding functions in
// the steps its stream encoders take for one chunk, the boundaries as stream() writes them,
// then the last newline and CRLF line endings. A tree this does not cover (a raw node, content that
// is not a string or Buffer, quoted-printable over one encoder slice) returns undefined and the
// caller builds it the streaming way. test/unit/outbound-bytes.test.ts holds the two outputs equal.
import * as base64 from 'nodemailer/lib/base64';
import type MimeNode from 'nodemailer/lib/mime-node';
import * as qp from 'nodemailer/lib/qp';

// nodemailer's quoted-printable encoder works in slices of this many bytes; one slice is one call.
const QP_SLICE = 64 * 1024;
const CRLF = Buffer.from('\r\n');

interface Node {
  childNodes: Node[];
  content?: unknown;
  contentType?: string;
  multipart?: string | false;
  boundary?: string | false;
  _raw?: unknown;
  _transforms?: unknown[];
  _processFuncs?: unknown[];
  buildHeaders(): string;
  getTransferEncoding(): string | false;
}

/**
 * Text in quoted-printable as nodemailer's stream encoder writes it from one chunk: the whitespace
 * the text ends with is held back and encoded after the rest, whose last line then wraps with it
 * (not quite `wrap(encode(text))`: that can break the last line elsewhere).
 */
function quotedPrintable(bytes: Buffer): string {
  let end = bytes.length;
  while (end > 0 && (bytes[end - 1] === 0x20 || bytes[end - 1] === 0x09)) end--;
  const first = end > 0 ? qp.wrap(qp.encode(bytes.subarray(0, end)), 76) : '';
  if (end === bytes.length) return first;
  const kept = first.lastIndexOf('\n') + 1;
  return first.slice(0, kept) + qp.wrap(first.slice(kept) + qp.encode(bytes.subarray(end)), 76);
}

/**
 * A node's content in its transfer encoding, as the node's stream encoder writes it; undefined
 * when only the stream can (quoted-printable over one encoder slice, or outside text/*, where the
 * stream encoder treats a lone CR or LF as data).
 */
export function encodedContent(content: string | Buffer, encoding: string | false, contentType: string): Buffer | undefined {
  const bytes = typeof content === 'string' ? Buffer.from(content) : content;
  if (encoding === 'base64') return Buffer.from(base64.wrap(base64.encode(bytes), 76), 'latin1');
  if (encoding !== 'quoted-printable') return bytes;
  if (bytes.length > QP_SLICE || !/^text\//i.test(contentType)) return undefined;
  return Buffer.from(quotedPrintable(bytes), 'latin1');
}

/** One node and its children, as MimeNode.stream() writes them; false when it cannot. */
function writeNode(node: Node, out: Buffer[]): boolean {
  if (node._raw) return false;
  const encoding = node.getTransferEncoding();
  out.push(Buffer.from(`${node.buildHeaders()}\r\n\r\n`));
  const content = node.content;
  if (content) {
    if (typeof content !== 'string' && !Buffer.isBuffer(content)) return false;
    const encoded = encodedContent(content, encoding, node.contentType ?? '');
    if (!encoded) return false;
    out.push(encoded);
  }
  if (node.multipart) {
    for (const [i, child] of node.childNodes.entries()) {
      out.push(Buffer.from(`${i > 0 ? '\r\n' : ''}--${node.boundary}\r\n`));
      if (!writeNode(child, out)) return false;
    }
    out.push(Buffer.from(`\r\n--${node.boundary}--\r\n`));
  }
  return true;
}

/** Every LF not after a CR becomes CRLF (nodemailer's LeWindows stage). */
function windowsLineEndings(bytes: Buffer): Buffer {
  let from = 0;
  const parts: Buffer[] = [];
  for (let i = bytes.indexOf(0x0a); i >= 0; i = bytes.indexOf(0x0a, i + 1)) {
    if (i > 0 && bytes[i - 1] === 0x0d) continue;
    parts.push(bytes.subarray(from, i), CRLF);
    from = i + 1;
  }
  if (parts.length === 0) return bytes;
  parts.push(bytes.subarray(from));
  return Buffer.concat(parts);
}

/**
 * The message of a compiled MailComposer tree with `newline: 'windows'` and no transforms, as its
 * build() would give it; undefined when the tree holds something only build() handles.
 */
export function mimeBytes(root: MimeNode): Buffer | undefined {
  const node = root as unknown as Node;
  if (node._transforms?.length || node._processFuncs?.length) return undefined;
  const out: Buffer[] = [];
  if (!writeNode(node, out)) return undefined;
  return streamEnd(out);
}

/**
 * The parts of a message as its stream writes them, through the stages that end build()'s
 * pipeline: nodemailer's LastNewline (the message ends with a line break), then CRLF line endings.
 */
export function streamEnd(out: Buffer[]): Buffer {
  const written = Buffer.concat(out);
  const lastByte = written[written.length - 1];
  const ending = lastByte === 0x0a ? [] : lastByte === 0x0d ? [Buffer.from('\n')] : [CRLF];
  return windowsLineEndings(ending.length > 0 ? Buffer.concat([written, ...ending]) : written);
}
