// The inbox: captured mail newest first, live, searchable, with keyboard navigation
// (j/k move, Enter opens, Delete deletes, / searches).
import { Fragment } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, seg, type InboxEntry, type Schemas } from '../api';
import { CheckBadge, SeenChecks } from '../check-badge';
import { formatSize, formatTime } from '../format';
import { connectInboxLive, watchUnreadByProject } from '../live';
import { navigate } from '../router';
import { confirmAction, ErrorNote, messageOf, Paperclip } from '../ui';

const SEARCH_HELP = 'Search: words, from:, to:, subject:, is:unread, has:attachment... (? for all)';

/** The search terms, as the help popover beside the search box lists them. */
export const SEARCH_TERMS: Array<[string, string]> = [
  ['words', 'in the subject, sender, recipients or the start of the text'],
  ['from:ada', 'the sender (name or address) contains "ada"'],
  ['to:team@', 'a recipient contains "team@"'],
  ['subject:"weekly report"', 'quote a value with spaces'],
  ['is:unread, is:read', 'by read flag'],
  ['has:attachment', 'with attachments'],
  ['after:2026-11-01, before:2026-12-01', 'captured after or before a date (UTC)'],
  ['larger:10k, smaller:2M', 'by size'],
  ['project:prj_...', "one project's mail"],
  ['tag:signup, tag:plan=pro', 'a tag (any value, or that value): the API email\'s tags or the X-Tags header'],
  ['message-id:<id@host>', 'the Message-ID header, exactly (brackets optional)'],
  ['-from:bot', 'a - before any term excludes what it matches'],
];

function inboxPath(q: string, project: string, cursor?: string): string {
  const params = new URLSearchParams();
  if (q) params.set('q', q);
  if (project) params.set('project', project);
  if (cursor) params.set('cursor', cursor);
  const query = params.toString();
  return `/admin/v1/inbox${query ? `?${query}` : ''}`;
}

