// Suppressed addresses per workspace (lower-cased): hard bounces, complaints and manual entries.
import type { Suppression } from 'raven-email-sdk';
import type { Queryable, Reader } from './db.js';
import { inTextPairs, type Read } from './rows.js';

export type SuppressionReason = Suppression['reason'];

export interface SuppressionRow {
  address_lc: string;
  reason: SuppressionReason;
  created_at: string;
}

export function listSuppressions(q: Reader, workspaceId: string): Promise<SuppressionRow[]> {
  return q.all<SuppressionRow>(
    'SELECT address_lc, reason, created_at FROM suppressions WHERE workspace_id = ? ORDER BY created_at DESC, address_lc',
    [workspaceId],
  );
}

export function getSuppression(q: Reader, workspaceId: string, addressLc: string): Promise<SuppressionRow | undefined> {
  return q.get<SuppressionRow>(
    'SELECT address_lc, reason, created_at FROM suppressions WHERE workspace_id = ? AND address_lc = ?',
    [workspaceId, addressLc],
  );
}

/** An existing suppression (manual, or an earlier bounce) is kept as it is. */
export async function suppress(tx: Queryable, workspaceId: string, addressLc: string, reason: SuppressionReason, now: string): Promise<void> {
  await tx.run(
    `INSERT INTO suppressions (workspace_id, address_lc, reason, created_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (workspace_id, address_lc) DO NOTHING`,
    [workspaceId, addressLc, reason, now],
  );
}

/** False when the address was not suppressed. */
export async function unsuppress(tx: Queryable, workspaceId: string, addressLc: string): Promise<boolean> {
  const { changes } = await tx.run('DELETE FROM suppressions WHERE workspace_id = ? AND address_lc = ?', [workspaceId, addressLc]);
  return changes > 0;
}

/** The suppressions among these (workspace id, lower-cased address) pairs. */
export function suppressionsOf(
  q: Pick<Reader, 'dialect'>,
  pairs: ReadonlyArray<readonly [string, string]>,
): Read<{ workspace_id: string; address_lc: string; reason: SuppressionReason }> | undefined {
  if (pairs.length === 0) return undefined;
  const where = inTextPairs(q, ['workspace_id', 'address_lc'], pairs);
  return { sql: `SELECT workspace_id, address_lc, reason FROM suppressions WHERE ${where.sql}`, params: where.params, columns: ['workspace_id', 'address_lc', 'reason'] };
}
