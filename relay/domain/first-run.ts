// First run: an empty data directory (or database) gets something to send with at once.
import type { RelayServices } from '../services.js';
import { anyWorkspaceExists } from '../storage/tenancy.js';
import { createKey } from './api-keys.js';
import { createProject } from './projects.js';
import { connectDomain } from './sending-domains.js';
import { createWorkspace } from './workspaces.js';

export interface Bootstrap {
  workspaceId: string;
  projectId: string;
  domainId: string;
  domain: string;
  apiKey: string;
  keyId: string;
}

/** An empty data directory gets a workspace, a development project, a verified domain and a key. */
export async function bootstrapIfEmpty(s: RelayServices): Promise<Bootstrap | undefined> {
  if (await anyWorkspaceExists(s.db)) return undefined;
  const workspace = await createWorkspace(s, { name: 'Default workspace' });
  const project = await createProject(s, workspace.id, { name: 'Development', environment: 'development' });
  const domain = await connectDomain(s, project.id, { name: s.config.domain }, { verified: true });
  const key = await createKey(s, project.id, { name: 'bootstrap', permission: 'email:send' });
  return { workspaceId: workspace.id, projectId: project.id, domainId: domain.id, domain: domain.name, apiKey: key.key, keyId: key.id };
}
