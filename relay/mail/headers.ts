// A cheap reading of a message's header block: [name, value] pairs in order, values unfolded and
// RFC 2047 encoded words decoded. Enough for the captured mail list (subject) and detail (headers)
// without parsing the body.

/** The header section of a raw message: everything before the first empty line. */
function headerSection(raw: Buffer): string {
  const crlf = raw.indexOf('\r\n\r\n');
  // Only before the CRLF one: a CRLF message has no bare blank line, and its body may be 25 MiB.
  const lf = (crlf >= 0 ? raw.subarray(0, crlf + 2) : raw).indexOf('\n\n');
  const candidates = [crlf, lf].filter((i) => i >= 0);
  const end = candidates.length > 0 ? Math.min(...candidates) : raw.length;
  return raw.subarray(0, end).toString('utf8');
}

/**
 * The header fields in order, values unfolded and (unless `decode` is false) their encoded words
 * decoded. Address fields are parsed undecoded: a decoded display name may hold a comma or `<`.
 */
export function parseHeaders(raw: Buffer, decode = true): Array<[string, string]> {
  const fields: string[] = [];
  for (const line of headerSection(raw).split(/\r?\n/)) {
    if (/^[ \t]/.test(line) && fields.length > 0) fields[fields.length - 1] += line; // unfold: drop the line break only
    else if (line.length > 0) fields.push(line);
  }
  const headers: Array<[string, string]> = [];
  for (const field of fields) {
    const colon = field.indexOf(':');
    if (colon <= 0) continue;
    const value = field.slice(colon + 1).trim();
    headers.push([field.slice(0, colon).trim(), decode ? decodeEncodedWords(value) : value]);
  }
  return headers;
}

/**
 * The undecoded values of the first field of each name, null where there is none (the sink reads
 * two of a message's fields before its 250 and decodes only those).
 */
export function firstHeaderValues(raw: Buffer, names: readonly string[]): Array<string | null> {
  const headers = parseHeaders(raw, false);
  return names.map((name) => headerValue(headers, name));
}

/** The decoded value of the first header with this name, or null. */
export function headerValue(headers: Array<[string, string]>, name: string): string | null {
  const lower = name.toLowerCase();
  return headers.find(([n]) => n.toLowerCase() === lower)?.[1] ?? null;
}

/**
 * The decoded value of the first field with this name, from fields parsed undecoded
 * (`parseHeaders(raw, false)`), or null: a reader of a few fields decodes only those, not every
 * field (a DKIM-Signature's long value among them) as parseHeaders(raw) does.
 */
export function decodedHeaderValue(headers: Array<[string, string]>, name: string): string | null {
  const value = headerValue(headers, name);
  return value === null ? null : decodeEncodedWords(value);
}

function decodeQ(text: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '_') bytes.push(0x20);
    else if (c === '=' && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3))) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(...Buffer.from(c, 'utf8'));
  }
  return Buffer.from(bytes);
}

function decodeCharset(bytes: Buffer, charset: string): string {
  try {
    return new TextDecoder(charset).decode(bytes);
  } catch {
    return bytes.toString('latin1');
  }
}

const ENCODED_WORD = /=\?([^?\s]+)\?([bBqQ])\?([^?\s]*)\?=/g;

/**
 * Decodes RFC 2047 encoded words. Adjacent words are joined (the whitespace between them is not
 * part of the text) and decoded together, so a character split across two words survives.
 */
export function decodeEncodedWords(value: string): string {
  if (!value.includes('=?')) return value; // no encoded word (most values): as the loop would return it
  let out = '';
  let last = 0;
  let run: { charset: string; parts: Buffer[] } | undefined;
  const flush = () => {
    if (run) out += decodeCharset(Buffer.concat(run.parts), run.charset);
    run = undefined;
  };
  for (const match of value.matchAll(ENCODED_WORD)) {
    const between = value.slice(last, match.index);
    const charset = match[1]!.split('*')[0]!.toLowerCase(); // RFC 2231 language suffix
    const bytes = match[2]!.toUpperCase() === 'B' ? Buffer.from(match[3]!, 'base64') : decodeQ(match[3]!);
    const adjacent = run !== undefined && /^\s*$/.test(between);
    if (adjacent && run!.charset === charset) {
      run!.parts.push(bytes);
    } else {
      flush();
      if (!adjacent) out += between;
      run = { charset, parts: [bytes] };
    }
    last = match.index + match[0].length;
  }
  flush();
  return out + value.slice(last);
}
