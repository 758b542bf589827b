// When a delivery that was deferred (4xx, or a connection that failed before the message was
// sent) is tried again, measured on the relay clock from the failed attempt. After the last
// entry the remaining recipients fail: 8 attempts over about 17.5 hours.
import { delayAfterAttempt, type BackoffTable } from '../backoff-table.js';

export const DELIVERY_RETRY_BACKOFF_SECONDS: BackoffTable = [
  30, // 30 s: greylisting and brief hiccups usually clear at once
  60, // 1 min
  5 * 60, // 5 min
  15 * 60, // 15 min
  60 * 60, // 1 h
  4 * 60 * 60, // 4 h
  12 * 60 * 60, // 12 h
];

/** Seconds to wait after attempt number `attempt` (1-based) failed, or undefined when exhausted. */
export function retryDelaySeconds(attempt: number): number | undefined {
  return delayAfterAttempt(DELIVERY_RETRY_BACKOFF_SECONDS, attempt);
}
