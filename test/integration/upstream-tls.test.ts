// An upstream whose certificate the system does not trust (issue 20): the recipient's
// delivery_delayed event says why (a fixed phrase, never the server's words), and the upstream CA
// option (delivery.smtp.ca, --upstream-ca, RAVEN_UPSTREAM_CA_FILE) makes the same upstream work.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { ravenctl } from '../helpers/ravenctl.js';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';
import { makeSelfSignedCert, type TestCert } from '../helpers/tls-cert.js';

const dir = mkdtempSync(path.join(tmpdir(), 'raven-upstream-tls-'));
let cert: TestCert;
let upstream: FakeUpstream;

before(async () => {
  cert = makeSelfSignedCert(dir, 'upstream');
  upstream = await startFakeUpstream({}, { tls: { key: readFileSync(cert.keyFile), cert: cert.cert } });
});
after(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Polls the email until its recipient is no longer queued (the first attempt is recorded). */
async function afterFirstAttempt(t: TestRelay, id: string) {
  for (let i = 0; i < 600; i++) {
    const res = await t.api('GET', `/v1/emails/${id}`);
    if (res.body.recipients.some((r: { status: string }) => r.status !== 'queued')) return res.body;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`email ${id} never left queued`);
}

describe('an upstream with a self-signed certificate, no CA given', () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay({ flags: { upstream: `smtp://localhost:${upstream.port}` } });
  });
  after(async () => {
    await t.stop();
  });

  test("delayed event's payload names the reason, sanitized: TLS: self-signed certificate", async () => {
    const sent = await t.send({ subject: 'untrusted upstream' });
    assert.equal(sent.status, 202, sent.text);
    const email = await afterFirstAttempt(t, sent.body.id);
    assert.equal(email.recipients[0].status, 'delivery_delayed');
    const delayed = email.events.find((e: { type: string }) => e.type === 'email.delivery_delayed');
    assert.equal(delayed.payload.reason, 'TLS: self-signed certificate');
    assert.equal(delayed.payload.attempt, 1);
    assert.equal(upstream.received.length, 0, 'nothing went over the untrusted connection');
  });

  test('the attempt records the refused certificate: no TLS version, certificate_verified false (API and CLI)', async () => {
    const sent = await t.send({ subject: 'untrusted attempt' });
    await afterFirstAttempt(t, sent.body.id);
    const res = await t.admin('GET', `/admin/v1/emails/${sent.body.id}/attempts`);
    assert.equal(res.status, 200, res.text);
    const [attempt] = res.body.attempts;
    assert.deepEqual([attempt.tls, attempt.tls_version, attempt.certificate_verified], [false, null, false]);
    const human = await ravenctl(['relay', 'emails', 'attempts', sent.body.id], { env: { RAVEN_BASE_URL: t.url, RAVEN_ADMIN_TOKEN: t.adminToken } });
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /TLS refused: certificate not verified/);
  });
});

describe('the same upstream with its certificate as the upstream CA', () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay({ flags: { upstream: `smtp://localhost:${upstream.port}`, upstreamCa: cert.certFile } });
  });
  after(async () => {
    await t.stop();
  });

  test('--upstream-ca trusts it: the message goes over STARTTLS and ends sent', async () => {
    const sent = await t.send({ subject: 'trusted upstream' });
    assert.equal(sent.status, 202, sent.text);
    const email = await t.waitForFinal(sent.body.id);
    assert.equal(email.status, 'sent');
    assert.ok(upstream.received.some((m) => /^Subject: trusted upstream/m.test(m.raw)));
    const res = await t.admin('GET', `/admin/v1/emails/${sent.body.id}/attempts`);
    const [attempt] = res.body.attempts;
    assert.equal(attempt.tls, true);
    assert.match(attempt.tls_version, /^TLSv1\.[23]$/);
    assert.equal(attempt.certificate_verified, true);
    const human = await ravenctl(['relay', 'emails', 'attempts', sent.body.id], { env: { RAVEN_BASE_URL: t.url, RAVEN_ADMIN_TOKEN: t.adminToken } });
    assert.match(human.stdout, /\(TLSv1\.[23], certificate verified\)/);
  });
});
