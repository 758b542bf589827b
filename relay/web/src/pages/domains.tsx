// Domains of the project: add, the DNS records to publish (copy each value), verify now, status.
import { useState } from 'preact/hooks';
import { api, seg, type Schemas } from '../api';
import { formatDateTime } from '../format';
import { useProjectCollection, type Tenancy } from '../tenancy';
import { Badge, CopyButton, ErrorNote, Table } from '../ui';
import { NeedsProject } from './needs-project';

export function DomainsPage({ tenancy }: { tenancy: Tenancy }) {
  const project = tenancy.project;
  const [name, setName] = useState('');
  const { data, error, reload, action, create } = useProjectCollection<Schemas['DomainList']>(project, 'domains');

  const add = (event: Event) => {
    event.preventDefault();
    void create({ name }, () => setName(''));
  };
  const verify = (domain: Schemas['Domain'], force: boolean) =>
    action.run(async () => {
      await api('POST', `/admin/v1/domains/${seg(domain.id)}/verify`, force ? { force: true } : {});
      reload();
    });

  return (
    <section>
      <h1>Domains</h1>
      <NeedsProject tenancy={tenancy} />
      <ErrorNote error={error ?? action.error} />
      <form class="inline-form" onSubmit={add}>
        <input required placeholder="example.com" aria-label="Domain name" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        <button type="submit" class="primary" disabled={action.busy || !project}>
          Add domain
        </button>
      </form>
      {data?.domains.map((d) => (
        <div class="card" key={d.id} data-domain={d.name}>
          <div class="card-head">
            <h2>
              {d.name} <Badge value={d.status} />
            </h2>
            <div class="toolbar">
              <button type="button" class="small" onClick={() => verify(d, false)}>
                Verify now
              </button>
              {d.status !== 'verified' && project?.environment === 'development' ? (
                <button type="button" class="small" onClick={() => verify(d, true)} title="Mark verified without DNS (development)">
                  Mark verified
                </button>
              ) : null}
            </div>
          </div>
          <p class="muted">
            {d.status === 'verified' ? `Verified ${formatDateTime(d.verified_at)}. ` : 'Pending: publish the records below; the relay rechecks DNS on its own. '}
            Last checked {formatDateTime(d.last_checked_at)}.
          </p>
          <Table class="records" columns={['Type', 'Name', 'Value', 'Purpose', 'Status']}>
              {d.records.map((r, i) => (
                <tr key={i}>
                  <td>{r.type}</td>
                  <td>
                    <code>{r.name}</code> <CopyButton value={r.name} label="Copy" />
                  </td>
                  <td class="value">
                    {r.priority !== undefined ? <span class="muted">priority {r.priority} </span> : null}
                    <code>{r.value}</code>{' '}
                    <CopyButton value={r.value} label="Copy value" />
                  </td>
                  <td>
                    {r.purpose.replace(/_/g, ' ')}
                    {r.required ? '' : ' (recommended)'}
                  </td>
                  <td>
                    {r.status ? <Badge value={r.status} /> : '—'}
                    {/* Why the last check did not verify it (POST /domains/{id}/verify), as the API and CLI say it. */}
                    {r.problem ? <div class="muted record-problem" data-problem>{r.problem}</div> : null}
                  </td>
                </tr>
              ))}
            </Table>
        </div>
      ))}
    </section>
  );
}
