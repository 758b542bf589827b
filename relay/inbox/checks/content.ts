// The checks of a captured message that read nothing but its bytes (issue 26): its text and HTML
// parts (a streamed parse that drains attachments), the header checks, HTML compatibility and the
// link and image URLs. Pure and CPU-bound, so it runs on the relay's worker threads
// (relay/threads/tasks.ts) and the event loop keeps capturing mail meanwhile.
import { MailParser } from 'mailparser';
import { parseHeaders } from '../../mail/headers.js';
import { extractImageUrls, extractLinks } from '../links-and-codes.js';
import { PARSE_OPTIONS } from '../read-message.js';
import { checkHeaders, type HeaderCheck } from './headers.js';
import { checkHtmlCompatibility, type HtmlCompatibility } from './html-compat.js';

/**
 * The HTML compatibility check and the link list read HTML parts up to this size. Gmail clips a
 * message past 102 KB; an HTML part ten times that is no template a client renders whole, and
 * caniemail's checker walks every node.
 */
export const MAX_CHECKED_HTML_BYTES = 1024 * 1024;

export interface ContentChecks {
  headers: HeaderCheck[];
  html: HtmlCompatibility | null;
  /** The HTML part's size when it was too large to check (MAX_CHECKED_HTML_BYTES), else null. */
  skippedHtmlBytes: number | null;
  targets: Array<{ url: string; kind: 'link' | 'image' }>;
}

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

export async function checkContent(raw: Buffer): Promise<ContentChecks> {
  const bodies = await readBodies(raw);
  const htmlBytes = bodies.html === null ? 0 : Buffer.byteLength(bodies.html);
  const tooLarge = htmlBytes > MAX_CHECKED_HTML_BYTES;
  const html = tooLarge ? null : bodies.html;
  return {
    headers: checkHeaders(parseHeaders(raw), bodies),
    html: html === null ? null : checkHtmlCompatibility(html),
    skippedHtmlBytes: tooLarge ? htmlBytes : null,
    targets: [
      ...extractLinks(html, tooLarge ? null : bodies.text).map((l) => ({ url: l.url, kind: 'link' as const })),
      ...extractImageUrls(html).map((url) => ({ url, kind: 'image' as const })),
    ],
  };
}
