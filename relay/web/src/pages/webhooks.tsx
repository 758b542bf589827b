// Webhook endpoints of the project: create (secret shown once, events chosen), disable and enable,
// rotate the signing secret (the overlap chosen in the confirmation, the new secret shown once),
// and per endpoint every delivery attempt (time, status code, time taken, the start of the answer,
// error, next attempt) with "resend now", and recover: every failed delivery since a time sent
// again, after a confirmation that says how many.
import { useState } from 'preact/hooks';
import { api, seg, type Schemas } from '../api';
import { formatDateTime } from '../format';
import { useProjectCollection, type Tenancy } from '../tenancy';
import { Badge, confirmAction, ErrorNote, SecretOnce, useAction, useLoad, Table } from '../ui';
import { EVENT_TYPES } from '../../../../sdk/enums';
import { NeedsProject } from './needs-project';
import { AnswerExcerpt, took } from './webhook-answer';

export function WebhooksPage({ tenancy }: { tenancy: Tenancy }) {
  const project = tenancy.project;
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<Schemas['EventType'][]>([]);
  const [secret, setSecret] = useState<string | undefined>(undefined);
  const [rotated, setRotated] = useState<{ secret: string; overlapHours: number; until: string } | undefined>(undefined);
  const [open, setOpen] = useState<string | undefined>(undefined);
  const { data, error, reload, action, create: createIn } = useProjectCollection<Schemas['WebhookEndpointList']>(project, 'webhooks');

  const create = (event: Event) => {
    event.preventDefault();
    void createIn<Schemas['WebhookEndpointCreated']>({ url, events: events.length === 0 ? ['*'] : events }, (created) => {
      setUrl('');
      setEvents([]);
      setSecret(created.secret);
    });
  };
  const remove = async (endpoint: Schemas['WebhookEndpoint']) => {
    const ok = await confirmAction('Delete this endpoint?', <p>{endpoint.url} receives no more events; its pending deliveries are abandoned.</p>, 'Delete endpoint');
    if (ok) await action.run(async () => (await api('DELETE', `/admin/v1/webhooks/${seg(endpoint.id)}`), reload()));
  };
  const setEnabled = (endpoint: Schemas['WebhookEndpoint'], enabled: boolean) =>
    action.run(async () => (await api('POST', `/admin/v1/webhooks/${seg(endpoint.id)}/${enabled ? 'enable' : 'disable'}`), reload()));
  const rotate = async (endpoint: Schemas['WebhookEndpoint']) => {
    let hours = String(DEFAULT_OVERLAP_HOURS);
    const ok = await confirmAction('Rotate the signing secret?', <OverlapField url={endpoint.url} onChange={(h) => (hours = h)} />, 'Rotate secret', false);
    if (!ok) return;
    const overlapHours = hours.trim() === '' ? NaN : Number(hours);
    const overlap = Math.round(overlapHours * 3600);
    await action.run(async () => {
      // The range is the relay's to judge (its 422 is shown); a field that is no number is sent as typed, for the same answer.
      const body = { overlap_seconds: Number.isFinite(overlap) ? overlap : hours };
      const done = await api<Schemas['WebhookSecretRotated']>('POST', `/admin/v1/webhooks/${seg(endpoint.id)}/rotate-secret`, body);
      setRotated({ secret: done.secret, overlapHours, until: new Date(Date.now() + overlap * 1000).toISOString() });
    });
  };
  const toggle = (type: Schemas['EventType']) => setEvents(events.includes(type) ? events.filter((e) => e !== type) : [...events, type]);

  return (
    <section>
      <h1>Webhooks</h1>
      <NeedsProject tenancy={tenancy} />
      <ErrorNote error={error ?? action.error} />
      <form class="card stack" onSubmit={create}>
        <input required type="url" placeholder="https://example.com/webhooks/raven" aria-label="Endpoint URL" value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} />
        <fieldset class="events">
          <legend>Events (none checked: all)</legend>
          {EVENT_TYPES.map((type) => (
            <label key={type} class="check">
              <input type="checkbox" checked={events.includes(type)} onChange={() => toggle(type)} /> {type}
            </label>
          ))}
        </fieldset>
        <div>
          <button type="submit" class="primary" disabled={action.busy || !project}>
            Create endpoint
          </button>
        </div>
      </form>
      {data?.webhooks.map((w) => (
        <div class="card" key={w.id} data-webhook={w.id}>
          <div class="card-head">
            <h2 class="url">
              {w.url} {w.enabled ? null : <Badge value="disabled" />}
            </h2>
            <div class="toolbar">
              <button type="button" class="small" onClick={() => setOpen(open === w.id ? undefined : w.id)}>
                {open === w.id ? 'Hide deliveries' : 'Deliveries'}
              </button>
              <button type="button" class="small" disabled={action.busy} onClick={() => setEnabled(w, !w.enabled)}>
                {w.enabled ? 'Disable' : 'Enable'}
              </button>
              <button type="button" class="small" disabled={action.busy} onClick={() => rotate(w)}>
                Rotate secret
              </button>
              <button type="button" class="small danger-outline" onClick={() => remove(w)}>
                Delete
              </button>
            </div>
          </div>
          <p class="muted">
            {w.events.join(', ')} · <code>{w.id}</code>
          </p>
          {w.enabled ? null : <p class="muted">Disabled: nothing is sent to it; its deliveries wait until it is enabled.</p>}
          {open === w.id ? <Deliveries webhookId={w.id} /> : null}
        </div>
      ))}
      {secret ? <SecretOnce label="Your webhook signing secret" secret={secret} onDone={() => setSecret(undefined)} /> : null}
      {rotated ? (
        <SecretOnce
          label="The new signing secret"
          secret={rotated.secret}
          onDone={() => setRotated(undefined)}
          note={
            <p data-testid="overlap-note">
              {rotated.overlapHours > 0
                ? `Until about ${formatDateTime(rotated.until)} (${hours(rotated.overlapHours)} from now) every request is signed with both secrets, so a receiver still holding the old one keeps verifying.`
                : 'The old secret no longer signs: requests carry the new one only.'}
            </p>
          }
        />
      ) : null}
    </section>
  );
}

