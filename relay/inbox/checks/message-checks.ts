// GET /admin/v1/messages/{id}/checks (CONTRACT section 11): whether a captured message
// authenticates, has the headers receivers expect, renders across clients, links to live pages
// and passes a spam filter. Each check is its own module (Mailpit's htmlcheck, linkcheck and
// spamassassin likewise); they run on demand, never at capture.
//
// What reads only the message's bytes (its parts, headers, HTML compatibility, URLs: content.ts)
// runs on a worker thread of its own for messages up to 1 MiB, so the event loop keeps capturing
// mail meanwhile.
//
// Bounded for any message the sink accepts (25 MiB): the message is parsed as a stream that
// drops attachments, a large message is checked one at a time, and the checks whose cost grows
// with the HTML (compatibility, links) skip an HTML part past MAX_CHECKED_HTML_BYTES, saying so
// in `skipped`. Authentication and headers run whatever the size (DKIM hashes the body as it
// streams); spam has spamd's own cap (spam.ts).
import type { RelayServices } from '../../services.js';
import { capturedSize, getCapturedMessage } from '../../storage/captured.js';
import { offloadCheck } from '../../threads/work.js';
import { checkAuthentication } from './authentication.js';
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

/** Messages over this size are checked one at a time: each holds its raw source and decoded parts. */
export const LARGE_MESSAGE_BYTES = 1024 * 1024;

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

/** The checks of a message in memory. */
export async function checkMessage(services: RelayServices, message: CheckedMessage, options: { links: boolean }) {
  // Loaded on first use, as on the checks thread (tasks.ts): caniemail's data.
  const { checkContent, MAX_CHECKED_HTML_BYTES } = await import('./content.js');
  const [content, authentication, spam] = await Promise.all([
    // A large message stays here (one at a time, streamed): copied to a thread it would be held
    // twice, and the thread's heap keeps what it grew to.
    message.raw.length > LARGE_MESSAGE_BYTES ? checkContent(message.raw) : offloadCheck(services.log, 'contentChecks', { raw: message.raw }),
    checkAuthentication(services, message),
    checkSpam(services.config.spamd, message.raw),
  ]);
  const skipped: SkippedCheck[] = [];
  if (spam.available === false && message.raw.length > MAX_SPAMD_BYTES && services.config.spamd !== undefined) {
    skipped.push({ check: 'spam', reason: spam.message ?? 'too large for spamd' });
  }
  if (content.skippedHtmlBytes !== null) {
    const reason = `the HTML part is ${mib(content.skippedHtmlBytes)}; the checks read HTML up to ${mib(MAX_CHECKED_HTML_BYTES)} (Gmail clips a message past 102 KB)`;
    skipped.push({ check: 'html', reason }, { check: 'links', reason });
  }
  const links: LinkCheck[] = options.links
    ? await checkLinks(content.targets, { allowLocal: services.config.allowLocalWebhooks })
    : content.targets.map((t) => ({ ...t, checked: false, status: null, error: null }));
  const checks = { authentication, headers: content.headers, html: content.html, links, spam };
  return { summary: checksVerdict(checks), ...checks, skipped };
}
