// A workspace's suppression list as the dashboard manages it: list, add an address by hand,
// remove one. (Hard bounces and complaints add theirs through outcomes.ts; admission refuses
// the listed.)
import { ApiError, validationError } from '../errors.js';
import { parseMailbox } from '../mail/mailbox.js';
import type { RelayServices } from '../services.js';
import * as suppressions from '../storage/suppressions.js';
import { requireString, type AdminBody } from './admin-body.js';
import { findWorkspace } from './workspaces.js';

export async function listSuppressions(s: RelayServices, workspaceId: string) {
  await findWorkspace(s, workspaceId);
  const rows = await suppressions.listSuppressions(s.db, workspaceId);
  return { suppressions: rows.map((r) => ({ email: r.address_lc, reason: r.reason, created_at: r.created_at })) };
}

export async function addSuppression(s: RelayServices, workspaceId: string, body: AdminBody) {
  await findWorkspace(s, workspaceId);
  const email = requireString(body, 'email', 254);
  const parsed = parseMailbox(email);
  if (typeof parsed === 'string' || parsed.name) throw validationError([{ field: 'email', message: 'must be a bare email address' }]);
  if (body.reason !== undefined && body.reason !== 'manual') throw validationError([{ field: 'reason', message: 'must be manual' }]);
  const now = s.clock.iso();
  const address = parsed.address.toLowerCase();
  await s.db.write((tx) => suppressions.suppress(tx, workspaceId, address, 'manual', now));
  const row = await suppressions.getSuppression(s.db, workspaceId, address);
  return { email: address, reason: row!.reason, created_at: row!.created_at };
}

export async function removeSuppression(s: RelayServices, workspaceId: string, email: string): Promise<void> {
  await findWorkspace(s, workspaceId);
  const removed = await s.db.write((tx) => suppressions.unsuppress(tx, workspaceId, email.trim().toLowerCase()));
  if (!removed) throw new ApiError('not_found', `${email} is not suppressed in this workspace.`);
}
