// ravenctl relay webhooks recover --since/--until: ISO 8601 or a time ago (2h, 30m, 1d) on the
// relay's clock: the test clock when the relay has one, else now; a bad value is a usage error
// (exit 2) naming both forms, before anything is sent.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ravenctl } from '../helpers/ravenctl.js';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';
import { advanceClock, createEndpoint } from '../helpers/webhooks.js';

const HOUR_MS = 3_600_000;

function relayWithEndpoint(flags: { testClock?: boolean }) {
  const env = {} as { t: TestRelay; hookId: string; run(args: string[]): ReturnType<typeof ravenctl> };
  before(async () => {
    env.t = await startTestRelay({ flags });
    env.hookId = (await createEndpoint(env.t, 'http://127.0.0.1:9/hook')).id;
    env.run = (args) =>
      ravenctl(['relay', 'webhooks', 'recover', env.hookId, ...args], { env: { RAVEN_BASE_URL: env.t.url, RAVEN_ADMIN_TOKEN: env.t.adminToken } });
  });
  after(() => env.t?.stop());
  return env;
}

/** Runs ravenctl between two readings of `now` and answers the window it printed with them. */
async function bracketed(now: () => Promise<number>, run: () => ReturnType<typeof ravenctl>) {
  const before = await now();
  const r = await run();
  const after = await now();
  assert.equal(r.code, 0, r.stderr);
  return { before, after, body: JSON.parse(r.stdout) as { since: string; until: string; count: number; dry_run: boolean } };
}

describe('recover --since on a relay with a test clock', () => {
  const env = relayWithEndpoint({ testClock: true });
  const clockMs = async () => Date.parse((await env.t.admin('GET', '/admin/v1/clock')).body.now);

  test('2h, 1d and 30m count back from the test clock, days ahead of this machine', async () => {
    await advanceClock(env.t, 3 * 86_400);
    for (const [value, backMs] of [['2h', 2 * HOUR_MS], ['1d', 24 * HOUR_MS], ['30m', HOUR_MS / 2]] as const) {
      const { before, after, body } = await bracketed(clockMs, () => env.run(['--since', value, '--dry-run', '--json']));
      const since = Date.parse(body.since);
      assert.ok(since >= before - backMs && since <= after - backMs, `${value}: ${body.since} within [${new Date(before - backMs).toISOString()}, ${new Date(after - backMs).toISOString()}]`);
      assert.equal(body.dry_run, true);
      assert.equal(body.count, 0);
    }
  });

  test('--until takes a time ago too; an ISO --since is sent as given', async () => {
    const { before, after, body } = await bracketed(clockMs, () => env.run(['--since', '2026-11-01T00:00:00Z', '--until', '1h', '--dry-run', '--json']));
    assert.equal(body.since, '2026-11-01T00:00:00.000Z');
    const until = Date.parse(body.until);
    assert.ok(until >= before - HOUR_MS && until <= after - HOUR_MS, body.until);
  });

  test('a bad value is a usage error (exit 2) naming both forms; nothing reaches the relay', async () => {
    for (const value of ['2x', 'yesterday', '-2h', '2 hours']) {
      const r = await env.run(['--since', value, '--dry-run', '--json']);
      assert.equal(r.code, 2, `${value}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      const error = JSON.parse(r.stderr).error;
      assert.equal(error.code, 'usage_error');
      assert.match(error.message, /--since/);
      assert.match(error.message, /ISO 8601 .*30m, 2h, 1d/);
    }
    const human = await env.run(['--since', '2x', '--dry-run']);
    assert.equal(human.code, 2);
    assert.match(human.stderr, /2x/);
    const tooFar = await env.run(['--since', '999999999w', '--dry-run', '--json']);
    assert.equal(tooFar.code, 2, tooFar.stderr);
    assert.match(JSON.parse(tooFar.stderr).error.message, /before 1970/);
    // An ISO time the calendar lacks is the relay's to refuse: 422, exit 1.
    const refused = await env.run(['--since', '2026-02-30T00:00:00Z', '--dry-run', '--json']);
    assert.equal(refused.code, 1, refused.stderr);
    assert.equal(JSON.parse(refused.stderr).error.code, 'validation_error');
  });
});

describe('recover --since on a relay without a test clock', () => {
  const env = relayWithEndpoint({});

  test('30m counts back from now (GET /admin/v1/clock answers 404 there)', async () => {
    assert.equal((await env.t.admin('GET', '/admin/v1/clock')).status, 404);
    const { before, after, body } = await bracketed(async () => Date.now(), () => env.run(['--since', '30m', '--dry-run', '--json']));
    const since = Date.parse(body.since);
    assert.ok(since >= before - HOUR_MS / 2 && since <= after - HOUR_MS / 2, `${body.since}`);
  });
});
