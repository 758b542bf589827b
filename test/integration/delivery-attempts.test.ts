// Delivery attempts (issue 25, CONTRACT section 11): every attempt per recipient with where it went,
// TLS, the SMTP conversation without AUTH arguments or message content, the final reply, the
// status it led to and the next retry; admin only, 404 for an unknown email, erased with the body.
// Against the fake upstream (STARTTLS, AUTH; defer, refuse, then accept) and the sink.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { ravenctl } from '../helpers/ravenctl.js';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';
import { makeSelfSignedCert } from '../helpers/tls-cert.js';

const USER = 'relay-user';
const PASSWORD = 'upstream-Pa55word-never-stored';
const BODY_MARKER = 'body-marker-that-must-not-be-in-a-transcript';

interface Attempt {
  recipient: string;
  attempt: number;
  started_at: string;
  provider: string;
  host: string | null;
  port: number | null;
  tls: boolean;
  tls_version: string | null;
  certificate_verified: boolean | null;
  outcome: string;
  reply: string | null;
  transcript: Array<{ dir: 'C' | 'S'; line: string }>;
  next_attempt_at: string | null;
}

async function attemptsOf(t: TestRelay, emailId: string): Promise<Attempt[]> {
  const res = await t.admin('GET', `/admin/v1/emails/${emailId}/attempts`);
  assert.equal(res.status, 200, res.text);
  return res.body.attempts;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Every stored transcript and reply, as the admin API shows them, must not hold the password in any form. */
function assertNoSecret(attempts: Attempt[]): void {
  const text = JSON.stringify(attempts);
  for (const form of [PASSWORD, Buffer.from(PASSWORD).toString('base64'), Buffer.from(`\0${USER}\0${PASSWORD}`).toString('base64')]) {
    assert.ok(!text.includes(form), `a transcript holds the upstream password (${form})`);
  }
  assert.ok(!text.includes(BODY_MARKER), 'a transcript holds message content');
}

describe('attempts through an upstream with STARTTLS and AUTH: defer, refuse, then accept', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'raven-attempts-'));
  let upstream: FakeUpstream;
  let t: TestRelay;
  let deferredOnce = false;
  const emailIds: string[] = [];

  before(async () => {
    const cert = makeSelfSignedCert(dir, 'upstream');
    upstream = await startFakeUpstream(
      {
        onRcpt(address) {
          if (address.startsWith('refuse@')) return { code: 550, message: '5.1.1 no such mailbox here' };
          if (address.startsWith('later@') && !deferredOnce) {
            deferredOnce = true;
            return { code: 451, message: '4.7.1 greylisted, try again later' };
          }
          return undefined;
        },
      },
      { tls: { key: readFileSync(cert.keyFile), cert: cert.cert }, auth: { user: USER, pass: PASSWORD } },
    );
    t = await startTestRelay({
      flags: { upstream: `smtp://${USER}:${PASSWORD}@localhost:${upstream.port}`, upstreamCa: cert.certFile, testClock: true },
    });
  });
  after(async () => {
    await t.stop();
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a deferred recipient: the 451 reply, TLS, the conversation without AUTH arguments or content, the next retry', async () => {
    const sent = await t.send({ to: [`later@${t.domain}`], subject: 'deferred then accepted', text: BODY_MARKER });
    assert.equal(sent.status, 202, sent.text);
    emailIds.push(sent.body.id);
    const [first] = await until('the first attempt', async () => {
      const list = await attemptsOf(t, sent.body.id);
      return list.length > 0 ? list : undefined;
    });
    assert.equal(first!.recipient, `later@${t.domain}`);
    assert.equal(first!.attempt, 1);
    assert.equal(first!.provider, 'smtp');
    assert.equal(first!.host, 'localhost');
    assert.equal(first!.port, upstream.port);
    assert.equal(first!.tls, true);
    assert.equal(first!.outcome, 'delivery_delayed');
    assert.match(first!.reply ?? '', /^451 4\.7\.1 greylisted/);
    assert.ok(first!.next_attempt_at && Date.parse(first!.next_attempt_at) > Date.parse(first!.started_at));
    const lines = first!.transcript.map((l) => `${l.dir}: ${l.line}`);
    assert.ok(lines.some((l) => /^S: 220 /.test(l)), lines.join('\n'));
    assert.ok(lines.includes('C: STARTTLS'), lines.join('\n'));
    const auth = lines.filter((l) => l.startsWith('C: AUTH'));
    assert.equal(auth.length, 1, lines.join('\n'));
    assert.match(auth[0]!, /^C: AUTH (PLAIN|LOGIN)( \[redacted\])?$/);
    assert.ok(lines.some((l) => l.startsWith('C: MAIL FROM:')), lines.join('\n'));
    assert.ok(lines.some((l) => l === `C: RCPT TO:<later@${t.domain}>`), lines.join('\n'));
    assertNoSecret([first!]);

    // The retry is due 30 s later on the relay clock: it is accepted.
    await t.admin('POST', '/admin/v1/clock/advance', { seconds: 31 });
    const both = await until('the second attempt', async () => {
      const list = await attemptsOf(t, sent.body.id);
      return list.length > 1 ? list : undefined;
    });
    assert.deepEqual(both.map((a) => [a.attempt, a.outcome]), [[1, 'delivery_delayed'], [2, 'sent']]);
    assert.match(both[1]!.reply ?? '', /^250 .*queued as UPSTREAM123/);
    assert.equal(both[1]!.next_attempt_at, null);
    assert.ok(both[1]!.transcript.some((l) => l.dir === 'C' && l.line === 'DATA'));
    assertNoSecret(both);
  });

  test('a refused recipient: bounced, with the 550 reply', async () => {
    const sent = await t.send({ to: [`refuse@${t.domain}`], subject: 'refused', text: BODY_MARKER });
    emailIds.push(sent.body.id);
    await t.waitForFinal(sent.body.id);
    const [only, ...rest] = await attemptsOf(t, sent.body.id);
    assert.equal(rest.length, 0);
    assert.equal(only!.outcome, 'bounced');
    assert.match(only!.reply ?? '', /^550 5\.1\.1 no such mailbox/);
    assertNoSecret([only!]);
  });

  test('the public read API shows none of it', async () => {
    const res = await t.api('GET', `/v1/emails/${emailIds[0]}`);
    assert.equal(res.status, 200);
    for (const word of ['transcript', 'STARTTLS', 'greylisted', 'attempts"']) assert.ok(!res.text.includes(word), `the public detail shows ${word}`);
    assert.equal((await t.api('GET', `/v1/emails/${emailIds[0]}/attempts`)).status, 404);
  });

  test('an unknown email: 404 not_found', async () => {
    const res = await t.admin('GET', '/admin/v1/emails/em_unknown/attempts');
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'not_found');
  });

  test('no stored transcript of the suite holds the upstream password', async () => {
    for (const id of emailIds) assertNoSecret(await attemptsOf(t, id));
  });

  test('attempts are erased with the body, 7 days after the email became terminal', async () => {
    const id = emailIds[1]!;
    assert.ok((await attemptsOf(t, id)).length > 0);
    await t.admin('POST', '/admin/v1/clock/advance', { seconds: 8 * 86_400 });
    await until('the attempts to be erased', async () => ((await attemptsOf(t, id)).length === 0 ? true : undefined));
  });
});

