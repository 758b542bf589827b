// The inbox search language on both backends (issue 23): Mailpit's terms and more, negation,
// quoted values; unknown terms and unbalanced quotes are free text, never an error; 422 past 500
// characters.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import nodemailer from 'nodemailer';
import { TEST_BACKEND } from '../helpers/backend.js';
import { createProjectWithKey, startTestRelay, type TestRelay } from '../helpers/start-relay.js';

describe('inbox search terms', () => {
  let t: TestRelay;
  let other: Awaited<ReturnType<typeof createProjectWithKey>>;
  before(async () => {
    t = await startTestRelay();
    other = await createProjectWithKey(t);
    const transport = nodemailer.createTransport({ host: t.relay.smtpHost, port: t.relay.smtpPort, ignoreTLS: true });
    try {
      await transport.sendMail({ from: 'Ada <ada@search.test>', to: 'team@search.test', subject: 'Weekly report', text: 'Numbers are up.' });
      await transport.sendMail({ from: 'Shop <shop@search.test>', to: 'team@search.test', subject: 'Save 100% now_ok', text: 'A sale.' });
      await transport.sendMail({
        from: 'Bob <bob@search.test>',
        to: 'ops@search.test',
        subject: 'Invoice with attachment',
        text: 'See the attached file. '.repeat(600),
        attachments: [{ filename: 'invoice.pdf', content: Buffer.alloc(4096, 1) }],
      });
    } finally {
      transport.close();
    }
    const sent = await t.send({ from: `app@${other.domain}`, to: `carol@${other.domain}`, subject: 'Sign-in code' }, { key: other.key });
    assert.equal(sent.status, 202, sent.text);
    for (;;) {
      const all = await t.admin('GET', '/admin/v1/inbox');
      if (all.body.messages.length === 4) break;
      await new Promise((r) => setTimeout(r, 20));
    }
  });
  after(() => t.stop());

  const subjects = async (q: string) => {
    const res = await t.admin('GET', `/admin/v1/inbox?q=${encodeURIComponent(q)}`);
    assert.equal(res.status, 200, `${q}: ${res.text}`);
    return res.body.messages.map((m: { subject: string }) => m.subject).sort();
  };

  test('% _ and \\ in a term match themselves (regression: a LIKE pattern on PostgreSQL)', async () => {
    assert.deepEqual(await subjects('subject:"100% now_"'), ['Save 100% now_ok']);
    assert.deepEqual(await subjects('subject:"1%0"'), []);
    assert.deepEqual(await subjects('"w_ekly"'), []);
    assert.deepEqual(await subjects('"\\ekl"'), []);
    if (TEST_BACKEND === 'postgres') {
      // The trigram indexes exist (pg_trgm ships with PostgreSQL): searches need not scan.
      const indexes = await t.relay.services.db.all<{ indexname: string }>("SELECT indexname FROM pg_indexes WHERE indexname LIKE 'inbox_%_trgm' ORDER BY indexname");
      assert.deepEqual(indexes.map((i) => i.indexname), ['inbox_from_trgm', 'inbox_snippet_trgm', 'inbox_subject_trgm', 'inbox_to_trgm']);
    }
  });

  test('field terms, negation and quoted values', async () => {
    assert.deepEqual(await subjects('from:ada'), ['Weekly report']);
    assert.deepEqual(await subjects('-from:ada'), ['Invoice with attachment', 'Save 100% now_ok', 'Sign-in code']);
    assert.deepEqual(await subjects('subject:"weekly report"'), ['Weekly report']);
    assert.deepEqual(await subjects('to:ops@ -subject:weekly'), ['Invoice with attachment']);
    assert.deepEqual(await subjects('report -numbers'), []);
  });

  test('has:attachment, larger:/smaller:, before:/after:, project:, is:', async () => {
    assert.deepEqual(await subjects('has:attachment'), ['Invoice with attachment']);
    assert.deepEqual(await subjects('-has:attachment'), ['Save 100% now_ok', 'Sign-in code', 'Weekly report']);
    assert.deepEqual(await subjects('larger:10k'), ['Invoice with attachment']);
    assert.deepEqual(await subjects('smaller:10K'), ['Save 100% now_ok', 'Sign-in code', 'Weekly report']);
    assert.deepEqual(await subjects('larger:2M'), []);
    assert.deepEqual(await subjects('after:2000-01-01'), ['Invoice with attachment', 'Save 100% now_ok', 'Sign-in code', 'Weekly report']);
    assert.deepEqual(await subjects('before:2000-01-01'), []);
    assert.deepEqual(await subjects('-before:2000-01-01 before:2999-01-01'), ['Invoice with attachment', 'Save 100% now_ok', 'Sign-in code', 'Weekly report']);
    assert.deepEqual(await subjects(`project:${other.projectId}`), ['Sign-in code']);
    assert.deepEqual(await subjects(`-project:${other.projectId}`), ['Invoice with attachment', 'Save 100% now_ok', 'Weekly report']);
    assert.deepEqual(await subjects('is:unread'), ['Invoice with attachment', 'Save 100% now_ok', 'Sign-in code', 'Weekly report']);
    assert.deepEqual(await subjects('-is:unread'), []);
  });

  test('unknown terms, unreadable values and unbalanced quotes are free text; over 500 characters is 422', async () => {
    assert.deepEqual(await subjects('colour:blue'), []);
    assert.deepEqual(await subjects('after:someday'), []);
    assert.deepEqual(await subjects('"weekly'), ['Weekly report']);
    assert.deepEqual(await subjects('subject:"weekly'), ['Weekly report']);
    const long = await t.admin('GET', `/admin/v1/inbox?q=${'a'.repeat(501)}`);
    assert.equal(long.status, 422, long.text);
    assert.equal(long.body.error.details[0].field, 'q');
  });
});
