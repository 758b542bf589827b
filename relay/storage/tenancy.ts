// Workspaces and their projects.
import type { Environment } from 'raven-email-sdk';
import type { Queryable, Reader } from './db.js';

export interface WorkspaceRow {
  id: string;
  name: string;
  activated_at: string | null;
  created_at: string;
}

export interface ProjectRow {
  id: string;
  workspace_id: string;
  name: string;
  environment: Environment;
  created_at: string;
}

export async function insertWorkspace(tx: Queryable, row: WorkspaceRow): Promise<void> {
  await tx.run('INSERT INTO workspaces (id, name, activated_at, created_at) VALUES (?, ?, ?, ?)', [row.id, row.name, row.activated_at, row.created_at]);
}

export function listWorkspaces(q: Reader): Promise<WorkspaceRow[]> {
  return q.all<WorkspaceRow>('SELECT id, name, activated_at, created_at FROM workspaces ORDER BY created_at, id');
}

export function getWorkspace(q: Reader, id: string): Promise<WorkspaceRow | undefined> {
  return q.get<WorkspaceRow>('SELECT id, name, activated_at, created_at FROM workspaces WHERE id = ?', [id]);
}

export async function anyWorkspaceExists(q: Reader): Promise<boolean> {
  return (await q.get<{ id: string }>('SELECT id FROM workspaces LIMIT 1')) !== undefined;
}

/** Activation is kept at its first time. */
export async function activateWorkspace(tx: Queryable, id: string, now: string): Promise<void> {
  await tx.run('UPDATE workspaces SET activated_at = COALESCE(activated_at, ?) WHERE id = ?', [now, id]);
}

export async function insertProject(tx: Queryable, row: ProjectRow): Promise<void> {
  await tx.run('INSERT INTO projects (id, workspace_id, name, environment, created_at) VALUES (?, ?, ?, ?, ?)', [
    row.id, row.workspace_id, row.name, row.environment, row.created_at,
  ]);
}

export function listProjects(q: Reader, workspaceId: string): Promise<ProjectRow[]> {
  return q.all<ProjectRow>(
    'SELECT id, workspace_id, name, environment, created_at FROM projects WHERE workspace_id = ? ORDER BY created_at, id',
    [workspaceId],
  );
}

export function getProject(q: Reader, id: string): Promise<ProjectRow | undefined> {
  return q.get<ProjectRow>('SELECT id, workspace_id, name, environment, created_at FROM projects WHERE id = ?', [id]);
}
