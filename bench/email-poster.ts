// How the bench's own load generators (bench/run.ts's end-to-end and sustained loads,
// bench/delivery-cpu.ts) post emails to a relay: an undici Pool per relay (keep-alive, no cap on
// connections: one per request in flight, as fetch's agent opens them) and its `request`, not the
// global fetch. On two cores the load generator's CPU is taken from the relay it measures: fetch
// spent 0.40 - 1.22 CPU ms an email in the bench's process, Pool.request 0.08 - 0.16 (interleaved
// rounds of 1,000 against one relay, load 16; BENCHMARKS.md, session 14). Each request carries the
// headers fetch added, so the relay parses and answers the same bytes as before and its CPU per
// email means what it meant.
import { Pool } from 'undici';

const FETCH_HEADERS = { accept: '*/*', 'accept-language': '*', 'sec-fetch-mode': 'cors', 'user-agent': 'node', 'accept-encoding': 'gzip, deflate' };

export class EmailPoster {
  private readonly pools = new Map<string, Pool>();

  /** POST /v1/emails with a JSON body: the status and the parsed answer. */
  async post(relayUrl: string, apiKey: string, body: string): Promise<{ status: number; answer: any }> {
    let pool = this.pools.get(relayUrl);
    if (!pool) this.pools.set(relayUrl, (pool = new Pool(relayUrl)));
    const res = await pool.request({
      path: '/v1/emails',
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...FETCH_HEADERS },
      body,
    });
    return { status: res.statusCode, answer: await res.body.json() };
  }

  /** Closes the connections to one relay (all when none is named). */
  async close(relayUrl?: string): Promise<void> {
    for (const [url, pool] of this.pools) {
      if (relayUrl !== undefined && url !== relayUrl) continue;
      this.pools.delete(url);
      await pool.close();
    }
  }
}
