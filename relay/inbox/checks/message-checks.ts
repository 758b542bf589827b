// GET /admin/v1/messages/{id}/checks (CONTRACT section 11): whether a captured message
// authenticates, has the headers receivers expect, renders across clients, links to live pages
// and passes a spam filter. Each check is its own module (Mailpit's htmlcheck, linkcheck and
// spamassassin likewise); they run on demand, never at capture.
//
// Bounded for any message the sink accepts (25 MiB): the message is parsed as a stream that
// drops attachments, a large message is checked one at a time, and the checks whose cost grows
// with the HTML (compatibility, links) skip an HTML part past MAX_CHECKED_HTML_BYTES, saying so
// in `skipped`. Authentication and headers run whatever the size (DKIM hashes the body as it
// streams); spam has spamd's own cap (spam.ts).
import { MailParser } from 'mailparser';
import type { RelayServices } from '../../services.js';
import { capturedSize, getCapturedMessage } from '../../storage/captured.js';
import { parseHeaders } from '../../mail/headers.js';
import { extractImageUrls, extractLinks } from '../links-and-codes.js';
import { PARSE_OPTIONS } from '../read-message.js';
import { checkAuthentication } from './authentication.js';
import { checkHeaders } from './headers.js';
import { checkHtmlCompatibility } from './html-compat.js';
import { checkLinks, type LinkCheck } from './links.js';
import { checkSpam, MAX_SPAMD_BYTES } from './spam.js';
import { checksVerdict } from './verdict.js';

export interface CheckedMessage {
  raw: Buffer;
  envelope_from: string;
  email_id: string | null;
  project_id: string | null;
}

export type CheckName = 'authentication' | 'headers' | 'html' | 'links' | 'spam';

/** A check that did not run on this message, and why. */
export interface SkippedCheck {
  check: CheckName;
  reason: string;
}

/**
 * The HTML compatibility check and the link list read HTML parts up to this size. Gmail clips a
 * message past 102 KB; an HTML part ten times that is no template a client renders whole, and
 * caniemail's checker walks every node (about 1 s per MiB).
 */
export const MAX_CHECKED_HTML_BYTES = 1024 * 1024;

/** Messages over this size are checked one at a time: each holds its raw source and decoded parts. */
export const LARGE_MESSAGE_BYTES = 1024 * 1024;

/** The text and HTML parts, read as a stream; attachments are drained as they come, never kept. */
function readBodies(raw: Buffer): Promise<{ html: string | null; text: string | null }> {
  return new Promise((resolve, reject) => {
    const parser = new MailParser(PARSE_OPTIONS);
    let html: string | null = null;
    let text: string | null = null;
    parser.on('data', (data: any) => {
      if (data.type === 'attachment') {
        data.content.on('end', () => data.release());
        data.content.resume();
      } else if (data.type === 'text') {
        html = typeof data.html === 'string' && data.html !== '' ? data.html : null;
        text = typeof data.text === 'string' && data.text !== '' ? data.text : null;
      }
    });
    parser.on('error', reject);
    parser.on('end', () => resolve({ html, text }));
    parser.end(raw);
  });
}

/** One large message at a time; small ones never wait. */
let largeQueue: Promise<unknown> = Promise.resolve();
function bounded<T>(size: number, run: () => Promise<T>): Promise<T> {
  if (size <= LARGE_MESSAGE_BYTES) return run();
  const turn = largeQueue.then(run, run);
  largeQueue = turn.catch(() => undefined);
  return turn;
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

export type MessageChecks = Awaited<ReturnType<typeof checkMessage>>;

/**
 * The checks of a captured message by id, or undefined when there is none. A large message is
 * read from storage only when its turn comes: waiting requests hold nothing.
 */
export async function checkCapturedMessage(services: RelayServices, id: string, options: { links: boolean }): Promise<MessageChecks | undefined> {
  const size = await capturedSize(services.db, id);
  if (size === undefined) return undefined;
  return bounded(size, async () => {
    const message = await getCapturedMessage(services.db, id);
    if (!message) return undefined; // deleted meanwhile
    return checkMessage(services, { raw: message.raw, envelope_from: message.from, email_id: message.email_id, project_id: message.project_id }, options);
  });
}

/** The checks of a message in memory (the bench calls it directly). */
export async function checkMessage(services: RelayServices, message: CheckedMessage, options: { links: boolean }) {
  const [bodies, authentication, spam] = await Promise.all([
    readBodies(message.raw),
    checkAuthentication(services, message),
    checkSpam(services.config.spamd, message.raw),
  ]);
  const skipped: SkippedCheck[] = [];
  if (spam.available === false && message.raw.length > MAX_SPAMD_BYTES && services.config.spamd !== undefined) {
    skipped.push({ check: 'spam', reason: spam.message ?? 'too large for spamd' });
  }
  const htmlBytes = bodies.html === null ? 0 : Buffer.byteLength(bodies.html);
  const htmlTooLarge = htmlBytes > MAX_CHECKED_HTML_BYTES;
  if (htmlTooLarge) {
    const reason = `the HTML part is ${mib(htmlBytes)}; the checks read HTML up to ${mib(MAX_CHECKED_HTML_BYTES)} (Gmail clips a message past 102 KB)`;
    skipped.push({ check: 'html', reason }, { check: 'links', reason });
  }
  const html = htmlTooLarge ? null : bodies.html;
  const targets = [
    ...extractLinks(html, htmlTooLarge ? null : bodies.text).map((l) => ({ url: l.url, kind: 'link' as const })),
    ...extractImageUrls(html).map((url) => ({ url, kind: 'image' as const })),
  ];
  const links: LinkCheck[] = options.links
    ? await checkLinks(targets, { allowLocal: services.config.allowLocalWebhooks })
    : targets.map((t) => ({ ...t, checked: false, status: null, error: null }));
  const checks = {
    authentication,
    headers: checkHeaders(parseHeaders(message.raw), bodies),
    html: html === null ? null : checkHtmlCompatibility(html),
    links,
    spam,
  };
  return { summary: checksVerdict(checks), ...checks, skipped };
}
