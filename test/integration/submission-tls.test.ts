// SMTP submission and TLS (CONTRACT section 9): with a certificate (smtpTls) AUTH is offered only
// after STARTTLS, and nodemailer requiring TLS and trusting only that certificate sends; without
// one, AUTH in plain text is refused on a listener that is not bound to a loopback address.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import nodemailer from 'nodemailer';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';
import { openRawSmtp } from '../helpers/smtp-raw.js';
import { authPlain, openSubmission } from '../helpers/submission.js';
import { makeSelfSignedCert } from '../helpers/tls-cert.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'raven-submission-tls-'));
});
after(() => rm(dir, { recursive: true, force: true }));

describe('submission with a certificate (STARTTLS)', () => {
  let t: TestRelay;
  let cert: Buffer;
  before(async () => {
    const made = makeSelfSignedCert(dir);
    cert = made.cert;
    t = await startTestRelay({ flags: { smtpTlsCert: made.certFile, smtpTlsKey: made.keyFile } });
  });
  after(() => t.stop());

  test('AUTH is not offered before STARTTLS', async () => {
    const smtp = await openSubmission(t);
    try {
      const ehlo = await smtp.command('EHLO client.test');
      assert.match(ehlo, /STARTTLS/);
      assert.doesNotMatch(ehlo, /AUTH/);
      assert.doesNotMatch(await smtp.command(`AUTH PLAIN ${authPlain(t.apiKey)}`), /^235/);
      assert.match(await smtp.command('MAIL FROM:<a@client.test>'), /^530 5\.7\.0 /);
    } finally {
      smtp.destroy();
    }
  });

  test('AUTH before STARTTLS answers 530 5.7.0 Must issue a STARTTLS command first, not 500 command not recognized', async () => {
    const smtp = await openSubmission(t);
    try {
      assert.equal(await smtp.command(`AUTH PLAIN ${authPlain(t.apiKey)}`), '530 5.7.0 Must issue a STARTTLS command first');
      assert.equal(await smtp.command('AUTH LOGIN'), '530 5.7.0 Must issue a STARTTLS command first', 'refused before any credential is asked for');
      assert.match(await smtp.command('MAIL FROM:<a@client.test>'), /^530 5\.7\.0 /);
      assert.match(await smtp.command('NOOP'), /^250/, 'the session goes on: STARTTLS is still possible');
    } finally {
      smtp.destroy();
    }
  });

  test('the sink, which shares the key authentication, answers AUTH before STARTTLS the same (530 5.7.0)', async () => {
    const smtp = await openRawSmtp(t.relay.smtpPort, '127.0.0.1');
    try {
      await smtp.reply();
      assert.doesNotMatch(await smtp.command('EHLO client.test'), /AUTH/);
      assert.equal(await smtp.command(`AUTH PLAIN ${authPlain(t.apiKey)}`), '530 5.7.0 Must issue a STARTTLS command first');
    } finally {
      smtp.destroy();
    }
  });

  test('nodemailer (pooled, STARTTLS required, trusting only the test certificate) sends; the email is delivered', async () => {
    const transport = nodemailer.createTransport({
      pool: true,
      host: '127.0.0.1',
      port: t.relay.submission.port,
      secure: false,
      requireTLS: true,
      tls: { ca: [cert], servername: 'localhost' },
      auth: { user: 'raven', pass: t.apiKey },
    });
    try {
      const sent = await Promise.all(
        [1, 2, 3].map((n) => transport.sendMail({ from: `hello@${t.domain}`, to: `ada@${t.domain}`, subject: `Over TLS ${n}`, text: 'encrypted' })),
      );
      for (const info of sent) {
        const id = /^250 2\.0\.0 (em_\w+) queued$/.exec(info.response)?.[1];
        assert.ok(id, info.response);
        assert.equal((await t.waitForFinal(id)).status, 'delivered');
      }
    } finally {
      transport.close();
    }
  });
});

describe('submission with implicit TLS', () => {
  test('a client speaking TLS from the first byte is offered AUTH at once and submits (250 2.0.0 <id> queued)', async () => {
    const made = makeSelfSignedCert(dir, 'implicit');
    const config = path.join(dir, 'implicit.json');
    await writeFile(config, JSON.stringify({ smtpTls: { certFile: made.certFile, keyFile: made.keyFile, implicit: true } }));
    // Implicit TLS needs an upstream provider; the test stops at admission, nothing is delivered.
    const t = await startTestRelay({ flags: { config, upstream: 'smtp://127.0.0.1:9' } });
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: t.relay.submission.port,
      secure: true,
      tls: { ca: [made.cert], servername: 'localhost' },
      auth: { user: 'raven', pass: t.apiKey },
    });
    try {
      const info = await transport.sendMail({ from: `hello@${t.domain}`, to: `ada@${t.domain}`, subject: 'Implicit TLS', text: 'encrypted from the first byte' });
      const id = /^250 2\.0\.0 (em_\w+) queued$/.exec(info.response)?.[1];
      assert.ok(id, info.response);
      assert.equal((await t.api('GET', `/v1/emails/${id}`)).status, 200);
    } finally {
      transport.close();
      await t.stop();
    }
  });
});

describe('submission without a certificate', () => {
  test('AUTH in plain text on a listener not bound to loopback is refused', async () => {
    const t = await startTestRelay({ overrides: (config) => (config.smtpHost = '0.0.0.0') });
    try {
      const smtp = await openSubmission(t);
      try {
        assert.match(await smtp.command(`AUTH PLAIN ${authPlain(t.apiKey)}`), /^538 5\.7\.11 /);
        assert.match(await smtp.command('MAIL FROM:<a@client.test>'), /^530 5\.7\.0 /);
      } finally {
        smtp.destroy();
      }
    } finally {
      await t.stop();
    }
  });
});
