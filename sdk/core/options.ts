import type { Dispatcher } from 'undici';

/** How chatty the SDK is. `'off'` (the default) means the SDK never logs anything. */
export type LogLevel = 'off' | 'error' | 'warn' | 'info' | 'debug';

/**
 * Where SDK log lines go. Any object with these four methods works (`console`, pino, winston).
 * Each call gets a short message and one structured object; neither ever holds a key or a body.
 */
export interface Logger {
  error(message: string, data?: Record<string, unknown>): void;
  warn(message: string, data?: Record<string, unknown>): void;
  info(message: string, data?: Record<string, unknown>): void;
  debug(message: string, data?: Record<string, unknown>): void;
}

/** Options shared by {@link Raven} and {@link RavenAdmin}: everything about talking HTTP. */
export interface TransportOptions {
  /**
   * Base address of the service, without the `/v1` prefix.
   * @default process.env.RAVEN_BASE_URL, else `'http://127.0.0.1:7700'` (a local relay)
   */
  baseUrl?: string;
  /**
   * Time limit for one attempt of one request, in milliseconds, from sending it to having read the
   * whole response. An attempt that runs out fails with {@link TimeoutError} (and is retried).
   * @default 30000
   */
  timeout?: number;
  /**
   * How many times a failed request is retried (connection errors, time-outs, 408, 429
   * `rate_limit_exceeded`, 5xx). `0` disables retries. Backoff starts at 0.5 s, doubles, is capped
   * at 8 s and jittered; a `Retry-After` of up to 60 s is honoured.
   * @default 2
   */
  maxRetries?: number;
  /**
   * The undici dispatcher requests go through (a `Pool`, `Agent`, `ProxyAgent`, `MockAgent`...).
   * The SDK never closes a dispatcher it did not create.
   * @default a keep-alive `undici.Agent` owned by this client (released by `close()`)
   */
  dispatcher?: Dispatcher;
  /**
   * Receives log lines when `logLevel` is not `'off'`.
   * @default a logger writing one JSON line per entry to stderr
   */
  logger?: Logger;
  /**
   * Lowest level that is logged. The `Authorization` header is always redacted.
   * @default process.env.RAVEN_LOG, else `'off'` (the SDK is silent)
   */
  logLevel?: LogLevel;
  /**
   * Headers added to every request (a per-request header of the same name wins; the SDK's own
   * `Authorization` and `Idempotency-Key` cannot be overridden this way).
   * @default {}
   */
  defaultHeaders?: Record<string, string>;
  /**
   * Sent as the `User-Agent` header.
   * @default `raven-node/<version> node/<process.version>`
   */
  userAgent?: string;
  /**
   * @internal Replaces the retry wait (tests use it to avoid real sleeps and to see the delays).
   * Must reject when `signal` aborts.
   */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** Options of {@link Raven}, the client of the public `/v1` API. */
export interface ClientOptions extends TransportOptions {
  /**
   * Secret API key (`rr_test_...` or `rr_live_...`), sent as `Authorization: Bearer <key>`.
   * Keep it server-side. The constructor throws a {@link RavenError} when there is none.
   * @default process.env.RAVEN_API_KEY
   */
  apiKey?: string;
}

/** Options of {@link RavenAdmin}, the client of a relay's `/admin/v1` API. */
export interface AdminClientOptions extends TransportOptions {
  /**
   * The relay's admin token, sent as `Authorization: Bearer <token>`.
   * The constructor throws a {@link RavenError} when there is none.
   * @default process.env.RAVEN_ADMIN_TOKEN
   */
  adminToken?: string;
}

/** Per-call options, accepted as the last argument of every method. */
export interface RequestOptions {
  /** Aborts the call (and any pending retry); the call rejects with {@link AbortError}. */
  signal?: AbortSignal;
  /** Overrides the client's `timeout` for this call (milliseconds, per attempt). */
  timeout?: number;
  /** Overrides the client's `maxRetries` for this call. */
  maxRetries?: number;
  /** Extra headers for this call. */
  headers?: Record<string, string>;
}

/** Per-call options of `emails.send`. */
export interface SendRequestOptions extends RequestOptions {
  /**
   * Idempotency-Key for this logical send (1-128 printable ASCII characters, no space).
   * @default a fresh `crypto.randomUUID()` per call, reused by every retry of that call
   */
  idempotencyKey?: string;
}

export const DEFAULT_BASE_URL = 'http://127.0.0.1:7700';
export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_RETRIES = 2;
export const LOG_LEVELS: readonly LogLevel[] = ['off', 'error', 'warn', 'info', 'debug'];