/** The inbox, of every project or of the one chosen in its project selector (CONTRACT section 10). */
export function Inbox({ projects }: { projects: Schemas['Project'][] }) {
  const [query, setQuery] = useState(() => sessionStorage.getItem('raven.inbox.q') ?? '');
  const [project, setProject] = useState(() => sessionStorage.getItem('raven.inbox.project') ?? '');
  const projectRef = useRef(project);
  projectRef.current = project;
  const [messages, setMessages] = useState<InboxEntry[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [unread, setUnread] = useState(0);
  const [counts, setCounts] = useState<Schemas['InboxUnread'] | undefined>(undefined);
  useEffect(() => watchUnreadByProject(setCounts), []);
  const unreadLabel = (n: number | undefined) => (n ? ` · ${n} unread` : '');
  const [selected, setSelected] = useState(0);
  const [error, setError] = useState<string | undefined>(undefined);
  const [loaded, setLoaded] = useState(false);
  const searchRef = useRef<HTMLInputElement>(null);
  const seenChecks = useRef(new SeenChecks());
  const queryRef = useRef(query);
  queryRef.current = query;

  const loadFirstPage = useCallback(async (q: string) => {
    try {
      const page = await api<Schemas['InboxPage']>('GET', inboxPath(q, projectRef.current));
      if (q !== queryRef.current) return;
      setMessages(seenChecks.current.apply(page.messages));
      setCursor(page.next_cursor);
      setUnread(page.unread);
      setError(undefined);
      setLoaded(true);
    } catch (failure) {
      setError(messageOf(failure));
    }
  }, []);

  // Search as the user types, a moment after the last key.
  useEffect(() => {
    sessionStorage.setItem('raven.inbox.q', query);
    sessionStorage.setItem('raven.inbox.project', project);
    const timer = setTimeout(() => void loadFirstPage(query), 200);
    return () => clearTimeout(timer);
  }, [query, project]);

  useEffect(
    () =>
      connectInboxLive(
        (frame) => {
          if (frame.type === 'checked') {
            setMessages((current) => seenChecks.current.add(current, frame.checks));
            return;
          }
          setUnread(frame.unread);
          if (frame.type !== 'captured' || !frame.messages) return;
          // A search or a project decides on the server what matches: ask again. Otherwise new mail goes on top.
          if (queryRef.current || projectRef.current) void loadFirstPage(queryRef.current);
          else setMessages((current) => [...frame.messages!.slice().reverse(), ...current]);
        },
        // Connected (or reconnected): whatever arrived meanwhile is on the server.
        () => void loadFirstPage(queryRef.current),
      ),
    [],
  );

  const loadMore = async () => {
    if (!cursor) return;
    try {
      const page = await api<Schemas['InboxPage']>('GET', inboxPath(query, project, cursor));
      setMessages((current) => [...current, ...seenChecks.current.apply(page.messages)]);
      setCursor(page.next_cursor);
    } catch (failure) {
      setError(messageOf(failure));
    }
  };

  const remove = async (message: InboxEntry) => {
    try {
      await api('DELETE', `/admin/v1/messages/${seg(message.id)}`);
      setMessages((current) => current.filter((m) => m.id !== message.id));
    } catch (failure) {
      setError(messageOf(failure));
    }
  };

  const removeAll = async () => {
    if (!(await confirmAction('Delete all captured mail?', <p>Every captured message is deleted from the relay. This cannot be undone.</p>, 'Delete all'))) return;
    try {
      await api('DELETE', '/admin/v1/messages');
      setMessages([]);
      setCursor(null);
      setUnread(0);
    } catch (failure) {
      setError(messageOf(failure));
    }
  };

  // Keys act on what the list shows now: the handler reads refs, registered once, so a key pressed
  // right after another (j then Enter) never sees the selection from before the first.
  const current = useRef({ messages, selected });
  current.current.messages = messages;
  const select = (index: number) => {
    current.current.selected = index;
    setSelected(index);
  };
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement;
      if (target.tagName === 'INPUT' || target.tagName === 'TEXTAREA' || target.tagName === 'SELECT' || document.querySelector('.modal')) {
        if (event.key === 'Escape' && target === searchRef.current) searchRef.current.blur();
        return;
      }
      const { messages: shown, selected: at } = current.current;
      if (event.key === '/') {
        event.preventDefault();
        searchRef.current?.focus();
      } else if (event.key === 'j' || event.key === 'ArrowDown') {
        select(Math.max(0, Math.min(at + 1, shown.length - 1)));
      } else if (event.key === 'k' || event.key === 'ArrowUp') {
        select(Math.max(at - 1, 0));
      } else if (event.key === 'Enter' && shown[at]) {
        navigate('inbox', shown[at].id);
      } else if ((event.key === 'Delete' || event.key === 'Backspace') && shown[at]) {
        void remove(shown[at]);
      }
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, []);

  useEffect(() => {
    document.querySelector(`[data-index="${selected}"]`)?.scrollIntoView({ block: 'nearest' });
  }, [selected]);

  return (
    <section class="inbox">
      <div class="page-head">
        <h1>
          Inbox {unread > 0 ? <span class="muted" data-testid="unread">{unread} unread</span> : null}
        </h1>
        <div class="toolbar">
          <input
            ref={searchRef}
            id="search"
            type="search"
            placeholder={SEARCH_HELP}
            aria-label="Search captured mail"
            value={query}
            onInput={(e) => setQuery((e.target as HTMLInputElement).value)}
          />
          <details class="search-help">
            <summary aria-label="Search help">?</summary>
            <div class="popover" role="note">
              <p>Every term must match (case-insensitive).</p>
              <dl>
                {SEARCH_TERMS.map(([term, meaning]) => (
                  <Fragment key={term}>
                    <dt>
                      <code>{term}</code>
                    </dt>
                    <dd>{meaning}</dd>
                  </Fragment>
                ))}
              </dl>
            </div>
          </details>
          <select value={project} onChange={(e) => setProject((e.target as HTMLSelectElement).value)} aria-label="Inbox project">
            <option value="">All projects{unreadLabel(counts?.unread)}</option>
            {projects.map((p) => (
              <option value={p.id} key={p.id}>
                {p.name}
                {unreadLabel(counts?.projects.find((c) => c.project_id === p.id)?.unread)}
              </option>
            ))}
          </select>
          <button type="button" class="danger-outline" onClick={removeAll} disabled={messages.length === 0}>
            Delete all
          </button>
        </div>
      </div>
      <ErrorNote error={error} />
      {loaded && messages.length === 0 ? (
        <div class="empty">
          <p>{query ? 'No message matches this search.' : 'No mail yet.'}</p>
          {query ? null : <p class="muted">Send mail to the relay (the API, or any SMTP client to its SMTP port): it shows up here at once.</p>}
        </div>
      ) : null}
      <ul class="message-list" role="listbox" aria-label="Captured mail">
        {messages.map((m, i) => (
          <li
            key={m.id}
            data-index={i}
            data-id={m.id}
            role="option"
            aria-selected={i === selected}
            class={`message-row${m.read ? '' : ' unread'}${i === selected ? ' selected' : ''}`}
            onClick={() => navigate('inbox', m.id)}
            onMouseEnter={() => select(i)}
          >
            <span class="dot" aria-label={m.read ? undefined : 'unread'} />
            <span class="from" title={m.from_address}>
              {m.from_name || m.from_address}
            </span>
            <span class="summary">
              <span class="subject">{m.subject || '(no subject)'}</span>
              <span class="snippet"> — {m.snippet}</span>
            </span>
            <span class="to muted" title={m.to}>
              {m.to}
            </span>
            <span class="meta muted">
              {m.attachments > 0 ? (
                <span title={`${m.attachments} attachment(s)`} aria-label={`${m.attachments} attachment(s)`}>
                  <Paperclip />
                </span>
              ) : null}
              <CheckBadge checks={m.checks} />
              <time dateTime={m.received_at} title={new Date(m.received_at).toLocaleString()}>
                {formatTime(m.received_at)}
              </time>
              <span class="size">{formatSize(m.size)}</span>
            </span>
          </li>
        ))}
      </ul>
      {cursor ? (
        <div class="more">
          <button type="button" onClick={loadMore}>
            Older messages
          </button>
        </div>
      ) : null}
    </section>
  );
}
