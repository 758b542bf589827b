// Dashboard sessions and sign-in links (migration 0009). Rows hold only digests of the secrets.
import type { Queryable, Reader } from './db.js';

export async function insertSession(tx: Queryable, idHash: string, adminTokenHash: string, expiresAtMs: number): Promise<void> {
  await tx.run('INSERT INTO dashboard_sessions (id_hash, admin_token_hash, expires_at_ms) VALUES (?, ?, ?)', [idHash, adminTokenHash, expiresAtMs]);
}

/** The live session's expiry, when it exists, has not expired and was opened with this admin token. */
export async function findSession(q: Reader, idHash: string, adminTokenHash: string, nowMs: number): Promise<number | undefined> {
  const row = await q.get<{ expires_at_ms: number | string }>(
    'SELECT expires_at_ms FROM dashboard_sessions WHERE id_hash = ? AND admin_token_hash = ? AND expires_at_ms > ?',
    [idHash, adminTokenHash, nowMs],
  );
  return row === undefined ? undefined : Number(row.expires_at_ms);
}

export async function deleteSession(tx: Queryable, idHash: string): Promise<void> {
  await tx.run('DELETE FROM dashboard_sessions WHERE id_hash = ?', [idHash]);
}

export async function insertSigninLink(tx: Queryable, nonceHash: string, expiresAtMs: number): Promise<void> {
  await tx.run('INSERT INTO dashboard_signin_links (nonce_hash, expires_at_ms) VALUES (?, ?)', [nonceHash, expiresAtMs]);
}

/** Deletes the link and says whether it was live: of two relays redeeming it at once, one wins. */
export async function takeSigninLink(tx: Queryable, nonceHash: string, nowMs: number): Promise<boolean> {
  const { changes } = await tx.run('DELETE FROM dashboard_signin_links WHERE nonce_hash = ? AND expires_at_ms > ?', [nonceHash, nowMs]);
  return changes > 0;
}

export async function deleteExpired(tx: Queryable, nowMs: number): Promise<void> {
  await tx.run('DELETE FROM dashboard_sessions WHERE expires_at_ms <= ?', [nowMs]);
  await tx.run('DELETE FROM dashboard_signin_links WHERE expires_at_ms <= ?', [nowMs]);
}
