// The admin surface against a hostile browser or guesser (issue 20): captured mail is served as a
// download that no browser renders or sniffs, every answer carries nosniff, and wrong admin tokens
// (dashboard sign-in or Bearer header) spend one failure budget per client address, as SMTP AUTH
// does (CONTRACT section 9): more than 10 in a minute and the address is refused 429.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spec } from '../helpers/contract.js';
import { ADMIN_TOKEN, call, startTestRelay, type TestRelay } from '../helpers/start-relay.js';

let t: TestRelay;
let messageId: string;
before(async () => {
  t = await startTestRelay();
  const sent = await t.send({ to: `hardening@${t.domain}`, subject: 'Raw <b>view</b>', html: '<script>alert(1)</script><p>hi</p>' });
  assert.equal(sent.status, 202, sent.text);
  await t.waitForFinal(sent.body.id);
  const captured = await t.admin('GET', `/admin/v1/messages?to=hardening@${t.domain}`);
  assert.equal(captured.body.messages.length, 1, captured.text);
  messageId = captured.body.messages[0].id;
});
after(async () => {
  await t?.stop();
  assert.deepEqual(t?.violations ?? [], []);
});

test('the raw message is a download: nosniff, a sandboxing CSP, Content-Disposition <id>.eml, no-store', async () => {
  const raw = await t.admin('GET', `/admin/v1/messages/${messageId}/raw`);
  assert.equal(raw.status, 200);
  assert.equal(raw.headers.get('content-type'), 'message/rfc822');
  assert.equal(raw.headers.get('x-content-type-options'), 'nosniff');
  assert.match(raw.headers.get('content-security-policy') ?? '', /default-src 'none'/);
  assert.match(raw.headers.get('content-security-policy') ?? '', /\bsandbox\b/);
  assert.match(raw.headers.get('content-disposition') ?? '', new RegExp(`^attachment; filename="${messageId}\\.eml"`));
  assert.match(raw.headers.get('cache-control') ?? '', /no-store/);
  assert.match(raw.text, /<script>alert\(1\)<\/script>|PHNjcmlwdD5/, 'the bytes are served as they came');
});

test('the message JSON and every other JSON answer carry nosniff', async () => {
  for (const [method, path, token] of [
    ['GET', `/admin/v1/messages/${messageId}`, ADMIN_TOKEN],
    ['GET', '/admin/v1/messages', ADMIN_TOKEN],
    ['GET', '/admin/v1/nothing-here', ADMIN_TOKEN],
    ['GET', '/v1/emails', t.apiKey],
    ['GET', '/livez', null],
  ] as const) {
    const res = await call(t.url, method, path, { token });
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/, path);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff', path);
  }
});

test('thirty wrong tokens at the dashboard sign-in: after ten, 429 rate_limit_exceeded with Retry-After, shared with the Bearer header, even for the right token', async () => {
  // Signed in before the guessing starts: a session is no guess and keeps working.
  const signedIn = await call(t.url, 'POST', '/admin/v1/session', { body: { token: ADMIN_TOKEN } });
  assert.equal(signedIn.status, 201, signedIn.text);
  const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;

  const statuses: number[] = [];
  for (let i = 0; i < 30; i++) {
    // Sign-in and Bearer header spend the same budget: the admin token is one secret.
    const res =
      i % 2 === 0
        ? await call(t.url, 'POST', '/admin/v1/session', { body: { token: `wrong-token-${i}` } })
        : await call(t.url, 'GET', '/admin/v1/workspaces', { token: `wrong-token-${i}` });
    statuses.push(res.status);
    if (res.status === 429) {
      assert.equal(res.body.error.code, 'rate_limit_exceeded');
      const retryAfter = Number(res.headers.get('retry-after'));
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
      assert.equal(res.body.error.retry_after, retryAfter);
      assert.match(res.body.error.message, new RegExp(`${retryAfter} seconds`));
    } else assert.equal(res.body.error.code, 'unauthorized');
  }
  assert.deepEqual(statuses, [...Array(10).fill(401), ...Array(20).fill(429)]);

  // The right token is refused too while the address is over its budget (no oracle for guessers).
  assert.equal((await call(t.url, 'POST', '/admin/v1/session', { body: { token: ADMIN_TOKEN } })).status, 429);
  assert.equal((await call(t.url, 'GET', '/admin/v1/workspaces', { token: ADMIN_TOKEN })).status, 429);
  // What spends nothing still answers as before: no token at all, and the session cookie.
  assert.equal((await call(t.url, 'GET', '/admin/v1/workspaces')).status, 401);
  assert.equal((await call(t.url, 'GET', '/admin/v1/workspaces', { headers: { cookie } })).status, 200);

  // Every admin operation answers the right token 429 meanwhile, as openapi.yaml documents
  // (regression: the inbox wait and the submission settings did not list 429).
  const seen = t.violations.length;
  for (const [path, item] of Object.entries<any>(spec.paths)) {
    if (!path.startsWith('/admin/v1/') || path === '/admin/v1/session') continue;
    for (const method of Object.keys(item).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))) {
      const target = path.replace(/\{[a-z_]+\}/g, 'no_such_id') + (path.endsWith('/wait') ? '?timeout=1' : '');
      const res = await call(t.url, method.toUpperCase(), target, { token: ADMIN_TOKEN, body: method === 'get' ? undefined : {} });
      assert.equal(res.status, 429, `${method} ${path}: ${res.text}`);
    }
  }
  assert.deepEqual(t.violations.slice(seen), []);
});
