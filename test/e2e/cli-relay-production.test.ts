// `ravenctl relay start` with the production flags: --dns-server (the resolver domain verification
// asks), --public-hostname (the MX target domains are told to publish) and --smtp-tls-cert /
// --smtp-tls-key (STARTTLS on the SMTP listener), as a real child process.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { publishRecords, startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { call } from '../helpers/start-relay.js';
import { makeSelfSignedCert, sendOverTls, type TestCert } from '../helpers/tls-cert.js';

const ADMIN = 'production-flags-admin-token';
let dir: string;
let dns: TestDnsServer;
let cert: TestCert;
let relay: RelayProcess;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'raven-prod-flags-'));
  dns = await startDnsServer();
  cert = makeSelfSignedCert(dir);
  relay = await startRelayProcess({
    dataDir: path.join(dir, 'data'),
    adminToken: ADMIN,
    extraArgs: [
      '--dns-server', dns.address,
      '--public-hostname', 'mx.e2e.raven.test',
      '--smtp-tls-cert', cert.certFile,
      '--smtp-tls-key', cert.keyFile,
    ],
  });
});
after(async () => {
  await relay?.stop();
  await dns.close();
  await rm(dir, { recursive: true, force: true });
});

test('domains are verified against --dns-server and point at --public-hostname', async () => {
  const admin = (method: string, p: string, body?: unknown) => call(relay.httpUrl, method, p, { token: ADMIN, body });
  const created = await admin('POST', `/admin/v1/projects/${relay.ready.bootstrap.project_id}/domains`, { name: 'flags.e2e.test' });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.body.records.find((r: { purpose: string }) => r.purpose === 'mail_from_mx').value, 'mx.e2e.raven.test');
  publishRecords(dns, created.body.records);
  const verified = await admin('POST', `/admin/v1/domains/${created.body.id}/verify`);
  assert.equal(verified.status, 200, verified.text);
  assert.equal(verified.body.status, 'verified', relay.stderr());
  assert.ok(dns.questions.some((q) => q.endsWith('flags.e2e.test')), 'the relay asked the test server');
});

test('the SMTP listener offers STARTTLS with --smtp-tls-cert', async () => {
  const info = await sendOverTls(
    { host: relay.ready.smtp_host, port: relay.ready.smtp_port, ca: cert.cert },
    { from: 'app@flags.e2e.test', to: 'someone@inbound.test' },
  );
  assert.deepEqual(info.accepted, ['someone@inbound.test']);
});
