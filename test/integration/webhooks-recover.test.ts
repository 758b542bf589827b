// Webhook recover (issue 25, Svix's recover): after a receiver outage every failed delivery of an
// endpoint since a time is sent again, one more attempt each, once a dry run has counted them; and
// each attempt keeps what the receiver answered (status, time taken, the first 1,024 bytes).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { verifyWebhook } from 'raven-email-sdk';
import { ravenctl } from '../helpers/ravenctl.js';
import type { TestRelay } from '../helpers/start-relay.js';
import { inTerminal } from '../helpers/terminal.js';
import { advanceClock, createEndpoint, deliveries, relayAndReceiver, waitForAttempts, type Receiver } from '../helpers/webhooks.js';
import { WEBHOOK_RETRY_DELAYS_SECONDS } from '../../relay/webhooks/schedule.js';

const OUTAGE_PAGE = '<html><body>502 Bad Gateway: upstream down</body></html>';

describe('recover after a receiver outage', () => {
  const env = relayAndReceiver({ flags: { testClock: true } });
  let t: TestRelay;
  let receiver: Receiver;
  let hook: { id: string; secret: string };
  let since: string;
  const recover = (body: unknown) => t.admin('POST', `/admin/v1/webhooks/${hook.id}/recover`, body);

  test('two events fail every attempt while the receiver is down; each attempt keeps its answer', async () => {
    ({ t, receiver } = env);
    hook = await createEndpoint(t, receiver.url, ['email.queued']);
    receiver.answer = () => ({ status: 502, body: OUTAGE_PAGE });
    since = (await t.admin('GET', '/admin/v1/clock')).body.now;
    for (const subject of ['first', 'second']) assert.equal((await t.send({ subject })).status, 202);
    await waitForAttempts(t, hook.id, 2);
    for (const [i, delay] of WEBHOOK_RETRY_DELAYS_SECONDS.entries()) {
      await advanceClock(t, delay);
      await waitForAttempts(t, hook.id, 2 * (i + 2));
    }
    const list = await deliveries(t, hook.id);
    assert.equal(list.length, 14);
    for (const d of list) {
      assert.equal(d.status_code, 502);
      assert.equal(d.response_body, OUTAGE_PAGE);
      assert.equal(d.response_truncated, false);
      assert.ok(Number.isInteger(d.duration_ms) && d.duration_ms! >= 0, `duration_ms ${d.duration_ms}`);
    }
    assert.equal(Math.max(...list.map((d) => d.attempt)), 7);
  });

  test('a dry run counts the failed deliveries and changes nothing', async () => {
    const counted = await recover({ since, dry_run: true });
    assert.equal(counted.status, 200, counted.text);
    assert.equal(counted.body.count, 2);
    assert.equal(counted.body.dry_run, true);
    assert.equal(counted.body.id, hook.id);
    assert.equal(counted.body.since, new Date(since).toISOString());
    // A window after the events holds none of them.
    const later = await recover({ since: (await t.admin('GET', '/admin/v1/clock')).body.now, dry_run: true });
    assert.equal(later.body.count, 0);
    const before = await recover({ since: '2000-01-01T00:00:00Z', until: since, dry_run: true });
    assert.equal(before.body.count, 0, 'until is exclusive of what came after it');
  });

  test('ravenctl shows the count and asks; confirmed, both are sent again, signed afresh with the same ids and bodies', async (context) => {
    receiver.answer = () => ({ status: 200, body: 'thanks' });
    const failedBodies = new Map(receiver.requests.map((r) => [r.headers['service-event-id'] as string, r.raw]));
    const env = { RAVEN_BASE_URL: t.url, RAVEN_ADMIN_TOKEN: t.adminToken };
    const args = ['relay', 'webhooks', 'recover', hook.id, '--since', since];

    const dry = await ravenctl([...args, '--dry-run', '--json'], { env });
    assert.equal(dry.code, 0, dry.stderr);
    assert.deepEqual(JSON.parse(dry.stdout), { id: hook.id, since: new Date(since).toISOString(), until: JSON.parse(dry.stdout).until, dry_run: true, count: 2 });

    const unanswered = await ravenctl([...args, '--json'], { env });
    assert.equal(unanswered.code, 2, 'nobody can confirm: a usage error naming --yes');
    const error = JSON.parse(unanswered.stderr).error;
    assert.equal(error.code, 'missing_option');
    assert.match(error.message, /2 failed deliveries .* --yes/);

    const declined = await inTerminal(args, env, [[/Send 2 failed deliveries of whk_\S+ between/, 'n\r']], context.signal);
    assert.equal(declined.code, 0, declined.screen);
    assert.match(declined.screen, /Nothing sent/);
    assert.equal((await recover({ since, dry_run: true })).body.count, 2, 'declined: still failed');

    const confirmed = await inTerminal(args, env, [[/Send 2 failed deliveries/, 'y\r']], context.signal);
    assert.equal(confirmed.code, 0, confirmed.screen);
    assert.match(confirmed.screen, /2 failed deliveries of whk_\S+ since \S+ sent again/);

    const requests = await receiver.waitForCount(16);
    for (const req of requests.slice(14)) {
      const id = req.headers['service-event-id'] as string;
      assert.ok(failedBodies.get(id)?.equals(req.raw), `event ${id} is one that failed, with its body bytes`);
      assert.doesNotThrow(() => verifyWebhook(req.raw, req.headers, hook.secret, { now: Number(req.headers['service-timestamp']) }));
    }
    const list = await waitForAttempts(t, hook.id, 16);
    const recovered = list.filter((d) => d.attempt === 8);
    assert.equal(recovered.length, 2);
    for (const d of recovered) {
      assert.equal(d.status_code, 200);
      assert.equal(d.response_body, 'thanks');
      assert.equal(d.next_attempt_at, null);
    }

    const again = await ravenctl([...args, '--yes', '--json'], { env });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(JSON.parse(again.stdout).count, 0, 'delivered ones are not failed any more');
    assert.equal((await recover({ since })).body.count, 0);
    assert.equal(receiver.requests.length, 16);
  });

  test('recovered on a disabled endpoint, a delivery waits due now (its latest attempt says so) and goes once enabled', async () => {
    receiver.answer = () => ({ status: 500 });
    const from = (await t.admin('GET', '/admin/v1/clock')).body.now;
    // Counted before the send: its first attempt may be recorded by the time a count after it reads.
    const before = (await deliveries(t, hook.id)).length;
    assert.equal((await t.send({ subject: 'third' })).status, 202);
    await waitForAttempts(t, hook.id, before + 1);
    for (const [i, delay] of WEBHOOK_RETRY_DELAYS_SECONDS.entries()) {
      await advanceClock(t, delay);
      await waitForAttempts(t, hook.id, before + i + 2);
    }
    assert.equal((await t.admin('POST', `/admin/v1/webhooks/${hook.id}/disable`)).status, 200);
    const done = await recover({ since: from });
    assert.equal(done.body.count, 1);
    const now = (await t.admin('GET', '/admin/v1/clock')).body.now;
    const [latest] = await deliveries(t, hook.id);
    assert.equal(latest!.attempt, 7);
    assert.ok(latest!.next_attempt_at !== null && latest!.next_attempt_at <= now, `due now: ${JSON.stringify(latest)}`);

    receiver.answer = () => ({ status: 200 });
    const seen = receiver.requests.length;
    assert.equal((await t.admin('POST', `/admin/v1/webhooks/${hook.id}/enable`)).status, 200);
    await receiver.waitForCount(seen + 1);
    const [eighth] = await waitForAttempts(t, hook.id, before + 8);
    assert.deepEqual([eighth!.attempt, eighth!.status_code, eighth!.next_attempt_at], [8, 200, null]);
  });

  test('bad input: a time in the future, no since, a bad time, until not after since, unknown fields: 422; unknown endpoint: 404', async () => {
    const now = Date.parse((await t.admin('GET', '/admin/v1/clock')).body.now);
    const future = new Date(now + 3_600_000).toISOString();
    const cases: Array<[unknown, string]> = [
      [{ since: future }, 'since'],
      [{ since: future, dry_run: true }, 'since'],
      [{}, 'since'],
      [{ since: 'yesterday' }, 'since'],
      [{ since: '2026-02-30T00:00:00Z' }, 'since'],
      [{ since: '2026-11-01T00:00:00' }, 'since'],
      [{ since: 1700000000 }, 'since'],
      [{ since, until: since }, 'until'],
      [{ since, until: future }, 'until'],
      [{ since, dry_run: 'yes' }, 'dry_run'],
      [{ since, after: since }, 'after'],
    ];
    for (const [body, field] of cases) {
      const res = await recover(body);
      assert.equal(res.status, 422, `${JSON.stringify(body)}: ${res.text}`);
      assert.equal(res.body.error.code, 'validation_error');
      assert.ok(res.body.error.details.some((d: { field: string }) => d.field === field), `${JSON.stringify(body)} names ${field}: ${res.text}`);
    }
    const unknown = await t.admin('POST', '/admin/v1/webhooks/whk_unknown/recover', { since });
    assert.equal(unknown.status, 404, unknown.text);
    assert.equal((await t.admin('POST', '/admin/v1/webhooks/whk_unknown/recover', { since, dry_run: true })).status, 404);
  });
});

