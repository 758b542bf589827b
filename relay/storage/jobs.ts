// The delivery queue's rows (jobs, ready -> running -> done | dead): new jobs, the atomic claim,
// the outcome of each dispatch, recovery.
import type { Db, Queryable } from './db.js';
import { insertRows, runWithRows } from './rows.js';

export interface NewJob {
  emailId: string;
  /** Due then; also its creation time. */
  runAt: string;
}

export function insertReadyJobs(tx: Queryable, jobs: readonly NewJob[]): Promise<void> {
  return insertRows(
    tx,
    'jobs',
    ['email_id', 'state', 'run_at', 'attempts', 'created_at', 'updated_at'],
    jobs.map((j) => [j.emailId, 'ready', j.runAt, 0, j.runAt, j.runAt]),
  );
}

/** A job row (`jobs`) whose email's project is not paused (migration 0015): the claim's filter. */
export const NOT_PAUSED = 'NOT EXISTS (SELECT 1 FROM paused_projects pp JOIN emails pe ON pe.project_id = pp.project_id WHERE pe.id = jobs.email_id)';

export interface ClaimedJob {
  id: number;
  email_id: string;
  attempts: number;
}

/** A cheap look on the read connection, so an idle poll never takes the write lock. */
export async function hasDueJob(db: Pick<Db, 'get'>, now: string): Promise<boolean> {
  return (await db.get<{ id: number }>(`SELECT id FROM jobs WHERE state = 'ready' AND run_at <= ? AND ${NOT_PAUSED} LIMIT 1`, [now])) !== undefined;
}

/** Marks up to `limit` due jobs running, oldest due first, in one statement; returns them in that order. */
export async function claimJobs(tx: Queryable, now: string, limit: number): Promise<ClaimedJob[]> {
  const claimed = await tx.all<ClaimedJob & { run_at: string }>(
    `UPDATE jobs SET state = 'running', locked_at = ?, updated_at = ?
      WHERE id IN (SELECT id FROM jobs WHERE state = 'ready' AND run_at <= ? AND ${NOT_PAUSED} ORDER BY run_at, id LIMIT ?)
      RETURNING id, email_id, attempts, run_at`,
    [now, now, now, limit],
  );
  // RETURNING gives no order.
  claimed.sort((a, b) => (a.run_at < b.run_at ? -1 : a.run_at > b.run_at ? 1 : a.id - b.id));
  return claimed.map(({ id, email_id, attempts }) => ({ id, email_id, attempts }));
}

export function runningJobs(tx: Queryable): Promise<Array<{ id: number; email_id: string }>> {
  return tx.all("SELECT id, email_id FROM jobs WHERE state = 'running'");
}

/** Where a dispatched job goes: done or dead, or back to ready at `runAt`. */
export interface JobChange {
  id: number;
  state: 'ready' | 'done' | 'dead';
  /** For `ready`: when it is due again. */
  runAt?: string;
  /** Unchanged when omitted. */
  attempts?: number;
  /** Unchanged when omitted. */
  lastError?: string;
}

/** Releases the jobs (locked_at cleared), one statement for all. */
export function releaseJobs(tx: Queryable, changes: readonly JobChange[], now: string): Promise<void> {
  return runWithRows(
    tx,
    `UPDATE jobs SET state = value->>1, run_at = COALESCE(value->>2, run_at), attempts = COALESCE(CAST(value->>3 AS INTEGER), attempts),
       last_error = COALESCE(value->>4, last_error), locked_at = NULL, updated_at = value->>5
     FROM json_each(?) WHERE jobs.id = CAST(value->>0 AS INTEGER)`,
    changes.map((c) => [c.id, c.state, c.runAt ?? null, c.attempts ?? null, c.lastError ?? null, now]),
  );
}

/** Recipients handed to the provider since `since`: what counts against its daily allowance. */
export async function recipientsHandedOverSince(db: Pick<Db, 'get'>, since: string): Promise<number> {
  const row = await db.get<{ n: number }>(
    "SELECT COUNT(*) AS n FROM recipients WHERE updated_at >= ? AND status NOT IN ('queued', 'suppressed')",
    [since],
  );
  return Number(row?.n ?? 0);
}
