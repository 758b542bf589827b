// The inbox search box (Mailpit's terms and more): free text, from:, to:, subject:, is:read,
// is:unread, has:attachment, before: and after: (a date, UTC, or an ISO 8601 time), larger: and
// smaller: (bytes, or 10k, 2M), project:, tag: and message-id: (exact: search-terms.ts says how they
// match); `-` before any term negates it; a value may be quoted
// (subject:"weekly report"). Every term must match. A term this parser does not know, a value it
// cannot read (after:someday) or an unbalanced quote is free text, never an error.
import type { InboxSearch } from '../storage/inbox.js';
import { messageIdTerm, tagQueryTerm } from './search-terms.js';

const TERM = /(-)?(?:([a-z][a-z-]*):)?(?:"([^"]*)"|(\S+))/gi;
const SIZE = /^(\d{1,12})(?:([kmg])b?)?$/i;
const UNITS: Record<string, number> = { k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

function emptySearch(): InboxSearch {
  return {
    from: [],
    to: [],
    subject: [],
    text: [],
    tags: [],
    messageIds: [],
    exclude: { from: [], to: [], subject: [], text: [], tags: [], messageIds: [] },
    projects: { include: [], exclude: [] },
    received: [],
    size: [],
  };
}

/** A date (YYYY-MM-DD, midnight UTC) or a full time, as ISO 8601; undefined when it is neither. */
function timeOf(value: string): string | undefined {
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00.000Z`) : /^\d{4}-\d{2}-\d{2}T/.test(value) ? Date.parse(value) : NaN;
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

function bytesOf(value: string): number | undefined {
  const m = SIZE.exec(value);
  return m ? Number(m[1]) * (m[2] ? UNITS[m[2].toLowerCase()]! : 1) : undefined;
}

/** Applies one term; false when it is not one this parser reads (it is then free text). */
function applyTerm(search: InboxSearch, field: string, value: string, negated: boolean): boolean {
  switch (field) {
    case 'from':
    case 'to':
    case 'subject':
      (negated ? search.exclude : search)[field].push(value.toLowerCase());
      return true;
    case 'is':
      if (value !== 'read' && value !== 'unread') return false;
      search.unread = (value === 'unread') !== negated;
      return true;
    case 'has':
      if (value !== 'attachment' && value !== 'attachments') return false;
      search.attachments = !negated;
      return true;
    case 'before':
    case 'after': {
      const at = timeOf(value);
      if (at === undefined) return false;
      const before = (field === 'before') !== negated;
      search.received.push({ op: before ? (negated ? '<=' : '<') : negated ? '>=' : '>', at });
      return true;
    }
    case 'larger':
    case 'smaller': {
      const bytes = bytesOf(value);
      if (bytes === undefined) return false;
      const larger = (field === 'larger') !== negated;
      search.size.push({ op: larger ? (negated ? '>=' : '>') : negated ? '<=' : '<', bytes });
      return true;
    }
    case 'tag': {
      const term = tagQueryTerm(value);
      if (term === '') return false;
      (negated ? search.exclude : search).tags.push(term);
      return true;
    }
    case 'message-id': {
      const id = messageIdTerm(value);
      if (id === '') return false;
      (negated ? search.exclude : search).messageIds.push(id);
      return true;
    }
    case 'project':
      search.projects[negated ? 'exclude' : 'include'].push(value);
      return true;
    default:
      return false;
  }
}

export function parseInboxSearch(q: string): InboxSearch {
  const search = emptySearch();
  for (const m of q.matchAll(TERM)) {
    const negated = m[1] === '-';
    const field = m[2]?.toLowerCase();
    // An unbalanced quote opens nothing: the word after it is the value.
    const value = m[3] ?? (m[4] ?? '').replace(/^"/, '');
    if (value === '') continue;
    if (field !== undefined && applyTerm(search, field, value, negated)) continue;
    const text = (field !== undefined ? `${m[2]}:${value}` : value).toLowerCase();
    (negated ? search.exclude.text : search.text).push(text);
  }
  return search;
}
