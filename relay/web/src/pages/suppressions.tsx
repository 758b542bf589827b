// Suppressions of the workspace: list, search, add (manual), remove.
import { useState } from 'preact/hooks';
import { api, seg, type Schemas } from '../api';
import { formatDateTime } from '../format';
import type { Tenancy } from '../tenancy';
import { Badge, confirmAction, ErrorNote, useAction, useLoad, Table } from '../ui';

export function SuppressionsPage({ tenancy }: { tenancy: Tenancy }) {
  const ws = tenancy.workspace;
  const [email, setEmail] = useState('');
  const [filter, setFilter] = useState('');
  const action = useAction();
  const base = ws ? `/admin/v1/workspaces/${seg(ws.id)}/suppressions` : '';
  const { data, error, reload } = useLoad(async () => (ws ? api<Schemas['SuppressionList']>('GET', base) : undefined), [ws?.id]);

  const add = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      await api('POST', base, { email, reason: 'manual' });
      setEmail('');
      reload();
    });
  };
  const remove = async (s: Schemas['Suppression']) => {
    const ok = await confirmAction(`Remove ${s.email}?`, <p>Mail to {s.email} is sent again.</p>, 'Remove suppression');
    if (ok) await action.run(async () => (await api('DELETE', `${base}/${seg(s.email)}`), reload()));
  };
  const needle = filter.trim().toLowerCase();
  const shown = data?.suppressions.filter((s) => s.email.toLowerCase().includes(needle)) ?? [];

  return (
    <section>
      <div class="page-head">
        <h1>Suppressions</h1>
        <div class="toolbar">
          <input type="search" placeholder="Search addresses" aria-label="Search suppressions" value={filter} onInput={(e) => setFilter((e.target as HTMLInputElement).value)} />
        </div>
      </div>
      <ErrorNote error={error ?? action.error} />
      <form class="inline-form" onSubmit={add}>
        <input required type="email" placeholder="address@example.com" aria-label="Address to suppress" value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} />
        <button type="submit" class="primary" disabled={action.busy || !ws}>
          Suppress
        </button>
      </form>
      <Table columns={['Address', 'Reason', 'Since', '']}>
          {shown.map((s) => (
            <tr key={s.email} data-suppression={s.email}>
              <td>{s.email}</td>
              <td>
                <Badge value={s.reason} />
              </td>
              <td>{formatDateTime(s.created_at)}</td>
              <td class="right">
                <button type="button" class="small danger-outline" onClick={() => remove(s)}>
                  Remove
                </button>
              </td>
            </tr>
          ))}
        </Table>
      {data && shown.length === 0 ? <p class="empty">{needle ? 'No suppressed address matches.' : 'No suppressed address.'}</p> : null}
    </section>
  );
}
