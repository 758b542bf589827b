// Sender reputation (issue 25): bounce and complaint rates per workspace and project over 1, 7 and
// 30 days, with the levels at which providers act (Amazon SES reviews an account at 5 % bounces or
// 0.1 % complaints and may pause it at 10 % or 0.5 %). A rate is over the recipients that reached
// the provider (sent, delivered, bounced, complained) among the emails created in the window.
import type { RelayServices } from '../services.js';
import { reputationCounts, type ReputationCountRow } from '../storage/reputation.js';

export const REPUTATION_WINDOWS_DAYS = [30, 7, 1] as const;
/**
 * How old the rates GET /metrics exports may be. Reading them scans every recipient of the last
 * 30 days (about 180 ms of CPU at 50,000 emails on SQLite, 400 ms of the server's on PostgreSQL),
 * too much for each scrape; windows of days barely move in a minute. The admin API stays exact.
 */
export const REPUTATION_METRICS_MAX_AGE_MS = 60_000;
export const BOUNCE_LEVELS = { review: 0.05, at_risk: 0.1 } as const;
export const COMPLAINT_LEVELS = { review: 0.001, at_risk: 0.005 } as const;

export type ReputationLevel = 'ok' | 'review' | 'at_risk';

export interface ReputationWindow {
  days: number;
  sent: number;
  bounced: number;
  complained: number;
  bounce_rate: number;
  complaint_rate: number;
  bounce_level: ReputationLevel;
  complaint_level: ReputationLevel;
}

function level(rate: number, levels: { review: number; at_risk: number }): ReputationLevel {
  return rate >= levels.at_risk ? 'at_risk' : rate >= levels.review ? 'review' : 'ok';
}

function windowOf(days: number, c: { sent: number; bounced: number; complained: number }): ReputationWindow {
  const bounceRate = c.sent === 0 ? 0 : c.bounced / c.sent;
  const complaintRate = c.sent === 0 ? 0 : c.complained / c.sent;
  return {
    days,
    ...c,
    bounce_rate: bounceRate,
    complaint_rate: complaintRate,
    bounce_level: level(bounceRate, BOUNCE_LEVELS),
    complaint_level: level(complaintRate, COMPLAINT_LEVELS),
  };
}

/** Windows shortest first, summed over the rows given. */
function windows(rows: ReputationCountRow[]): ReputationWindow[] {
  return REPUTATION_WINDOWS_DAYS.map((days, i) => {
    const sum = { sent: 0, bounced: 0, complained: 0 };
    for (const row of rows) {
      sum.sent += row.counts[i]!.sent;
      sum.bounced += row.counts[i]!.bounced;
      sum.complained += row.counts[i]!.complained;
    }
    return windowOf(days, sum);
  }).reverse();
}

function since(s: RelayServices): string[] {
  const now = s.clock.nowMs();
  return REPUTATION_WINDOWS_DAYS.map((days) => new Date(now - days * 86_400_000).toISOString());
}

export interface WorkspaceReputation {
  workspace_id: string;
  windows: ReputationWindow[];
  projects: Array<{ project_id: string; windows: ReputationWindow[] }>;
}

/** The reputation of every workspace that sent in the last 30 days (or of one). */
export async function reputation(s: RelayServices, workspaceId?: string): Promise<WorkspaceReputation[]> {
  const rows = await reputationCounts(s.db, since(s), workspaceId);
  const byWorkspace = new Map<string, ReputationCountRow[]>();
  for (const row of rows) byWorkspace.set(row.workspace_id, [...(byWorkspace.get(row.workspace_id) ?? []), row]);
  if (workspaceId !== undefined && !byWorkspace.has(workspaceId)) byWorkspace.set(workspaceId, []);
  return [...byWorkspace].map(([id, own]) => ({
    workspace_id: id,
    windows: windows(own),
    projects: own.map((row) => ({ project_id: row.project_id, windows: windows([row]) })),
  }));
}

/**
 * reputation(s) for every workspace, read again only when the last reading started
 * REPUTATION_METRICS_MAX_AGE_MS ago or more (per relay; scrapes meanwhile share it, a failed
 * reading is not kept).
 */
export function recentReputation(s: RelayServices, maxAgeMs = REPUTATION_METRICS_MAX_AGE_MS): () => Promise<WorkspaceReputation[]> {
  let last: { at: number; value: Promise<WorkspaceReputation[]> } | undefined;
  return () => {
    const now = performance.now();
    if (last === undefined || now - last.at >= maxAgeMs) {
      const entry = { at: now, value: reputation(s) };
      last = entry;
      entry.value.catch(() => {
        if (last === entry) last = undefined;
      });
    }
    return last.value;
  };
}
