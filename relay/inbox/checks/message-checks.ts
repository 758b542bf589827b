// GET /admin/v1/messages/{id}/checks (CONTRACT section 11): whether a captured message
// authenticates, has the headers receivers expect, renders across clients, links to live pages
// and passes a spam filter. Each check is its own module (Mailpit's htmlcheck, linkcheck and
// spamassassin likewise); they run on demand, never at capture.
import type { RelayServices } from '../../services.js';
import { parseHeaders } from '../../mail/headers.js';
import { extractImageUrls, extractLinks } from '../links-and-codes.js';
import { parseMessage } from '../read-message.js';
import { checkAuthentication } from './authentication.js';
import { checkHeaders } from './headers.js';
import { checkHtmlCompatibility } from './html-compat.js';
import { checkLinks, type LinkCheck } from './links.js';
import { checkSpam } from './spam.js';

export interface CheckedMessage {
  raw: Buffer;
  envelope_from: string;
  email_id: string | null;
  project_id: string | null;
}

export async function checkMessage(services: RelayServices, message: CheckedMessage, options: { links: boolean }) {
  const [parsed, authentication, spam] = await Promise.all([
    parseMessage(message.raw),
    checkAuthentication(services, message),
    checkSpam(services.config.spamd, message.raw),
  ]);
  const html = typeof parsed.html === 'string' && parsed.html !== '' ? parsed.html : null;
  const text = parsed.text || null;
  const targets = [
    ...extractLinks(html, text).map((l) => ({ url: l.url, kind: 'link' as const })),
    ...extractImageUrls(html).map((url) => ({ url, kind: 'image' as const })),
  ];
  const links: LinkCheck[] = options.links
    ? await checkLinks(targets, { allowLocal: services.config.allowLocalWebhooks })
    : targets.map((t) => ({ ...t, checked: false, status: null, error: null }));
  return {
    authentication,
    headers: checkHeaders(parseHeaders(message.raw), parsed),
    html: html === null ? null : checkHtmlCompatibility(html),
    links,
    spam,
  };
}
