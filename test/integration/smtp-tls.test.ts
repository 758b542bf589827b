// TLS on the SMTP listener (smtpTls): with a certificate the relay offers STARTTLS with it, or
// speaks implicit TLS; a client that insists on TLS and trusts only that certificate delivers, and
// the message is captured. Bad TLS settings stop start-up with a message that names the file.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startRelay } from '../../relay/app.js';
import { ConfigError } from '../../relay/config.js';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';
import { makeSelfSignedCert, sendOverTls } from '../helpers/tls-cert.js';

let dir: string;
let certFile: string;
let keyFile: string;
let cert: Buffer;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'raven-tls-'));
  ({ certFile, keyFile, cert } = makeSelfSignedCert(dir));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Through the relay's listener, trusting only our certificate (a default one would fail). */
const sendTo = (t: TestRelay, to: string, options: { implicit?: boolean; ca?: Buffer } = {}) =>
  sendOverTls({ host: t.relay.smtpHost, port: t.relay.smtpPort, ca: options.ca ?? cert, implicit: options.implicit }, { from: `app@${t.domain}`, to });

async function captured(t: TestRelay, to: string) {
  const list = await t.admin('GET', `/admin/v1/messages?to=${encodeURIComponent(to)}`);
  assert.equal(list.status, 200, list.text);
  return list.body.messages as Array<{ subject: string; to: string[] }>;
}

describe('STARTTLS', () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay({ flags: { smtpTlsCert: certFile, smtpTlsKey: keyFile } });
  });
  after(async () => {
    await t.stop();
  });

  test('a client requiring TLS delivers with the configured certificate; the message is captured', async () => {
    const to = 'tls-user@inbound.test';
    const info = await sendTo(t, to);
    assert.deepEqual(info.accepted, [to]);
    const messages = await captured(t, to);
    assert.equal(messages.length, 1);
    assert.equal(messages[0]!.subject, 'Over TLS');
  });

  test('a client that trusts another certificate is refused during the handshake', async () => {
    const other = makeSelfSignedCert(dir, 'other');
    await assert.rejects(sendTo(t, 'x@inbound.test', { ca: other.cert }), /certificate/i);
  });

  test('the API still delivers: the worker speaks plain SMTP to its own listener', async () => {
    const res = await t.send();
    assert.equal(res.status, 202, res.text);
    const email = await t.waitForFinal(res.body.id);
    assert.equal(email.recipients[0].status, 'delivered');
  });
});

describe('implicit TLS', () => {
  let t: TestRelay;
  before(async () => {
    const config = path.join(dir, 'implicit.json');
    await writeFile(config, JSON.stringify({ smtpTls: { certFile, keyFile, implicit: true } }));
    // Implicit TLS needs an upstream provider; nothing is sent through it here.
    t = await startTestRelay({ flags: { config, upstream: 'smtp://127.0.0.1:9' } });
  });
  after(async () => {
    await t.stop();
  });

  test('a client speaking TLS from the first byte gets SMTP answers: this public MX refuses other recipients', async () => {
    const to = 'implicit@inbound.test';
    // The answer to RCPT comes over the TLS session: with an upstream provider the listener is
    // the report MX, not a sink, so anything but a raven. address is refused.
    await assert.rejects(sendTo(t, to, { implicit: true }), (e: Error & { code?: string; response?: string }) => {
      assert.equal(e.code, 'EENVELOPE', e.message);
      assert.match(e.response ?? e.message, /550 5\.7\.1 .*relaying denied/);
      return true;
    });
    assert.equal((await captured(t, to)).length, 0);
  });
});

describe('bad TLS settings stop start-up', () => {
  const start = (flags: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) =>
    startRelay({ flags: { dataDir: path.join(dir, 'never'), port: 0, smtpPort: 0, logLevel: 'silent', ...flags }, env });

  test('a certificate without its key', async () => {
    await assert.rejects(start({ smtpTlsCert: certFile }), (e: Error) => e instanceof ConfigError && /certFile and keyFile/.test(e.message));
  });

  test('a missing file is named', async () => {
    const missing = path.join(dir, 'missing.pem');
    await assert.rejects(start({}, { RAVEN_SMTP_TLS_CERT_FILE: missing, RAVEN_SMTP_TLS_KEY_FILE: keyFile }), (e: Error) => {
      assert.ok(e instanceof ConfigError);
      assert.ok(e.message.includes(missing), e.message);
      return true;
    });
  });

  test('a key that does not match the certificate, without quoting either', async () => {
    const other = makeSelfSignedCert(dir, 'mismatch');
    await assert.rejects(start({ smtpTlsCert: certFile, smtpTlsKey: other.keyFile }), (e: Error) => {
      assert.ok(e instanceof ConfigError);
      assert.doesNotMatch(e.message, /BEGIN|PRIVATE KEY/);
      return true;
    });
  });

  test('implicit TLS with the sink provider', async () => {
    await assert.rejects(
      start({ smtpTlsCert: certFile, smtpTlsKey: keyFile }, { RAVEN_SMTP_TLS_IMPLICIT: 'true' }),
      (e: Error) => e instanceof ConfigError && /upstream/.test(e.message),
    );
  });
});