describe("an attempt keeps only the first 1,024 bytes of the receiver's answer, as text", () => {
  const env = relayAndReceiver();

  test('a long answer with multi-byte characters, a NUL and bytes that are not UTF-8', async () => {
    const { t, receiver } = env;
    // 1,023 bytes of "a", then "é" (2 bytes) straddling the cut, then more: the cut character is left out.
    const long = Buffer.concat([Buffer.alloc(1023, 'a'), Buffer.from('é and more', 'utf8')]);
    const hostile = Buffer.concat([Buffer.from('<script>alert(1)</script>\u0000', 'utf8'), Buffer.from([0xff, 0xfe]), Buffer.from(' end')]);
    const bodies = [long, hostile, Buffer.alloc(0)];
    let n = 0;
    receiver.answer = () => ({ status: 200, body: bodies[n++]! });
    const hook = await createEndpoint(t, receiver.url, ['email.queued']);
    for (let i = 0; i < bodies.length; i++) {
      assert.equal((await t.send({ subject: `answer ${i}` })).status, 202);
      await waitForAttempts(t, hook.id, i + 1);
    }
    const [empty, weird, cut] = await deliveries(t, hook.id);
    assert.equal(cut!.response_body, 'a'.repeat(1023));
    assert.equal(cut!.response_truncated, true);
    assert.equal(weird!.response_body, '<script>alert(1)</script>\ufffd\ufffd\ufffd end');
    assert.equal(weird!.response_truncated, false);
    assert.equal(empty!.response_body, '');
    assert.equal(empty!.response_truncated, false);
  });

  test('no answer at all: response_body is null, the time until the failure is kept', async () => {
    const { t, receiver } = env;
    receiver.answer = () => 'reset';
    const hook = await createEndpoint(t, receiver.url, ['email.queued']);
    assert.equal((await t.send({ subject: 'reset' })).status, 202);
    const [attempt] = await waitForAttempts(t, hook.id, 1);
    assert.equal(attempt!.status_code, null);
    assert.equal(attempt!.response_body, null);
    assert.ok(Number.isInteger(attempt!.duration_ms));
  });
});
