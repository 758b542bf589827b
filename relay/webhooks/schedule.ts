// The webhook retry schedule (CONTRACT section 5): each retry is measured from the previous
// attempt, and an event gets at most seven attempts before its delivery is marked failed.
import { delayAfterAttempt, maxAttempts, type BackoffTable } from '../backoff-table.js';

/** Delay before attempt n + 1, in seconds, indexed by n - 1 (attempt 1 is followed by 1 minute). */
export const WEBHOOK_RETRY_DELAYS_SECONDS = [
  60, //       1 minute
  5 * 60, //   5 minutes
  15 * 60, // 15 minutes
  60 * 60, //  1 hour
  6 * 60 * 60, //  6 hours
  24 * 60 * 60, // 24 hours
] as const satisfies BackoffTable;

/** The first attempt plus one per retry delay: 7. */
export const WEBHOOK_MAX_ATTEMPTS = maxAttempts(WEBHOOK_RETRY_DELAYS_SECONDS);

/**
 * When attempt `attempt + 1` is due, given that attempt `attempt` (1-based) started at
 * `attemptedAtMs` and failed; null when `attempt` was the last one allowed.
 */
export function nextAttemptAtMs(attempt: number, attemptedAtMs: number): number | null {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`attempt must be a positive integer, got ${attempt}`);
  const delay = delayAfterAttempt(WEBHOOK_RETRY_DELAYS_SECONDS, attempt);
  return delay === undefined ? null : attemptedAtMs + delay * 1000;
}
