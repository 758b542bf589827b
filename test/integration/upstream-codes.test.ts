// What the upstream provider answers becomes the recipient outcomes of CONTRACT section 4: a real
// SMTP server in this process (test/helpers/fake-upstream.ts) answers chosen codes at each step,
// or drops the connection, and the relay (one transaction per recipient) is read through its API.
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DELIVERY_RETRY_BACKOFF_SECONDS } from '../../relay/queue/backoff.js';
import { startFakeUpstream, type FakeUpstream, type UpstreamAnswer, type UpstreamReply, type UpstreamScript } from '../helpers/fake-upstream.js';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

let upstream: FakeUpstream;

before(async () => {
  upstream = await startFakeUpstream();
});

after(async () => {
  await upstream.close();
});

afterEach(() => {
  upstream.script = {};
});

const FIRST_BACKOFF = DELIVERY_RETRY_BACKOFF_SECONDS[0]!;

let counter = 0;
/** A fresh recipient on the relay's own domain (the dev key sends nowhere else), labelled for reading. */
const recipient = (t: TestRelay, label: string) => `${label}-${++counter}@${t.domain}`;

/** Counts how many times a step was reached for a key, so an answer can change on a later try. */
const tries = new Map<string, number>();
const nth = (key: string) => {
  const n = (tries.get(key) ?? 0) + 1;
  tries.set(key, n);
  return n;
};

const copiesTo = (list: Array<{ to: string[] }>, address: string) => list.filter((m) => m.to.includes(address)).length;

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function relayCalls(t: TestRelay) {
  const detailOf = async (id: string) => {
    const res = await t.api('GET', `/v1/emails/${id}`);
    assert.equal(res.status, 200, res.text);
    return res.body;
  };
  return {
    detailOf,
    async send(to: string[]): Promise<string> {
      const res = await t.send({ to });
      assert.equal(res.status, 202, res.text);
      return res.body.id;
    },
    /** Waits until every recipient has the status (the email may still be pending). */
    async recipientsAre(id: string, status: string) {
      let last: any;
      try {
        return await until(`every recipient ${status}`, async () => {
          last = await detailOf(id);
          return last.recipients.every((r: any) => r.status === status) && last;
        });
      } catch (error) {
        throw new Error(`${(error as Error).message}, last seen: ${JSON.stringify(last?.recipients)}`);
      }
    },
    async advance(seconds: number) {
      const res = await t.admin('POST', '/admin/v1/clock/advance', { seconds });
      assert.equal(res.status, 200, res.text);
    },
    async suppressionsOf(address: string): Promise<string[]> {
      const res = await t.admin('GET', `/admin/v1/workspaces/${t.workspaceId}/suppressions`);
      assert.equal(res.status, 200, res.text);
      return res.body.suppressions.filter((s: any) => s.email === address).map((s: any) => s.reason);
    },
  };
}

/** The timeline after admission (every email starts with email.queued). */
const outcomeEvents = (detail: any) => detail.events.filter((e: any) => e.type !== 'email.queued');
const eventTypes = (detail: any) => outcomeEvents(detail).map((e: any) => e.type);

