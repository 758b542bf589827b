// Delivery attempts per recipient (migration 0012): written with the outcome they led to, read by
// the admin's attempts view, erased with the email's body.
import type { Queryable, Reader } from './db.js';
import { BODIES_DUE_FOR_ERASURE } from './emails.js';
import { insertRows } from './rows.js';

export interface DeliveryAttemptRow {
  email_id: string;
  position: number;
  attempt: number;
  recipient: string;
  started_at: string;
  provider: 'sink' | 'smtp';
  host: string | null;
  port: number | null;
  tls: number;
  /** The negotiated TLS version (`TLSv1.3`); null without TLS. */
  tls_version: string | null;
  /** 1 the server's certificate verified, 0 it did not (the session was refused), null no TLS was tried. */
  certificate_verified: number | null;
  outcome: string;
  reply: string | null;
  transcript_json: string;
  next_attempt_at: string | null;
}

const COLUMNS = [
  'email_id',
  'position',
  'attempt',
  'recipient',
  'started_at',
  'provider',
  'host',
  'port',
  'tls',
  'tls_version',
  'certificate_verified',
  'outcome',
  'reply',
  'transcript_json',
  'next_attempt_at',
] as const satisfies ReadonlyArray<keyof DeliveryAttemptRow>;

export async function insertDeliveryAttempts(tx: Queryable, rows: readonly DeliveryAttemptRow[]): Promise<void> {
  await insertRows(
    tx,
    'delivery_attempts',
    COLUMNS,
    rows,
    'ON CONFLICT (email_id, position, attempt) DO NOTHING',
  );
}

/** An email's attempts, oldest first. */
export async function listDeliveryAttempts(db: Reader, emailId: string): Promise<DeliveryAttemptRow[]> {
  const rows = await db.all<DeliveryAttemptRow>(
    `SELECT ${COLUMNS.join(', ')} FROM delivery_attempts WHERE email_id = ? ORDER BY attempt, started_at, position`,
    [emailId],
  );
  return rows.map((r) => ({ ...r, position: Number(r.position), attempt: Number(r.attempt), port: r.port === null ? null : Number(r.port), tls: Number(r.tls),
    certificate_verified: r.certificate_verified === null ? null : Number(r.certificate_verified),
  }));
}

/** Attempts of the emails whose body the retention rule is about to erase (terminal at or before `cutoff`). */
export async function deleteAttemptsTerminalBefore(tx: Queryable, cutoff: string): Promise<void> {
  await tx.run(`DELETE FROM delivery_attempts WHERE email_id IN (${BODIES_DUE_FOR_ERASURE})`, [cutoff]);
}
