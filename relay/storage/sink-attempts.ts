// RCPT attempts the SMTP sink has seen per (delivery key, recipient), for the `delayed` simulation.
import type { Queryable } from './db.js';

/** Counts one more attempt and answers how many there have been, this one included. */
export async function countSinkAttempt(tx: Queryable, deliveryKey: string, addressLc: string, now: string): Promise<number> {
  const row = await tx.get<{ attempts: number }>(
    `INSERT INTO sink_attempts (delivery_key, address_lc, attempts, updated_at) VALUES (?, ?, 1, ?)
     ON CONFLICT (delivery_key, address_lc) DO UPDATE SET attempts = sink_attempts.attempts + 1, updated_at = excluded.updated_at
     RETURNING attempts`,
    [deliveryKey, addressLc, now],
  );
  return Number(row!.attempts);
}

/** Forgets attempts last counted at or before `cutoff`. */
export async function deleteSinkAttemptsBefore(tx: Queryable, cutoff: string): Promise<void> {
  await tx.run('DELETE FROM sink_attempts WHERE updated_at <= ?', [cutoff]);
}
