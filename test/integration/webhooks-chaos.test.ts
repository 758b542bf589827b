// Webhook receivers misbehaving in every way the contract names, across relay restarts. Five
// endpoints each receive the email.queued and email.delivered events of two emails: one answers
// 500, one never answers (the 10 s time-out, shortened here), one resets the connection, one
// redirects (302 to a valid URL, which must not be followed), and a flaky one does each of those
// in turn before a 200 on its fifth attempt. The test clock walks the whole retry schedule
// (1 min, 5 min, 15 min, 1 h, 6 h, 24 h) and the relay is stopped and started again on the same
// data directory twice on the way. Then: every event ends delivered or failed after exactly seven
// attempts; none is lost, none has two ids; every attempt carries the same id and body bytes with
// a fresh timestamp and signature; no attempt comes before its time, before or after a restart.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startRelay } from '../../relay/app.js';
import { webhookDispatcherDefaults } from '../../relay/webhooks/dispatcher.js';
import { verifyWebhook } from '../../sdk/webhooks.js';
import { startContractProxy } from '../helpers/contract.js';
import { ADMIN_TOKEN, call, startTestRelay, type CallResult, type TestRelay } from '../helpers/start-relay.js';
import { createLogger } from '../../relay/log.js';
import { openStorage } from '../../relay/storage/open.js';
import {
  advanceClock,
  createEndpoint,
  deliveries,
  startReceiver,
  startWebhookBarrier,
  waitForAttempts,
  type Answer,
  type AttemptView,
  type Receiver,
  type RelayAt,
  type WebhookBarrier,
} from '../helpers/webhooks.js';

// The contract's schedule, written out here rather than read from the relay, so that the test
// checks the relay against it.
const RETRY_DELAYS_SECONDS = [60, 5 * 60, 15 * 60, 60 * 60, 6 * 60 * 60, 24 * 60 * 60];
const MAX_ATTEMPTS = 7;
const EVENTS = ['email.queued', 'email.delivered'];
const EMAILS = 2;
const EVENTS_PER_ENDPOINT = EMAILS * EVENTS.length;
/** Restarts happen once this many attempts are recorded for every event. */
const RESTART_AFTER_ATTEMPTS = new Set([2, 5]);
/** The flaky endpoint's answer to its n-th request for one event; the fifth delivers it. */
const FLAKY_PLAN = ['500', 'reset', 'hang', 'redirect', '200'] as const;
const FLAKY_DELIVERED_AT = FLAKY_PLAN.length;
/**
 * The time an endpoint gets to answer, the contract's 10 s shortened (the relay runs in this
 * process). It must outlast any stall of this process: the receivers answer at once, but on a
 * loaded machine (CI runs three files at a time on two cores) the event loop stalls for longer
 * than 0.3 s, the value this test had, and then the relay's timer fires before it reads an answer
 * already sent, or before the receiver reads the request, recording a time-out for a receiver that
 * answered 500 or 302. The hanging receivers never answer: this is only how long each of the seven
 * rounds of their attempts lasts.
 */
const ANSWER_TIMEOUT_MS = 2_000;
/** How long one round of attempts may take to be recorded: seconds on a loaded machine. */
const SETTLE_MS = 30_000;

/** A relay (the first start, or a restart) as the test drives it. */
interface RelayHandle extends RelayAt {
  api(method: string, urlPath: string): Promise<CallResult>;
  stop(): Promise<void>;
}

interface Endpoint {
  name: string;
  receiver: Receiver;
  hookId: string;
  secret: string;
  /** Attempts each event gets before it is settled: 7 (failed), or fewer when delivered. */
  attemptsFor(n: number): number;
}

let dataDir: string;
let redirectTarget: Receiver;
const receivers: Receiver[] = [];
const defaultTimeout = webhookDispatcherDefaults.timeoutMs;

before(async () => {
  webhookDispatcherDefaults.timeoutMs = ANSWER_TIMEOUT_MS;
  dataDir = await mkdtemp(path.join(tmpdir(), 'raven-webhooks-chaos-'));
  redirectTarget = await startReceiver();
});

after(async () => {
  webhookDispatcherDefaults.timeoutMs = defaultTimeout;
  for (const r of [...receivers, redirectTarget]) await r.close();
  await rm(dataDir, { recursive: true, force: true });
});

let database: string | undefined; // the first start's PostgreSQL database, on that backend

