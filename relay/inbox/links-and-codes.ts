// What a test or an agent wants from a captured message (CONTRACT section 10): its links and its
// one-time codes. Both are read from the decoded parts mailparser gives (quoted-printable and
// base64 already undone).
//
// Links: every http/https `<a href>` of the HTML part with its text, in order, then the URLs of
// the text part not already listed; each URL once, with the text of its first appearance.
//
// Codes (the heuristic the README documents), from the text part and then the HTML part: a code is a run of 4 to 8 digits (also written in
// two groups of 3 or 4, `482 913`, `4829-1307`, which count without the separator), or a 6 to 8
// character token of capital letters and digits with at least one of each (`K7Q2XW`), that stands
// in a sentence which speaks of a code: one of `code`, `passcode`, `OTP`, `one-time`,
// `verification`, `verify`, `PIN`, `2FA`, `two-factor`, `security`, `sign in`, `log in`, `login`,
// `authenticate`, `token`; or alone on its line just after such a line (`Your code:` then
// `482913`). Not codes: amounts (after a currency sign or code, before `%`, or with decimals or
// thousands separators), dates and times (`2026-11-25`, `25/11/2026`, `10:30`), years (1900-2099
// as four digits), order or ticket numbers (`#48291`), and digits inside a longer word or URL.

export interface MessageLink {
  url: string;
  text: string;
}

const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]{2,6});/gi, (whole, entity: string) => {
    if (entity[0] === '#') {
      const code = entity[1] === 'x' || entity[1] === 'X' ? parseInt(entity.slice(2), 16) : parseInt(entity.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED_ENTITIES[entity.toLowerCase()] ?? whole;
  });
}

const collapse = (text: string) => text.replace(/\s+/g, ' ').trim();

/** Only absolute http and https URLs count: no mailto:, tel:, javascript:, cid: or relative ones. */
function httpUrl(candidate: string): string | undefined {
  const value = candidate.trim();
  if (!/^https?:\/\//i.test(value)) return undefined;
  try {
    return new URL(value).protocol.startsWith('http') ? value : undefined;
  } catch {
    return undefined;
  }
}

const ANCHOR = /<a\b([^>]*)>([\s\S]*?)<\/a\s*>/gi;
const HREF = /\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i;

function htmlLinks(html: string): MessageLink[] {
  const links: MessageLink[] = [];
  for (const m of html.matchAll(ANCHOR)) {
    const href = HREF.exec(m[1]!);
    if (!href) continue;
    const url = httpUrl(decodeEntities(href[1] ?? href[2] ?? href[3] ?? ''));
    if (url === undefined) continue;
    const text = collapse(decodeEntities(m[2]!.replace(/<[^>]*>/g, ' ')));
    links.push({ url, text });
  }
  return links;
}

/** URLs in plain text, without the punctuation that usually ends the sentence around them. */
const TEXT_URL = /https?:\/\/[^\s<>"'\u00a0]+/gi;

function textLinks(text: string): MessageLink[] {
  const links: MessageLink[] = [];
  for (const m of text.matchAll(TEXT_URL)) {
    let candidate = m[0];
    while (/[.,;:!?)\]}>*]$/.test(candidate)) {
      // A closing bracket that opens inside the URL belongs to it (Wikipedia-style links).
      if (candidate.endsWith(')') && candidate.split('(').length >= candidate.split(')').length) break;
      candidate = candidate.slice(0, -1);
    }
    const url = httpUrl(candidate);
    if (url !== undefined) links.push({ url, text: url });
  }
  return links;
}

export function extractLinks(html: string | null, text: string | null): MessageLink[] {
  const seen = new Set<string>();
  const links: MessageLink[] = [];
  for (const link of [...(html ? htmlLinks(html) : []), ...(text ? textLinks(text) : [])]) {
    if (seen.has(link.url)) continue;
    seen.add(link.url);
    links.push(link);
  }
  return links;
}

const IMAGE = /<img\b([^>]*)>/gi;
const SRC = /\bsrc\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i;

/** The http and https image URLs of the HTML, each once, in order (cid: and data: images are inline). */
export function extractImageUrls(html: string | null): string[] {
  const urls = new Set<string>();
  for (const m of (html ?? '').matchAll(IMAGE)) {
    const src = SRC.exec(m[1]!);
    const url = src ? httpUrl(decodeEntities(src[1] ?? src[2] ?? src[3] ?? '')) : undefined;
    if (url !== undefined) urls.add(url);
  }
  return [...urls];
}

