// The one shape of a retry schedule, shared by email delivery (queue/backoff.ts) and webhook
// delivery (webhooks/schedule.ts): a named table of delays in seconds where entry n - 1 is the
// wait after failed attempt n (1-based), measured from that attempt; past the last entry there is
// no further attempt.
export type BackoffTable = readonly number[];

/** Seconds to wait after attempt `attempt` (1-based) failed, or undefined when the table is exhausted. */
export function delayAfterAttempt(table: BackoffTable, attempt: number): number | undefined {
  return table[attempt - 1];
}

/** The first attempt plus one per delay. */
export function maxAttempts(table: BackoffTable): number {
  return table.length + 1;
}
