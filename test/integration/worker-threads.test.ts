// The relay's pure work on worker threads (relay/threads/): every email it delivers is composed and
// DKIM-signed there, every captured message parsed there for the inbox; when the threads die with
// that work in hand, the relay does it on the main thread and nothing acknowledged is lost.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { workerThreads } from '../../relay/threads/work.js';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

describe('worker threads', () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay();
  });
  after(() => t?.stop());

  /** The inbox entries whose subject has the tag, once there are `n` of them. */
  async function inboxEntries(tag: string, n: number): Promise<Array<{ subject: string; snippet: string }>> {
    for (;;) {
      const page = await t.admin('GET', `/admin/v1/inbox?q=${encodeURIComponent(`subject:"${tag}"`)}&limit=100`);
      assert.equal(page.status, 200, page.text);
      if (page.body.messages.length >= n) return page.body.messages;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async function sendAll(tag: string, n: number): Promise<string[]> {
    const ids = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const sent = await t.send({ subject: `${tag} ${i}`, text: `Body ${i} of ${tag}` });
        assert.equal(sent.status, 202, sent.text);
        return sent.body.id as string;
      }),
    );
    for (const id of ids) assert.equal((await t.waitForFinal(id)).status, 'delivered');
    return ids;
  }

  it('composes, signs and parses on the threads, not on the main thread', async () => {
    const before = workerThreads.stats();
    await sendAll('threaded', 5);
    const entries = await inboxEntries('threaded', 5);
    assert.deepEqual(entries.map((e) => e.snippet).sort(), [0, 1, 2, 3, 4].map((i) => `Body ${i} of threaded`));
    const now = workerThreads.stats();
    // The pool counts what its threads answered: the 5 messages built and signed, the 5 captured
    // parsed (the indexer hands a batch's messages over in one task, inboxSummaries).
    assert.ok((now.answered.outboundMessage ?? 0) - (before.answered.outboundMessage ?? 0) >= 5, JSON.stringify(now));
    const parses = (stats: typeof now) => (stats.answered.inboxSummaries ?? 0) + (stats.answered.inboxSummary ?? 0);
    assert.ok(parses(now) - parses(before) >= 1, JSON.stringify(now));
    const detail = await t.admin('GET', `/admin/v1/messages/${(entries[0] as unknown as { id: string }).id}`);
    assert.match(detail.body.headers.find(([name]: [string, string]) => name.toLowerCase() === 'dkim-signature')?.[1] ?? '', /d=/, 'signed on a thread');
  });

  it('threads ended with work in hand: every email still delivered once and indexed', async () => {
    const sending = sendAll('crashed', 20);
    // Ends the threads while the worker and the indexer have work queued on them; what they held
    // is done on the main thread, and later work gets new threads.
    await workerThreads.close();
    const ids = await sending;
    const entries = await inboxEntries('crashed', 20);
    assert.equal(entries.length, 20);
    for (const id of ids) {
      const email = await t.api('GET', `/v1/emails/${id}`);
      assert.equal(email.body.events.filter((e: { type: string }) => e.type === 'email.delivered').length, 1, JSON.stringify(email.body.events));
    }
    assert.equal(workerThreads.stats().broken, false);
  });
});
