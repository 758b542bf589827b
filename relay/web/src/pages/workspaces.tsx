// Workspaces (create, activate for production) and their projects (create development/production).
import { useState } from 'preact/hooks';
import { api, seg, type Schemas } from '../api';
import { formatDateTime } from '../format';
import { ProjectDeliveryToggle } from './project-delivery';
import type { Tenancy } from '../tenancy';
import { confirmAction, ErrorNote, useAction, Table } from '../ui';

export function WorkspacesPage({ tenancy }: { tenancy: Tenancy }) {
  const [name, setName] = useState('');
  const [projectName, setProjectName] = useState('');
  const [environment, setEnvironment] = useState<Schemas['Environment']>('development');
  const action = useAction();
  const ws = tenancy.workspace;

  const createWorkspace = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const created = await api<Schemas['Workspace']>('POST', '/admin/v1/workspaces', { name });
      setName('');
      tenancy.selectWorkspace(created.id);
      tenancy.refresh();
    });
  };
  const activate = async (w: Schemas['Workspace']) => {
    const ok = await confirmAction(
      `Activate ${w.name} for production?`,
      <p>Its rr_live_ keys can then send real mail to any recipient.</p>,
      'Activate',
      false,
    );
    if (ok) await action.run(async () => (await api('POST', `/admin/v1/workspaces/${seg(w.id)}/activate`), tenancy.refresh()));
  };
  const createProject = (event: Event) => {
    event.preventDefault();
    if (!ws) return;
    void action.run(async () => {
      const created = await api<Schemas['Project']>('POST', `/admin/v1/workspaces/${seg(ws.id)}/projects`, { name: projectName, environment });
      setProjectName('');
      tenancy.selectProject(created.id);
      tenancy.refresh();
    });
  };

  return (
    <section>
      <h1>Workspaces</h1>
      <ErrorNote error={action.error} />
      <Table columns={['Name', 'Id', 'Production', 'Created', '']}>
          {tenancy.workspaces.map((w) => (
            <tr key={w.id} class={w.id === ws?.id ? 'current' : ''}>
              <td>
                <button type="button" class="link" onClick={() => tenancy.selectWorkspace(w.id)}>
                  {w.name}
                </button>
              </td>
              <td>
                <code>{w.id}</code>
              </td>
              <td>{w.activated ? `activated ${formatDateTime(w.activated_at)}` : 'not activated'}</td>
              <td>{formatDateTime(w.created_at)}</td>
              <td class="right">
                {w.activated ? null : (
                  <button type="button" class="small" onClick={() => activate(w)}>
                    Activate for production
                  </button>
                )}
              </td>
            </tr>
          ))}
        </Table>
      <form class="inline-form" onSubmit={createWorkspace}>
        <input required placeholder="New workspace name" aria-label="New workspace name" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        <button type="submit" class="primary" disabled={action.busy}>
          Create workspace
        </button>
      </form>

      <h2>Projects of {ws?.name ?? '—'}</h2>
      <Table columns={['Name', 'Id', 'Environment', 'Created', 'Delivery']}>
          {tenancy.projects.map((p) => (
            <tr key={p.id} class={p.id === tenancy.project?.id ? 'current' : ''}>
              <td>
                <button type="button" class="link" onClick={() => tenancy.selectProject(p.id)}>
                  {p.name}
                </button>
              </td>
              <td>
                <code>{p.id}</code>
              </td>
              <td>{p.environment}</td>
              <td>{formatDateTime(p.created_at)}</td>
              <td>
                <ProjectDeliveryToggle project={p} />
              </td>
            </tr>
          ))}
        </Table>
      <form class="inline-form" onSubmit={createProject}>
        <input required placeholder="New project name" aria-label="New project name" value={projectName} onInput={(e) => setProjectName((e.target as HTMLInputElement).value)} />
        <select aria-label="Environment" value={environment} onChange={(e) => setEnvironment((e.target as HTMLSelectElement).value as Schemas['Environment'])}>
          <option value="development">development</option>
          <option value="production">production</option>
        </select>
        <button type="submit" class="primary" disabled={action.busy || !ws}>
          Create project
        </button>
      </form>
    </section>
  );
}
