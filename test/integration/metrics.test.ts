// GET /metrics: the Prometheus text format, with counters for admissions, delivery outcomes and
// webhook attempts that grow as the relay works, beside the gauges read from the database.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';
import { createEndpoint, startReceiver, type Receiver } from '../helpers/webhooks.js';

let t: TestRelay;
let receiver: Receiver;
before(async () => {
  t = await startTestRelay();
  receiver = await startReceiver();
});
after(async () => {
  await t.stop();
  await receiver.close();
});

interface Scrape {
  text: string;
  value(series: string): number;
}

async function scrape(): Promise<Scrape> {
  const res = await fetch(`${t.url}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-z_]+(?:\{[^}]*\})?) (\d+(?:\.\d+)?)$/.exec(line);
    assert.ok(m, `a sample line: ${JSON.stringify(line)}`);
    values.set(m[1]!, Number(m[2]));
  }
  return { text, value: (series) => values.get(series) ?? 0 };
}

/** Scrapes until the series reaches at least `min` (counters grow after the work is recorded). */
async function waitForValue(series: string, min: number): Promise<Scrape> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const s = await scrape();
    if (s.value(series) >= min) return s;
    if (Date.now() > deadline) throw new Error(`${series} stayed below ${min}:\n${s.text}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('every family has HELP and TYPE; counters start at zero', async () => {
  const s = await scrape();
  for (const [name, type] of [
    ['raven_admissions_total', 'counter'],
    ['raven_admission_rejections_total', 'counter'],
    ['raven_deliveries_total', 'counter'],
    ['raven_webhook_attempts_total', 'counter'],
    ['raven_delivery_pacing_seconds_total', 'counter'],
    ['raven_queue_jobs', 'gauge'],
    ['raven_domains', 'gauge'],
    ['raven_message_waits', 'gauge'],
    ['raven_up', 'gauge'],
  ]) {
    assert.match(s.text, new RegExp(`^# HELP ${name} \\S.*$`, 'm'), `HELP ${name}`);
    assert.match(s.text, new RegExp(`^# TYPE ${name} ${type}$`, 'm'), `TYPE ${name}`);
  }
  for (const outcome of ['delivered', 'sent', 'bounced', 'deferred', 'failed', 'unknown']) {
    assert.equal(s.value(`raven_deliveries_total{outcome="${outcome}"}`), 0, outcome);
  }
  assert.equal(s.value('raven_webhook_attempts_total{result="success"}'), 0);
  assert.equal(s.value('raven_domains{status="verified"}'), 1, 'the bootstrap domain');
});

test('admissions, delivery outcomes and webhook attempts are counted', async () => {
  await createEndpoint(t, receiver.url, ['email.delivered']);
  const before = await scrape();

  const ok = await t.send({ to: `user@${t.domain}` });
  assert.equal(ok.status, 202, ok.text);
  const bounced = await t.send({ to: `bounced@${t.domain}` }, { idempotencyKey: 'metrics-bounce' });
  assert.equal(bounced.status, 202, bounced.text);
  const replay = await t.send({ to: `bounced@${t.domain}` }, { idempotencyKey: 'metrics-bounce' });
  assert.equal(replay.headers.get('idempotent-replayed'), 'true');
  const refused = await t.send({ from: 'someone@not-connected.test' });
  assert.equal(refused.status, 422, refused.text);
  const badKey = await t.send({}, { key: 'rr_test_not-a-real-key' });
  assert.equal(badKey.status, 401, badKey.text);
  await t.waitForFinal(ok.body.id);
  await t.waitForFinal(bounced.body.id);

  const grew = (s: Scrape, series: string) => s.value(series) - before.value(series);
  const after = await waitForValue('raven_webhook_attempts_total{result="success"}', before.value('raven_webhook_attempts_total{result="success"}') + 1);
  assert.equal(grew(after, 'raven_admissions_total{result="accepted"}'), 2);
  assert.equal(grew(after, 'raven_admissions_total{result="replayed"}'), 1);
  assert.equal(grew(after, 'raven_admissions_total{result="rejected"}'), 2);
  assert.equal(grew(after, 'raven_admission_rejections_total{code="domain_not_verified"}'), 1);
  assert.equal(grew(after, 'raven_admission_rejections_total{code="invalid_api_key"}'), 1);
  assert.equal(grew(after, 'raven_deliveries_total{outcome="delivered"}'), 1);
  assert.equal(grew(after, 'raven_deliveries_total{outcome="bounced"}'), 1);
  assert.equal(grew(after, 'raven_webhook_attempts_total{result="failure"}'), 0);
});

test('a webhook endpoint answering 500 counts a failed attempt', async () => {
  const failing = await startReceiver();
  try {
    failing.answer = () => ({ status: 500 });
    await createEndpoint(t, failing.url, ['email.queued']);
    const before = (await scrape()).value('raven_webhook_attempts_total{result="failure"}');
    const res = await t.send();
    assert.equal(res.status, 202, res.text);
    await failing.waitForCount(1);
    await waitForValue('raven_webhook_attempts_total{result="failure"}', before + 1);
  } finally {
    await failing.close();
  }
});

test('/readyz: 200 with every check up; a part down is 503 service_unavailable with the error body, Retry-After and a Request-Id', async () => {
  const ready = await fetch(`${t.url}/readyz`);
  assert.equal(ready.status, 200);
  assert.deepEqual(await ready.json(), { status: 'ok', checks: { database: true, http: true, smtp: true, worker: true } });
  // What the worker's stop sets (relay/queue/worker.ts); the relay's parts are otherwise left running.
  const health = t.relay.services.health;
  health.worker = false;
  try {
    const res = await fetch(`${t.url}/readyz`);
    assert.equal(res.status, 503);
    assert.match(res.headers.get('request-id') ?? '', /^req_/);
    assert.equal(res.headers.get('retry-after'), '1');
    const body = await res.json();
    assert.equal(body.error.code, 'service_unavailable', JSON.stringify(body));
    assert.match(body.error.message, /worker/);
  } finally {
    health.worker = true;
  }
});
