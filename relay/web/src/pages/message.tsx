// One captured message: rendered HTML in a sandboxed iframe (no scripts, no origin; remote loads
// blocked until asked), plain text, headers, raw source, attachments, and the actions on it.
import { useEffect, useState } from 'preact/hooks';
import { api, relayHasUpstream, seg, type Schemas } from '../api';
import { formatDateTime, formatSize } from '../format';
import { href, navigate } from '../router';
import { confirmAction, ErrorNote, Loading, Modal, Paperclip, useAction, useLoad } from '../ui';
import { MessageChecks } from './message-checks';
import { MessageExtracts } from './message-extracts';

type Tab = 'html' | 'text' | 'headers' | 'raw' | 'checks';
const WIDTHS = { desktop: '100%', tablet: '768px', phone: '375px' } as const;

export function MessagePage({ id }: { id: string }) {
  const base = `/admin/v1/messages/${seg(id)}`;
  const { data: message, error, setData } = useLoad(() => api<Schemas['CapturedMessage']>('GET', base), [id]);
  const [tab, setTab] = useState<Tab | undefined>(undefined);
  const [width, setWidth] = useState<keyof typeof WIDTHS>('desktop');
  const [remote, setRemote] = useState(false);
  const [releasing, setReleasing] = useState(false);
  const action = useAction();

  // Opening a message reads it (the shell's unread count follows over the inbox WebSocket).
  useEffect(() => {
    if (!message || message.read) return;
    api<Schemas['InboxEntry']>('POST', `${base}/read`, { read: true }).then(() => setData({ ...message, read: true }), () => undefined);
  }, [message?.id]);

  useEffect(() => {
    setRemote(false);
    setTab(undefined);
  }, [id]);

  if (error) return <ErrorNote error={error} />;
  if (!message) return <Loading />;
  const shown: Tab = tab ?? (message.html ? 'html' : 'text');
  const header = (name: string) => message.headers.find(([n]) => n.toLowerCase() === name)?.[1];

  const markUnread = () =>
    action.run(async () => {
      await api('POST', `${base}/read`, { read: false });
      navigate('inbox');
    });
  const remove = () =>
    action.run(async () => {
      await api('DELETE', base);
      navigate('inbox');
    });

  return (
    <article class="message">
      <div class="page-head">
        <a href={href('inbox')} class="back">
          ← Inbox
        </a>
        <div class="toolbar">
          <button type="button" onClick={markUnread}>
            Mark unread
          </button>
          <button type="button" onClick={() => setReleasing(true)}>
            Release…
          </button>
          <a class="button" href={`${base}/raw`} download={`${message.id}.eml`}>
            Download .eml
          </a>
          <button type="button" class="danger-outline" onClick={remove}>
            Delete
          </button>
        </div>
      </div>
      <ErrorNote error={action.error} />
      <h1 class="subject" data-testid="subject">
        {message.subject ?? '(no subject)'}
      </h1>
      <dl class="envelope">
        <dt>From</dt>
        <dd data-testid="from">{header('from') ?? message.from}</dd>
        <dt>To</dt>
        <dd>{header('to') ?? message.to.join(', ')}</dd>
        {header('cc') ? (
          <>
            <dt>Cc</dt>
            <dd>{header('cc')}</dd>
          </>
        ) : null}
        <dt>Envelope</dt>
        <dd class="muted">
          {message.from || '<>'} → {message.to.join(', ')}
        </dd>
        <dt>Received</dt>
        <dd>
          {formatDateTime(message.received_at)} · {formatSize(message.size)}
        </dd>
        {message.email_id ? (
          <>
            <dt>API email</dt>
            <dd>
              <a href={href('emails', message.email_id)} data-testid="email-link">
                {message.email_id}
              </a>
            </dd>
          </>
        ) : null}
        {message.simulated_outcomes.length > 0 ? (
          <>
            <dt>Simulated</dt>
            <dd>
              {message.simulated_outcomes.map((o) => (
                <span class="chip" key={o.recipient}>
                  {o.recipient}: {o.outcome}
                </span>
              ))}
            </dd>
          </>
        ) : null}
      </dl>

      {message.attachments.length > 0 ? (
        <ul class="attachments" aria-label="Attachments">
          {message.attachments.map((a) => (
            <li key={a.index}>
              <a href={`${base}/attachments/${a.index}`} download={a.filename ?? `attachment-${a.index}`}>
                <Paperclip /> {a.filename ?? `attachment-${a.index}`}
              </a>
              <span class="muted">
                {' '}
                {a.content_type} · {formatSize(a.size)}
                {a.inline ? ' · inline' : ''}
              </span>
            </li>
          ))}
        </ul>
      ) : null}

      <MessageExtracts message={message} />

      <div class="tabs" role="tablist">
        {(['html', 'text', 'headers', 'raw', 'checks'] as const).map((t) => (
          <button type="button" role="tab" key={t} aria-selected={shown === t} class={shown === t ? 'tab active' : 'tab'} onClick={() => setTab(t)} disabled={t === 'html' && !message.html}>
            {{ html: 'HTML', text: 'Text', headers: 'Headers', raw: 'Raw', checks: 'Checks' }[t]}
          </button>
        ))}
        {shown === 'html' ? (
          <div class="widths" role="group" aria-label="Preview width">
            {(Object.keys(WIDTHS) as Array<keyof typeof WIDTHS>).map((w) => (
              <button type="button" key={w} class={width === w ? 'small active' : 'small'} onClick={() => setWidth(w)}>
                {w}
              </button>
            ))}
          </div>
        ) : null}
      </div>

      {shown === 'html' && message.html ? (
        <div class="html-view">
          {message.remote_resources > 0 && !remote ? (
            <div class="notice" data-testid="remote-blocked">
              <span>
                {message.remote_resources} remote {message.remote_resources === 1 ? 'resource' : 'resources'} blocked.
              </span>
              <button type="button" class="small" onClick={() => setRemote(true)}>
                Load remote content
              </button>
            </div>
          ) : null}
          <div class="frame-wrap">
            {/* sandbox="" : no scripts, no forms, no same origin (so no cookies, no dashboard DOM). */}
            <iframe
              title="HTML body"
              sandbox=""
              referrerpolicy="no-referrer"
              src={`${base}/html${remote ? '?remote=1' : ''}`}
              style={{ width: WIDTHS[width] }}
            />
          </div>
        </div>
      ) : null}
      {shown === 'text' ? <pre class="text-body">{message.text ?? '(no text part)'}</pre> : null}
      {shown === 'headers' ? (
        <table class="headers-table">
          <tbody>
            {message.headers.map(([name, value], i) => (
              <tr key={i}>
                <th>{name}</th>
                <td>{value}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {shown === 'raw' ? <RawSource path={`${base}/raw`} /> : null}
      {shown === 'checks' ? <MessageChecks id={id} /> : null}
      {releasing ? <ReleaseDialog base={base} onClose={() => setReleasing(false)} /> : null}
    </article>
  );
}

function RawSource({ path }: { path: string }) {
  const [raw, setRaw] = useState<string | undefined>(undefined);
  useEffect(() => {
    fetch(path, { credentials: 'same-origin' }).then((r) => r.text()).then(setRaw, () => setRaw('(cannot load the raw message)'));
  }, [path]);
  return raw === undefined ? <Loading /> : <pre class="raw">{raw}</pre>;
}

function ReleaseDialog({ base, onClose }: { base: string; onClose: () => void }) {
  const [to, setTo] = useState('');
  const [done, setDone] = useState<string | undefined>(undefined);
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    const ok = await confirmAction('Release this message?', <p>It is sent, unchanged, to {to} through the relay's upstream SMTP provider.</p>, `Send to ${to}`, false);
    if (!ok) return;
    await action.run(async () => {
      const release = await api<Schemas['Release']>('POST', `${base}/release`, { to });
      setDone(`Sent to ${release.to}.`);
    });
  };
  if (!relayHasUpstream()) {
    return (
      <Modal title="Release to a real address" onClose={onClose}>
        <p role="alert">
          Release needs an upstream SMTP provider, and this relay delivers into its own sink: start it with{' '}
          <code>--upstream smtp://host:port</code> to release messages.
        </p>
        <div class="actions">
          <button type="button" class="primary" onClick={onClose}>
            Close
          </button>
        </div>
      </Modal>
    );
  }
  return (
    <Modal title="Release to a real address" onClose={onClose}>
      {done ? (
        <p role="status">{done}</p>
      ) : (
        <form onSubmit={submit} class="stack">
          <label>
            Recipient
            <input type="email" required value={to} onInput={(e) => setTo((e.target as HTMLInputElement).value)} placeholder="you@example.com" autoFocus />
          </label>
          <ErrorNote error={action.error} />
          <div class="actions">
            <button type="button" onClick={onClose}>
              Cancel
            </button>
            <button type="submit" class="primary" disabled={action.busy}>
              Release
            </button>
          </div>
        </form>
      )}
      {done ? (
        <div class="actions">
          <button type="button" class="primary" onClick={onClose}>
            Close
          </button>
        </div>
      ) : null}
    </Modal>
  );
}
