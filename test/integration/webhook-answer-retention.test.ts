// A receiver's answer to a webhook is kept as long as the email's body (issue 25): 7 days after the
// email became terminal, maintenance erases the answers of its deliveries' attempts while the
// attempts stay (status, time taken); an attempt made after that (a recover) keeps no answer.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { TestRelay } from '../helpers/start-relay.js';
import { waitFor } from '../helpers/postgres-cluster.js';
import { advanceClock, createEndpoint, deliveries, relayAndReceiver, waitForAttempts, type Receiver } from '../helpers/webhooks.js';
import { WEBHOOK_RETRY_DELAYS_SECONDS } from '../../relay/webhooks/schedule.js';

const RETENTION_SECONDS = 7 * 86_400;
const HOUR = 3600;

interface Attempt {
  attempt: number;
  status_code: number | null;
  duration_ms: number | null;
  response_body: string | null;
  response_truncated: boolean;
}

describe("webhook answers are kept as long as the email's body", () => {
  const env = relayAndReceiver({ flags: { testClock: true } });
  let t: TestRelay;
  let receiver: Receiver;
  let hookId: string;
  let since: string;
  let first: string;
  let second: string;
  let firstAttempts: Attempt[];

  /** The attempts of an email's deliveries, as the email page shows them. */
  async function attemptsOf(emailId: string): Promise<Attempt[]> {
    const res = await t.admin('GET', `/admin/v1/emails/${emailId}`);
    assert.equal(res.status, 200, res.text);
    return res.body.deliveries.flatMap((d: { attempts: Attempt[] }) => d.attempts);
  }

  async function sendAndSettle(subject: string): Promise<string> {
    const sent = await t.send({ subject });
    assert.equal(sent.status, 202, sent.text);
    await t.waitForFinal(sent.body.id);
    return sent.body.id;
  }

  test('each attempt keeps its answer: seven failed ones of a first email, a delivered one of a second', async () => {
    ({ t, receiver } = env);
    hookId = (await createEndpoint(t, receiver.url, ['email.queued'])).id;
    since = (await t.admin('GET', '/admin/v1/clock')).body.now;
    receiver.answer = () => ({ status: 502, body: 'first: down, try later' });
    first = await sendAndSettle('first');
    await waitForAttempts(t, hookId, 1);
    for (const [i, delay] of WEBHOOK_RETRY_DELAYS_SECONDS.entries()) {
      await advanceClock(t, delay);
      await waitForAttempts(t, hookId, i + 2);
    }
    // The first became terminal about 31 hours before the second.
    receiver.answer = () => ({ status: 200, body: 'second: thanks' });
    second = await sendAndSettle('second');
    await waitForAttempts(t, hookId, 8);

    firstAttempts = await attemptsOf(first);
    assert.equal(firstAttempts.length, 7);
    for (const a of firstAttempts) {
      assert.deepEqual([a.status_code, a.response_body, a.response_truncated], [502, 'first: down, try later', false]);
      assert.ok(Number.isInteger(a.duration_ms), `duration_ms ${a.duration_ms}`);
    }
    const [delivered] = await attemptsOf(second);
    assert.deepEqual([delivered!.status_code, delivered!.response_body], [200, 'second: thanks']);
  });

  test('7 days after the first became terminal its answers are erased, the attempts stay; the second keeps its answer', async () => {
    await advanceClock(t, RETENTION_SECONDS - HOUR);
    const erased = await waitFor('the first email’s answers to be erased', async () => {
      const attempts = await attemptsOf(first);
      return attempts.every((a) => a.response_body === null) && attempts;
    }, 15_000);
    assert.deepEqual(
      erased.map((a) => ({ ...a, response_body: 'x' })),
      firstAttempts.map((a) => ({ ...a, response_body: 'x' })),
      'the same attempts: number, status, time taken',
    );
    assert.ok(erased.every((a) => a.response_truncated === false));
    // The maintenance run that erased the first's answers found the second within its retention.
    const [delivered] = await attemptsOf(second);
    assert.equal(delivered!.response_body, 'second: thanks');
    // The endpoint's list agrees: every attempt there, only the second's answer.
    const list = await deliveries(t, hookId);
    assert.equal(list.length, 8);
    assert.deepEqual(list.map((a) => a.response_body).filter((b) => b !== null), ['second: thanks']);
  });

  test('an attempt after the erasure (a recover) keeps its status and time, not the answer', async () => {
    receiver.answer = () => ({ status: 200, body: 'first: recovered, thanks' });
    const recovered = await t.admin('POST', `/admin/v1/webhooks/${hookId}/recover`, { since });
    assert.equal(recovered.status, 200, recovered.text);
    assert.equal(recovered.body.count, 1);
    await waitForAttempts(t, hookId, 9);
    const eighth = (await attemptsOf(first)).find((a) => a.attempt === 8);
    assert.ok(eighth, 'the recovered attempt is recorded');
    assert.deepEqual([eighth.status_code, eighth.response_body, eighth.response_truncated], [200, null, false]);
    assert.ok(Number.isInteger(eighth.duration_ms));
  });

  test("an hour later the second email's retention ends too: its answer goes, its attempt stays", async () => {
    await advanceClock(t, HOUR + 60);
    const [delivered] = await waitFor('the second email’s answer to be erased', async () => {
      const attempts = await attemptsOf(second);
      return attempts[0]?.response_body === null && attempts;
    }, 15_000);
    assert.equal(delivered!.status_code, 200);
    assert.equal((await deliveries(t, hookId)).length, 9);
  });
});
