import { RavenError } from './core/errors.js';
import type { ClientOptions } from './core/options.js';
import { Transport } from './core/transport.js';
import { Domains } from './resources/domains.js';
import { Emails } from './resources/emails.js';
import { Webhooks } from './webhooks.js';

/**
 * Client of the public API (`/v1`).
 *
 * ```ts
 * const raven = new Raven(); // RAVEN_API_KEY, RAVEN_BASE_URL
 * const { id } = await raven.emails.send({ from, to, subject, text });
 * ```
 */
export class Raven {
  readonly emails: Emails;
  /** The domains the key may send from. */
  readonly domains: Domains;
  readonly webhooks: Webhooks;
  /** The resolved base URL (argument, RAVEN_BASE_URL, or the local relay). */
  readonly baseUrl: string;
  readonly #transport: Transport;

  constructor(options: ClientOptions = {}) {
    const apiKey = options.apiKey ?? process.env.RAVEN_API_KEY;
    if (!apiKey) throw new RavenError('missing api key: pass { apiKey } or set RAVEN_API_KEY');
    this.#transport = new Transport(apiKey, options);
    this.baseUrl = this.#transport.baseUrl;
    this.emails = new Emails(this.#transport);
    this.domains = new Domains(this.#transport);
    this.webhooks = new Webhooks();
  }

  /** Closes idle keep-alive connections of the client's own dispatcher. Optional: idle sockets never keep the process alive. */
  close(): Promise<void> {
    return this.#transport.close();
  }
}