describe('upstream answers and their outcomes', () => {
  let t: TestRelay;
  let r: ReturnType<typeof relayCalls>;

  before(async () => {
    t = await startTestRelay({ flags: { upstream: upstream.url, testClock: true } });
    r = relayCalls(t);
  });

  after(async () => {
    await t.stop();
  });

  /** Checks a recipient that was deferred once: delivery_delayed with its next attempt, then sent. */
  async function deferredThenSent(id: string, addresses: string[]) {
    let detail = await r.recipientsAre(id, 'delivery_delayed');
    assert.equal(detail.status, 'queued');
    const delayed = detail.events.filter((e: any) => e.type === 'email.delivery_delayed');
    assert.deepEqual(delayed.map((e: any) => e.payload.recipient), addresses);
    for (const e of delayed) {
      assert.equal(e.payload.attempt, 1);
      assert.equal(Date.parse(e.payload.next_attempt_at) - Date.parse(e.occurredAt), FIRST_BACKOFF * 1000, 'the first backoff step');
    }
    assert.equal(addresses.reduce((n, a) => n + copiesTo(upstream.received, a), 0), 0, 'nothing accepted yet');

    await r.advance(FIRST_BACKOFF + 1);
    detail = await t.waitForFinal(id);
    assert.equal(detail.status, 'sent');
    assert.deepEqual(detail.recipients.map((x: any) => x.status), addresses.map(() => 'sent'));
    assert.ok(!eventTypes(detail).includes('email.delivered'), 'an upstream never reports delivered');
    for (const a of addresses) {
      assert.deepEqual(
        detail.events.filter((e: any) => e.payload.recipient === a).map((e: any) => e.type),
        ['email.delivery_delayed', 'email.sent'],
      );
      assert.equal(copiesTo(upstream.received, a), 1, `one accepted copy to ${a}`);
    }
    return detail;
  }

  describe('answered at once', () => {
    type Script = { onMailFrom?: () => UpstreamAnswer; onRcpt?: () => UpstreamAnswer; onData?: () => UpstreamAnswer };
    const failedNoSuppression = { status: 'failed', event: 'email.failed', payload: { reason: 'rejected' }, suppression: [] };
    const atRcpt = (reply: UpstreamReply): Script => ({ onRcpt: () => reply });
    const cases: Array<{ answer: string; script: Script; status: string; event: string; payload?: Record<string, unknown>; suppression: string[] }> = [
      { answer: '250 after DATA', script: {}, status: 'sent', event: 'email.sent', suppression: [] },
      {
        answer: '550 5.1.1 at RCPT',
        script: atRcpt({ code: 550, message: '5.1.1 <x>: Recipient address rejected: User unknown' }),
        status: 'bounced',
        event: 'email.bounced',
        payload: { bounce_type: 'hard', enhanced_status_code: '5.1.1' },
        suppression: ['hard_bounce'],
      },
      { answer: '554 5.7.1 at RCPT', script: atRcpt({ code: 554, message: '5.7.1 Relay access denied' }), ...failedNoSuppression },
      { answer: '552 5.3.4 at RCPT', script: atRcpt({ code: 552, message: '5.3.4 Message size exceeds fixed limit' }), ...failedNoSuppression },
      // A refused sender is no verdict on the recipient's mailbox: failed, never a hard bounce.
      { answer: '550 5.1.0 at MAIL FROM', script: { onMailFrom: () => ({ code: 550, message: '5.1.0 Sender address rejected' }) }, ...failedNoSuppression },
      { answer: '553 5.7.1 at MAIL FROM', script: { onMailFrom: () => ({ code: 553, message: '5.7.1 Sender not authorized' }) }, ...failedNoSuppression },
      {
        answer: '554 5.6.0 after DATA',
        script: { onData: () => ({ code: 554, message: '5.6.0 Message content rejected' }) },
        ...failedNoSuppression,
      },
    ];
    for (const c of cases) {
      test(`${c.answer} -> ${c.status}`, async () => {
        const address = recipient(t, 'once');
        // Only this recipient gets the scripted answer (MAIL FROM comes before any recipient, but
        // this test's email is the only one in flight).
        upstream.script = {
          onMailFrom: () => c.script.onMailFrom?.(),
          onRcpt: (a) => (a === address ? c.script.onRcpt?.() : undefined),
          onData: (m) => (m.to.includes(address) ? c.script.onData?.() : undefined),
        };
        const id = await r.send([address]);
        const detail = await t.waitForFinal(id);
        assert.equal(detail.status, c.status);
        assert.deepEqual(detail.recipients.map((x: any) => x.status), [c.status]);
        assert.deepEqual(eventTypes(detail), [c.event]);
        assert.deepEqual(outcomeEvents(detail)[0].payload, { recipient: address, ...c.payload });
        assert.deepEqual(await r.suppressionsOf(address), c.suppression);
        assert.equal(copiesTo(upstream.received, address), c.status === 'sent' ? 1 : 0);
      });
    }
  });

  test('5xx after DATA fails every recipient of that transaction, and only those', async () => {
    const refused = recipient(t, 'content');
    const accepted = recipient(t, 'ok');
    upstream.script = { onData: (m) => (m.to.includes(refused) ? { code: 554, message: '5.7.1 spam detected' } : undefined) };
    const id = await r.send([refused, accepted]);
    const detail = await t.waitForFinal(id);
    assert.deepEqual(detail.recipients.map((x: any) => [x.email, x.status]), [
      [refused, 'failed'],
      [accepted, 'sent'],
    ]);
    assert.equal(detail.status, 'sent', 'mixed outcomes leave the email sent');
    assert.deepEqual(await r.suppressionsOf(refused), []);
    assert.equal(copiesTo(upstream.read, refused), 1, 'the refused message was read once and not resent');
  });

  for (const reply of [
    { code: 451, message: '4.2.0 Greylisted, try again later' },
    { code: 452, message: '4.2.2 Mailbox full' },
  ] satisfies UpstreamReply[]) {
    test(`${reply.code} ${reply.message.slice(0, 5)} at RCPT -> delivery_delayed, retried after the backoff, then sent`, async () => {
      const address = recipient(t, `rcpt${reply.code}`);
      upstream.script = { onRcpt: (a) => (a === address && nth(`rcpt ${a}`) === 1 ? reply : undefined) };
      const id = await r.send([address]);
      await deferredThenSent(id, [address]);
    });
  }

  test('451 at MAIL FROM defers every recipient; both are retried and sent', async () => {
    const addresses = [recipient(t, 'mailfrom'), recipient(t, 'mailfrom')];
    // Each recipient has its own transaction and VERP sender: refuse each sender's first MAIL FROM.
    upstream.script = { onMailFrom: (sender) => (nth(`mail ${sender}`) === 1 ? { code: 451, message: '4.3.2 System not accepting network messages' } : undefined) };
    const id = await r.send(addresses);
    await deferredThenSent(id, addresses);
  });

  test('451 after DATA defers the recipients; the message is sent again and accepted', async () => {
    const addresses = [recipient(t, 'dataend'), recipient(t, 'dataend')];
    upstream.script = { onData: (m) => (nth(`data ${m.from}`) === 1 ? { code: 451, message: '4.3.0 Local error in processing' } : undefined) };
    const id = await r.send(addresses);
    await deferredThenSent(id, addresses);
    for (const a of addresses) assert.equal(copiesTo(upstream.read, a), 2, 'refused once with 4xx, then accepted');
  });

  test('connection dropped after the whole DATA, before the answer -> delivery_unknown, never resent', async () => {
    const address = recipient(t, 'unknown');
    upstream.script = { onData: (m) => (m.to.includes(address) ? 'drop' : undefined) };
    const id = await r.send([address]);
    const detail = await t.waitForFinal(id);
    assert.equal(detail.status, 'delivery_unknown');
    assert.deepEqual(detail.recipients.map((x: any) => x.status), ['delivery_unknown']);
    assert.deepEqual(eventTypes(detail), ['email.delivery_unknown']);
    assert.equal(copiesTo(upstream.read, address), 1);

    await r.advance(86_400);
    // A barrier: the worker claims due jobs oldest first, so a retry of this one, had it been
    // scheduled, would have started no later than this later email.
    const later = recipient(t, 'barrier');
    await t.waitForFinal(await r.send([later]));
    assert.equal(copiesTo(upstream.received, later), 1);
    assert.equal(copiesTo(upstream.read, address), 1, 'the upstream got exactly one copy');
    assert.deepEqual(await r.detailOf(id), detail, 'nothing changed');
  });

  /** The script fails every try until the first delay is recorded, so that a retry on a fresh
   * connection (the relay retries at once when a pooled session was closed) cannot slip through. */
  async function failsUntilAllowed(label: string, failWhile: (address: string) => UpstreamScript) {
    const address = recipient(t, label);
    upstream.script = failWhile(address);
    const id = await r.send([address]);
    await r.recipientsAre(id, 'delivery_delayed');
    upstream.script = {};
    return deferredThenSent(id, [address]);
  }

  test('connection dropped at RCPT -> delivery_delayed (the message was never sent), then sent', async () => {
    await failsUntilAllowed('droprcpt', (address) => ({ onRcpt: (a) => (a === address ? 'drop' : undefined) }));
  });

  test('the upstream closes at the greeting with 421 -> delivery_delayed, then sent', async () => {
    // The relay's pooled sessions would skip the greeting: close them first.
    upstream.dropConnections();
    await failsUntilAllowed('greeting', () => ({ onConnect: () => ({ code: 421, message: '4.3.2 Service not available, closing channel' }) }));
  });

  test('the upstream refuses the session at the greeting with 554 -> delivery_delayed (our session, not the message), then sent', async () => {
    upstream.dropConnections();
    await failsUntilAllowed('greeting5xx', () => ({ onConnect: () => ({ code: 554, message: '5.7.1 no service for you' }) }));
  });

  test('4xx on every try exhausts the backoff table -> failed, retries_exhausted', async () => {
    const address = recipient(t, 'busy');
    upstream.script = { onRcpt: (a) => (a === address ? { code: 451, message: '4.4.5 Insufficient system storage' } : undefined) };
    const id = await r.send([address]);
    for (const [i, seconds] of DELIVERY_RETRY_BACKOFF_SECONDS.entries()) {
      await until(`delay ${i + 1}`, async () => {
        const detail = await r.detailOf(id);
        return detail.events.filter((e: any) => e.type === 'email.delivery_delayed').length === i + 1;
      });
      await r.advance(seconds + 1);
    }
    const detail = await t.waitForFinal(id);
    const attempts = DELIVERY_RETRY_BACKOFF_SECONDS.length + 1;
    assert.equal(detail.status, 'failed');
    assert.deepEqual(detail.recipients.map((x: any) => x.status), ['failed']);
    assert.deepEqual(eventTypes(detail), [...DELIVERY_RETRY_BACKOFF_SECONDS.map(() => 'email.delivery_delayed'), 'email.failed']);
    // The last delay's reason, as a fixed phrase with the reply's codes, never the server's words.
    assert.deepEqual(detail.events.at(-1).payload, { recipient: address, reason: 'retries_exhausted', attempts, last_reason: 'temporarily refused by the server: 451 4.4.5' });
    assert.equal(detail.events.find((e: any) => e.type === 'email.delivery_delayed').payload.reason, 'temporarily refused by the server: 451 4.4.5');
    assert.doesNotMatch(JSON.stringify(detail.events), /Insufficient system storage/);
    assert.equal(upstream.rcpts.filter((a) => a === address).length, attempts, 'one RCPT per attempt');
    assert.deepEqual(await r.suppressionsOf(address), []);
  });
});

describe('requireTLS against an upstream that offers no STARTTLS', () => {
  let t: TestRelay;
  let r: ReturnType<typeof relayCalls>;

  before(async () => {
    t = await startTestRelay({
      flags: { upstream: upstream.url, testClock: true },
      overrides: (config) => {
        config.delivery.smtp!.requireTLS = true;
      },
    });
    r = relayCalls(t);
  });

  after(async () => {
    await t.stop();
  });

  // Regression: the server's `500 command not recognized` to STARTTLS was taken for a permanent
  // refusal of the message, which failed.
  test('the message is deferred, neither failed nor sent in clear', async () => {
    const address = recipient(t, 'tls');
    const id = await r.send([address]);
    const detail = await r.recipientsAre(id, 'delivery_delayed');
    assert.equal(detail.status, 'queued');
    assert.deepEqual(eventTypes(detail), ['email.delivery_delayed']);
    assert.ok(outcomeEvents(detail)[0].payload.next_attempt_at, 'retried later');
    assert.ok(!upstream.rcpts.includes(address), 'no envelope was given in clear');
    assert.equal(copiesTo(upstream.read, address), 0);
  });
});
