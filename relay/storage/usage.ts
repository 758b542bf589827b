// Accepted recipients per UTC month, per workspace (`ws:<id>`) and per key (`key:<id>`): the usage
// view's reads. An admission charges them with its rate windows (counters.ts).
import type { Reader } from './db.js';

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
