// The JSON endpoints the dashboard adds (openapi.yaml, tag dashboard), through the contract proxy
// so every answer is checked against the spec; the session cookie's rules without a browser.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startRelay, type Relay } from '../../relay/app.js';
import { composeMessage } from '../helpers/mime.js';
import { smtpSendOnce } from '../helpers/smtp-send.js';
import { plainMessage, submitOnce } from '../helpers/submission.js';
import { ADMIN_TOKEN, call, startTestRelay, type TestRelay } from '../helpers/start-relay.js';

describe('dashboard API', () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay();
  });
  after(() => t?.stop());

  async function captured(subject: string): Promise<string> {
    for (;;) {
      const page = await t.admin('GET', `/admin/v1/inbox?q=${encodeURIComponent(`subject:"${subject}"`)}`);
      assert.equal(page.status, 200, page.text);
      if (page.body.messages[0]) return page.body.messages[0].id;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('lists, reads, flags, views and deletes captured mail', async () => {
    const raw = await composeMessage({
      from: '"Ada" <ada@inbox.test>',
      to: 'grace@inbox.test',
      subject: 'Api inbox',
      text: 'Hello text',
      html: '<p>Hello <img src="cid:logo"> <img src="https://tracker.example/p.gif"></p>',
      attachments: [
        { filename: 'logo.png', content: Buffer.from('89504e470d0a1a0a', 'hex'), cid: 'logo' },
        { filename: 'notes.txt', content: 'some notes' },
      ],
    });
    await smtpSendOnce(t.relay.smtpHost, t.relay.smtpPort, 'ada@inbox.test', ['grace@inbox.test', 'complained@inbox.test'], raw);
    const id = await captured('Api inbox');

    const page = await t.admin('GET', '/admin/v1/inbox?q=from:ada');
    const entry = page.body.messages[0];
    assert.equal(entry.from_name, 'Ada');
    assert.equal(entry.from_address, 'ada@inbox.test');
    assert.equal(entry.to, 'grace@inbox.test');
    assert.equal(entry.snippet, 'Hello text');
    assert.equal(entry.attachments, 2);
    assert.equal(entry.read, false);
    assert.ok(page.body.unread >= 1);

    const detail = await t.admin('GET', `/admin/v1/messages/${id}`);
    assert.equal(detail.status, 200, detail.text);
    assert.equal(detail.body.remote_resources, 1);
    assert.deepEqual(detail.body.attachments.map((a: { filename: string }) => a.filename), ['logo.png', 'notes.txt']);
    assert.deepEqual(detail.body.simulated_outcomes, [{ recipient: 'complained@inbox.test', outcome: 'complained' }]);

    const html = await t.admin('GET', `/admin/v1/messages/${id}/html`);
    assert.equal(html.status, 200);
    assert.match(html.text, /src="data:image\/png;base64,iVBORw0KGgo="/, 'cid: images are inlined');
    assert.match(html.headers.get('content-security-policy')!, /img-src data:;/);
    const remote = await t.admin('GET', `/admin/v1/messages/${id}/html?remote=1`);
    assert.match(remote.headers.get('content-security-policy')!, /img-src data: https: http:/);

    const attachment = await t.admin('GET', `/admin/v1/messages/${id}/attachments/1`);
    assert.equal(attachment.status, 200);
    assert.equal(attachment.text, 'some notes');
    assert.match(attachment.headers.get('content-disposition')!, /^attachment; filename="notes.txt"/);
    assert.equal((await t.admin('GET', `/admin/v1/messages/${id}/attachments/9`)).status, 404);

    const read = await t.admin('POST', `/admin/v1/messages/${id}/read`, { read: true });
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.read, true);
    assert.equal((await t.admin('POST', `/admin/v1/messages/${id}/read`, { read: 'yes' })).status, 422);
    assert.equal((await t.admin('POST', '/admin/v1/messages/msg_nope/read', { read: true })).status, 404);

    assert.equal((await t.admin('DELETE', `/admin/v1/messages/${id}`)).status, 204);
    assert.equal((await t.admin('GET', `/admin/v1/messages/${id}`)).status, 404);
    assert.equal((await t.admin('DELETE', `/admin/v1/messages/${id}`)).status, 404);
  });

  it('refuses release without an upstream, and bad release bodies', async () => {
    await smtpSendOnce(t.relay.smtpHost, t.relay.smtpPort, 'a@r.test', ['b@r.test'], 'Subject: Api release\r\n\r\nx\r\n');
    const id = await captured('Api release');
    const refused = await t.admin('POST', `/admin/v1/messages/${id}/release`, { to: 'someone@real.test' });
    assert.equal(refused.status, 403);
    assert.match(refused.body.error.message, /upstream/);
    assert.equal((await t.admin('POST', `/admin/v1/messages/${id}/release`, { to: 'not an address' })).status, 422);
  });

  it('reads the email log of a project, an email with its deliveries, and daily usage', async () => {
    const sent = await t.send({ subject: 'Logged' });
    await t.waitForFinal(sent.body.id);
    const list = await t.admin('GET', `/admin/v1/projects/${t.projectId}/emails?status=delivered`);
    assert.equal(list.status, 200, list.text);
    assert.ok(list.body.emails.some((e: { id: string }) => e.id === sent.body.id));
    const one = await t.admin('GET', `/admin/v1/emails/${sent.body.id}`);
    assert.equal(one.status, 200, one.text);
    assert.equal(one.body.email.id, sent.body.id);
    assert.equal(one.body.project_id, t.projectId);
    assert.deepEqual(one.body.deliveries, []);
    assert.equal((await t.admin('GET', '/admin/v1/emails/em_nope')).status, 404);
    assert.equal((await t.admin('GET', '/admin/v1/projects/prj_nope/emails')).status, 404);

    const daily = await t.admin('GET', `/admin/v1/workspaces/${t.workspaceId}/usage/daily`);
    assert.equal(daily.status, 200, daily.text);
    assert.equal(daily.body.days.length, 30);
    assert.ok(daily.body.days[29].emails >= 1);
    assert.equal((await t.admin('POST', `/admin/v1/webhooks/whk_nope/deliveries/evt_nope/resend`)).status, 404);
  });

  it('the email log list says which emails came over SMTP submission (source) and which through the API', async () => {
    const overApi = await t.send({ subject: 'Logged over the API' });
    assert.equal(overApi.status, 202, overApi.text);
    const reply = await submitOnce(t, t.apiKey, [`ada@${t.domain}`], plainMessage({ from: `app@${t.domain}`, to: `ada@${t.domain}`, subject: 'Logged over SMTP' }));
    const overSmtp = /^250 2\.0\.0 (em_\w+) queued$/.exec(reply)?.[1];
    assert.ok(overSmtp, reply);
    const list = await t.admin('GET', `/admin/v1/projects/${t.projectId}/emails?limit=100`);
    assert.equal(list.status, 200, list.text);
    const sourceOf = (id: string) => list.body.emails.find((e: { id: string }) => e.id === id)?.source;
    assert.equal(sourceOf(overSmtp), 'smtp');
    assert.equal(sourceOf(overApi.body.id), 'api');
    assert.ok(list.body.emails.every((e: { source: string }) => e.source === 'api' || e.source === 'smtp'));
  });

  it('signs in with the token into a cookie session that needs its CSRF header for changes', async () => {
    assert.equal((await call(t.url, 'POST', '/admin/v1/session', { body: { token: 'wrong' } })).status, 401);
    assert.equal((await call(t.url, 'POST', '/admin/v1/session', { body: { token: ADMIN_TOKEN, extra: 1 } })).status, 422);
    assert.equal((await call(t.url, 'GET', '/admin/v1/session')).status, 401);
    const signedIn = await call(t.url, 'POST', '/admin/v1/session', { body: { token: ADMIN_TOKEN } });
    assert.equal(signedIn.status, 201, signedIn.text);
    const setCookie = signedIn.headers.get('set-cookie')!;
    assert.match(setCookie, /^raven_session=[\w-]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/);
    const cookie = setCookie.split(';')[0]!;
    const csrf = signedIn.body.csrf_token as string;

    const session = await call(t.url, 'GET', '/admin/v1/session', { headers: { cookie } });
    assert.equal(session.body.csrf_token, csrf);
    assert.equal((await call(t.url, 'GET', '/admin/v1/workspaces', { headers: { cookie } })).status, 200);
    const noCsrf = await call(t.url, 'POST', '/admin/v1/workspaces', { headers: { cookie }, body: { name: 'x' } });
    assert.equal(noCsrf.status, 403);
    assert.equal(noCsrf.body.error.code, 'forbidden');
    const wrongOrigin = await call(t.url, 'POST', '/admin/v1/workspaces', { headers: { cookie, 'x-raven-csrf': csrf, origin: 'http://evil.test' }, body: { name: 'x' } });
    assert.equal(wrongOrigin.status, 403);
    const ok = await call(t.url, 'POST', '/admin/v1/workspaces', { headers: { cookie, 'x-raven-csrf': csrf }, body: { name: 'from the dashboard' } });
    assert.equal(ok.status, 201, ok.text);

    const out = await call(t.url, 'DELETE', '/admin/v1/session', { headers: { cookie, 'x-raven-csrf': csrf } });
    assert.equal(out.status, 204);
    assert.match(out.headers.get('set-cookie')!, /Max-Age=0/);
    assert.equal((await call(t.url, 'GET', '/admin/v1/workspaces', { headers: { cookie } })).status, 401);
  });
});

