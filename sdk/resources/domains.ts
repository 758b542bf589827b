import { APIPromise } from '../core/api-promise.js';
import type { RequestOptions } from '../core/options.js';
import type { Transport } from '../core/transport.js';
import type { SenderDomainList } from '../types.js';

export class Domains {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * The domains of the key's project with their status (`GET /v1/domains`): `from` must be on a
   * `verified` one. Sends nothing; any valid key may ask.
   */
  list(options?: RequestOptions): APIPromise<SenderDomainList> {
    return new APIPromise(this.#transport.request<SenderDomainList>({ method: 'GET', path: '/v1/domains', options }));
  }
}
