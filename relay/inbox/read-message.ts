// One parse of a captured message (mailparser), and what the inbox and the message view take from it.
import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser';
import type { CapturedMessage } from 'raven-email-sdk';
import { storableText } from '../domain/storable-text.js';
import type { InboxEntry } from '../storage/inbox.js';

/** What every parse of captured mail skips: the conversions between text and HTML, and link detection. */
export const PARSE_OPTIONS = { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true, skipTextLinks: true } as const;
const SNIPPET_CHARS = 160;

export function parseMessage(raw: Buffer): Promise<ParsedMail> {
  return simpleParser(raw, PARSE_OPTIONS);
}

function addressList(value: AddressObject | AddressObject[] | undefined): Array<{ name: string; address: string }> {
  const objects = value === undefined ? [] : Array.isArray(value) ? value : [value];
  return objects.flatMap((o) => o.value).map((a) => ({ name: a.name ?? '', address: a.address ?? '' }));
}

export type MessageSummary = Pick<InboxEntry, 'from_name' | 'from_address' | 'to' | 'subject' | 'snippet' | 'attachments'>;

/**
 * The inbox row of a message: header From and To (falling back to the envelope), subject, snippet;
 * as storable text (a NUL in a header, or a snippet cut inside a surrogate pair, is U+FFFD).
 */
export function summarize(parsed: ParsedMail, envelope: { from: string; to: string[] }): MessageSummary {
  return summarizeText(
    {
      from: addressList(parsed.from)[0],
      to: addressList(parsed.to),
      subject: parsed.subject,
      text: parsed.text ?? (typeof parsed.html === 'string' ? htmlToPlain(parsed.html) : undefined),
      attachments: parsed.attachments.length,
    },
    envelope,
  );
}

/** What a summary takes of a parsed message (mailparser's, or quick-summary.ts's for plain ones). */
export interface MessageParts {
  from: { name: string; address: string } | undefined;
  to: Array<{ name: string; address: string }>;
  subject: string | undefined;
  /** The text part, else the HTML's text; undefined when there is neither. */
  text: string | undefined;
  attachments: number;
}

export function summarizeText(parts: MessageParts, envelope: { from: string; to: string[] }): MessageSummary {
  const { from, to } = parts;
  return {
    from_name: storableText(from?.name ?? ''),
    from_address: storableText(from?.address || envelope.from),
    to: storableText(to.length > 0 ? to.map((a) => (a.name ? `${a.name} <${a.address}>` : a.address)).join(', ') : envelope.to.join(', ')),
    subject: storableText(parts.subject ?? ''),
    snippet: storableText((parts.text ?? '').replace(/\s+/g, ' ').trim().slice(0, SNIPPET_CHARS)),
    attachments: parts.attachments,
  };
}

/** Text of an HTML body for the snippet only: tags, styles and scripts dropped, entities left. */
function htmlToPlain(html: string): string {
  return html
    .replace(/<(style|script)[^>]*>[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&nbsp;/g, ' ');
}

export type AttachmentView = CapturedMessage['attachments'][number];

export function attachmentViews(parsed: ParsedMail): AttachmentView[] {
  return parsed.attachments.map((a, index) => ({
    index,
    filename: a.filename ?? null,
    content_type: a.contentType,
    size: a.size,
    content_id: a.cid ?? null,
    inline: a.contentDisposition === 'inline' || (a.related ?? false),
  }));
}
