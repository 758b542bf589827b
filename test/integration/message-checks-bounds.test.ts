// The checks' bounds (issue 26): a 25 MiB message is checked within bounded memory, several at
// once, and the answer names each check it skipped and why; a message with thousands of links has
// the first 100 asked, never more than 8 at a time, and the rest listed unchecked with the reason.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';
import { smtpSendOnce } from '../helpers/smtp-send.js';

let t: TestRelay;
let web: http.Server;
let webUrl = '';
let inFlight = 0;
let mostInFlight = 0;
let asked = 0;

before(async () => {
  t = await startTestRelay();
  // Answers every link after a moment, counting how many it is asked at once.
  web = http.createServer((req, res) => {
    asked += 1;
    inFlight += 1;
    mostInFlight = Math.max(mostInFlight, inFlight);
    req.resume();
    setTimeout(() => {
      inFlight -= 1;
      res.end();
    }, 20);
  });
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  webUrl = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
});
after(async () => {
  await new Promise((resolve) => web.close(resolve));
  await t.stop();
});

async function capture(raw: Buffer | string): Promise<string> {
  const to = `bounds-${Math.random().toString(36).slice(2, 8)}@${t.domain}`;
  await smtpSendOnce(t.relay.smtpHost, t.relay.smtpPort, `sender@${t.domain}`, [to], raw);
  const waited = await t.admin('GET', `/admin/v1/messages/wait?to=${encodeURIComponent(to)}&timeout=60`);
  assert.equal(waited.status, 200, waited.text);
  return waited.body.id as string;
}

const HEAD = (subject: string) =>
  [`From: sender@${t.domain}`, `To: someone@${t.domain}`, `Subject: ${subject}`, 'Date: Wed, 25 Nov 2026 10:00:00 +0000', `Message-ID: <${Math.random()}@example.test>`, 'MIME-Version: 1.0'].join('\r\n');

/** About 25 MiB: a text part, 2 MiB of HTML full of links and styles, and a 16.5 MiB attachment. */
function largeMessage(): Buffer {
  let html = '<html><body>';
  for (let i = 0; html.length < 2 * 1024 * 1024; i++) html += `<p style="display:flex;padding:4px">Row ${i} <a href="https://example.test/r/${i}">link ${i}</a></p>\r\n`;
  const attachment = Buffer.alloc(Math.round(16.5 * 1024 * 1024), 0x5a).toString('base64').replace(/.{76}/g, '$&\r\n');
  return Buffer.from(
    [
      HEAD('Large'),
      'Content-Type: multipart/mixed; boundary="b1"',
      '',
      '--b1',
      'Content-Type: multipart/alternative; boundary="b2"',
      '',
      '--b2',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'The large message.',
      '--b2',
      'Content-Type: text/html; charset=utf-8',
      '',
      html + '</body></html>',
      '--b2--',
      '--b1',
      'Content-Type: application/octet-stream',
      'Content-Disposition: attachment; filename="big.bin"',
      'Content-Transfer-Encoding: base64',
      '',
      attachment,
      '--b1--',
      '',
    ].join('\r\n'),
  );
}

test('a 25 MiB message: three checks at once answer within bounded memory, naming what they skipped and why', async () => {
  const raw = largeMessage();
  assert.ok(raw.length > 24 * 1024 * 1024 && raw.length <= 25 * 1024 * 1024, String(raw.length));
  const id = await capture(raw);

  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
  let answers;
  try {
    answers = await Promise.all([1, 2, 3].map(() => t.admin('GET', `/admin/v1/messages/${id}/checks`)));
  } finally {
    clearInterval(sampler);
  }
  for (const answer of answers) {
    assert.equal(answer.status, 200, answer.text.slice(0, 500));
    const { html, links, skipped, headers, authentication, summary } = answer.body;
    assert.equal(html, null);
    assert.deepEqual(links, []);
    const reasons = Object.fromEntries(skipped.map((s: { check: string; reason: string }) => [s.check, s.reason]));
    assert.deepEqual(Object.keys(reasons).sort(), ['html', 'links']);
    assert.match(reasons.html, /^the HTML part is 2\.\d MiB; the checks read HTML up to 1\.0 MiB/);
    // What does not grow with the HTML still ran: headers (a text part is there) and authentication.
    assert.equal(headers.find((h: { name: string }) => h.name === 'Text part').result, 'pass');
    assert.deepEqual(authentication.dkim, []);
    assert.equal(summary.verdict, 'warnings');
  }
  // Three 25 MiB messages parsed at once, attachments kept, would hold well over 300 MB; one at
  // a time with attachments drained stays far under (the raw source plus its decoded parts).
  const grewMb = (peak - baseline) / 1024 / 1024;
  assert.ok(grewMb < 300, `the relay grew by ${grewMb.toFixed(0)} MB checking three 25 MiB messages`);
});

test('thousands of links: the first 100 are asked, at most 8 at a time, the rest listed unchecked with the reason', async () => {
  const count = 2_500;
  const anchors = Array.from({ length: count }, (_, i) => `<a href="${webUrl}/l/${i}">${i}</a>`).join(' ');
  const id = await capture([HEAD('Many links'), 'Content-Type: text/html; charset=utf-8', '', `<p>${anchors}</p>`, ''].join('\r\n'));
  asked = 0;
  mostInFlight = 0;
  const checks = await t.admin('GET', `/admin/v1/messages/${id}/checks`);
  assert.equal(checks.status, 200, checks.text.slice(0, 500));
  const links = checks.body.links as Array<{ url: string; checked: boolean; status: number | null; error: string | null }>;
  assert.equal(links.length, count, 'every link is listed');
  assert.ok(links.slice(0, 100).every((l) => l.checked && l.status === 200), 'the first 100 are checked');
  assert.ok(
    links.slice(100).every((l) => !l.checked && l.status === null && l.error === 'not checked: only the first 100 URLs are'),
    JSON.stringify(links[100]),
  );
  assert.equal(asked, 100, 'no request past the cap');
  assert.ok(mostInFlight <= 8, `asked ${mostInFlight} at once`);
  assert.deepEqual(checks.body.skipped, []);
});
