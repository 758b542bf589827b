// An operator's hand on delivery (issue 25): pause and resume a project's delivery, retry a
// delayed email now, and put maybe-sent recipients back in the queue when explicitly confirmed.
import type { Queryable, Reader } from './db.js';

/** A job row (`jobs`) whose email's project is not paused (migration 0015): the claim's filter. */
export const NOT_PAUSED = 'NOT EXISTS (SELECT 1 FROM paused_projects pp JOIN emails pe ON pe.project_id = pp.project_id WHERE pe.id = jobs.email_id)';

export async function pauseProjectDelivery(tx: Queryable, projectId: string, now: string): Promise<void> {
  await tx.run('INSERT INTO paused_projects (project_id, paused_at) VALUES (?, ?) ON CONFLICT (project_id) DO NOTHING', [projectId, now]);
}

export async function resumeProjectDelivery(tx: Queryable, projectId: string): Promise<void> {
  await tx.run('DELETE FROM paused_projects WHERE project_id = ?', [projectId]);
}

/** When the project's delivery was paused, or null when it runs. */
export async function deliveryPausedAt(db: Reader, projectId: string): Promise<string | null> {
  const row = await db.get<{ paused_at: string }>('SELECT paused_at FROM paused_projects WHERE project_id = ?', [projectId]);
  return row?.paused_at ?? null;
}

export interface RetryRecipientRow {
  position: number;
  address: string;
  status: string;
}

export async function recipientsOfEmail(db: Reader, emailId: string): Promise<RetryRecipientRow[]> {
  const rows = await db.all<RetryRecipientRow>('SELECT position, address, status FROM recipients WHERE email_id = ? ORDER BY position', [emailId]);
  return rows.map((r) => ({ ...r, position: Number(r.position) }));
}

/** The email's waiting job becomes due now; false when it has none waiting. */
export async function makeJobDueNow(tx: Queryable, emailId: string, now: string): Promise<boolean> {
  const { changes } = await tx.run("UPDATE jobs SET run_at = ?, updated_at = ? WHERE email_id = ? AND state = 'ready'", [now, now, emailId]);
  return changes > 0;
}

/**
 * The recipients go back to `queued`, the email is open again (its status given, terminal_at
 * cleared) and its job is due now: a resend an operator confirmed.
 */
export async function requeueRecipients(tx: Queryable, emailId: string, positions: readonly number[], emailStatus: string, now: string): Promise<void> {
  for (const position of positions) {
    await tx.run("UPDATE recipients SET status = 'queued', updated_at = ? WHERE email_id = ? AND position = ?", [now, emailId, position]);
  }
  await tx.run('UPDATE emails SET status = ?, terminal_at = NULL, updated_at = ? WHERE id = ?', [emailStatus, now, emailId]);
  const { changes } = await tx.run("UPDATE jobs SET state = 'ready', run_at = ?, locked_at = NULL, updated_at = ? WHERE email_id = ? AND state IN ('done', 'dead')", [
    now,
    now,
    emailId,
  ]);
  if (changes === 0) {
    await tx.run("INSERT INTO jobs (email_id, state, run_at, attempts, created_at, updated_at) VALUES (?, 'ready', ?, 0, ?, ?)", [emailId, now, now, now]);
  }
}