function firstStart(t: TestRelay): RelayHandle {
  database = t.relay.config.database;
  return { url: t.url, admin: t.admin, api: (method, urlPath) => t.api(method, urlPath), stop: () => t.stop() };
}

/** Starts the relay again on the data directory of the first start, behind the contract proxy. */
async function restart(apiKey: string): Promise<RelayHandle> {
  const relay = await startRelay({
    flags: { dataDir, database, port: 0, smtpPort: 0, adminToken: ADMIN_TOKEN, logLevel: 'error', testClock: true },
    env: {},
  });
  assert.equal(relay.bootstrap, undefined, 'a restart reuses the data directory');
  const proxy = await startContractProxy(relay.httpUrl);
  return {
    url: proxy.url,
    admin: (method, urlPath, body) => call(proxy.url, method, urlPath, { token: ADMIN_TOKEN, body }),
    api: (method, urlPath) => call(proxy.url, method, urlPath, { token: apiKey }),
    async stop() {
      await proxy.close();
      await relay.stop();
      assert.deepEqual(proxy.violations, [], 'responses must conform to openapi.yaml');
    },
  };
}

async function relayClockMs(relay: RelayHandle): Promise<number> {
  const res = await relay.admin('GET', '/admin/v1/clock');
  assert.equal(res.status, 200, res.text);
  return Date.parse(res.body.now);
}

const eventIdOf = (req: { headers: Record<string, unknown> }) => String(req.headers['service-event-id']);
const redirect = (): Answer => ({ status: 302, headers: { location: redirectTarget.url } });

/** Answers the n-th request for each event by the plan. */
function flakyAnswer(receiver: Receiver): Answer {
  const last = receiver.requests[receiver.requests.length - 1]!;
  const nth = receiver.requests.filter((r) => eventIdOf(r) === eventIdOf(last)).length;
  const step = FLAKY_PLAN[Math.min(nth, FLAKY_PLAN.length) - 1]!;
  if (step === '500') return { status: 500 };
  if (step === 'redirect') return redirect();
  if (step === '200') return { status: 200 };
  return step;
}

/** Latest recorded attempt per event of one endpoint. */
function latestPerEvent(list: AttemptView[]): AttemptView[] {
  const latest = new Map<string, AttemptView>();
  for (const d of list) if ((latest.get(d.event_id)?.attempt ?? 0) < d.attempt) latest.set(d.event_id, d);
  return [...latest.values()];
}

/**
 * Waits until the relay has recorded attempt n of every event, then checks that each receiver got
 * exactly those requests. The relay's record comes first: a receiver records a request before it
 * answers (or hangs, or resets), so by then it has every request the relay sent, and a request
 * lost or sent twice fails here with the relay's account of it.
 */
async function waitForSettledAttempts(relay: RelayHandle, endpoints: Endpoint[], n: number): Promise<void> {
  for (const e of endpoints) {
    const expected = EVENTS_PER_ENDPOINT * e.attemptsFor(n);
    const recorded = await waitForAttempts(relay, e.hookId, expected, SETTLE_MS);
    const record = recorded.map((d) => [d.event_id, d.attempt, d.status_code, d.error, d.duration_ms]);
    assert.equal(e.receiver.requests.length, expected, `${e.name}: requests for ${expected} recorded attempts: ${JSON.stringify(record)}`);
  }
}

