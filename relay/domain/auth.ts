// Who is calling: API keys for /v1, the admin token for /admin/v1.
import type { ApiKey, Permission } from 'raven-email-sdk';
import type { Db } from '../storage/db.js';
import { findKeyByHash, type KeyAuthRow } from '../storage/keys.js';
import { ApiError } from '../errors.js';
import { constantTimeEqual, hashSecret } from '../secrets.js';
import type { KeyUse } from './key-use.js';
import type { RelayBus } from '../bus.js';

export interface KeyPrincipal {
  keyId: string;
  projectId: string;
  workspaceId: string;
  prefix: ApiKey['prefix'];
  permission: Permission;
  testMode: boolean;
}

function bearer(header: string | undefined): string | undefined {
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return m?.[1];
}

/**
 * Known keys by SHA-256 digest, so admission skips the reader query. Only rows that exist are
 * kept, at most `limit` of them; a change to a cached row's answer (revoking a key, activating a
 * workspace) clears it all (tenancy.ts calls clear() after its commit); creating rows cannot
 * stale an entry. `generation` stops a lookup that began before such a change from storing its
 * now-stale row after the clear.
 */
export class KeyCache {
  private readonly rows = new Map<string, KeyAuthRow>();
  private generation = 0;

  constructor(private readonly limit = 10_000) {}

  clear(): void {
    this.rows.clear();
    this.generation += 1;
  }

  async lookup(db: Db, digest: string): Promise<KeyAuthRow | undefined> {
    const cached = this.rows.get(digest);
    if (cached) return cached;
    const generation = this.generation;
    const row = await findKeyByHash(db, digest);
    if (row && generation === this.generation) {
      if (this.rows.size >= this.limit) this.rows.clear();
      this.rows.set(digest, row);
    }
    return row;
  }
}

/**
 * After a commit that changes a cached row's answer (a revoked key, an activated workspace): this
 * relay's cache, and before the response, every other relay's on the database (CONTRACT section 6:
 * they answer as one service), forget their rows.
 */
export async function keysChanged(s: { keys: KeyCache; bus: RelayBus }): Promise<void> {
  s.keys.clear();
  s.bus.emit('keys.changed');
  await s.bus.shared();
}

/**
 * Checks 1 and 2 of admission: a valid key, and production enabled for rr_live_ keys. `use`, when
 * given, records that the key authenticated (refused requests are not a use).
 */
export async function authenticateKey(db: Db, keys: KeyCache, authorization: string | undefined, use?: KeyUse): Promise<KeyPrincipal> {
  if (authorization === undefined || authorization.trim() === '') throw missingKey();
  const secret = bearer(authorization);
  if (!secret || !/^rr_(test|live)_/.test(secret)) throw invalidKey();
  const digest = hashSecret(secret);
  const row = await keys.lookup(db, digest);
  if (!row || row.revoked_at !== null || !constantTimeEqual(row.secret_hash, digest)) throw invalidKey();
  if (row.prefix === 'rr_live_' && row.activated_at === null) {
    throw new ApiError(
      'production_not_enabled',
      `Production sending is not enabled for workspace ${row.workspace_id}: an administrator activates it with \`ravenctl relay workspaces activate ${row.workspace_id}\` (or Activate in the dashboard).`,
    );
  }
  use?.note(row.id);
  return {
    keyId: row.id,
    projectId: row.project_id,
    workspaceId: row.workspace_id,
    prefix: row.prefix,
    permission: row.permission,
    testMode: row.prefix === 'rr_test_',
  };
}

export function requirePermission(key: KeyPrincipal, permission: Permission | 'read'): void {
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

/** Still 401 invalid_api_key (the specification's code), but saying what to add. */
function missingKey(): ApiError {
  return new ApiError('invalid_api_key', 'The Authorization header is missing: send `Authorization: Bearer <API key>` (rr_test_... or rr_live_...).');
}

function invalidKey(): ApiError {
  return new ApiError('invalid_api_key', 'The API key is invalid or has been revoked.');
}