/** The HTML as lines of text: block elements break lines, tags go, entities are decoded. */
export function htmlToLines(html: string): string {
  return decodeEntities(
    html
      .replace(/<(script|style|head)\b[\s\S]*?<\/\1\s*>/gi, ' ')
      .replace(/<!--[\s\S]*?-->/g, ' ')
      .replace(/<(br|\/p|\/div|\/tr|\/h[1-6]|\/li|\/table|p|div|tr|h[1-6]|li|table)\b[^>]*>/gi, '\n')
      .replace(/<[^>]*>/g, ' '),
  );
}

const CODE_WORDS =
  /\b(?:codes?|passcodes?|otp|one[- ]?time|verification|verify|pin|2fa|mfa|two[- ]?factor|security|sign[- ]?in|log[- ]?in|login|authenticat\w*|tokens?)\b/i;

/** Digits (4-8, or two groups of 3-4), or capitals and digits (6-8, both present). */
const CANDIDATE = /(?<![\p{L}\p{N}_])(?:(\d{3,4})[ -](\d{3,4})|(\d{4,8})|((?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{6,8}))(?![\p{L}\p{N}_])/gu;

const CURRENCY_BEFORE = /(?:[$€£¥₹]|\b(?:USD|EUR|GBP|CHF|JPY|CAD|AUD))\s*$/i;
const AMOUNT_OR_DATE_BEFORE = /(?:[#№/.,+-]|\d[ -]?)$/;
const AMOUNT_OR_DATE_AFTER = /^(?:\s*%|[/:.,-]\d|\s*(?:USD|EUR|GBP|€|\$))/i;
const URLISH = /(?:https?:\/\/|www\.|@)\S*$/i;

function looksLikeCode(line: string, index: number, length: number, digits: string | undefined): boolean {
  const before = line.slice(0, index);
  const after = line.slice(index + length);
  if (CURRENCY_BEFORE.test(before) || AMOUNT_OR_DATE_BEFORE.test(before) || AMOUNT_OR_DATE_AFTER.test(after)) return false;
  if (URLISH.test(before)) return false;
  if (digits !== undefined && digits.length === 4 && /^(?:19|20)\d\d$/.test(digits)) return false;
  return true;
}

/** The sentences of a line that mention a code, or the whole line when it holds only the candidate. */
function sentenceAround(line: string, index: number): string {
  const start = Math.max(line.lastIndexOf('. ', index), line.lastIndexOf('! ', index), line.lastIndexOf('? ', index));
  const ends = ['. ', '! ', '? '].map((p) => line.indexOf(p, index)).filter((i) => i >= 0);
  const end = ends.length > 0 ? Math.min(...ends) : line.length;
  return line.slice(start < 0 ? 0 : start, end);
}

/** The codes of the text part, then those only the HTML part shows (each once). */
export function extractCodes(html: string | null, text: string | null): string[] {
  const codes: string[] = [];
  for (const source of [text ?? '', html ? htmlToLines(html) : '']) {
    for (const code of codesIn(source)) if (!codes.includes(code)) codes.push(code);
  }
  return codes;
}

function codesIn(source: string): string[] {
  const lines = source.split(/\r?\n/).map((l) => l.replace(/\s+/g, ' ').trim());
  const codes: string[] = [];
  let previousMentionsCode = false;
  for (const line of lines) {
    if (line === '') continue;
    for (const m of line.matchAll(CANDIDATE)) {
      const grouped = m[1] !== undefined ? `${m[1]}${m[2]}` : undefined;
      const digits = grouped ?? m[3];
      const code = digits ?? m[4]!;
      if (grouped !== undefined && grouped.length > 8) continue;
      if (!looksLikeCode(line, m.index!, m[0].length, digits)) continue;
      const alone = line === m[0];
      if (!CODE_WORDS.test(sentenceAround(line, m.index!)) && !(alone && previousMentionsCode)) continue;
      codes.push(code);
    }
    previousMentionsCode = CODE_WORDS.test(line);
  }
  return codes;
}
