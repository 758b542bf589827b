// Admission results remembered per (project, Idempotency-Key), replayed for identical bodies.
import type { Queryable, Reader } from './db.js';
import { inTextPairs, insertRows, type Read } from './rows.js';

export interface RememberedRow {
  project_id: string;
  key: string;
  body_hash: string;
  status_code: 200 | 202;
  response_json: string;
}

const IDEMPOTENCY_COLUMNS = ['project_id', 'key', 'body_hash', 'email_id', 'status_code', 'response_json', 'created_at', 'expires_at'] as const;

/** An admission's result, remembered under its key until `expires_at`. */
export interface NewRememberedRow extends RememberedRow {
  email_id: string;
  created_at: string;
  expires_at: string;
}

/** The remembered results of these (project id, key) pairs (readTogether). */
export function rememberedResults(q: Pick<Reader, 'dialect'>, keys: ReadonlyArray<readonly [string, string]>): Read<RememberedRow> | undefined {
  if (keys.length === 0) return undefined;
  const pairs = inTextPairs(q, ['project_id', 'key'], keys);
  const columns = ['project_id', 'key', 'body_hash', 'status_code', 'response_json'];
  return { sql: `SELECT ${columns.join(', ')} FROM idempotency_keys WHERE ${pairs.sql}`, params: pairs.params, columns };
}

export function insertIdempotencyRows(tx: Queryable, rows: readonly NewRememberedRow[]): Promise<void> {
  return insertRows(tx, 'idempotency_keys', IDEMPOTENCY_COLUMNS, rows);
}

/** The lock a unit of work holds while it checks and records this key (see Queryable.lock). */
export const idempotencyLock = (projectId: string, key: string) => `idempotency:${projectId}:${key}`;

/** Forgets the keys expired at `now`; answers how many. */
export async function deleteExpiredIdempotencyKeys(tx: Queryable, now: string): Promise<number> {
  return (await tx.run('DELETE FROM idempotency_keys WHERE expires_at <= ?', [now])).changes;
}
