// Who is calling: API keys for /v1, the admin token for /admin/v1.
import type { Db } from '../storage/db.js';
import { ApiError } from '../errors.js';
import { constantTimeEqual, hashSecret } from '../secrets.js';

export interface KeyPrincipal {
  keyId: string;
  projectId: string;
  workspaceId: string;
  prefix: 'rr_test_' | 'rr_live_';
  permission: 'email:send' | 'email:read';
  testMode: boolean;
}

interface KeyRow {
  id: string;
  project_id: string;
  workspace_id: string;
  prefix: 'rr_test_' | 'rr_live_';
  permission: 'email:send' | 'email:read';
  secret_hash: string;
  revoked_at: string | null;
  activated_at: string | null;
}

// Authenticated keys, per relay (per database), so a request does not wait for a read. Any admin
// change (revoking a key, activating a workspace, ...) forgets them all at once (forgetKeys), so it
// applies to the very next request; an entry also expires after a while, in case the database was
// changed from outside. Only keys that exist are kept, and never more than MAX_CACHED.
const CACHE_TTL_MS = 30_000;
const MAX_CACHED = 10_000;
const keyCaches = new WeakMap<Db, Map<string, { row: KeyRow; expiresAt: number }>>();

function cacheOf(db: Db): Map<string, { row: KeyRow; expiresAt: number }> {
  let cache = keyCaches.get(db);
  if (!cache) keyCaches.set(db, (cache = new Map()));
  return cache;
}

/** Forgets every cached key of this relay: call after any change to keys, projects or workspaces. */
export function forgetKeys(db: Db): void {
  keyCaches.get(db)?.clear();
}

async function findKey(db: Db, digest: string): Promise<KeyRow | undefined> {
  const cache = cacheOf(db);
  const cached = cache.get(digest);
  if (cached && cached.expiresAt > Date.now()) return cached.row;
  const row = await db.get<KeyRow>(
    `SELECT k.id, k.project_id, p.workspace_id, k.prefix, k.permission, k.secret_hash, k.revoked_at, w.activated_at
       FROM api_keys k JOIN projects p ON p.id = k.project_id JOIN workspaces w ON w.id = p.workspace_id
      WHERE k.secret_hash = ?`,
    [digest],
  );
  if (row) {
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(digest, { row, expiresAt: Date.now() + CACHE_TTL_MS });
  } else {
    cache.delete(digest);
  }
  return row;
}

function bearer(header: string | undefined): string | undefined {
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return m?.[1];
}

/** Checks 1 and 2 of admission: a valid key, and production enabled for rr_live_ keys. */
export async function authenticateKey(db: Db, authorization: string | undefined): Promise<KeyPrincipal> {
  const secret = bearer(authorization);
  if (!secret || !/^rr_(test|live)_/.test(secret)) throw invalidKey();
  const digest = hashSecret(secret);
  const row = await findKey(db, digest);
  if (!row || row.revoked_at !== null || !constantTimeEqual(row.secret_hash, digest)) throw invalidKey();
  if (row.prefix === 'rr_live_' && row.activated_at === null) {
    throw new ApiError('production_not_enabled', 'Production sending is not enabled for this workspace: request workspace activation.');
  }
  return {
    keyId: row.id,
    projectId: row.project_id,
    workspaceId: row.workspace_id,
    prefix: row.prefix,
    permission: row.permission,
    testMode: row.prefix === 'rr_test_',
  };
}

export function requirePermission(key: KeyPrincipal, permission: 'email:send' | 'email:read' | 'read'): void {
  // Reading is allowed to both: email:send reads what it created, email:read the whole project.
  if (permission === 'read') return;
  if (key.permission !== permission) {
    throw new ApiError('forbidden', `This key lacks the ${permission} permission.`);
  }
}

export function authenticateAdmin(expectedToken: string, authorization: string | undefined): void {
  const token = bearer(authorization);
  if (!token || !constantTimeEqual(token, expectedToken)) {
    throw new ApiError('unauthorized', 'The admin token is missing or wrong.');
  }
}

function invalidKey(): ApiError {
  return new ApiError('invalid_api_key', 'The API key is invalid or has been revoked.');
}
