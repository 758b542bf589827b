// `ravenctl trigger <event type>` (issue 25, CONTRACT section 11) makes a real event of every type
// on a relay through the sink's simulated outcomes and prints {"email_id","event_id","type"};
// an unknown type is a usage error (exit 2) listing the types. `ravenctl listen --print-secret`
// prints only the signing secret, the same one on every run for one relay and key on one machine.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { EVENT_TYPES } from '../../sdk/enums.js';
import { ravenctl } from '../helpers/ravenctl.js';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

describe('ravenctl trigger and listen --print-secret', () => {
  let t: TestRelay;
  const configHome = mkdtempSync(path.join(tmpdir(), 'raven-trigger-config-'));
  let env: Record<string, string>;
  before(async () => {
    t = await startTestRelay();
    env = { RAVEN_API_KEY: t.apiKey, RAVEN_BASE_URL: t.directUrl, XDG_CONFIG_HOME: configHome };
  });
  after(async () => {
    await t.stop();
    rmSync(configHome, { recursive: true, force: true });
  });

  for (const type of EVENT_TYPES) {
    test(`trigger ${type}: a real ${type} event in the email's timeline`, async () => {
      const run = await ravenctl(['trigger', type, '--json'], { env });
      assert.equal(run.code, 0, run.stderr);
      const out = JSON.parse(run.stdout) as { email_id: string; event_id: string; type: string };
      assert.deepEqual(Object.keys(out).sort(), ['email_id', 'event_id', 'type']);
      assert.equal(out.type, type);
      const email = await t.api('GET', `/v1/emails/${out.email_id}`);
      assert.equal(email.status, 200);
      const event = email.body.events.find((e: { id: string }) => e.id === out.event_id);
      assert.equal(event?.type, type);
    });
  }

  test('human output is the email id alone; --project reads the domains with the admin token', async () => {
    const run = await ravenctl(['trigger', 'email.delivered', '--project', t.projectId], { env: { ...env, RAVEN_ADMIN_TOKEN: t.adminToken } });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^em_\S+\n$/);
  });

  test('an unknown event type: exit 2, listing the types', async () => {
    const run = await ravenctl(['trigger', 'email.opened'], { env });
    assert.equal(run.code, 2);
    for (const type of EVENT_TYPES) assert.ok(run.stderr.includes(type), run.stderr);
  });

  test('listen --print-secret: the secret alone, the same across runs, another for another machine', async () => {
    const first = await ravenctl(['listen', '--print-secret'], { env });
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^whsec_\S+\n$/);
    const second = await ravenctl(['listen', '--print-secret', '--json'], { env });
    assert.deepEqual(JSON.parse(second.stdout), { secret: first.stdout.trim() });
    const elsewhere = await ravenctl(['listen', '--print-secret'], { env: { RAVEN_API_KEY: t.apiKey, RAVEN_BASE_URL: t.directUrl } });
    assert.equal(elsewhere.code, 0, elsewhere.stderr);
    assert.notEqual(elsewhere.stdout, first.stdout);
  });
});
