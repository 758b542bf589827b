// GET /v1/emails and GET /v1/emails/{id}: pagination, filters, key scoping, and what reads never show.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createProjectWithKey, startTestRelay, type TestRelay } from '../helpers/start-relay.js';

let t: TestRelay;
before(async () => {
  t = await startTestRelay();
});
after(async () => {
  await t.stop();
});

describe('pagination', () => {
  test('walks every email once, newest first, with no gaps or duplicates', async () => {
    const p = await createProjectWithKey(t, { permission: 'email:send' });
    const sent: string[] = [];
    // Send in bursts so several land in one group commit.
    for (let burst = 0; burst < 5; burst++) {
      const results = await Promise.all(
        Array.from({ length: 23 }, (_, i) =>
          t.api('POST', '/v1/emails', {
            key: p.key,
            body: { from: `a@${p.domain}`, to: `r${i}@${p.domain}`, subject: `s${burst}-${i}`, text: 't' },
          }),
        ),
      );
      for (const r of results) {
        assert.equal(r.status, 202, r.text);
        sent.push(r.body.id);
      }
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: any = await t.api('GET', `/v1/emails?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key: p.key });
      assert.equal(res.status, 200, res.text);
      assert.ok(res.body.emails.length <= 7);
      seen.push(...res.body.emails.map((e: any) => e.id));
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor);
    assert.equal(seen.length, sent.length);
    assert.equal(new Set(seen).size, sent.length);
    assert.deepEqual(new Set(seen), new Set(sent));
    assert.equal(pages, Math.ceil(sent.length / 7));
    const created = await Promise.all(seen.slice(0, 5).map((id) => t.api('GET', `/v1/emails/${id}`, { key: p.key })));
    const times = created.map((r) => r.body.created_at);
    assert.deepEqual([...times].sort().reverse(), times, 'newest first');
  });

  test('default page size is 50 and limit is checked', async () => {
    const res = await t.api('GET', '/v1/emails');
    assert.equal(res.status, 200);
    assert.ok(res.body.emails.length <= 50);
    for (const bad of ['0', '101', 'abc', '1.5']) {
      const r = await t.api('GET', `/v1/emails?limit=${bad}`);
      assert.equal(r.status, 422, bad);
      assert.equal(r.body.error.code, 'validation_error');
    }
    const badCursor = await t.api('GET', '/v1/emails?cursor=garbage');
    assert.equal(badCursor.status, 422);
    const badStatus = await t.api('GET', '/v1/emails?status=lost');
    assert.equal(badStatus.status, 422);
  });
});

describe('filters and scoping', () => {
  test('recipient matches To addresses only, case-insensitively; status filters', async () => {
    const to = `Filter.Me@${t.domain}`;
    const a = await t.send({ to, subject: 'to-match' });
    const b = await t.send({ to: `other@${t.domain}`, cc: [to], subject: 'cc-only' });
    assert.equal(a.status, 202);
    assert.equal(b.status, 202);
    const res = await t.api('GET', `/v1/emails?recipient=${encodeURIComponent(to.toLowerCase())}`);
    assert.deepEqual(res.body.emails.map((e: any) => e.id), [a.body.id]);
    await t.waitForFinal(a.body.id);
    const delivered = await t.api('GET', '/v1/emails?status=delivered&limit=100');
    assert.ok(delivered.body.emails.some((e: any) => e.id === a.body.id));
    assert.ok(delivered.body.emails.every((e: any) => e.status === 'delivered'));
  });

  // The recipient filter is driven by the recipients' own index (email_seq, migration 0003), with
  // rows written by a batched admission: it must page like the unfiltered list.
  test('a recipient filter pages in list order, lists an email once when its To repeats the address, and takes a status', async () => {
    const p = await createProjectWithKey(t);
    const to = `pager@${p.domain}`;
    const results = await Promise.all(
      Array.from({ length: 9 }, (_, i) =>
        t.api('POST', '/v1/emails', {
          key: p.key,
          body: { from: `a@${p.domain}`, to: i % 3 === 0 ? [to, to.toUpperCase()] : i % 3 === 1 ? [to] : [`x${i}@${p.domain}`], subject: `p${i}`, text: 't' },
        }),
      ),
    );
    for (const r of results) assert.equal(r.status, 202, r.text);
    const all = await t.api('GET', '/v1/emails?limit=100', { key: p.key });
    const expected = all.body.emails.filter((e: any) => e.to.some((a: string) => a.toLowerCase() === to)).map((e: any) => e.id);
    assert.equal(expected.length, 6);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: any = await t.api('GET', `/v1/emails?recipient=${encodeURIComponent(to)}&limit=4${cursor ? `&cursor=${cursor}` : ''}`, { key: p.key });
      assert.equal(res.status, 200, res.text);
      seen.push(...res.body.emails.map((e: any) => e.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, expected, 'the filtered walk is the unfiltered list, filtered');
    for (const id of expected) await t.waitForFinal(id, { key: p.key });
    const delivered = await t.api('GET', `/v1/emails?recipient=${encodeURIComponent(to)}&status=delivered`, { key: p.key });
    assert.deepEqual(delivered.body.emails.map((e: any) => e.id), expected);
    const bounced = await t.api('GET', `/v1/emails?recipient=${encodeURIComponent(to)}&status=bounced`, { key: p.key });
    assert.deepEqual(bounced.body.emails, []);
  });

  test('an email:send key reads only its own emails; email:read reads the project', async () => {
    const project = await createProjectWithKey(t);
    const second = await t.admin('POST', `/admin/v1/projects/${project.projectId}/keys`, { name: 'second', permission: 'email:send' });
    const reader = await t.admin('POST', `/admin/v1/projects/${project.projectId}/keys`, { name: 'reader', permission: 'email:read' });
    const sent = await t.api('POST', '/v1/emails', {
      key: project.key,
      body: { from: `a@${project.domain}`, to: `b@${project.domain}`, subject: 'mine', text: 't' },
    });
    assert.equal(sent.status, 202);
    const byOther = await t.api('GET', `/v1/emails/${sent.body.id}`, { key: second.body.key });
    assert.equal(byOther.status, 404);
    assert.equal(byOther.body.error.code, 'not_found');
    const otherList = await t.api('GET', '/v1/emails', { key: second.body.key });
    assert.equal(otherList.body.emails.length, 0);
    const byReader = await t.api('GET', `/v1/emails/${sent.body.id}`, { key: reader.body.key });
    assert.equal(byReader.status, 200);
    const fromOtherProject = await t.api('GET', `/v1/emails/${sent.body.id}`);
    assert.equal(fromOtherProject.status, 404);
    const unknown = await t.api('GET', '/v1/emails/em_doesnotexist');
    assert.equal(unknown.status, 404);
  });
});

describe('what reads never show', () => {
  test('bodies, BCC addresses and headers are absent from list and detail', async () => {
    const secretText = 'SECRET-TEXT-BODY-7731';
    const secretHtml = '<p>SECRET-HTML-BODY-7731</p>';
    const bcc = `hidden.bcc@${t.domain}`;
    const res = await t.send({
      subject: 'privacy',
      text: secretText,
      html: secretHtml,
      bcc: [bcc],
      cc: [`visible.cc@${t.domain}`],
      headers: { 'X-Secret-Header': 'HEADER-VALUE-7731' },
      metadata: { order: '42' },
      tags: { kind: 'receipt' },
      reply_to: `reply@${t.domain}`,
    });
    assert.equal(res.status, 202, res.text);
    const detail = await t.waitForFinal(res.body.id);
    const list = await t.api('GET', '/v1/emails?limit=100');
    for (const text of [JSON.stringify(detail), list.text]) {
      assert.ok(!text.includes('SECRET-TEXT-BODY'), 'text body leaked');
      assert.ok(!text.includes('SECRET-HTML-BODY'), 'html body leaked');
      assert.ok(!text.includes('hidden.bcc'), 'bcc leaked');
      assert.ok(!text.includes('HEADER-VALUE-7731'), 'header leaked');
    }
    assert.equal(detail.status, 'delivered');
    assert.deepEqual(detail.cc, [`visible.cc@${t.domain}`]);
    assert.equal(detail.reply_to, `reply@${t.domain}`);
    assert.deepEqual(detail.metadata, { order: '42' });
    assert.deepEqual(detail.tags, { kind: 'receipt' });
    assert.deepEqual(detail.recipients.map((r: any) => [r.email, r.type, r.status]), [
      [`user@${t.domain}`, 'to', 'delivered'],
      [`visible.cc@${t.domain}`, 'cc', 'delivered'],
    ]);
    assert.ok(detail.providerMessageId, 'providerMessageId is recorded');
    const types = detail.events.map((e: any) => e.type);
    assert.equal(types[0], 'email.queued');
    assert.ok(types.includes('email.sent'));
    assert.ok(types.includes('email.delivered'));
    for (const e of detail.events) {
      assert.match(e.id, /^evt_/);
      assert.ok(!Number.isNaN(Date.parse(e.occurredAt)));
    }
  });
});
