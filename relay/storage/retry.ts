// Writes tried again while the storage is away for a moment (a database restarting, a write lock
// held by another process past busy_timeout): for outcomes already answered elsewhere (a provider
// accepted the message, a webhook receiver answered), whose loss would mean a recipient ending
// delivery_unknown or a webhook sent again. Only storage faults are tried again; anything else
// (a statement that is wrong) is thrown at once.
import { isStorageFault } from './db.js';

/** The waits between tries: doubling from 50 ms, then the last one again. */
const RETRY_DELAYS_MS = [50, 100, 200, 400, 800, 1_600];

export interface RetryBounds {
  /** Real time (ms) after which no try starts: the caller's claim on the work ends near it. */
  giveUpAtMs: number;
  /** Whether the caller is stopping: then the fault is thrown instead of waited out. */
  stopping?: () => boolean;
}

export async function retryStorageFaults<T>(write: () => Promise<T>, bounds: RetryBounds): Promise<T> {
  for (let retry = 0; ; retry++) {
    try {
      return await write();
    } catch (error) {
      const delay = RETRY_DELAYS_MS[Math.min(retry, RETRY_DELAYS_MS.length - 1)]!;
      if (!isStorageFault(error) || Date.now() + delay > bounds.giveUpAtMs || bounds.stopping?.()) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
