// GET /admin/v1/messages/{id}/checks (CONTRACT section 11, issue 26): DKIM verifies for mail the
// relay signed and fails once a signed header changes, a malformed signature is reported (never a
// 5xx), the expected headers are listed, the HTML is checked against caniemail, links are asked
// for real on local servers.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';
import { smtpSendOnce } from '../helpers/smtp-send.js';
import { ravenctl } from '../helpers/ravenctl.js';
import { RavenAdmin } from 'raven-email-sdk';

let t: TestRelay;
let web: http.Server;
let silent: net.Server;
const held: net.Socket[] = [];
let webUrl = '';
let silentUrl = '';

before(async () => {
  // A public host name, as in production: the SPF record of each domain names it (a:relay.raven.test).
  t = await startTestRelay({ flags: { publicHostname: 'relay.raven.test' } });
  web = http.createServer((req, res) => {
    res.statusCode = req.url === '/live' || req.url === '/logo.png' ? 200 : req.url === '/moved' ? 302 : 404;
    if (req.url === '/moved') res.setHeader('location', '/live');
    res.end();
  });
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  webUrl = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
  // Accepts connections and never answers: the check must give up on its own.
  silent = net.createServer((socket) => void held.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/never`;
});
after(async () => {
  for (const s of held) s.destroy();
  await new Promise((resolve) => silent.close(resolve));
  await new Promise((resolve) => web.close(resolve));
  await t.stop();
});

/** Sends through the API, waits for the sink, returns the captured message's id and raw source. */
async function deliver(fields: Record<string, unknown>): Promise<{ id: string; raw: string }> {
  const to = `check-${Math.random().toString(36).slice(2, 8)}@${t.domain}`;
  const res = await t.send({ to, ...fields });
  assert.equal(res.status, 202, res.text);
  await t.waitForFinal(res.body.id);
  const list = await t.admin('GET', `/admin/v1/messages?to=${encodeURIComponent(to)}`);
  const id = list.body.messages[0].id as string;
  return { id, raw: (await t.admin('GET', `/admin/v1/messages/${id}/raw`)).text };
}

/** Hands a raw message straight to the sink (as any SMTP client would) and returns its id. */
async function capture(raw: string): Promise<string> {
  const to = `raw-${Math.random().toString(36).slice(2, 8)}@${t.domain}`;
  await smtpSendOnce(t.relay.smtpHost, t.relay.smtpPort, `sender@${t.domain}`, [to], raw);
  const waited = await t.admin('GET', `/admin/v1/messages/wait?to=${encodeURIComponent(to)}&timeout=30`);
  assert.equal(waited.status, 200, waited.text);
  return waited.body.id as string;
}

test('a message the relay delivered from its verified domain shows DKIM pass, and DMARC pass', async () => {
  const { id } = await deliver({ subject: 'Checked', text: 'Hello', html: '<p>Hello</p>' });
  const checks = await t.admin('GET', `/admin/v1/messages/${id}/checks`);
  assert.equal(checks.status, 200, checks.text);
  const dkim = checks.body.authentication.dkim;
  assert.ok(dkim.some((d: any) => d.domain === t.domain && d.result === 'pass'), JSON.stringify(dkim));
  assert.equal(checks.body.authentication.dmarc.result, 'pass', JSON.stringify(checks.body.authentication));
  assert.equal(checks.body.authentication.spf.result, 'pass', JSON.stringify(checks.body.authentication.spf));
  const headers = Object.fromEntries(checks.body.headers.map((h: any) => [h.name, h.result]));
  assert.equal(headers['Message-ID'], 'pass');
  assert.equal(headers['Date'], 'pass');
  assert.equal(headers['Text part'], 'pass');
  assert.deepEqual(checks.body.links, []);
  assert.equal(checks.body.spam.available, false);
  assert.match(checks.body.spam.message, /--spamd/);
});

test('a message altered after signing fails DKIM with the reason', async () => {
  const { raw } = await deliver({ subject: 'Original subject', text: 'Hello' });
  const altered = raw.replace(/^Subject: Original subject/m, 'Subject: Changed subject');
  assert.notEqual(altered, raw);
  const id = await capture(altered);
  const checks = await t.admin('GET', `/admin/v1/messages/${id}/checks`);
  assert.equal(checks.status, 200, checks.text);
  const [dkim] = checks.body.authentication.dkim;
  assert.equal(dkim.domain, t.domain);
  assert.equal(dkim.result, 'fail');
  assert.match(dkim.reason, /signature/i);
});

test('a body altered after signing fails DKIM: the body hash', async () => {
  const { raw } = await deliver({ subject: 'Body', text: 'Pay 10 EUR' });
  const id = await capture(raw.replace('Pay 10 EUR', 'Pay 99 EUR'));
  const [dkim] = (await t.admin('GET', `/admin/v1/messages/${id}/checks`)).body.authentication.dkim;
  assert.notEqual(dkim.result, 'pass');
  assert.match(dkim.reason, /body hash/i);
});

test('a malformed DKIM-Signature header is reported, never a 5xx', async () => {
  const raw = [
    'DKIM-Signature: this is; not=a; valid signature',
    `From: sender@${t.domain}`,
    `To: someone@${t.domain}`,
    'Subject: Malformed',
    'Date: Wed, 25 Nov 2026 10:00:00 +0000',
    'Message-ID: <malformed@example.test>',
    '',
    'Body',
    '',
  ].join('\r\n');
  const id = await capture(raw);
  const checks = await t.admin('GET', `/admin/v1/messages/${id}/checks`);
  assert.equal(checks.status, 200, checks.text);
  const dkim = checks.body.authentication.dkim;
  assert.equal(dkim.length, 1);
  assert.notEqual(dkim[0].result, 'pass');
  assert.ok(dkim[0].reason, 'says why');
  // A broken signature fails the badge, with the reason first.
  assert.equal(checks.body.summary.verdict, 'fail');
  assert.match(checks.body.summary.reasons[0], /^DKIM permerror for an unnamed domain: malformed DKIM-Signature: no /);
  // Mail the relay did not deliver: no client address, so SPF cannot pass.
  assert.notEqual(checks.body.authentication.spf.result, 'pass');
});

test('missing headers are flagged; html is null without an HTML part; bulk mail needs one-click unsubscribe', async () => {
  const raw = [`From: sender@${t.domain}`, `To: someone@${t.domain}`, 'Subject: Bare', 'Precedence: bulk', '', 'Body', ''].join('\r\n');
  const id = await capture(raw);
  const checks = await t.admin('GET', `/admin/v1/messages/${id}/checks?links=0`);
  assert.equal(checks.status, 200, checks.text);
  assert.equal(checks.body.html, null);
  assert.deepEqual(checks.body.authentication.dkim, []);
  const headers = Object.fromEntries(checks.body.headers.map((h: any) => [h.name, h.result]));
  assert.equal(headers['Date'], 'fail');
  assert.equal(headers['List-Unsubscribe'], 'fail');
  assert.equal(headers['List-Unsubscribe-Post'], 'fail');
});

test('an unsupported CSS feature is flagged for the clients caniemail lists, grouped by family', async () => {
  const { id } = await deliver({ subject: 'Flex', text: 'Hi', html: '<div style="display:flex"><p>Hi</p></div>' });
  const { html } = (await t.admin('GET', `/admin/v1/messages/${id}/checks?links=0`)).body;
  assert.ok(html.clients > 20, JSON.stringify(html));
  assert.ok(html.score < 100 && html.score >= 0);
  const flex = html.features.find((f: any) => f.feature === 'display:flex');
  assert.ok(flex, JSON.stringify(html.features.map((f: any) => f.feature)));
  const outlook = flex.unsupported.find((f: any) => f.family === 'outlook');
  assert.ok(outlook?.clients.includes('windows'), JSON.stringify(flex));
});

test('links and images: a live one, a dead one, a redirect, and a port that never answers', async () => {
  const html = `<a href="${webUrl}/live">live</a> <a href="${webUrl}/dead">dead</a> <a href="${webUrl}/moved">moved</a>
    <a href="${silentUrl}">silent</a> <img src="${webUrl}/logo.png"> <a href="mailto:x@example.test">mail</a>`;
  const { id } = await deliver({ subject: 'Links', text: 'See the HTML', html });
  const checks = await t.admin('GET', `/admin/v1/messages/${id}/checks`);
  assert.equal(checks.status, 200, checks.text);
  const byUrl = Object.fromEntries(checks.body.links.map((l: any) => [l.url, l]));
  assert.deepEqual(byUrl[`${webUrl}/live`], { url: `${webUrl}/live`, kind: 'link', checked: true, status: 200, error: null });
  assert.equal(byUrl[`${webUrl}/dead`].status, 404);
  assert.equal(byUrl[`${webUrl}/dead`].error, 'HTTP 404');
  assert.equal(byUrl[`${webUrl}/moved`].status, 200, 'follows the redirect');
  assert.equal(byUrl[`${webUrl}/logo.png`].kind, 'image');
  assert.equal(byUrl[`${webUrl}/logo.png`].status, 200);
  assert.equal(byUrl[silentUrl].status, null);
  assert.match(byUrl[silentUrl].error, /no answer within/);
  assert.equal(Object.keys(byUrl).length, 5, 'mailto: is not a link to check');

  const unchecked = await t.admin('GET', `/admin/v1/messages/${id}/checks?links=0`);
  assert.ok(unchecked.body.links.every((l: any) => l.checked === false && l.status === null));
});

test('checks of an unknown message are a 404; a bad links parameter a 400', async () => {
  const missing = await t.admin('GET', '/admin/v1/messages/msg_00000000000000000000000000/checks');
  assert.equal(missing.status, 404, missing.text);
  assert.equal(missing.body.error.code, 'not_found');
  const { id } = await deliver({ subject: 'Param', text: 'x' });
  const bad = await t.admin('GET', `/admin/v1/messages/${id}/checks?links=yes`);
  assert.equal(bad.status, 422, bad.text);
  assert.equal(bad.body.error.code, 'validation_error');
});

test('the SDK and ravenctl relay messages check answer the same checks', async () => {
  const { id } = await deliver({ subject: 'CLI', text: 'Hello', html: `<p>Hi <a href="${webUrl}/live">there</a></p>` });
  const admin = new RavenAdmin({ baseUrl: t.directUrl, adminToken: t.adminToken });
  const viaSdk = await admin.messages.checks(id);
  assert.equal(viaSdk.authentication.dkim[0]?.result, 'pass');
  assert.equal(viaSdk.links[0]?.status, 200);

  const env = { RAVEN_BASE_URL: t.directUrl, RAVEN_ADMIN_TOKEN: t.adminToken };
  const json = await ravenctl(['relay', 'messages', 'check', id, '--json'], { env });
  assert.equal(json.code, 0, json.stderr);
  const body = JSON.parse(json.stdout);
  assert.deepEqual(body.authentication, viaSdk.authentication);
  assert.equal(body.links[0].status, 200);
  const noLinks = JSON.parse((await ravenctl(['relay', 'messages', 'check', id, '--no-links', '--json'], { env })).stdout);
  assert.equal(noLinks.links[0].checked, false);
  const human = await ravenctl(['relay', 'messages', 'check', id], { env });
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, new RegExp(`DKIM +pass +${t.domain.replace(/\./g, '\\.')}`));
  assert.match(human.stdout, /200 +link http:/);
  const unknown = await ravenctl(['relay', 'messages', 'check', 'msg_unknown', '--json'], { env });
  assert.equal(unknown.code, 1);
});
