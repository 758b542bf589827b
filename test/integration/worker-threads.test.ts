// The relay's work on worker threads (relay/threads/): every email it delivers is composed,
// DKIM-signed and sent there, every captured message parsed there for the inbox; when the threads
// die with that work in hand, the relay does it on the main thread and nothing acknowledged is
// lost, and nothing that may have been sent is sent again (delivery-thread.test.ts ends them at
// chosen points of the conversation).
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

  it('composes, signs, sends and parses on the threads, not on the main thread', async () => {
    const before = workerThreads.stats();
    await sendAll('threaded', 5);
    const entries = await inboxEntries('threaded', 5);
    assert.deepEqual(entries.map((e) => e.snippet).sort(), [0, 1, 2, 3, 4].map((i) => `Body ${i} of threaded`));
    const now = workerThreads.stats();
    // The pool counts what its threads answered: the 5 messages built, signed and sent, the 5
    // captured parsed (the indexer hands a batch's messages over in one task, inboxSummaries).
    assert.ok((now.answered.deliverOutbound ?? 0) - (before.answered.deliverOutbound ?? 0) >= 5, JSON.stringify(now));
    const parses = (stats: typeof now) => (stats.answered.inboxSummaries ?? 0) + (stats.answered.inboxSummary ?? 0);
    assert.ok(parses(now) - parses(before) >= 1, JSON.stringify(now));
    const detail = await t.admin('GET', `/admin/v1/messages/${(entries[0] as unknown as { id: string }).id}`);
    assert.match(detail.body.headers.find(([name]: [string, string]) => name.toLowerCase() === 'dkim-signature')?.[1] ?? '', /d=/, 'signed on a thread');
  });

  it('threads ended with work in hand: every email delivered once or delivery_unknown, never twice; all indexed', async () => {
    const tag = 'crashed';
    const ids = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const sent = await t.send({ subject: `${tag} ${i}`, text: `Body ${i} of ${tag}` });
        assert.equal(sent.status, 202, sent.text);
        return sent.body.id as string;
      }),
    );
    // Ends the threads while the worker and the indexer have work queued on them: what had not
    // started to go is done on the main thread, what had may have been delivered and is
    // delivery_unknown; later work gets new threads.
    await workerThreads.close();
    const finals = await Promise.all(ids.map((id) => t.waitForFinal(id)));
    const delivered = finals.filter((e) => e.status === 'delivered').length;
    for (const [i, id] of ids.entries()) {
      assert.ok(['delivered', 'delivery_unknown'].includes(finals[i].status), finals[i].status);
      const email = await t.api('GET', `/v1/emails/${id}`);
      assert.equal(email.body.events.filter((e: { type: string }) => e.type === 'email.delivered').length, finals[i].status === 'delivered' ? 1 : 0);
    }
    // Each captured once at most, and every capture indexed.
    const entries = await inboxEntries(tag, delivered);
    const subjects = entries.map((e) => e.subject);
    assert.equal(new Set(subjects).size, subjects.length, JSON.stringify(subjects));
    assert.equal(workerThreads.stats().broken, false);
  });
});
