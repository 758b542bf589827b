// The inbox search box: free text plus from:, to:, subject: and is:unread / is:read terms; a
// value may be quoted ("subject:\"weekly report\""). Every term must match.
import type { InboxSearch } from '../storage/inbox.js';

const TERM = /(?:(from|to|subject|is):)?(?:"([^"]*)"|(\S+))/gi;

export function parseInboxSearch(q: string): InboxSearch {
  const search: InboxSearch = { from: [], to: [], subject: [], text: [] };
  for (const m of q.matchAll(TERM)) {
    const field = m[1]?.toLowerCase();
    const value = (m[2] ?? m[3] ?? '').toLowerCase();
    if (value === '') continue;
    if (field === 'is' && (value === 'unread' || value === 'read')) search.unread = value === 'unread';
    else if (field === 'from' || field === 'to' || field === 'subject') search[field].push(value);
    else search.text.push(field ? `${field}:${value}` : value);
  }
  return search;
}
