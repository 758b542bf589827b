// The workspace and project the dashboard pages work on, picked in the top bar and remembered.
import { useEffect, useState } from 'preact/hooks';
import { api, seg, type Schemas } from './api';
import { useAction, useLoad } from './ui';

export interface Tenancy {
  workspaces: Schemas['Workspace'][];
  projects: Schemas['Project'][];
  workspace?: Schemas['Workspace'];
  project?: Schemas['Project'];
  selectWorkspace(id: string): void;
  selectProject(id: string): void;
  /** Reload both lists (after creating or activating). */
  refresh(): void;
}

const WS_KEY = 'raven.workspace';
const PRJ_KEY = 'raven.project';

export function useTenancy(): Tenancy {
  const [workspaces, setWorkspaces] = useState<Schemas['Workspace'][]>([]);
  const [projects, setProjects] = useState<Schemas['Project'][]>([]);
  const [workspaceId, setWorkspaceId] = useState(localStorage.getItem(WS_KEY) ?? '');
  const [projectId, setProjectId] = useState(localStorage.getItem(PRJ_KEY) ?? '');
  const [generation, setGeneration] = useState(0);

  useEffect(() => {
    api<Schemas['WorkspaceList']>('GET', '/admin/v1/workspaces').then((list) => {
      setWorkspaces(list.workspaces);
      if (!list.workspaces.some((w) => w.id === workspaceId) && list.workspaces[0]) setWorkspaceId(list.workspaces[0].id);
    }, () => undefined);
  }, [generation]);

  useEffect(() => {
    if (!workspaceId) return;
    localStorage.setItem(WS_KEY, workspaceId);
    api<Schemas['ProjectList']>('GET', `/admin/v1/workspaces/${seg(workspaceId)}/projects`).then((list) => {
      setProjects(list.projects);
      if (!list.projects.some((p) => p.id === projectId)) setProjectId(list.projects[0]?.id ?? '');
    }, () => setProjects([]));
  }, [workspaceId, generation]);

  useEffect(() => {
    if (projectId) localStorage.setItem(PRJ_KEY, projectId);
  }, [projectId]);

  return {
    workspaces,
    projects,
    workspace: workspaces.find((w) => w.id === workspaceId),
    project: projects.find((p) => p.id === projectId),
    selectWorkspace: setWorkspaceId,
    selectProject: setProjectId,
    refresh: () => setGeneration((g) => g + 1),
  };
}

export function TenancyPicker({ tenancy }: { tenancy: Tenancy }) {
  return (
    <div class="pickers">
      <label>
        <span>Workspace</span>
        <select value={tenancy.workspace?.id ?? ''} onChange={(e) => tenancy.selectWorkspace((e.target as HTMLSelectElement).value)} aria-label="Workspace">
          {tenancy.workspaces.map((w) => (
            <option value={w.id} key={w.id}>
              {w.name}
              {w.activated ? '' : ' (development)'}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span>Project</span>
        <select value={tenancy.project?.id ?? ''} onChange={(e) => tenancy.selectProject((e.target as HTMLSelectElement).value)} aria-label="Project">
          {tenancy.projects.map((p) => (
            <option value={p.id} key={p.id}>
              {p.name} · {p.environment}
            </option>
          ))}
        </select>
      </label>
    </div>
  );
}

/** A collection under the selected project (`/admin/v1/projects/{id}/<suffix>`): its list, and creating in it. */
export function useProjectCollection<T>(project: Schemas['Project'] | undefined, suffix: string) {
  const path = project ? `/admin/v1/projects/${seg(project.id)}/${suffix}` : undefined;
  const loaded = useLoad(async () => (path ? api<T>('GET', path) : undefined), [path]);
  const action = useAction();
  const create = <R,>(body: unknown, then?: (created: R) => void) =>
    action.run(async () => {
      if (!path) return;
      const created = await api<R>('POST', path, body);
      then?.(created);
      loaded.reload();
    });
  return { ...loaded, action, create };
}