const DEFAULT_OVERLAP_HOURS = 24;
const MAX_OVERLAP_HOURS = 7 * 24;
const hours = (n: number) => `${n} ${n === 1 ? 'hour' : 'hours'}`;

/** The rotation's confirmation: how long the old secret keeps signing beside the new one. */
function OverlapField({ url, onChange }: { url: string; onChange: (hours: string) => void }) {
  const [value, setValue] = useState(String(DEFAULT_OVERLAP_HOURS));
  return (
    <div class="stack">
      <p>
        {url} gets a new signing secret, shown once. During the overlap each request carries both signatures, so the receiver keeps verifying while you
        deploy the new secret.
      </p>
      <label>
        Overlap in hours (at most {MAX_OVERLAP_HOURS}, 7 days){' '}
        <input
          type="number"
          min={0}
          max={MAX_OVERLAP_HOURS}
          step="any"
          aria-label="Overlap in hours"
          value={value}
          onInput={(e) => {
            const next = (e.target as HTMLInputElement).value;
            setValue(next);
            onChange(next);
          }}
        />
      </label>
    </div>
  );
}

/** `datetime-local` wants local time without a zone: the value for 24 hours ago. */
function dayAgoLocal(): string {
  const d = new Date(Date.now() - 86_400_000);
  d.setMinutes(d.getMinutes() - d.getTimezoneOffset());
  return d.toISOString().slice(0, 16);
}

const plural = (n: number) => `${n} failed ${n === 1 ? 'delivery' : 'deliveries'}`;

