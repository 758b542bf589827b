// The SDK's retry policy: which failures are retried (by whether the request may be repeated),
// how long to wait (the server's Retry-After when it gives one, else exponential backoff with
// jitter), and the sleep between attempts. transport.ts asks it after every failed attempt.
import { setTimeout as delay } from 'node:timers/promises';
import { AbortError, APIError, ConnectionError, RavenError, TimeoutError, retryAfterSeconds } from './errors.js';

/** The methods the API uses; whether a request may be repeated starts with its method. */
export type HttpMethod = 'GET' | 'POST' | 'DELETE';

/** Waits are capped here: a server asking for longer gets its error back instead of a sleeping caller. */
const MAX_RETRY_AFTER_MS = 60_000;
const INITIAL_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 8_000;
/** Errors from the connect phase: the request never reached the server, so any request may be retried. */
const CONNECT_ERROR_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * Whether repeating the request is harmless even if the server already acted on it: GET and
 * DELETE by nature, a POST only when the caller says so (it carries an Idempotency-Key).
 */
export function isRepeatable(spec: { method: HttpMethod; idempotent?: boolean | undefined }): boolean {
  return spec.idempotent ?? spec.method !== 'POST';
}

/** Whether this failure is worth another attempt, given whether the request may be repeated. */
export function isRetryable(error: RavenError, idempotent: boolean): boolean {
  if (error instanceof AbortError) return false;
  if (error instanceof TimeoutError) return idempotent;
  if (error instanceof ConnectionError) return idempotent || isConnectPhaseError(error.cause);
  if (!(error instanceof APIError)) return false;
  // A 429 rate limit means "refused, nothing done": always safe to repeat. A quota_exceeded will
  // not clear before the month changes, so it is never retried.
  if (error.status === 429) return error.code !== 'quota_exceeded';
  // A wait_timeout is the relay's answer to a wait (nothing came in time), not a lost request.
  if (error.code === 'wait_timeout') return false;
  if (error.status === 408 || error.status >= 500) return idempotent;
  return false;
}

/** Milliseconds before retry number `retry + 1`, or null when the server asks for more than we wait. */
export function retryDelayMs(retry: number, error: RavenError, random: () => number = Math.random): number | null {
  if (error instanceof APIError) {
    const seconds = retryAfterSeconds(error.headers, error.body);
    if (seconds !== null) return seconds * 1000 <= MAX_RETRY_AFTER_MS ? seconds * 1000 : null;
  }
  const backoff = Math.min(INITIAL_BACKOFF_MS * 2 ** retry, MAX_BACKOFF_MS);
  // Up to 25% jitter so that clients failing together do not retry together.
  return backoff * (1 - random() * 0.25);
}

function isConnectPhaseError(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && CONNECT_ERROR_CODES.has(code)) return true;
  }
  return false;
}

export async function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  await delay(ms, undefined, { signal });
}
