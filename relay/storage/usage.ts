// Accepted recipients per UTC month, per workspace (`ws:<id>`) and per key (`key:<id>`).
import type { Queryable, Reader } from './db.js';
import { inValues, insertRows } from './rows.js';

export const workspaceScope = (workspaceId: string) => `ws:${workspaceId}`;
export const keyScope = (keyId: string) => `key:${keyId}`;

export async function usedInMonth(q: Reader, scope: string, month: string): Promise<number> {
  const row = await q.get<{ used: number }>('SELECT used FROM usage_counters WHERE scope = ? AND month = ?', [scope, month]);
  return Number(row?.used ?? 0);
}

/** Every key of the workspace, oldest first, with its count for the month (0 when none). */
export async function keyUsageInWorkspace(q: Reader, workspaceId: string, month: string): Promise<Array<{ id: string; prefix: string; used: number }>> {
  const rows = await q.all<{ id: string; prefix: string; used: number | null }>(
    `SELECT k.id, k.prefix, u.used FROM api_keys k JOIN projects p ON p.id = k.project_id
       LEFT JOIN usage_counters u ON u.scope = 'key:' || k.id AND u.month = ?
      WHERE p.workspace_id = ? ORDER BY k.created_at, k.id`,
    [month, workspaceId],
  );
  return rows.map((r) => ({ id: r.id, prefix: r.prefix, used: Number(r.used ?? 0) }));
}

/** The lock a unit of work holds while it checks and charges this scope's counter (see Queryable.lock). */
export const usageLock = (scope: string) => `usage:${scope}`;

/** The month's counts of these scopes (scopes without a row are left out). */
export async function usageOf(q: Reader, scopes: readonly string[], month: string): Promise<Array<{ scope: string; used: number }>> {
  const where = inValues(q, 'scope', scopes);
  const rows = await q.all<{ scope: string; used: number }>(`SELECT scope, used FROM usage_counters WHERE ${where.sql} AND month = ?`, [
    ...where.params,
    month,
  ]);
  return rows.map((r) => ({ scope: r.scope, used: Number(r.used) }));
}

/** Adds each scope's recipients to its count for the month. */
export function chargeUsage(tx: Queryable, charges: ReadonlyMap<string, number>, month: string): Promise<void> {
  return insertRows(
    tx,
    'usage_counters',
    ['scope', 'month', 'used'],
    [...charges].map(([scope, used]) => ({ scope, month, used })),
    'ON CONFLICT (scope, month) DO UPDATE SET used = usage_counters.used + excluded.used',
  );
}
