import { Agent, request as undiciRequest, type Dispatcher } from 'undici';
import type { WithResponse } from './api-promise.js';
import { AbortError, APIError, ConnectionError, RavenError, TimeoutError, errorFromResponse, type ResponseHeaders } from './errors.js';
import { levelledLogger, parseLogLevel, redactHeaders } from './logger.js';
import {
  DEFAULT_BASE_URL,
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  LOG_LEVELS,
  type Logger,
  type RequestOptions,
  type TransportOptions,
} from './options.js';
import { defaultSleep, isRepeatable, isRetryable, retryDelayMs, type HttpMethod } from './retry.js';
import { VERSION } from '../version.js';

export type QueryValue = string | number | boolean | null | undefined;

export interface RequestSpec {
  method: HttpMethod;
  /** Path below the base URL, starting with "/", already percent-encoded. */
  path: string;
  query?: Record<string, QueryValue>;
  /** Sent as JSON when defined. */
  body?: unknown;
  idempotencyKey?: string;
  /**
   * Whether repeating the request is harmless even if the server already acted on it: true for
   * GET, DELETE and POSTs carrying an Idempotency-Key. Other requests are only retried when the
   * server certainly did nothing (429, or a connection that was never established).
   */
  idempotent?: boolean;
  /** 'text' returns the body as a string (for message/rfc822 and the like). */
  responseType?: 'json' | 'text';
  options?: RequestOptions | undefined;
}

/** Resolves the shared options (argument, then environment, then default) and sends requests. */
export class Transport {
  readonly baseUrl: string;
  readonly timeout: number;
  readonly maxRetries: number;
  readonly #token: string;
  readonly #logger: Logger;
  readonly #defaultHeaders: Record<string, string>;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  #dispatcher: Dispatcher | undefined;
  readonly #ownsDispatcher: boolean;

  constructor(token: string, options: TransportOptions) {
    this.#token = token;
    this.baseUrl = (options.baseUrl ?? process.env.RAVEN_BASE_URL ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    try {
      new URL(this.baseUrl);
    } catch {
      throw new RavenError(`invalid baseUrl: ${JSON.stringify(this.baseUrl)}`);
    }
    this.timeout = nonNegative('timeout', options.timeout, DEFAULT_TIMEOUT_MS);
    this.maxRetries = nonNegative('maxRetries', options.maxRetries, DEFAULT_MAX_RETRIES);
    if (options.logLevel !== undefined && !LOG_LEVELS.includes(options.logLevel)) {
      throw new RavenError(`logLevel must be one of ${LOG_LEVELS.join(', ')}`);
    }
    // An unrecognised RAVEN_LOG is ignored rather than fatal: the environment is not the caller's code.
    const level = options.logLevel ?? parseLogLevel(process.env.RAVEN_LOG) ?? 'off';
    this.#logger = levelledLogger(level, options.logger);
    this.#defaultHeaders = {
      'user-agent': options.userAgent ?? `raven-node/${VERSION} node/${process.version}`,
      accept: 'application/json',
      ...lowerCaseKeys(options.defaultHeaders),
    };
    this.#sleep = options.sleep ?? defaultSleep;
    this.#dispatcher = options.dispatcher;
    this.#ownsDispatcher = options.dispatcher === undefined;
  }

  /** Releases the keep-alive connections of the dispatcher this client created (not of one passed in). */
  async close(): Promise<void> {
    const dispatcher = this.#dispatcher;
    if (this.#ownsDispatcher && dispatcher) {
      this.#dispatcher = undefined;
      await dispatcher.close();
    }
  }

