// The durable delivery queue: one job per email dispatch (ready -> running -> done | dead).
import type { Queryable } from './db.js';
import { insertRows } from './rows.js';

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
