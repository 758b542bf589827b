// One API email: each recipient's outcome, the event timeline, and the webhook deliveries each
// event caused (every attempt).
import { api, seg, type Schemas } from '../api';
import { formatDateTime } from '../format';
import { href } from '../router';
import { Badge, ErrorNote, Loading, useLoad, Table, Chips, Field } from '../ui';
import { DeliveryAttempts } from './delivery-attempts';
import { AnswerExcerpt, took } from './webhook-answer';

export function EmailPage({ id }: { id: string }) {
  const { data, error, reload } = useLoad(() => api<Schemas['AdminEmailDetail']>('GET', `/admin/v1/emails/${seg(id)}`), [id]);
  if (error) return <ErrorNote error={error} />;
  if (!data) return <Loading />;
  const { email, deliveries } = data;
  return (
    <article>
      <div class="page-head">
        <a href={href('emails')} class="back">
          ← Email log
        </a>
      </div>
      <h1>
        {email.subject} <Badge value={email.status} />
      </h1>
      <dl class="envelope">
        <dt>Id</dt>
        <dd>
          <code>{email.id}</code>
        </dd>
        <dt>From</dt>
        <dd>{email.from}</dd>
        <dt>Created</dt>
        <dd>{formatDateTime(email.created_at)}</dd>
        <dt>Came in</dt>
        <dd data-source={data.source}>{data.source === 'smtp' ? 'over SMTP submission (delivered as submitted)' : 'through the API (POST /v1/emails)'}</dd>
        {email.providerMessageId ? <Field label="Provider id"><code>{email.providerMessageId}</code></Field> : null}
        {Object.keys(email.tags).length > 0 ? <Field label="Tags"><Chips entries={email.tags} separator="=" /></Field> : null}
        {Object.keys(email.metadata).length > 0 ? <Field label="Metadata"><Chips entries={email.metadata} separator=": " /></Field> : null}
      </dl>
      <h2>Recipients</h2>
      <Table columns={['Address', 'Type', 'Outcome', 'Updated']}>
          {email.recipients.map((r, i) => (
            <tr key={i}>
              <td>{r.email}</td>
              <td>{r.type}</td>
              <td>
                <Badge value={r.status} />
              </td>
              <td>{formatDateTime(r.updated_at)}</td>
            </tr>
          ))}
        </Table>
      <DeliveryAttempts email={email} onChange={reload} />
      <h2>Timeline</h2>
      <ol class="timeline">
        {email.events.map((event) => {
          const sent = deliveries.filter((d) => d.event_id === event.id);
          return (
            <li key={event.id}>
              <div>
                <Badge value={event.type.replace('email.', '')} /> <span class="muted">{formatDateTime(event.occurredAt)}</span> <code class="muted">{event.id}</code>
              </div>
              {sent.map((d) => (
                <div class="delivery" key={`${d.webhook_id}-${d.event_id}`}>
                  <span>
                    Webhook {d.url} · <Badge value={d.state} />
                  </span>
                  <ul>
                    {d.attempts.map((a) => (
                      <li key={a.attempt} data-attempt={a.attempt}>
                        #{a.attempt} {formatDateTime(a.attempted_at)} · {a.status_code ?? 'no response'} · {took(a.duration_ms)}
                        {a.error ? ` · ${a.error}` : ''}
                        {a.response_body ? <AnswerExcerpt body={a.response_body} truncated={a.response_truncated} statusCode={a.status_code} /> : null}
                      </li>
                    ))}
                  </ul>
                </div>
              ))}
            </li>
          );
        })}
      </ol>
    </article>
  );
}
