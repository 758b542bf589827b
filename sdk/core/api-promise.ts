import type { ResponseHeaders } from './errors.js';

/** What the SDK saw of the HTTP response. */
export interface ResponseInfo {
  status: number;
  /** Lower-cased names; repeated headers joined with ", ". */
  headers: ResponseHeaders;
  /** The `Request-Id` header; quote it when asking for help. */
  requestId: string | null;
}

/** The result of `.withResponse()`. */
export interface WithResponse<T> {
  data: T;
  response: ResponseInfo;
  /** The Idempotency-Key the request carried (on `emails.send`, the caller's or the generated one). */
  idempotencyKey?: string;
}

/**
 * A Promise of the parsed result that can also give the HTTP response: `await p` is the data,
 * `await p.withResponse()` is `{ data, response, idempotencyKey? }`. The request starts at once.
 */
export class APIPromise<T> extends Promise<T> {
  readonly #result: Promise<WithResponse<T>>;
  #data: Promise<T> | undefined;

  constructor(result: Promise<WithResponse<T>>) {
    // The Promise we extend is a placeholder; then/catch/finally below delegate to `result`.
    super((resolve) => resolve(undefined as T));
    this.#result = result;
  }

  /** Promises derived with then() are plain Promises, not APIPromises. */
  static override get [Symbol.species]() {
    return Promise;
  }

  /** The data together with the status, headers, request id and idempotency key. */
  withResponse(): Promise<WithResponse<T>> {
    return this.#result;
  }

  #parse(): Promise<T> {
    this.#data ??= this.#result.then((r) => r.data);
    return this.#data;
  }

  override then<R1 = T, R2 = never>(
    onfulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#parse().then(onfulfilled, onrejected);
  }

  override catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<T | R> {
    return this.#parse().catch(onrejected);
  }

  override finally(onfinally?: (() => void) | null): Promise<T> {
    return this.#parse().finally(onfinally);
  }
}