test('receivers that fail, time out, reset and redirect, with two restarts: no event lost or doubled, schedule kept', { timeout: 120_000 }, async (t) => {
  const first = await startTestRelay({ dataDir, flags: { testClock: true } });
  let relay: RelayHandle = firstStart(first);
  const apiKey = first.apiKey;
  let barrier: WebhookBarrier | undefined;
  try {
    barrier = await startWebhookBarrier(first);
    const behaviours: Array<[string, (r: Receiver) => Answer]> = [
      ['500', () => ({ status: 500 })],
      ['timeout', () => 'hang'],
      ['reset', () => 'reset'],
      ['redirect', redirect],
      ['flaky', flakyAnswer],
    ];
    const endpoints: Endpoint[] = [];
    for (const [name, answer] of behaviours) {
      const receiver = await startReceiver();
      receivers.push(receiver);
      receiver.answer = () => answer(receiver);
      const hook = await createEndpoint(first, receiver.url, EVENTS);
      endpoints.push({
        name,
        receiver,
        hookId: hook.id,
        secret: hook.secret,
        attemptsFor: (n) => Math.min(n, name === 'flaky' ? FLAKY_DELIVERED_AT : MAX_ATTEMPTS),
      });
    }
    const emailIds: string[] = [];
    for (let i = 0; i < EMAILS; i++) {
      const sent = await first.send({ to: `chaos${i}@${first.domain}` });
      assert.equal(sent.status, 202, sent.text);
      emailIds.push(sent.body.id);
    }
    for (const id of emailIds) await first.waitForFinal(id);
    await waitForSettledAttempts(relay, endpoints, 1);

    for (let done = 1; done < MAX_ATTEMPTS; done++) {
      if (RESTART_AFTER_ATTEMPTS.has(done)) {
        // Only between attempts: one cut short by the stop is not recorded and is sent again
        // after the start, which a receiver would see as an extra request.
        await relay.stop();
        relay = await restart(apiKey);
      }
      const owed = endpoints.filter((e) => e.attemptsFor(done + 1) > done);
      const due: number[] = [];
      for (const e of owed) {
        for (const d of latestPerEvent(await deliveries(relay, e.hookId))) {
          due.push(Date.parse(d.attempted_at) + RETRY_DELAYS_SECONDS[done - 1]! * 1000);
        }
      }
      const seen = endpoints.map((e) => e.receiver.requests.length);

      // 30 s before the first retry is due, nothing is sent...
      const early = Math.floor((Math.min(...due) - (await relayClockMs(relay))) / 1000) - 30;
      assert.ok(early > 0, `the first retry is due in ${early + 30} s`);
      await advanceClock(relay, early);
      await barrier.pass(relay);
      assert.deepEqual(
        endpoints.map((e) => e.receiver.requests.length),
        seen,
        `attempt ${done + 1} came early${RESTART_AFTER_ATTEMPTS.has(done) ? ' after the restart' : ''}`,
      );
      // ...and once every one is due, each event gets exactly one more attempt.
      await advanceClock(relay, Math.ceil((Math.max(...due) - (await relayClockMs(relay))) / 1000) + 1);
      await waitForSettledAttempts(relay, endpoints, done + 1);
    }

    // Nothing more, however long we wait.
    const final = endpoints.map((e) => e.receiver.requests.length);
    await advanceClock(relay, 7 * 86_400);
    await barrier.pass(relay);
    assert.deepEqual(endpoints.map((e) => e.receiver.requests.length), final, 'no attempt after an event is settled');
    assert.deepEqual(redirectTarget.requests.map((r) => r.path), [], 'no redirect was followed');

    // The timeline's events of the subscribed types: the ids every endpoint must have received.
    const timeline = new Map<string, { type: string; email: string }>();
    for (const id of emailIds) {
      const detail = await relay.api('GET', `/v1/emails/${id}`);
      assert.equal(detail.status, 200, detail.text);
      for (const e of detail.body.events) if (EVENTS.includes(e.type)) timeline.set(e.id, { type: e.type, email: id });
    }
    assert.equal(timeline.size, EVENTS_PER_ENDPOINT, `one event per email and subscribed type: ${JSON.stringify([...timeline])}`);

    const bodies = new Map<string, Buffer>(); // event id -> the bytes every attempt must carry
    for (const e of endpoints) {
      const byEvent = new Map<string, typeof e.receiver.requests>();
      for (const req of e.receiver.requests) byEvent.set(eventIdOf(req), [...(byEvent.get(eventIdOf(req)) ?? []), req]);
      assert.deepEqual([...byEvent.keys()].sort(), [...timeline.keys()].sort(), `${e.name}: every event arrived, under its timeline id`);

      for (const [eventId, requests] of byEvent) {
        assert.equal(requests.length, e.attemptsFor(MAX_ATTEMPTS), `${e.name}: requests for ${eventId}`);
        const body = JSON.parse(requests[0]!.raw.toString('utf8'));
        assert.equal(body.id, eventId, 'the body id is the Service-Event-Id');
        assert.deepEqual([body.type, body.data.email_id], [timeline.get(eventId)!.type, timeline.get(eventId)!.email]);
        const bytes = bodies.get(eventId) ?? requests[0]!.raw;
        bodies.set(eventId, bytes);
        const signatures = new Set<string>();
        let previousTimestamp = -Infinity;
        for (const [i, req] of requests.entries()) {
          assert.ok(req.raw.equals(bytes), `${e.name}: attempt ${i + 1} of ${eventId} has the same body bytes`);
          const ts = Number(req.headers['service-timestamp']);
          assert.doesNotThrow(() => verifyWebhook(req.raw, req.headers, e.secret, { now: ts }), `${e.name}: attempt ${i + 1} verifies`);
          assert.ok(ts > previousTimestamp, `${e.name}: attempt ${i + 1} has a fresh timestamp`);
          previousTimestamp = ts;
          signatures.add(String(req.headers['service-signature']));
        }
        assert.equal(signatures.size, requests.length, `${e.name}: a fresh signature on every attempt`);
      }

      // The relay's record of the same: attempts 1..n per event, each no sooner than the schedule.
      const list = await deliveries(relay, e.hookId);
      for (const eventId of timeline.keys()) {
        const attempts = list.filter((d) => d.event_id === eventId).sort((a, b) => a.attempt - b.attempt);
        const n = e.attemptsFor(MAX_ATTEMPTS);
        assert.deepEqual(attempts.map((d) => d.attempt), Array.from({ length: n }, (_, i) => i + 1), `${e.name}: attempts of ${eventId}`);
        for (const [i, d] of attempts.entries()) {
          if (i > 0) {
            const gap = Date.parse(d.attempted_at) - Date.parse(attempts[i - 1]!.attempted_at);
            assert.ok(gap >= RETRY_DELAYS_SECONDS[i - 1]! * 1000, `${e.name}: attempt ${d.attempt} ${gap} ms after the one before`);
          }
          const delivered = d.status_code !== null && d.status_code >= 200 && d.status_code < 300;
          assert.equal(delivered, e.name === 'flaky' && d.attempt === FLAKY_DELIVERED_AT, `${e.name}: attempt ${d.attempt}: ${JSON.stringify(d)}`);
        }
        assertFailureRecorded(e.name, attempts);
      }
    }

    // In the file: nothing pending; each delivery delivered or failed after its last attempt.
    await relay.stop();
    relay = { url: '', admin: () => assert.fail('stopped'), api: () => assert.fail('stopped'), stop: async () => undefined };
    const db = await openStorage({ dataDir, database }, createLogger('silent'));
    try {
      const hookIds = new Set(endpoints.map((e) => e.hookId)); // not the barrier's
      const rows = (
        await db.all<{ webhook_id: string; state: string; attempts: number; next_attempt_at: string | null }>(
          'SELECT webhook_id, state, attempts, next_attempt_at FROM webhook_deliveries ORDER BY webhook_id',
        )
      ).filter((r) => hookIds.has(r.webhook_id));
      assert.equal(rows.length, endpoints.length * EVENTS_PER_ENDPOINT);
      for (const e of endpoints) {
        const expected = e.name === 'flaky'
          ? { state: 'delivered', attempts: FLAKY_DELIVERED_AT }
          : { state: 'failed', attempts: MAX_ATTEMPTS };
        for (const row of rows.filter((r) => r.webhook_id === e.hookId)) {
          assert.deepEqual({ state: row.state, attempts: row.attempts, next_attempt_at: row.next_attempt_at }, { ...expected, next_attempt_at: null }, e.name);
        }
      }
    } finally {
      await db.close();
    }
    t.diagnostic(`${endpoints.reduce((n, e) => n + e.receiver.requests.length, 0)} requests over ${MAX_ATTEMPTS} attempts and 2 restarts`);
  } finally {
    await relay.stop();
    await barrier?.close();
  }
});

/** Each failed attempt says why, as the receiver misbehaved. */
function assertFailureRecorded(name: string, attempts: AttemptView[]): void {
  const expected: Record<string, (d: AttemptView) => boolean> = {
    '500': (d) => d.status_code === 500 && d.error === 'HTTP 500',
    timeout: (d) => d.status_code === null && /timed out/.test(d.error ?? ''),
    reset: (d) => d.status_code === null && /network error/.test(d.error ?? ''),
    redirect: (d) => d.status_code === 302 && /redirect .*not followed/.test(d.error ?? ''),
  };
  const flaky = ['500', 'reset', 'timeout', 'redirect'];
  for (const d of attempts) {
    const kind = name === 'flaky' ? flaky[d.attempt - 1] : name;
    if (kind === undefined) continue; // the flaky endpoint's delivering attempt
    assert.ok(expected[kind]!(d), `${name}: attempt ${d.attempt} recorded as ${kind}: ${JSON.stringify(d)}`);
  }
}