/** Recover: counts the failed deliveries since a time (a dry run), asks with the count, then sends them again. */
function Recover({ webhookId, onDone }: { webhookId: string; onDone: () => void }) {
  const [since, setSince] = useState(dayAgoLocal);
  const [note, setNote] = useState<string | undefined>(undefined);
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    setNote(undefined);
    const iso = new Date(since).toISOString();
    const path = `/admin/v1/webhooks/${seg(webhookId)}/recover`;
    let counted: Schemas['WebhookRecovery'] | undefined;
    if (!(await action.run(async () => (counted = await api<Schemas['WebhookRecovery']>('POST', path, { since: iso, dry_run: true }))))) return;
    if (!counted || counted.count === 0) {
      setNote(`No failed delivery since ${formatDateTime(iso)}: nothing to send.`);
      return;
    }
    const ok = await confirmAction(
      `Send ${plural(counted.count)} again?`,
      <p>
        Every delivery of an event since {formatDateTime(counted.since)} that failed all its attempts gets one more, now: {plural(counted.count)}.
      </p>,
      `Send ${counted.count} again`,
      false,
    );
    if (!ok) return;
    await action.run(async () => {
      const done = await api<Schemas['WebhookRecovery']>('POST', path, { since: iso });
      setNote(`${plural(done.count)} sent again.`);
      onDone();
    });
  };
  return (
    <form class="recover-form" onSubmit={submit}>
      <label>
        Failed deliveries since{' '}
        <input type="datetime-local" required aria-label="Recover failed deliveries since" value={since} onInput={(e) => setSince((e.target as HTMLInputElement).value)} />
      </label>
      <button type="submit" class="small" disabled={action.busy}>
        Recover…
      </button>
      <ErrorNote error={action.error} />
      {note ? (
        <span class="muted" role="status">
          {note}
        </span>
      ) : null}
    </form>
  );
}

function Deliveries({ webhookId }: { webhookId: string }) {
  const action = useAction();
  const { data, error, reload } = useLoad(() => api<Schemas['WebhookDeliveryList']>('GET', `/admin/v1/webhooks/${seg(webhookId)}/deliveries`), [webhookId]);
  const resend = (eventId: string) =>
    action.run(async () => {
      await api('POST', `/admin/v1/webhooks/${seg(webhookId)}/deliveries/${seg(eventId)}/resend`);
      reload();
    });
  return (
    <div>
      <ErrorNote error={error ?? action.error} />
      <div class="toolbar">
        <button type="button" class="small" onClick={reload}>
          Refresh
        </button>
      </div>
      <Recover webhookId={webhookId} onDone={reload} />
      {data && data.deliveries.length === 0 ? <p class="muted">No attempt yet.</p> : null}
      <Table columns={['Event', 'Attempt', 'Time', 'Status', 'Took', 'Answer', 'Next attempt', '']}>
          {data?.deliveries.map((d) => (
            <tr key={`${d.event_id}-${d.attempt}`} data-event={d.event_id} data-attempt={d.attempt}>
              <td>
                <span class="nowrap">{d.event_type}</span>
                <div>
                  <code class="muted small">{d.event_id}</code>
                </div>
              </td>
              <td>{d.attempt}</td>
              <td>{formatDateTime(d.attempted_at)}</td>
              <td class="status-code">
                {d.status_code ?? '—'}
                {/* The error says more than the status only when there is none, or it was a redirect. */}
                {d.error && d.error !== `HTTP ${d.status_code}` ? <div class="muted small error-text">{d.error}</div> : null}
              </td>
              <td class="nowrap took">{took(d.duration_ms)}</td>
              <td class="answer-cell">
                <AnswerExcerpt body={d.response_body} truncated={d.response_truncated} statusCode={d.status_code} />
              </td>
              <td>{d.next_attempt_at ? formatDateTime(d.next_attempt_at) : '—'}</td>
              <td class="right">
                <button type="button" class="small" onClick={() => resend(d.event_id)}>
                  Resend now
                </button>
              </td>
            </tr>
          ))}
        </Table>
    </div>
  );
}
