// Workspaces: create, list, activate (production sending), and the lookup every workspace-scoped
// operation starts with.
import { ApiError } from '../errors.js';
import { newId } from '../ids.js';
import type { RelayServices } from '../services.js';
import * as tenancy from '../storage/tenancy.js';
import type { WorkspaceRow } from '../storage/tenancy.js';
import { requireString, type AdminBody } from './admin-body.js';
import { keysChanged } from './auth.js';

const workspaceView = (w: WorkspaceRow) => ({
  id: w.id,
  name: w.name,
  activated: w.activated_at !== null,
  activated_at: w.activated_at,
  created_at: w.created_at,
});

export async function createWorkspace(s: RelayServices, body: AdminBody) {
  const name = requireString(body, 'name');
  const row: WorkspaceRow = { id: newId('ws'), name, activated_at: null, created_at: s.clock.iso() };
  await s.db.write((tx) => tenancy.insertWorkspace(tx, row));
  return workspaceView(row);
}

export async function listWorkspaces(s: RelayServices) {
  return { workspaces: (await tenancy.listWorkspaces(s.db)).map(workspaceView) };
}

export async function findWorkspace(s: RelayServices, id: string): Promise<WorkspaceRow> {
  const row = await tenancy.getWorkspace(s.db, id);
  if (!row) throw new ApiError('not_found', `No workspace ${id}.`);
  return row;
}

export async function activateWorkspace(s: RelayServices, id: string) {
  await findWorkspace(s, id);
  await s.db.write((tx) => tenancy.activateWorkspace(tx, id, s.clock.iso()));
  // Cached key principals carry the workspace's activation: drop them so it applies at once.
  await keysChanged(s);
  return workspaceView(await findWorkspace(s, id));
}
