// Rate-limit hits shared by every relay on the database, so rate windows hold across relays
// (PostgreSQL; the SQL below is its own). On SQLite one relay owns the file and its limiter keeps
// the windows in memory: there is nothing to store, and these read and write nothing.
import type { Queryable } from './db.js';

export interface RateWindowQuery {
  scope: string;
  windowMs: number;
  limit: number;
}

/**
 * Locks the windows' scopes until the transaction ends (in one order, so two batches never wait
 * on each other in a circle) and reads their stored hits: the hits of each scope inside its
 * window, oldest first, as much as a sliding-window check needs: all of them when the window is
 * full (to say when it frees up), otherwise only their number (each stands at the oldest hit's
 * time, which is all the check reads of them). Undefined where the windows are not stored.
 */
export async function lockRateHits(tx: Queryable, windows: RateWindowQuery[], nowMs: number): Promise<Map<string, number[]> | undefined> {
  if (tx.dialect !== 'postgres') return undefined;
  for (const scope of windows.map((w) => w.scope).sort()) await tx.lock(`rate:${scope}`);
  const hits = new Map<string, number[]>();
  for (const w of windows) {
    const since = nowMs - w.windowMs;
    const summary = await tx.get<{ n: number; oldest: number | null }>(
      'SELECT COUNT(*) AS n, MIN(at_ms) AS oldest FROM rate_hits WHERE scope = ? AND at_ms > ?',
      [w.scope, since],
    );
    const n = summary?.n ?? 0;
    if (n < w.limit) {
      hits.set(w.scope, new Array<number>(n).fill(summary?.oldest ?? nowMs));
      continue;
    }
    const newest = await tx.all<{ at_ms: number }>(
      'SELECT at_ms FROM rate_hits WHERE scope = ? AND at_ms > ? ORDER BY at_ms DESC LIMIT ?',
      [w.scope, since, w.limit],
    );
    hits.set(w.scope, newest.map((r) => r.at_ms).reverse());
  }
  return hits;
}

/** Stores new hits, and forgets the scopes' hits older than the longest window (where they are stored). */
export async function writeRateHits(tx: Queryable, hits: Array<{ scope: string; atMs: number }>, forgetBeforeMs: number): Promise<void> {
  if (tx.dialect !== 'postgres' || hits.length === 0) return;
  const scopes = [...new Set(hits.map((h) => h.scope))];
  await tx.run('DELETE FROM rate_hits WHERE scope = ANY(?) AND at_ms <= ?', [scopes, forgetBeforeMs]);
  await tx.run('INSERT INTO rate_hits (scope, at_ms) SELECT * FROM unnest(CAST(? AS text[]), CAST(? AS bigint[]))', [
    hits.map((h) => h.scope),
    hits.map((h) => h.atMs),
  ]);
}
