// API keys of the project: create (the secret shown once), list, revoke with confirmation.
import { useState } from 'preact/hooks';
import { api, seg, type Schemas } from '../api';
import { formatDateTime } from '../format';
import { useProjectCollection, type Tenancy } from '../tenancy';
import { confirmAction, ErrorNote, SecretOnce, Table } from '../ui';
import { NeedsProject } from './needs-project';
import { SubmissionPanel } from './submission-panel';

export function KeysPage({ tenancy }: { tenancy: Tenancy }) {
  const project = tenancy.project;
  const [name, setName] = useState('');
  const [permission, setPermission] = useState<Schemas['Permission']>('email:send');
  const [secret, setSecret] = useState<string | undefined>(undefined);
  const { data, error, reload, action, create: createIn } = useProjectCollection<Schemas['ApiKeyList']>(project, 'keys');

  const create = (event: Event) => {
    event.preventDefault();
    void createIn<Schemas['ApiKeyCreated']>({ name, permission }, (created) => {
      setName('');
      setSecret(created.key);
    });
  };
  const revoke = async (key: Schemas['ApiKey']) => {
    const ok = await confirmAction(`Revoke ${key.name}?`, <p>{key.redacted} stops working at once, for every request. This cannot be undone.</p>, 'Revoke key');
    if (ok) await action.run(async () => (await api('DELETE', `/admin/v1/keys/${seg(key.id)}`), reload()));
  };

  return (
    <section>
      <h1>API keys</h1>
      <NeedsProject tenancy={tenancy} />
      <ErrorNote error={error ?? action.error} />
      <form class="inline-form" onSubmit={create}>
        <input required placeholder="Key name" aria-label="Key name" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        <select aria-label="Permission" value={permission} onChange={(e) => setPermission((e.target as HTMLSelectElement).value as Schemas['Permission'])}>
          <option value="email:send">email:send</option>
          <option value="email:read">email:read</option>
        </select>
        <button type="submit" class="primary" disabled={action.busy || !project}>
          Create key
        </button>
      </form>
      <Table columns={['Name', 'Key', 'Permission', 'Created', 'Last used', 'State', '']}>
          {data?.keys.map((k) => (
            <tr key={k.id} data-key={k.id}>
              <td>{k.name}</td>
              <td>
                <code class="nowrap">{k.redacted}</code>
              </td>
              <td>{k.permission}</td>
              <td>{formatDateTime(k.created_at)}</td>
              <td data-last-used>{k.last_used_at ? formatDateTime(k.last_used_at) : 'never'}</td>
              <td>{k.revoked_at ? `revoked ${formatDateTime(k.revoked_at)}` : 'active'}</td>
              <td class="right">
                {k.revoked_at ? null : (
                  <button type="button" class="small danger-outline" onClick={() => revoke(k)}>
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          ))}
        </Table>
      {secret ? <SecretOnce label="Your new API key" secret={secret} onDone={() => setSecret(undefined)} /> : null}
      <SubmissionPanel />
    </section>
  );
}
