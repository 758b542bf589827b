// Projects of a workspace (development or production), and the lookup every project-scoped
// operation (domains, keys, webhook endpoints) starts with.
import type { Environment } from 'raven-email-sdk';
import { ApiError } from '../errors.js';
import { newId } from '../ids.js';
import type { RelayServices } from '../services.js';
import * as tenancy from '../storage/tenancy.js';
import { requireOneOf, requireString, type AdminBody } from './admin-body.js';
import { findWorkspace } from './workspaces.js';

export async function createProject(s: RelayServices, workspaceId: string, body: AdminBody) {
  await findWorkspace(s, workspaceId);
  const name = requireString(body, 'name');
  const environment = requireOneOf<Environment>(body, 'environment', { development: true, production: true });
  const row: tenancy.ProjectRow = { id: newId('prj'), workspace_id: workspaceId, name, environment, created_at: s.clock.iso() };
  await s.db.write((tx) => tenancy.insertProject(tx, row));
  return row;
}

export async function listProjects(s: RelayServices, workspaceId: string) {
  await findWorkspace(s, workspaceId);
  return { projects: await tenancy.listProjects(s.db, workspaceId) };
}

export async function findProject(s: RelayServices, id: string): Promise<tenancy.ProjectRow> {
  const row = await tenancy.getProject(s.db, id);
  if (!row) throw new ApiError('not_found', `No project ${id}.`);
  return row;
}
