// Captured HTML as the dashboard shows it: in a sandboxed iframe, from its own endpoint with its own
// Content-Security-Policy. No script runs (no script-src, the CSP sandbox and the iframe sandbox),
// and remote loads (images, styles, fonts) are blocked until the reader allows them.
import type { ParsedMail } from 'mailparser';

/** References that would load from the network: src/background/href of a stylesheet, url(), @import. */
const REMOTE_REFERENCE = /(?:\b(?:src|background|poster|srcset)\s*=\s*["']?\s*(?:https?:)?\/\/)|(?:url\(\s*["']?\s*(?:https?:)?\/\/)|(?:@import\s+["']?\s*(?:https?:)?\/\/)|(?:<link\b[^>]*\bhref\s*=\s*["']?\s*(?:https?:)?\/\/)/gi;

/** How many remote loads the HTML asks for (shown as "N remote resources blocked"). */
export function countRemoteReferences(html: string): number {
  return html.match(REMOTE_REFERENCE)?.length ?? 0;
}

/** cid: references inlined as data: URLs, so embedded images show without any request. */
export function inlineContentIds(parsed: ParsedMail, html: string): string {
  const byCid = new Map<string, string>();
  for (const a of parsed.attachments) {
    if (a.cid) byCid.set(a.cid.toLowerCase(), `data:${a.contentType};base64,${a.content.toString('base64')}`);
  }
  if (byCid.size === 0) return html;
  return html.replace(/cid:([^"'\s)>]+)/gi, (match, cid: string) => byCid.get(cid.toLowerCase()) ?? match);
}

/** The CSP of the HTML view: nothing but inline styles and data: images, unless remote loads are allowed. */
export function htmlViewPolicy(allowRemote: boolean): string {
  const remote = allowRemote ? ' https: http:' : '';
  return [
    "default-src 'none'",
    `img-src data:${remote}`,
    `style-src 'unsafe-inline'${remote}`,
    `font-src data:${remote}`,
    "frame-ancestors 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    // Even opened on its own in a tab, the document is sandboxed: no scripts, no origin.
    'sandbox allow-popups allow-popups-to-escape-sandbox',
  ].join('; ');
}