describe('dashboard sessions live in the database', () => {
  const signIn = async (url: string, body: Record<string, string>) => {
    const res = await call(url, 'POST', '/admin/v1/session', { body });
    return { status: res.status, cookie: res.headers.get('set-cookie')?.split(';')[0] };
  };
  const sessionStatus = async (url: string, cookie: string) => (await call(url, 'GET', '/admin/v1/session', { headers: { cookie } })).status;

  it('outlive a restart, as does the printed sign-in link (once), and end when the admin token changes', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'raven-sessions-'));
    const restart = (adminToken: string): Promise<Relay> =>
      startRelay({ flags: { dataDir, database: first.relay.config.database, port: 0, smtpPort: 0, adminToken, logLevel: 'error' }, env: {} });
    const first = await startTestRelay({ dataDir });
    try {
      const { status, cookie } = await signIn(first.url, { token: ADMIN_TOKEN });
      assert.equal(status, 201);
      const link = new URL(first.relay.dashboardUrl).hash.replace('#signin=', '');
      await first.stop();

      const second = await restart(ADMIN_TOKEN);
      try {
        assert.equal(await sessionStatus(second.httpUrl, cookie!), 200, 'still signed in after the restart');
        assert.equal((await signIn(second.httpUrl, { signin_link: link })).status, 201, "the first start's link works on the second");
        assert.equal((await signIn(second.httpUrl, { signin_link: link })).status, 401, 'once');
      } finally {
        await second.stop();
      }

      const third = await restart('a-new-admin-token-0123456789abcdef');
      try {
        assert.equal(await sessionStatus(third.httpUrl, cookie!), 401, 'a new admin token signs everyone out');
      } finally {
        await third.stop();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
