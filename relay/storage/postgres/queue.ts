// The delivery queue and the webhook outbox as several relays share them on PostgreSQL: claims
// take rows no other relay holds (FOR UPDATE SKIP LOCKED) and put a lease on them, in real time.
// A relay renews the leases of the jobs it is dispatching; a lease that runs out means its relay
// died mid-dispatch, and another relay settles the job (as delivery_unknown: never resent).
import type { Db, Queryable } from '../db.js';
import { NOT_PAUSED } from '../delivery-control.js';

export interface ClaimedJobRow {
  id: number;
  email_id: string;
  attempts: number;
  run_at: string;
}

/** Marks up to `limit` due jobs running with a lease, skipping those other relays are claiming. */
export function claimJobsWithLease(tx: Queryable, now: string, limit: number, leaseUntil: string): Promise<ClaimedJobRow[]> {
  return tx.all<ClaimedJobRow>(
    `UPDATE jobs SET state = 'running', locked_at = ?, updated_at = ?, lease_expires_at = ?
      WHERE id IN (SELECT id FROM jobs WHERE state = 'ready' AND run_at <= ? AND ${NOT_PAUSED} ORDER BY run_at, id LIMIT ? FOR UPDATE SKIP LOCKED)
      RETURNING id, email_id, attempts, run_at`,
    [now, now, leaseUntil, now, limit],
  );
}

/** Extends the leases of the jobs this relay is dispatching. */
export async function renewLeases(db: Db, ids: number[], leaseUntil: string): Promise<void> {
  await db.write((tx) => tx.run("UPDATE jobs SET lease_expires_at = ? WHERE id = ANY(?) AND state = 'running'", [leaseUntil, ids]));
}

/** Running jobs whose lease ran out, locked for this transaction (another relay skips them). */
export function expiredJobLeases(tx: Queryable, realNow: string): Promise<Array<{ id: number; email_id: string }>> {
  return tx.all(
    "SELECT id, email_id FROM jobs WHERE state = 'running' AND (lease_expires_at IS NULL OR lease_expires_at < ?) FOR UPDATE SKIP LOCKED",
    [realNow],
  );
}

/**
 * Claims the next attempt of a webhook delivery: true for exactly one relay, and only while the
 * row is still due with the attempts it was scanned with and no live lease.
 */
export async function claimWebhookAttempt(db: Db, id: number, attempts: number, clockNow: string, realNow: string, leaseUntil: string): Promise<boolean> {
  const claimed = await db.write((tx) =>
    tx.run(
      `UPDATE webhook_deliveries SET lease_expires_at = ?
        WHERE id = ? AND state = 'pending' AND attempts = ? AND next_attempt_at <= ? AND (lease_expires_at IS NULL OR lease_expires_at < ?)`,
      [leaseUntil, id, attempts, clockNow, realNow],
    ),
  );
  return claimed.changes === 1;
}

/** Ends this relay's claim on a webhook delivery: its attempt is recorded, or was never made. */
export async function releaseWebhookAttempt(tx: Queryable, id: number): Promise<void> {
  await tx.run('UPDATE webhook_deliveries SET lease_expires_at = NULL WHERE id = ?', [id]);
}
