// The email page's delivery attempts (issue 25): each attempt per recipient with where it went,
// TLS (version, certificate verified), the final reply and the SMTP conversation (as text), oldest first; "Retry now" for delayed
// recipients and a confirmed resend for delivery_unknown ones. Self-contained: the page adds it
// with one line.
import { api, seg, type Schemas } from '../api';
import { formatDateTime } from '../format';
import { Badge, confirmAction, ErrorNote, useAction, useLoad } from '../ui';

/** How the conversation was protected: `TLSv1.3, certificate verified`, a refused certificate, or no TLS. */
function tlsText(a: Schemas['DeliveryAttempt']): string {
  if (a.certificate_verified === false) return 'TLS refused: certificate not verified';
  if (!a.tls) return 'no TLS';
  return `${a.tls_version ?? 'TLS'}${a.certificate_verified ? ', certificate verified' : ''}`;
}

export function DeliveryAttempts({ email, onChange }: { email: Schemas['EmailDetail']; onChange: () => void }) {
  const { data, error, reload } = useLoad(
    () => api<Schemas['DeliveryAttemptList']>('GET', `/admin/v1/emails/${seg(email.id)}/attempts`),
    [email.id, email.status],
  );
  const action = useAction();
  const statuses = email.recipients.map((r) => r.status);
  const retry = async (confirmUnknown: boolean) => {
    if (confirmUnknown) {
      const ok = await confirmAction(
        'Resend a maybe-delivered message?',
        <p>The provider may already have accepted it: a resend may deliver it twice. It is never resent automatically.</p>,
        'Resend anyway',
      );
      if (!ok) return;
    }
    await action.run(async () => {
      await api('POST', `/admin/v1/emails/${seg(email.id)}/retry`, confirmUnknown ? { confirm_unknown: true } : {});
      reload();
      onChange();
    });
  };
  return (
    <section class="delivery-attempts">
      <h2>Delivery attempts</h2>
      <ErrorNote error={error ?? action.error} />
      {statuses.includes('delivery_delayed') ? (
        <button type="button" class="small" disabled={action.busy} onClick={() => retry(false)}>
          Retry now
        </button>
      ) : null}
      {statuses.includes('delivery_unknown') ? (
        <button type="button" class="small danger-outline" disabled={action.busy} onClick={() => retry(true)}>
          Resend (may deliver twice)
        </button>
      ) : null}
      {data && data.attempts.length === 0 ? <p class="muted">No delivery attempt yet.</p> : null}
      <ol class="timeline attempts">
        {(data?.attempts ?? []).map((a) => (
          <li key={`${a.recipient}-${a.attempt}`} data-outcome={a.outcome}>
            <div>
              #{a.attempt} {a.recipient} <Badge value={a.outcome} /> <span class="muted">{formatDateTime(a.started_at)}</span>
            </div>
            <div class="muted">
              {a.provider}
              {a.host ? ` · ${a.host}:${a.port}` : ''} · <span class="tls">{tlsText(a)}</span>
              {a.next_attempt_at ? ` · next attempt ${formatDateTime(a.next_attempt_at)}` : ''}
            </div>
            {a.reply ? <code class="reply">{a.reply}</code> : null}
            <details>
              <summary>SMTP conversation ({a.transcript.length} lines)</summary>
              <pre class="transcript">{a.transcript.map((l) => `${l.dir}: ${l.line}`).join('\n')}</pre>
            </details>
          </li>
        ))}
      </ol>
    </section>
  );
}
