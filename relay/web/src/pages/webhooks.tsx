// Webhook endpoints of the project: create (secret shown once, events chosen), and per endpoint
// every delivery attempt (time, status code, error, next attempt) with "resend now".
import { useState } from 'preact/hooks';
import { api, seg, type Schemas } from '../api';
import { formatDateTime } from '../format';
import { useProjectCollection, type Tenancy } from '../tenancy';
import { confirmAction, ErrorNote, SecretOnce, useAction, useLoad, Table } from '../ui';
import { EVENT_TYPES } from '../../../../sdk/enums';
import { NeedsProject } from './needs-project';

export function WebhooksPage({ tenancy }: { tenancy: Tenancy }) {
  const project = tenancy.project;
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<Schemas['EventType'][]>([]);
  const [secret, setSecret] = useState<string | undefined>(undefined);
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
            <h2 class="url">{w.url}</h2>
            <div class="toolbar">
              <button type="button" class="small" onClick={() => setOpen(open === w.id ? undefined : w.id)}>
                {open === w.id ? 'Hide deliveries' : 'Deliveries'}
              </button>
              <button type="button" class="small danger-outline" onClick={() => remove(w)}>
                Delete
              </button>
            </div>
          </div>
          <p class="muted">
            {w.events.join(', ')} · <code>{w.id}</code>
          </p>
          {open === w.id ? <Deliveries webhookId={w.id} /> : null}
        </div>
      ))}
      {secret ? <SecretOnce label="Your webhook signing secret" secret={secret} onDone={() => setSecret(undefined)} /> : null}
    </section>
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
      {data && data.deliveries.length === 0 ? <p class="muted">No attempt yet.</p> : null}
      <Table columns={['Event', 'Attempt', 'Time', 'Status', 'Error', 'Next attempt', '']}>
          {data?.deliveries.map((d) => (
            <tr key={`${d.event_id}-${d.attempt}`} data-event={d.event_id}>
              <td>
                {d.event_type} <code class="muted">{d.event_id}</code>
              </td>
              <td>{d.attempt}</td>
              <td class="nowrap">{formatDateTime(d.attempted_at)}</td>
              <td class="status-code">{d.status_code ?? '—'}</td>
              <td>{d.error ?? ''}</td>
              <td class="nowrap">{d.next_attempt_at ? formatDateTime(d.next_attempt_at) : '—'}</td>
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
