// The first errors a new user meets say what to do (issue 20): a missing Authorization header says
// it is missing, production_not_enabled names the command that activates, domain_not_verified
// lists the project's verified domains, a taken port names its flag, and GET /v1/domains tells a
// client which senders will be accepted before it sends.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startRelay } from '../../relay/app.js';
import { createProjectWithKey, startTestRelay, type TestRelay } from '../helpers/start-relay.js';

let t: TestRelay;
before(async () => {
  t = await startTestRelay();
});
after(async () => {
  await t.stop();
});

describe('errors that name the way out', () => {
  test('a missing Authorization header: 401 invalid_api_key saying it is missing', async () => {
    const res = await t.api('GET', '/v1/emails', { key: null });
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 'invalid_api_key');
    assert.match(res.body.error.message, /Authorization header is missing/);
    assert.doesNotMatch(res.body.error.message, /revoked/);
    const wrong = await t.api('GET', '/v1/emails', { key: 'rr_test_nope' });
    assert.match(wrong.body.error.message, /invalid or has been revoked/, 'a wrong key still says so');
  });

  test('production_not_enabled names the command that activates the workspace', async () => {
    const ws = await t.admin('POST', '/admin/v1/workspaces', { name: 'prod' });
    const live = await createProjectWithKey(t, { workspaceId: ws.body.id, environment: 'production' });
    const res = await t.api('POST', '/v1/emails', {
      key: live.key,
      body: { from: `a@${live.domain}`, to: `b@${live.domain}`, subject: 's', text: 't' },
    });
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'production_not_enabled');
    assert.ok(res.body.error.message.includes(`ravenctl relay workspaces activate ${ws.body.id}`), res.body.error.message);
  });

  test('domain_not_verified lists the verified domains of the key\'s project', async () => {
    const res = await t.send({ from: 'Acme <hello@unverified.example>' });
    assert.equal(res.status, 422);
    assert.equal(res.body.error.code, 'domain_not_verified');
    assert.equal(res.body.error.message, `The sender domain unverified.example is not verified in this key's project: its verified domain is ${t.domain}.`);
  });
});

describe('GET /v1/domains', () => {
  test("answers the key's project's domains with their status, to any valid key; sends nothing", async () => {
    await t.admin('POST', `/admin/v1/projects/${t.projectId}/domains`, { name: 'pending.example' });
    const res = await t.api('GET', '/v1/domains');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { domains: [{ name: t.domain, status: 'verified' }, { name: 'pending.example', status: 'pending' }] });
    const reader = await createProjectWithKey(t, { permission: 'email:read' });
    const other = await t.api('GET', '/v1/domains', { key: reader.key });
    assert.deepEqual(other.body, { domains: [{ name: reader.domain, status: 'verified' }] }, 'only its own project');
    assert.equal((await t.api('GET', '/v1/domains', { key: null })).status, 401);
  });
});

describe('a port already in use', () => {
  const variables = { '--port': 'RAVEN_PORT', '--smtp-port': 'RAVEN_SMTP_PORT', '--submission-port': 'RAVEN_SUBMISSION_PORT' };
  for (const [flag, field] of [['--port', 'port'], ['--smtp-port', 'smtpPort'], ['--submission-port', 'submissionPort']] as const) {
    test(`names ${flag} and its variable`, async () => {
      const taken = net.createServer();
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
      const port = (taken.address() as net.AddressInfo).port;
      const dataDir = await mkdtemp(path.join(tmpdir(), 'raven-taken-'));
      try {
        await assert.rejects(
          startRelay({ flags: { dataDir, port: 0, smtpPort: 0, logLevel: 'silent', [field]: port }, env: {} }),
          (error: NodeJS.ErrnoException) => {
            assert.equal(error.code, 'EADDRINUSE');
            assert.ok(error.message.includes(`127.0.0.1:${port} is already in use`), error.message);
            assert.ok(error.message.includes(`choose another with ${flag} N or ${variables[flag]}`), error.message);
            return true;
          },
        );
      } finally {
        taken.close();
        await rm(dataDir, { recursive: true, force: true });
      }
    });
  }
});
