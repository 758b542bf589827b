// The Checks tab of a captured message: GET /admin/v1/messages/{id}/checks, loaded when the tab
// opens (links are asked for real, so never at capture or on every message view). Every string
// from the mail or the checks is rendered as text.
import { api, seg, type Schemas } from '../api';
import { CheckBadge } from '../check-badge';
import { ErrorNote, Loading, useLoad } from '../ui';

type Checks = Schemas['MessageChecks'];

function Result({ value }: { value: string }) {
  const tone = value === 'pass' ? 'good' : value === 'fail' || value === 'permerror' ? 'bad' : 'warn';
  return <span class={`check-result ${tone}`}>{value}</span>;
}

const families = (list: Schemas['ClientFamily'][]) => list.map((f) => `${f.family} (${f.clients.join(', ')})`).join('; ');

export function MessageChecks({ id }: { id: string }) {
  const { data, error } = useLoad(() => api<Checks>('GET', `/admin/v1/messages/${seg(id)}/checks`), [id]);
  if (error) return <ErrorNote error={error} />;
  if (!data) return <Loading />;
  const { dkim, spf, dmarc } = data.authentication;
  const skipped = (check: string) => data.skipped.find((s) => s.check === check)?.reason;
  return (
    <div class="checks" data-testid="checks">
      <div class="checks-summary" data-testid="checks-summary">
        <CheckBadge checks={data.summary} />{' '}
        {data.summary.reasons.length === 0 ? (
          <span class="muted">Authentication, headers and spam (when scored) pass; links and HTML compatibility are below.</span>
        ) : (
          <ul>
            {data.summary.reasons.map((r, i) => (
              <li key={i}>{r}</li>
            ))}
          </ul>
        )}
      </div>
      <h3>Authentication</h3>
      <table class="headers-table">
        <tbody>
          {dkim.length === 0 ? (
            <tr>
              <th>DKIM</th>
              <td>
                <Result value="none" /> no signature
              </td>
            </tr>
          ) : null}
          {dkim.map((d, i) => (
            <tr key={i} data-testid="check-dkim">
              <th>DKIM</th>
              <td>
                <Result value={d.result} /> {d.domain}
                {d.reason ? `: ${d.reason}` : ''}
              </td>
            </tr>
          ))}
          <tr>
            <th>SPF</th>
            <td>
              <Result value={spf.result} /> {spf.domain ?? ''}
              {spf.reason ? `: ${spf.reason}` : ''}
            </td>
          </tr>
          <tr>
            <th>DMARC</th>
            <td>
              <Result value={dmarc.result} /> {dmarc.domain ?? ''}
              {dmarc.reason ? `: ${dmarc.reason}` : ''}
            </td>
          </tr>
        </tbody>
      </table>
      <h3>Headers</h3>
      <table class="headers-table">
        <tbody>
          {data.headers.map((h) => (
            <tr key={h.name}>
              <th>{h.name}</th>
              <td>
                <Result value={h.result} /> {h.message}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>HTML compatibility</h3>
      {data.html === null ? (
        <p class="muted" data-testid="html-none">{skipped('html') ? `Not checked: ${skipped('html')}.` : 'The message has no HTML.'}</p>
      ) : (
        <>
          <p data-testid="html-score">
            {data.html.score}% of {data.html.clients} clients support every feature used.
          </p>
          <table class="headers-table">
            <tbody>
              {data.html.features.map((f) => (
                <tr key={f.feature}>
                  <th>{f.feature}</th>
                  <td>
                    {f.unsupported.length > 0 ? <div>Unsupported: {families(f.unsupported)}</div> : null}
                    {f.partial.length > 0 ? <div>Partial: {families(f.partial)}</div> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      <h3>Links</h3>
      {skipped('links') ? <p class="muted">Not listed: {skipped('links')}.</p> : data.links.length === 0 ? <p class="muted">No links or images.</p> : null}
      <table class="headers-table">
        <tbody>
          {data.links.map((l) => (
            <tr key={l.url}>
              <th>{!l.checked ? (l.error ?? 'unchecked') : l.error ? l.error : String(l.status)}</th>
              <td>
                {l.kind}: {l.url}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Spam</h3>
      {data.spam === null || !data.spam.available ? (
        <p class="muted">{data.spam?.message ?? 'Not checked.'}</p>
      ) : (
        <p>
          Score {data.spam.score} (threshold {data.spam.threshold}): {data.spam.is_spam ? 'spam' : 'not spam'}
        </p>
      )}
    </div>
  );
}