  /** Sends the request, retrying as the policy allows, and resolves with the parsed 2xx body. */
  async request<T>(spec: RequestSpec): Promise<WithResponse<T>> {
    const signal = spec.options?.signal;
    const maxRetries = nonNegative('maxRetries', spec.options?.maxRetries, this.maxRetries);
    const idempotent = isRepeatable(spec);
    for (let retry = 0; ; retry++) {
      if (signal?.aborted) throw new AbortError('request aborted', { cause: signal.reason });
      let error: RavenError;
      try {
        return await this.#attempt<T>(spec, retry);
      } catch (err) {
        if (!(err instanceof RavenError)) throw err;
        error = err;
      }
      if (retry >= maxRetries || !isRetryable(error, idempotent)) throw error;
      const waitMs = retryDelayMs(retry, error);
      if (waitMs === null) throw error;
      this.#logger.warn('retrying request', {
        method: spec.method,
        path: spec.path,
        retry: retry + 1,
        delay_ms: Math.round(waitMs),
        reason: error instanceof APIError ? `${error.status} ${error.code ?? ''}`.trim() : error.name,
      });
      try {
        await this.#sleep(waitMs, signal);
      } catch (err) {
        throw new AbortError('request aborted', { cause: signal?.reason ?? err });
      }
    }
  }

  async #attempt<T>(spec: RequestSpec, retry: number): Promise<WithResponse<T>> {
    const url = this.baseUrl + spec.path + queryString(spec.query);
    const headers: Record<string, string> = { ...this.#defaultHeaders, ...lowerCaseKeys(spec.options?.headers) };
    let body: string | undefined;
    if (spec.body !== undefined) {
      body = JSON.stringify(spec.body);
      headers['content-type'] = 'application/json';
    }
    headers.authorization = `Bearer ${this.#token}`;
    if (spec.idempotencyKey !== undefined) headers['idempotency-key'] = spec.idempotencyKey;
    if (retry > 0) headers['raven-retry-count'] = String(retry);

    const timeout = nonNegative('timeout', spec.options?.timeout, this.timeout);
    const userSignal = spec.options?.signal;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeout);
    const onUserAbort = () => controller.abort();
    userSignal?.addEventListener('abort', onUserAbort, { once: true });

    this.#logger.debug('request', { method: spec.method, url, retry, headers: redactHeaders(headers) });
    const started = Date.now();
    let status: number;
    let responseHeaders: ResponseHeaders;
    let text: string;
    try {
      const res = await undiciRequest(url, {
        dispatcher: this.#getDispatcher(),
        method: spec.method,
        headers,
        body,
        signal: controller.signal,
      });
      status = res.statusCode;
      responseHeaders = flattenHeaders(res.headers);
      text = await res.body.text();
    } catch (err) {
      if (userSignal?.aborted) throw new AbortError('request aborted', { cause: userSignal.reason });
      if (timedOut) throw new TimeoutError(`request timed out after ${timeout} ms`, { cause: err });
      throw new ConnectionError(`connection error: ${describe(err)}`, { cause: err });
    } finally {
      clearTimeout(timer);
      userSignal?.removeEventListener('abort', onUserAbort);
    }

    const requestId = responseHeaders['request-id'] ?? null;
    this.#logger.info('response', {
      method: spec.method,
      url,
      status,
      request_id: requestId,
      duration_ms: Date.now() - started,
    });

    const parsed = parseBody(text, responseHeaders);
    if (status < 200 || status >= 300) throw errorFromResponse(status, parsed, responseHeaders);

    let data: unknown = parsed;
    if (spec.responseType === 'text') {
      data = text;
    } else if (typeof parsed === 'string' && text !== '') {
      throw new APIError(status, null, 'response body is not JSON', responseHeaders, text);
    } else if (text === '') {
      data = undefined;
    }
    const result: WithResponse<T> = { data: data as T, response: { status, headers: responseHeaders, requestId } };
    if (spec.idempotencyKey !== undefined) result.idempotencyKey = spec.idempotencyKey;
    return result;
  }

  #getDispatcher(): Dispatcher {
    // Keep-alive so consecutive calls (a paginated listing, a send then a get) reuse one socket.
    // undici unrefs idle sockets, so a short-lived script still exits without close().
    this.#dispatcher ??= new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 });
    return this.#dispatcher;
  }
}

function parseBody(text: string, headers: ResponseHeaders): unknown {
  if (text === '') return text;
  const type = headers['content-type'] ?? '';
  if (type !== '' && !/json/i.test(type)) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function flattenHeaders(raw: Record<string, string | string[] | undefined>): ResponseHeaders {
  const out: ResponseHeaders = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function lowerCaseKeys(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) out[name.toLowerCase()] = value;
  return out;
}

function queryString(query: Record<string, QueryValue> | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null) params.append(name, String(value));
  }
  const qs = params.toString();
  return qs === '' ? '' : `?${qs}`;
}

function nonNegative(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) throw new RavenError(`${name} must be a non-negative number`);
  return Math.floor(value);
}

function describe(err: unknown): string {
  const code = (err as { code?: unknown })?.code;
  const message = err instanceof Error ? err.message : String(err);
  return typeof code === 'string' && !message.includes(code) ? `${code} ${message}` : message;
}
