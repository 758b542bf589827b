// API keys of a project: created with the project's environment prefix (the secret is shown once
// and only its hash stored), listed redacted, revoked.
import type { Permission } from 'raven-email-sdk';
import { ApiError } from '../errors.js';
import { newId, newSecret } from '../ids.js';
import { hashSecret } from '../secrets.js';
import type { RelayServices } from '../services.js';
import * as keys from '../storage/keys.js';
import type { KeyRow } from '../storage/keys.js';
import { requireOneOf, requireString, type AdminBody } from './admin-body.js';
import { findProject } from './projects.js';
import { keysChanged } from './auth.js';

export async function createKey(s: RelayServices, projectId: string, body: AdminBody) {
  const project = await findProject(s, projectId);
  const name = requireString(body, 'name');
  const permission = requireOneOf<Permission>(body, 'permission', { 'email:send': true, 'email:read': true });
  const prefix = project.environment === 'production' ? 'rr_live_' : 'rr_test_';
  const key = newSecret(prefix, 24);
  const row: Omit<KeyRow, 'last_used_at'> = { id: newId('key'), project_id: projectId, name, prefix, permission, last4: key.slice(-4), created_at: s.clock.iso(), revoked_at: null };
  await s.db.write((tx) => keys.insertKey(tx, { ...row, secret_hash: hashSecret(key) }));
  return { id: row.id, key, prefix, name, permission, project_id: projectId, created_at: row.created_at };
}

export async function listKeys(s: RelayServices, projectId: string) {
  await findProject(s, projectId);
  return {
    keys: (await keys.listKeys(s.db, projectId)).map((k) => ({
      id: k.id,
      name: k.name,
      prefix: k.prefix,
      permission: k.permission,
      project_id: k.project_id,
      redacted: `${k.prefix}…${k.last4}`,
      created_at: k.created_at,
      revoked_at: k.revoked_at,
      last_used_at: k.last_used_at,
    })),
  };
}

export async function revokeKey(s: RelayServices, keyId: string): Promise<void> {
  const revoked = await s.db.write((tx) => keys.revokeKey(tx, keyId, s.clock.iso()));
  await keysChanged(s);
  if (!revoked) throw new ApiError('not_found', `No key ${keyId}.`);
}
