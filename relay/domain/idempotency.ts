// The Idempotency-Key rule (CONTRACT section 2): a key is 1 to 128 printable ASCII characters; a
// request repeated under a key already used in its project replays the remembered result if its
// body is the same and is refused with idempotency_conflict if not; results are remembered for
// the retention below, then forgotten by the worker's maintenance. The SQL lives in
// storage/idempotency.ts; admission.ts decides when this rule is consulted.
import { hash } from 'node:crypto';
import { ApiError, validationError } from '../errors.js';
import type { Queryable } from '../storage/db.js';
import { deleteExpiredIdempotencyKeys, type RememberedRow } from '../storage/idempotency.js';
import { canonicalJson } from './canonical-json.js';

/** Days a result is remembered by default (`limits.idempotencyRetentionDays`); the contract asks for at least one. */
export const DEFAULT_IDEMPOTENCY_RETENTION_DAYS = 7;

/** The key's syntax: 1 to 128 characters from 0x21-0x7E (`ravenctl send` checks it too). */
export function validIdempotencyKey(key: string): boolean {
  return /^[\x21-\x7e]{1,128}$/.test(key);
}

export function checkIdempotencyKey(value: string | undefined): void {
  if (value !== undefined && !validIdempotencyKey(value)) {
    throw validationError([{ field: 'Idempotency-Key', message: 'must be 1 to 128 printable ASCII characters without spaces' }]);
  }
}

/** What a repeat is compared by: the canonical JSON of the body, so key order and spacing do not matter. */
export function idempotentBodyHash(idempotencyKey: string | undefined, body: unknown): string {
  return idempotencyKey === undefined ? '' : hash('sha256', canonicalJson(body), 'hex');
}

/** Keys are per project: the same key in two projects names two requests. */
export const idempotencyScope = (projectId: string, key: string) => `${projectId}\n${key}`;

/** An admission result as remembered under its Idempotency-Key. */
export type Remembered = Pick<RememberedRow, 'body_hash' | 'status_code' | 'response_json'>;

/** The remembered answer for a repeat with this body; idempotency_conflict for another body. */
export function replayRemembered<Body>(previous: Remembered, bodyHash: string): { status: 200 | 202; body: Body } {
  if (previous.body_hash !== bodyHash) {
    throw new ApiError('idempotency_conflict', 'This Idempotency-Key was already used with a different request body.');
  }
  return { status: previous.status_code, body: JSON.parse(previous.response_json) as Body };
}

/** When a result remembered at `nowMs` is forgotten. */
export function rememberedUntil(nowMs: number, retentionDays: number): string {
  return new Date(nowMs + retentionDays * 86_400_000).toISOString();
}

/** Forgets the results whose retention ended at `now`; answers how many. */
export function forgetExpiredIdempotencyKeys(tx: Queryable, now: string): Promise<number> {
  return deleteExpiredIdempotencyKeys(tx, now);
}
