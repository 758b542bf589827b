// Text both backends can hold. PostgreSQL's text refuses NUL (U+0000) outright, and an unpaired
// UTF-16 surrogate has no UTF-8 form (each driver would store U+FFFD instead, so what is read back
// differs from what was given). Input carrying either is decided here, before storage, the same
// way on SQLite and PostgreSQL: a request field is a validation error naming it, an id or a filter
// names nothing that exists, and text the relay must keep from outside (captured mail, a remote
// server's reply) is kept with the unstorable characters replaced.
import type { ErrorDetail } from '../errors.js';

const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Why a string cannot be stored, or undefined when it can. */
export function unstorableReason(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain NUL (U+0000)';
  if (UNPAIRED_SURROGATE.test(text)) return 'must not contain an unpaired surrogate';
  return undefined;
}

export const isStorableText = (text: string): boolean => unstorableReason(text) === undefined;

/**
 * Every string in a JSON value (object keys included) that cannot be stored, each named as the
 * field rules name fields: `subject`, `to[1]`, `headers.X-Order`.
 */
export function unstorableFields(value: unknown, field = ''): ErrorDetail[] {
  if (typeof value === 'string') {
    const reason = unstorableReason(value);
    return reason ? [{ field: field || 'body', message: reason }] : [];
  }
  if (Array.isArray(value)) return value.flatMap((item, i) => unstorableFields(item, `${field}[${i}]`));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) => {
    const where = field ? `${field}.${key}` : key;
    const reason = unstorableReason(key);
    return reason ? [{ field: where, message: `name ${reason}` }] : unstorableFields(item, where);
  });
}

/**
 * Text from outside the API that the relay keeps whatever it holds (a captured message's subject,
 * a receiving server's reply): each NUL and unpaired surrogate becomes U+FFFD, as a decoder shows
 * bytes it cannot read.
 */
export function storableText(text: string): string;
export function storableText(text: string | null): string | null;
export function storableText(text: string | null): string | null {
  return text === null ? null : text.replace(UNSTORABLE, '\ufffd');
}
