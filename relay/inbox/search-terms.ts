// What the inbox search's `tag:` and `message-id:` terms compare with, computed once per captured
// message by the indexer (and by its backfill of mail captured before migration 0016), and the
// same normalisation applied to what a user types, so the two always meet.
//
// Tags: the API email's tags (a message the worker delivered) and every item of the message's
// `X-Tags` headers (comma-separated, Mailpit's form: `X-Tags: signup, plan=pro`). A tag with a
// value is indexed as its name and as `name=value`; a tag without one as its name. So `tag:plan`
// matches any value of `plan` and `tag:plan=pro` only that value; both exact, never substrings,
// case-insensitive, runs of white space as one space (`tag:"Tag 1"`).
// Message-ID: the header's id without its angle brackets, lower-cased; `message-id:` matches it
// exactly, typed with or without the brackets.
import { storableText } from '../domain/storable-text.js';
import { decodedHeaderValue, decodeEncodedWords, parseHeaders } from '../mail/headers.js';

/** At most this many tags per message are indexed (the API allows 20; the rest from X-Tags). */
export const MAX_TAGS_PER_MESSAGE = 50;
/** A longer tag (or `name=value`) is not indexed: the API's own limit is 256 + 1 + 256. */
export const MAX_TAG_CHARS = 513;
/** A longer Message-ID is not indexed (998 is a header line's limit, RFC 5322). */
export const MAX_MESSAGE_ID_CHARS = 998;

export interface SearchTerms {
  /** The Message-ID as `message-id:` compares it; '' when the message has none (or an unusable one). */
  messageId: string;
  /** Every tag term: `name` and `name=value` for a tag with a value. */
  tags: string[];
}

/** A tag's name or value as the index holds it and a `tag:` term looks it up. */
function tagTerm(text: string): string {
  return text.trim().replace(/\s+/g, ' ').toLowerCase();
}

/** A Message-ID as the index holds it and a `message-id:` term looks it up. */
export function messageIdTerm(text: string): string {
  const trimmed = text.trim();
  const bracketed = /<([^<>]*)>/.exec(trimmed);
  return (bracketed ? bracketed[1]! : trimmed).trim().toLowerCase();
}

/** The index terms of one tag: its name, and `name=value` when it has a value. */
function tagTermsOf(name: string, value: string | undefined): string[] {
  const n = tagTerm(name);
  if (n === '') return [];
  const v = value === undefined ? '' : tagTerm(value);
  return v === '' ? [n] : [n, `${n}=${v}`];
}

/** One item of X-Tags, or what follows `tag:`: `name` or `name=value`. */
function splitTag(item: string): [string, string | undefined] {
  const eq = item.indexOf('=');
  return eq < 0 ? [item, undefined] : [item.slice(0, eq), item.slice(eq + 1)];
}

/** What a `tag:` term looks up: `tag:Plan = Pro` is `plan=pro`; '' when it names no tag. */
export function tagQueryTerm(typed: string): string {
  return tagTermsOf(...splitTag(typed)).at(-1) ?? '';
}

/**
 * The terms of one message: `headerBlock` is its raw message (or at least its header section),
 * `emailTags` the tags of the API email the worker delivered (null for other mail).
 */
export function searchTermsOf(headerBlock: Buffer, emailTags: Record<string, string> | null): SearchTerms {
  const headers = parseHeaders(headerBlock, false);
  const rawId = decodedHeaderValue(headers, 'message-id');
  const messageId = rawId === null ? '' : storableText(messageIdTerm(rawId));
  const tags = new Set<string>();
  let count = 0;
  const add = (name: string, value: string | undefined) => {
    if (count >= MAX_TAGS_PER_MESSAGE) return;
    const terms = tagTermsOf(storableText(name), value === undefined ? undefined : storableText(value));
    if (terms.length === 0 || terms.some((t) => t.length > MAX_TAG_CHARS)) return;
    count += 1;
    for (const t of terms) tags.add(t);
  };
  for (const [name, value] of Object.entries(emailTags ?? {})) add(name, value);
  for (const [name, value] of headers) {
    if (name.toLowerCase() !== 'x-tags') continue;
    for (const item of decodeEncodedWords(value).split(',')) add(...splitTag(item));
  }
  return { messageId: messageId.length > MAX_MESSAGE_ID_CHARS ? '' : messageId, tags: [...tags] };
}
