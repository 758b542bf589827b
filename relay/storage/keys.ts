// API keys. Only the SHA-256 of a secret is stored; callers compare it in constant time.
import type { ApiKey, Permission } from 'raven-email-sdk';
import type { Queryable, Reader } from './db.js';

export interface KeyRow {
  id: string;
  project_id: string;
  name: string;
  prefix: ApiKey['prefix'];
  permission: Permission;
  last4: string;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

/** What admission needs to know about the key that calls it. */
export interface KeyAuthRow {
  id: string;
  project_id: string;
  workspace_id: string;
  prefix: ApiKey['prefix'];
  permission: Permission;
  secret_hash: string;
  revoked_at: string | null;
  activated_at: string | null;
}

export async function insertKey(tx: Queryable, row: Omit<KeyRow, 'last_used_at'> & { secret_hash: string }): Promise<void> {
  await tx.run(
    'INSERT INTO api_keys (id, project_id, name, prefix, permission, secret_hash, last4, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    [row.id, row.project_id, row.name, row.prefix, row.permission, row.secret_hash, row.last4, row.created_at],
  );
}

export function listKeys(q: Reader, projectId: string): Promise<KeyRow[]> {
  return q.all<KeyRow>(
    `SELECT id, project_id, name, prefix, permission, last4, created_at, revoked_at, last_used_at
       FROM api_keys WHERE project_id = ? ORDER BY created_at, id`,
    [projectId],
  );
}

/** False when there is no such key. Revocation is kept at its first time. */
export async function revokeKey(tx: Queryable, id: string, now: string): Promise<boolean> {
  const { changes } = await tx.run('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?', [now, id]);
  return changes > 0;
}

/** Moves a key's last use forward; never back, when relays sharing one database write out of order. */
export async function recordKeyUse(tx: Queryable, id: string, at: string): Promise<void> {
  await tx.run('UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)', [at, id, at]);
}

export function findKeyByHash(q: Reader, secretHash: string): Promise<KeyAuthRow | undefined> {
  return q.get<KeyAuthRow>(
    `SELECT k.id, k.project_id, p.workspace_id, k.prefix, k.permission, k.secret_hash, k.revoked_at, w.activated_at
       FROM api_keys k JOIN projects p ON p.id = k.project_id JOIN workspaces w ON w.id = p.workspace_id
      WHERE k.secret_hash = ?`,
    [secretHash],
  );
}
