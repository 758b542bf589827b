// Recipients handed over, bounced and complained per project, over the reputation windows
// (domain/reputation.ts), counted from the emails created since each window's start.
import type { Reader } from './db.js';

export interface ReputationCountRow {
  workspace_id: string;
  project_id: string;
  /** Per window, in the order of `since`: recipients that reached the provider, bounces, complaints. */
  counts: Array<{ sent: number; bounced: number; complained: number }>;
}

/** `since` holds each window's start, the widest first (it bounds the scan). */
export async function reputationCounts(db: Reader, since: readonly string[], workspaceId?: string): Promise<ReputationCountRow[]> {
  const columns = since
    .map(
      (_, i) => `SUM(CASE WHEN e.created_at >= ? THEN 1 ELSE 0 END) AS sent_${i},
       SUM(CASE WHEN e.created_at >= ? AND r.status = 'bounced' THEN 1 ELSE 0 END) AS bounced_${i},
       SUM(CASE WHEN e.created_at >= ? AND r.status = 'complained' THEN 1 ELSE 0 END) AS complained_${i}`,
    )
    .join(',\n       ');
  const rows = await db.all<Record<string, string | number>>(
    `SELECT e.workspace_id, e.project_id,
       ${columns}
       FROM recipients r JOIN emails e ON e.id = r.email_id
      WHERE e.created_at >= ? AND r.status IN ('sent', 'delivered', 'bounced', 'complained')${workspaceId === undefined ? '' : ' AND e.workspace_id = ?'}
      GROUP BY e.workspace_id, e.project_id`,
    [...since.flatMap((s) => [s, s, s]), since[0], ...(workspaceId === undefined ? [] : [workspaceId])],
  );
  return rows.map((row) => ({
    workspace_id: String(row.workspace_id),
    project_id: String(row.project_id),
    counts: since.map((_, i) => ({ sent: Number(row[`sent_${i}`]), bounced: Number(row[`bounced_${i}`]), complained: Number(row[`complained_${i}`]) })),
  }));
}
