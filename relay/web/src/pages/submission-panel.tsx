// How to configure an application that only speaks SMTP (CONTRACT section 9): the submission
// listener's host, port and TLS mode, the user name, and an API key as the password.
import { Fragment } from 'preact';
import { api, type Schemas } from '../api';
import { CopyButton, ErrorNote, useLoad } from '../ui';

const TLS_MODE: Record<Schemas['SubmissionSettings']['tls'], string> = {
  starttls: 'STARTTLS (secure: false, requireTLS: true)',
  implicit: 'TLS from the first byte (secure: true)',
  none: 'none: plain text, this machine only',
};

export function SubmissionPanel() {
  const { data, error } = useLoad(() => api<Schemas['SubmissionSettings']>('GET', '/admin/v1/submission'), []);
  if (error) return <ErrorNote error={error} />;
  if (!data) return null;
  // A listener on every address is reached by the name the dashboard was opened with.
  const host = data.host === '0.0.0.0' || data.host === '::' ? location.hostname : data.host;
  const url = `smtp://${host.includes(':') ? `[${host}]` : host}:${data.port}`;
  const fields: Array<[string, string]> = [
    ['Host', host],
    ['Port', String(data.port)],
    ['Username', data.username],
  ];
  return (
    <section class="submission-panel" data-submission>
      <h2>Send over SMTP</h2>
      <p class="muted">
        Applications that only take an SMTP server (Gitea, Nextcloud, Ghost, Django, Rails, cron jobs) send through the relay under the same rules as the API:
        give them these settings and an API key with <code>email:send</code> as the password.
      </p>
      <dl class="envelope">
        {fields.map(([label, value]) => (
          <Fragment key={label}>
            <dt>{label}</dt>
            <dd>
              <code>{value}</code> <CopyButton value={value} />
            </dd>
          </Fragment>
        ))}
        <dt>TLS</dt>
        <dd>{TLS_MODE[data.tls]}</dd>
        <dt>Password</dt>
        <dd>an API key (rr_test_... or rr_live_...), shown once when created above</dd>
        <dt>URL</dt>
        <dd>
          <code>{url}</code> <CopyButton value={url} />
        </dd>
      </dl>
    </section>
  );
}
