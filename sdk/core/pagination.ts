import { APIPromise, type WithResponse } from './api-promise.js';
import { RavenError } from './errors.js';

/** The wire shape of a page: the items under a resource-named key, plus `next_cursor`. */
export interface CursorPageBody {
  next_cursor: string | null;
}

/** Fetches the page that starts at `cursor`. */
export type FetchPage<P> = (cursor: string) => APIPromise<P>;

/**
 * One page of a cursor-paginated listing. `data` holds this page's items; iterating the page with
 * `for await` yields these items and then those of every following page.
 */
export class CursorPage<Item> implements AsyncIterable<Item> {
  readonly data: Item[];
  readonly next_cursor: string | null;
  readonly #fetchPage: FetchPage<CursorPage<Item>>;

  constructor(data: Item[], nextCursor: string | null, fetchPage: FetchPage<CursorPage<Item>>) {
    this.data = data;
    this.next_cursor = nextCursor;
    this.#fetchPage = fetchPage;
  }

  hasNextPage(): boolean {
    return this.next_cursor !== null && this.next_cursor !== '';
  }

  /** The following page; throws a RavenError when there is none (check hasNextPage() first). */
  getNextPage(): Promise<this> {
    if (!this.hasNextPage()) return Promise.reject(new RavenError('no next page: next_cursor is null'));
    return this.#fetchPage(this.next_cursor as string) as unknown as Promise<this>;
  }

  /** Every item of this page and of all the pages after it, fetching them as it goes. */
  async *[Symbol.asyncIterator](): AsyncIterator<Item> {
    let page: CursorPage<Item> = this;
    for (;;) {
      yield* page.data;
      if (!page.hasNextPage()) return;
      page = await page.getNextPage();
    }
  }
}

/**
 * An APIPromise of the first page that can also be iterated directly:
 * `for await (const item of client.emails.list())` walks every page.
 */
export class PagePromise<Page extends CursorPage<Item>, Item> extends APIPromise<Page> implements AsyncIterable<Item> {
  constructor(result: Promise<WithResponse<Page>>) {
    super(result);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Item> {
    const page = await this;
    yield* page;
  }
}
