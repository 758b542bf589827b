// The delivery queue's rows (jobs, ready -> running -> done | dead): new jobs, the atomic claim,
// the outcome of each dispatch, recovery.
import type { Db, Queryable, Reader, WriteBatch } from './db.js';
import { NOT_PAUSED } from './delivery-control.js';
import { claimJobsWithLease, expiredJobLeases, renewLeases } from './postgres/queue.js';
import { insertRows, runWithRows } from './rows.js';

/**
 * Whether other relays share this queue (PostgreSQL): a claim then carries a lease its relay
 * renews, and a job whose lease ran out is another relay's to settle. On SQLite (one relay per
 * file) a claim is held until the relay stops.
 */
export function jobClaimsLease(db: Pick<Reader, 'dialect'>): boolean {
  return db.dialect === 'postgres';
}

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
    jobs.map((j) => ({ email_id: j.emailId, state: 'ready', run_at: j.runAt, attempts: 0, created_at: j.runAt, updated_at: j.runAt })),
  );
}

export interface ClaimedJob {
  id: number;
  email_id: string;
  attempts: number;
  /** When it fell due (relay clock): how long it waited says how far the worker is behind. */
  run_at: string;
}

/** A cheap look on the read connection, so an idle poll never takes the write lock. */
export async function hasDueJob(db: Pick<Db, 'get'>, now: string): Promise<boolean> {
  return (await db.get<{ id: number }>(`SELECT id FROM jobs WHERE state = 'ready' AND run_at <= ? AND ${NOT_PAUSED} LIMIT 1`, [now])) !== undefined;
}

/**
 * Marks up to `limit` due jobs running, oldest due first, in one statement; returns them in that
 * order. Where claims carry a lease (jobClaimsLease), the claim skips the jobs other relays are
 * claiming and holds until `leaseUntil` (real time) unless renewed.
 */
export function claimJobs(tx: Queryable, now: string, limit: number, leaseUntil: string): Promise<ClaimedJob[]> {
  return jobClaimsLease(tx) ? claimJobsWithLease(tx, now, limit, leaseUntil) : claimUnleasedJobs(tx, now, limit);
}

/** What one claim asks for: claimJobs' arguments. */
export interface ClaimRequest {
  now: string;
  limit: number;
  leaseUntil: string;
}

/**
 * Claims through the group commit (db.writeBatched): on SQLite a claim is one statement, so it
 * takes no savepoint in a group, and a group of it alone commits without BEGIN and COMMIT (one
 * trip to the sqlite3 thread pool, not three; WriteBatch.oneStatement). The worker claims one at
 * a time; claims that meet in a group run one after the other.
 */
export const claimBatch: WriteBatch<ClaimRequest, ClaimedJob[]> = {
  async run(tx, requests) {
    const claimed: Array<PromiseSettledResult<ClaimedJob[]>> = [];
    for (const r of requests) claimed.push({ status: 'fulfilled', value: await claimJobs(tx, r.now, r.limit, r.leaseUntil) });
    return claimed;
  },
  oneStatement: (requests) => requests.length === 1,
};

async function claimUnleasedJobs(tx: Queryable, now: string, limit: number): Promise<ClaimedJob[]> {
  const claimed = await tx.all<ClaimedJob>(
    `UPDATE jobs SET state = 'running', locked_at = ?, updated_at = ?
      WHERE id IN (SELECT id FROM jobs WHERE state = 'ready' AND run_at <= ? AND ${NOT_PAUSED} ORDER BY run_at, id LIMIT ?)
      RETURNING id, email_id, attempts, run_at`,
    [now, now, now, limit],
  );
  // RETURNING gives no order.
  return claimed.sort((a, b) => (a.run_at < b.run_at ? -1 : a.run_at > b.run_at ? 1 : a.id - b.id));
}

/**
 * Running jobs whose dispatcher is gone, locked for this transaction: on SQLite every running job
 * (called at start-up, one relay per file); where claims carry a lease, those whose lease ran out
 * by `realNow`.
 */
export function interruptedJobs(tx: Queryable, realNow: string): Promise<Array<{ id: number; email_id: string }>> {
  if (jobClaimsLease(tx)) return expiredJobLeases(tx, realNow);
  return tx.all("SELECT id, email_id FROM jobs WHERE state = 'running'");
}

/** Extends the leases of the jobs this relay is dispatching (nothing to do where claims carry none). */
export async function renewJobLeases(db: Db, ids: number[], leaseUntil: string): Promise<void> {
  if (jobClaimsLease(db) && ids.length > 0) await renewLeases(db, ids, leaseUntil);
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
    `UPDATE jobs SET state = value->>'state', run_at = COALESCE(value->>'runAt', run_at),
       attempts = COALESCE(CAST(value->>'attempts' AS INTEGER), attempts), last_error = COALESCE(value->>'lastError', last_error),
       locked_at = NULL, updated_at = value->>'now'
     FROM json_each(?) WHERE jobs.id = CAST(value->>'id' AS INTEGER)`,
    changes.map((c) => ({ ...c, now })),
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
