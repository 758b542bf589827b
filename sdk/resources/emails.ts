import { randomUUID } from 'node:crypto';
import { APIPromise } from '../core/api-promise.js';
import { RavenError } from '../core/errors.js';
import type { RequestOptions, SendRequestOptions } from '../core/options.js';
import { CursorPage, PagePromise } from '../core/pagination.js';
import type { Transport } from '../core/transport.js';
import type { EmailDetail, EmailList, EmailListQuery, EmailSummary, SendEmailParams, SendEmailResult } from '../types.js';

/** A page of `GET /v1/emails`. `emails` and `data` are the same array. */
export class EmailPage extends CursorPage<EmailSummary> {
  /** This page's emails, as the API names them (same array as `data`). */
  get emails(): EmailSummary[] {
    return this.data;
  }

  /** The wire shape, `{ emails, next_cursor }`, for printing or forwarding. */
  toJSON(): EmailList {
    return { emails: this.data, next_cursor: this.next_cursor } as EmailList;
  }
}

export type EmailPagePromise = PagePromise<EmailPage, EmailSummary>;

export class Emails {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Submits an email for asynchronous delivery (`POST /v1/emails`). Resolves with
   * `{ id, status: 'queued', test_mode }` or, when a recipient is suppressed,
   * `{ id, status: 'suppressed', reason }`. Admission is not delivery: read the email later.
   */
  send(params: SendEmailParams, options?: SendRequestOptions): APIPromise<SendEmailResult> {
    // Every send carries an Idempotency-Key, and the SAME key goes out on every retry of this call:
    // when a response is lost (time-out, reset socket, 5xx after commit) the server may already have
    // queued the email, and replaying the key returns that original admission instead of sending a
    // second copy. A caller-supplied key extends this across processes and restarts.
    const idempotencyKey = options?.idempotencyKey ?? randomUUID();
    return new APIPromise(
      this.#transport.request<SendEmailResult>({
        method: 'POST',
        path: '/v1/emails',
        body: params,
        idempotencyKey,
        idempotent: true,
        options,
      }),
    );
  }

  /**
   * Lists emails the key may read, newest first (`GET /v1/emails`). Await it for the first page,
   * or iterate it with `for await` to walk every email across all pages.
   */
  list(query: EmailListQuery = {}, options?: RequestOptions): EmailPagePromise {
    const fetchPage = (cursor: string | undefined): EmailPagePromise =>
      new PagePromise<EmailPage, EmailSummary>(
        this.#transport
          .request<EmailList>({
            method: 'GET',
            path: '/v1/emails',
            query: { status: query.status, recipient: query.recipient, limit: query.limit, cursor },
            options,
          })
          .then((r) => ({
            ...r,
            data: new EmailPage(r.data.emails, r.data.next_cursor ?? null, (next) => fetchPage(next)),
          })),
      );
    return fetchPage(query.cursor);
  }

  /** Reads one email with its recipient outcomes and event timeline (`GET /v1/emails/{id}`). */
  get(id: string, options?: RequestOptions): APIPromise<EmailDetail> {
    if (typeof id !== 'string' || id === '') {
      return new APIPromise(Promise.reject(new RavenError('emails.get: id must be a non-empty string')));
    }
    return new APIPromise(
      this.#transport.request<EmailDetail>({ method: 'GET', path: `/v1/emails/${encodeURIComponent(id)}`, options }),
    );
  }
}