describe('attempts through the sink', () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay();
  });
  after(async () => {
    await t.stop();
  });

  test('one entry per recipient: provider sink, no TLS, delivered, the reply to the final dot', async () => {
    const sent = await t.send({ to: [`one@${t.domain}`, `rejected@${t.domain}`], subject: 'two recipients', text: BODY_MARKER });
    assert.equal(sent.status, 202, sent.text);
    await t.waitForFinal(sent.body.id);
    const attempts = await attemptsOf(t, sent.body.id);
    assert.deepEqual(
      attempts.map((a) => [a.recipient, a.attempt, a.provider, a.tls, a.tls_version, a.certificate_verified, a.outcome]),
      [
        [`one@${t.domain}`, 1, 'sink', false, null, null, 'delivered'],
        [`rejected@${t.domain}`, 1, 'sink', false, null, null, 'failed'],
      ],
    );
    assert.equal(attempts[0]!.port, t.relay.smtpPort);
    assert.match(attempts[0]!.reply ?? '', /^250 /);
    assert.match(attempts[1]!.reply ?? '', /^5\d\d /);
    assert.ok(!JSON.stringify(attempts).includes(BODY_MARKER));

    const env = { RAVEN_BASE_URL: t.directUrl, RAVEN_ADMIN_TOKEN: t.adminToken };
    const json = await ravenctl(['relay', 'emails', 'attempts', sent.body.id, '--json'], { env });
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout), { attempts });
    const human = await ravenctl(['relay', 'emails', 'attempts', sent.body.id], { env });
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /#1 one@\S+ +delivered +sink 127\.0\.0\.1:\d+/);
    assert.match(human.stdout, /C: DATA/);
    const unknown = await ravenctl(['relay', 'emails', 'attempts', 'em_unknown', '--json'], { env });
    assert.equal(unknown.code, 1);
  });
});
