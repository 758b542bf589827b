// ravenctl's first errors say what to do (issue 20), with the real CLI against a real relay: an
// EDITOR that is not installed falls back to typing the body inline (nothing typed is lost, no temp
// file left), a From on an unverified domain is refused at its prompt (before any body is
// written), `relay workspaces activate` uses the only workspace, and a send waiting on an upstream
// whose certificate is not trusted says why, as does `emails get`.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { ravenctl } from '../helpers/ravenctl.js';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';
import { inTerminal } from '../helpers/terminal.js';
import { makeSelfSignedCert } from '../helpers/tls-cert.js';

const dir = mkdtempSync(path.join(tmpdir(), 'ravenctl-first-errors-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('ravenctl send in a terminal', () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay();
  });
  after(async () => {
    await t.stop();
  });

  test('EDITOR naming a missing program: says how to set EDITOR, takes the body inline, sends, leaves no temp file', { timeout: 120_000 }, async (context) => {
    const temp = mkdtempSync(path.join(dir, 'tmp-'));
    const to = `inline@${t.domain}`;
    const run = await inTerminal(
      ['send', '--api-key', t.apiKey, '--base-url', t.url, '--to', to],
      { EDITOR: 'raven-no-such-editor', TMPDIR: temp },
      [
        // A From on a domain the key's project has not verified is refused at its prompt.
        [/From \(/, 'Ada <ada@unverified.example>\r'],
        [/unverified\.example is not a verified/, `\u0015Ada <ada@${t.domain}>\r`],
        [/Subject/, 'Typed without an editor\r'],
        [/Body/, '\r'],
        [/type it here; end with a line holding only "\."/, 'Hello Ada,\rtyped inline.\r.\r'],
      ],
      context.signal,
    );
    assert.equal(run.code, 0, run.screen);
    assert.equal(run.unanswered, 0, run.screen);
    assert.ok(run.screen.replace(/\s+/g, ' ').includes(`(verified: ${t.domain})`), 'the refusal names the verified domains');
    assert.match(run.screen, /\$EDITOR is "raven-no-such-editor", but raven-no-such-editor is not installed: set one you have for next time \(export EDITOR=/);
    assert.doesNotMatch(run.screen, /ENOENT|at .*\.js:\d+/, 'no stack trace');
    // tsx keeps its compile cache there too (tsx-*): only the editor's body file matters.
    assert.deepEqual(readdirSync(temp).filter((name) => !name.startsWith('tsx-')), [], 'no temp file left');
    const list = await t.api('GET', `/v1/emails?recipient=${to}`);
    assert.equal(list.body.emails.length, 1);
    assert.equal(list.body.emails[0].subject, 'Typed without an editor');
    await t.waitForFinal(list.body.emails[0].id);
    const captured = await t.admin('GET', `/admin/v1/messages?to=${to}`);
    const message = await t.admin('GET', `/admin/v1/messages/${captured.body.messages[0].id}`);
    assert.equal(message.body.text.trim(), 'Hello Ada,\ntyped inline.');
  });

  test('a send refused after the body was typed prints what was typed as a command to run again', { timeout: 120_000 }, async (context) => {
    const run = await inTerminal(
      ['send', '--api-key', t.apiKey, '--base-url', t.url, '--from', `a@${t.domain}`, '--to', 'someone@elsewhere.example', '--subject', 'Kept'],
      { EDITOR: 'raven-no-such-editor' },
      [
        [/Body/, '\r'],
        [/type it here/, 'A body worth keeping\r.\r'],
      ],
      context.signal,
    );
    assert.equal(run.code, 1, run.screen);
    assert.match(run.screen, /test_recipient_not_allowed/);
    const flat = run.screen.replace(/\r?\n/g, '\n');
    assert.match(flat, /what you typed, as a command to fix and run again:\n {2}ravenctl send .*--text 'A body worth keeping\n' --idempotency-key \S+/);
  });

  test('--from on an unverified domain is refused before the body is asked for (exit 1)', { timeout: 120_000 }, async (context) => {
    const run = await inTerminal(
      ['send', '--api-key', t.apiKey, '--base-url', t.url, '--from', 'a@unverified.example', '--to', `x@${t.domain}`, '--subject', 'S'],
      { EDITOR: 'true' },
      [],
      context.signal,
    );
    assert.equal(run.code, 1, run.screen);
    assert.match(run.screen, /unverified\.example is not a verified domain of this key's project \(verified: [^)]*\); nothing was sent \(domain_not_verified\)/);
    assert.doesNotMatch(run.screen, /Body/, 'the body was never asked for');
  });
});

describe('ravenctl relay workspaces activate', () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay();
  });
  after(async () => {
    await t.stop();
  });

  test('with no id activates the only workspace', async () => {
    const run = await ravenctl(['relay', 'workspaces', 'activate', '--admin-token', t.adminToken, '--base-url', t.url, '--json'], { cwd: dir });
    assert.equal(run.code, 0, run.stderr);
    const workspace = JSON.parse(run.stdout);
    assert.equal(workspace.id, t.workspaceId);
    assert.ok(workspace.activated_at, 'activated');
  });
});

describe('an upstream whose certificate is not trusted', () => {
  let upstream: FakeUpstream;
  let t: TestRelay;
  before(async () => {
    const cert = makeSelfSignedCert(dir, 'untrusted');
    upstream = await startFakeUpstream({}, { tls: { key: readFileSync(cert.keyFile), cert: cert.cert } });
    t = await startTestRelay({ flags: { upstream: `smtp://localhost:${upstream.port}` } });
  });
  after(async () => {
    await t.stop();
    await upstream.close();
  });

  test('send --wait ends with the reason, and emails get shows it in the timeline', { timeout: 120_000 }, async () => {
    const env = { RAVEN_API_KEY: t.apiKey, RAVEN_BASE_URL: t.url };
    const sent = await ravenctl(
      ['send', '--from', `a@${t.domain}`, '--to', `b@${t.domain}`, '--subject', 'Untrusted', '--text', 'hi', '--wait', '--wait-timeout', '4'],
      { cwd: dir, env },
    );
    assert.equal(sent.code, 1, sent.stderr);
    assert.match(sent.stderr, /is still queued after 4 s \(delivery_delayed: TLS: self-signed certificate; next attempt at \S+\) \(wait_timeout\)/);
    const id = /^ID +(em_\S+)$/m.exec(sent.stdout)![1]!;
    const got = await ravenctl(['emails', 'get', id], { cwd: dir, env });
    assert.equal(got.code, 0, got.stderr);
    assert.match(got.stdout, /email\.delivery_delayed +attempt=1 next_attempt_at=\S+ reason="TLS: self-signed certificate"/);
  });
});
