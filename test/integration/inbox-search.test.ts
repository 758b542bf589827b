// The inbox search language on both backends (issue 23): Mailpit's terms and more, negation,
// quoted values; unknown terms and unbalanced quotes are free text, never an error; 422 past 500
// characters. tag: and message-id: on real captured mail: worker deliveries with tags, SMTP with
// X-Tags, Message-IDs with and without brackets, and the backfill of mail from before 0016.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import nodemailer from 'nodemailer';
import { startInboxIndexer } from '../../relay/inbox/indexer.js';
import { insertCapturedMessages } from '../../relay/storage/captured.js';
import type { Queryable } from '../../relay/storage/db.js';
import {
  addFieldGrams,
  EVERY_ENTRY_GRAM,
  freeTextGramsOf,
  GRAMS_OVERFLOW,
  gramToken,
  insertInboxEntries,
  replaceShortGrams,
  SEARCH_TEXT_SEPARATOR,
  shortGramsOf,
} from '../../relay/storage/inbox.js';
import { TEST_BACKEND } from '../helpers/backend.js';
import { createProjectWithKey, startTestRelay, type TestRelay } from '../helpers/start-relay.js';

/** Waits until the inbox lists `n` messages (the indexer runs after the capture). */
async function inboxHolds(t: TestRelay, n: number): Promise<void> {
  while ((await t.admin('GET', '/admin/v1/inbox')).body.messages.length !== n) await new Promise((r) => setTimeout(r, 20));
}

/** Sends each message to the sink over SMTP. */
async function sendToSink(t: TestRelay, messages: Array<Parameters<ReturnType<typeof nodemailer.createTransport>['sendMail']>[0]>): Promise<void> {
  const transport = nodemailer.createTransport({ host: t.relay.smtpHost, port: t.relay.smtpPort, ignoreTLS: true });
  try {
    for (const message of messages) await transport.sendMail(message);
  } finally {
    transport.close();
  }
}

/** The subjects a search finds, sorted. */
async function subjectsFound(t: TestRelay, q: string): Promise<string[]> {
  const res = await t.admin('GET', `/admin/v1/inbox?q=${encodeURIComponent(q)}`);
  assert.equal(res.status, 200, `${q}: ${res.text}`);
  return res.body.messages.map((m: { subject: string }) => m.subject).sort();
}

/** The subjects of every page of a search one message a page, newest first (at most `pages` pages). */
async function pagedSubjects(t: TestRelay, q: string, pages = 5): Promise<string[]> {
  const seen: string[] = [];
  let cursor = '';
  for (let page = 0; page < pages; page++) {
    const res = await t.admin('GET', `/admin/v1/inbox?limit=1&q=${encodeURIComponent(q)}${cursor ? `&cursor=${cursor}` : ''}`);
    assert.equal(res.status, 200, res.text);
    seen.push(...res.body.messages.map((m: { subject: string }) => m.subject));
    if (res.body.next_cursor === null) break;
    cursor = res.body.next_cursor;
  }
  return seen;
}

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
    await inboxHolds(t, 4);
  });
  after(() => t.stop());

  const subjects = (q: string) => subjectsFound(t, q);

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

  test('the unread count of all and per project (GET /admin/v1/inbox/unread), as read flags change', async () => {
    const counts = async () => (await t.admin('GET', '/admin/v1/inbox/unread')).body;
    assert.deepEqual(await counts(), { unread: 4, projects: [{ project_id: other.projectId, unread: 1 }] });
    const [code] = (await t.admin('GET', `/admin/v1/inbox?project=${other.projectId}`)).body.messages;
    assert.equal((await t.admin('POST', `/admin/v1/messages/${code.id}/read`, { read: true })).status, 200);
    assert.deepEqual(await counts(), { unread: 3, projects: [] });
    assert.equal((await t.admin('POST', `/admin/v1/messages/${code.id}/read`, { read: false })).status, 200);
    assert.deepEqual(await counts(), { unread: 4, projects: [{ project_id: other.projectId, unread: 1 }] });
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

  test('a search bounded by before:/after: pages by capture time, newest first, each message once', async () => {
    const all = await subjects('');
    const seen: string[] = [];
    let cursor = '';
    for (let pages = 0; pages < 10; pages++) {
      const res = await t.admin('GET', `/admin/v1/inbox?limit=1&q=${encodeURIComponent('after:2000-01-01 before:2999-01-01')}${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(res.status, 200, res.text);
      seen.push(...res.body.messages.map((m: { subject: string }) => m.subject));
      if (res.body.next_cursor === null) break;
      cursor = res.body.next_cursor;
    }
    assert.deepEqual([...seen].sort(), all);
    const newestFirst = (await t.admin('GET', '/admin/v1/inbox')).body.messages.map((m: { subject: string }) => m.subject);
    assert.deepEqual(seen, newestFirst);
    const bad = await t.admin('GET', `/admin/v1/inbox?cursor=${Buffer.from('i2:1:yesterday').toString('base64url')}`);
    assert.equal(bad.status, 422, bad.text);
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

describe('tag: and message-id: (migration 0016)', () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay();
    // Worker deliveries: the API email's tags.
    for (const [subject, tags] of [
      ['Welcome aboard', { signup: 'web', plan: 'pro' }],
      ['Your receipt', { plan: 'free', kind: 'receipt' }],
    ] as const) {
      const sent = await t.send({ subject, tags });
      assert.equal(sent.status, 202, sent.text);
      // Captured before the raw ones below, so the paging test knows the order.
      assert.equal((await t.waitForFinal(sent.body.id)).status, 'delivered');
    }
    // Raw SMTP into the sink: X-Tags headers (Mailpit's form, two of them) and Message-IDs.
    await sendToSink(t, [
      {
        from: 'ci@tags.test',
        to: 'qa@tags.test',
        subject: 'Nightly build',
        text: 'Green.',
        messageId: '<Build.42@CI.Tags.Test>',
        headers: { 'X-Tags': 'Tag 1,  nightly , plan=Enterprise' },
      },
      { from: 'ci@tags.test', to: 'qa@tags.test', subject: 'Untagged', text: 'Plain.', messageId: '<untagged.7@tags.test>' },
    ]);
    await inboxHolds(t, 4);
  });
  after(() => t.stop());

  const subjects = (q: string) => subjectsFound(t, q);

  test("tag:name matches the API email's tags and X-Tags items whatever the value; name=value only that value", async () => {
    assert.deepEqual(await subjects('tag:signup'), ['Welcome aboard']);
    assert.deepEqual(await subjects('tag:plan'), ['Nightly build', 'Welcome aboard', 'Your receipt']);
    assert.deepEqual(await subjects('tag:plan=pro'), ['Welcome aboard']);
    assert.deepEqual(await subjects('tag:PLAN=enterprise'), ['Nightly build']);
    assert.deepEqual(await subjects('tag:nightly'), ['Nightly build']);
    assert.deepEqual(await subjects('tag:"tag 1"'), ['Nightly build']);
    assert.deepEqual(await subjects('tag:"plan = free"'), ['Your receipt']);
    // Exact, never a substring of a name or a value.
    assert.deepEqual(await subjects('tag:pla'), []);
    assert.deepEqual(await subjects('tag:plan=pr'), []);
    assert.deepEqual(await subjects('tag:tag'), []);
  });

  test('tag: negated, combined, paged', async () => {
    assert.deepEqual(await subjects('-tag:plan'), ['Untagged']);
    assert.deepEqual(await subjects('tag:plan -tag:plan=pro'), ['Nightly build', 'Your receipt']);
    assert.deepEqual(await subjects('tag:plan tag:kind=receipt'), ['Your receipt']);
    assert.deepEqual(await subjects('tag:plan subject:welcome'), ['Welcome aboard']);
    assert.deepEqual(await subjects('tag:plan build'), ['Nightly build']);
    // With short terms, plain and negated (on SQLite the rarer of the tag and the short terms drives).
    assert.deepEqual(await subjects('tag:plan -"@"'), []);
    assert.deepEqual(await subjects('tag:plan zq'), []);
    assert.deepEqual(await subjects('tag:nightly -y'), []);
    assert.deepEqual(await subjects('tag:plan -tag:signup -zq'), ['Nightly build', 'Your receipt']);
    for (const q of ['tag:plan', 'tag:plan -zq']) {
      const first = await t.admin('GET', `/admin/v1/inbox?limit=2&q=${encodeURIComponent(q)}`);
      assert.equal(first.body.messages.length, 2);
      const second = await t.admin('GET', `/admin/v1/inbox?limit=2&q=${encodeURIComponent(q)}&cursor=${first.body.next_cursor}`);
      // Capture order (the worker's deliveries and SMTP interleave) decides the pages, not the test.
      const paged = [...first.body.messages, ...second.body.messages].map((m: { subject: string }) => m.subject).sort();
      assert.deepEqual(paged, ['Nightly build', 'Welcome aboard', 'Your receipt']);
      assert.equal(second.body.next_cursor, null);
    }
  });

  test('message-id: exact, with or without angle brackets, case-insensitive, negatable', async () => {
    assert.deepEqual(await subjects('message-id:build.42@ci.tags.test'), ['Nightly build']);
    assert.deepEqual(await subjects('message-id:<Build.42@CI.Tags.Test>'), ['Nightly build']);
    assert.deepEqual(await subjects('message-id:"<build.42@ci.tags.test>"'), ['Nightly build']);
    assert.deepEqual(await subjects('message-id:build.42'), []);
    assert.deepEqual(await subjects('-message-id:<untagged.7@tags.test> -tag:plan'), []);
    assert.deepEqual(await subjects('-message-id:untagged.7@tags.test'), ['Nightly build', 'Welcome aboard', 'Your receipt']);
    // The worker's deliveries carry the Message-ID the relay gave them.
    const [delivered] = (await t.admin('GET', `/admin/v1/inbox?q=${encodeURIComponent('tag:signup')}`)).body.messages;
    const raw = (await t.admin('GET', `/admin/v1/messages/${delivered.id}/raw`)).text;
    const id = /^Message-ID:\s*<([^>]+)>/im.exec(raw)![1]!;
    assert.deepEqual(await subjects(`message-id:${id}`), ['Welcome aboard']);
  });

  test('mail captured before migration 0016 is backfilled by the indexer at start', async () => {
    const { db } = t.relay.services;
    await db.write(async (tx) => {
      await tx.run('DELETE FROM inbox_tags');
      await tx.run('UPDATE inbox_entries SET header_message_id = NULL');
    });
    assert.deepEqual(await subjects('tag:plan'), []);
    const indexer = startInboxIndexer(t.relay.services);
    await indexer.idle();
    await indexer.stop();
    assert.deepEqual(await subjects('tag:plan'), ['Nightly build', 'Welcome aboard', 'Your receipt']);
    assert.deepEqual(await subjects('message-id:<build.42@ci.tags.test>'), ['Nightly build']);
    assert.deepEqual(await subjects('-tag:plan'), ['Untagged']);
  });

  test('a deleted message takes its tags with it', async () => {
    const [nightly] = (await t.admin('GET', `/admin/v1/inbox?q=${encodeURIComponent('tag:nightly')}`)).body.messages;
    assert.equal((await t.admin('DELETE', `/admin/v1/messages/${nightly.id}`)).status, 204);
    const left = await t.relay.services.db.get<{ n: number }>("SELECT count(*) AS n FROM inbox_tags WHERE term = 'nightly'");
    assert.equal(Number(left!.n), 0);
    assert.deepEqual(await subjects('tag:plan'), ['Welcome aboard', 'Your receipt']);
  });
});

describe('terms of one or two characters (migration 0020: their own index)', () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay();
    await sendToSink(t, [
      { from: 'Zoë <zoe@short.test>', to: 'a@short.test', subject: 'Café ☕ order', text: 'Déjà vu 😀x' },
      { from: 'Max <max@short.test>', to: 'b@short.test', subject: 'qz report', text: 'plain text' },
      { from: 'Ann <ann@short.test>', to: 'c@short.test', subject: 'Weekly', text: "nothing here q, it's a\\b" },
    ]);
    await inboxHolds(t, 3);
  });
  after(() => t.stop());

  const subjects = (q: string) => subjectsFound(t, q);

  test('a short term matches wherever it is a substring, as the scan it replaces did, in any script', async () => {
    assert.deepEqual(await subjects('q'), ['Weekly', 'qz report']);
    assert.deepEqual(await subjects('Q'), ['Weekly', 'qz report']);
    assert.deepEqual(await subjects('qz'), ['qz report']);
    assert.deepEqual(await subjects('zq'), []);
    assert.deepEqual(await subjects('ë'), ['Café ☕ order']);
    assert.deepEqual(await subjects('é'), ['Café ☕ order']);
    assert.deepEqual(await subjects('☕'), ['Café ☕ order']);
    // One code point (two UTF-16 units), and two code points (three units: once sent to the trigram index, which found nothing).
    assert.deepEqual(await subjects('😀'), ['Café ☕ order']);
    assert.deepEqual(await subjects('😀x'), ['Café ☕ order']);
    assert.deepEqual(await subjects('" r"'), ['qz report']);
    assert.deepEqual(await subjects('" ☕"'), ['Café ☕ order']);
    // Never across two fields: Max's address ends in t, the To in b; the subject in t, the text in p.
    assert.deepEqual(await subjects('tb'), []);
    assert.deepEqual(await subjects('tp'), []);
  });

  test('short field terms, negated, combined with other terms, paged', async () => {
    assert.deepEqual(await subjects('from:ë'), ['Café ☕ order']);
    assert.deepEqual(await subjects('from:qz'), []);
    assert.deepEqual(await subjects('subject:qz'), ['qz report']);
    assert.deepEqual(await subjects('to:"b@"'), ['qz report']);
    assert.deepEqual(await subjects('-q'), ['Café ☕ order']);
    assert.deepEqual(await subjects('-é -zq'), ['Weekly', 'qz report']);
    assert.deepEqual(await subjects('-from:ë'), ['Weekly', 'qz report']);
    assert.deepEqual(await subjects('q report'), ['qz report']);
    assert.deepEqual(await subjects('q -qz'), ['Weekly']);
    assert.deepEqual(await subjects('q é'), []);
    assert.deepEqual(await subjects('q from:ann is:unread'), ['Weekly']);
    assert.deepEqual(await subjects('é has:attachment'), []);
    // The longer term matches more mail than the short one: the index of short terms drives (SQLite).
    assert.deepEqual(await subjects('ë short'), ['Café ☕ order']);
    assert.deepEqual(await subjects('q from:short'), ['Weekly', 'qz report']);
    assert.deepEqual(await subjects('q subject:short'), []);
    assert.deepEqual(await pagedSubjects(t, 'q'), ['Weekly', 'qz report']);
  });

  test('a negated short term is exactly the mail lacking it in every field (the index answers it: 0024), with other terms, paged', async () => {
    // Everything excluded, nothing excluded, and in between; one and two code points, in any script.
    assert.deepEqual(await subjects('-e'), []);
    assert.deepEqual(await subjects('-"t."'), []);
    assert.deepEqual(await subjects(`-"${EVERY_ENTRY_GRAM}"`), []);
    assert.deepEqual(await subjects('-zq'), ['Café ☕ order', 'Weekly', 'qz report']);
    assert.deepEqual(await subjects('-x'), ['Weekly']);
    assert.deepEqual(await subjects('-ë'), ['Weekly', 'qz report']);
    assert.deepEqual(await subjects('-É'), ['Weekly', 'qz report']);
    assert.deepEqual(await subjects('-😀'), ['Weekly', 'qz report']);
    assert.deepEqual(await subjects('-😀x'), ['Weekly', 'qz report']);
    assert.deepEqual(await subjects('-"☕ "'), ['Weekly', 'qz report']);
    // A quote and a backslash are grams like any other (a tsquery lexeme quotes them on PostgreSQL).
    assert.deepEqual(await subjects("-'"), ['Café ☕ order', 'qz report']);
    assert.deepEqual(await subjects('-\\'), ['Café ☕ order', 'qz report']);
    assert.deepEqual(await subjects('-"\\b"'), ['Café ☕ order', 'qz report']);
    assert.deepEqual(await subjects("'s"), ['Weekly']);
    assert.deepEqual(await subjects("'s -\\"), []);
    // Never across two fields: Max's address ends in t, the To in b.
    assert.deepEqual(await subjects('-tb'), ['Café ☕ order', 'Weekly', 'qz report']);
    // With positive terms short and long, field terms and flags.
    assert.deepEqual(await subjects('q -é'), ['Weekly', 'qz report']);
    assert.deepEqual(await subjects('q -qz -ë'), ['Weekly']);
    assert.deepEqual(await subjects('short -x'), ['Weekly']);
    assert.deepEqual(await subjects('report -é'), ['qz report']);
    assert.deepEqual(await subjects('order -é'), []);
    assert.deepEqual(await subjects('short -e'), []);
    assert.deepEqual(await subjects('from:ann -x'), ['Weekly']);
    assert.deepEqual(await subjects('-from:ann -x'), []);
    assert.deepEqual(await subjects('-é is:unread'), ['Weekly', 'qz report']);
    assert.deepEqual(await subjects('-é has:attachment'), []);
    assert.deepEqual(await pagedSubjects(t, '-é'), ['Weekly', 'qz report']);
  });

  test("the index holds what 0020's definition (the view that filled it for older mail) says", async () => {
    const { db } = t.relay.services;
    const rows = await db.all<{ message_seq: number; from_lc: string; to_lc: string; subject_lc: string; snippet_lc: string; grams: string | string[] }>(
      `SELECT e.message_seq, e.from_lc, e.to_lc, e.subject_lc, e.snippet_lc, s.grams FROM inbox_entries e JOIN inbox_grams_source s ON s.message_seq = e.message_seq`,
    );
    assert.equal(rows.length, 3);
    for (const r of rows) {
      const fields = [r.from_lc, r.to_lc, r.subject_lc, r.snippet_lc];
      const sql = typeof r.grams === 'string' ? r.grams.split(' ') : r.grams;
      const js = TEST_BACKEND === 'postgres' ? shortGramsOf(fields) : shortGramsOf(fields).map(gramToken);
      assert.deepEqual([...sql].sort(), [...js].sort());
      // What a negated short term's index query starts from (inbox.ts: EVERY_ENTRY_GRAM).
      assert.ok(shortGramsOf(fields).includes(EVERY_ENTRY_GRAM));
      if (TEST_BACKEND === 'postgres') {
        const stored = await db.get<{ grams: string[] }>('SELECT tsvector_to_array(short_grams) AS grams FROM inbox_entries WHERE message_seq = ?', [r.message_seq]);
        assert.deepEqual([...stored!.grams].sort(), [...js].sort());
      }
    }
    // A deleted message leaves nothing behind for a short term to find.
    const [zoe] = (await t.admin('GET', `/admin/v1/inbox?q=${encodeURIComponent('ë')}`)).body.messages;
    assert.equal((await t.admin('DELETE', `/admin/v1/messages/${zoe.id}`)).status, 204);
    assert.deepEqual(await subjects('ë'), []);
    // Nor for a negated one: the deleted message was the only one without q.
    assert.deepEqual(await subjects('-q'), []);
    assert.deepEqual(await subjects('-x'), ['Weekly']);
    if (TEST_BACKEND === 'sqlite') {
      const left = await db.get<{ n: number }>('SELECT count(*) AS n FROM inbox_grams WHERE inbox_grams MATCH ?', [`"${gramToken('ë')}"`]);
      assert.equal(Number(left!.n), 0);
    }
  });
});

describe('field terms of one or two characters (migration 0025: grams tagged with their field)', () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay();
    // Oldest first: A holds ë in From and Subject, ab in To; B ë and ab only in its text, an
    // empty Subject; C quotes and a backslash.
    await sendToSink(t, [
      { from: 'Zoë <zoe@field.test>', to: 'ab@field.test', subject: 'ë☕ x', text: 'plain' },
      { from: 'Bob <bob@field.test>', to: 'cd@field.test', subject: '', text: 'ë ab 😀' },
      { from: `"O'Neil" <o.neil@field.test>`, to: 'ef@field.test', subject: 'say "hi" \\ now', text: 'q' },
    ]);
    await inboxHolds(t, 3);
  });
  after(() => t.stop());

  const A = 'ë☕ x';
  const B = '';
  const C = 'say "hi" \\ now';
  const subjects = (q: string) => subjectsFound(t, q);

  test('a negated field term is exactly the mail lacking it in that field, whatever the other fields hold', async () => {
    assert.deepEqual(await subjects('-from:ë'), [B, C].sort());
    assert.deepEqual(await subjects('-FROM:Ë'), [B, C].sort());
    // B holds ë and ab in its text only, A ab in its To only: each field's grams are its own.
    assert.deepEqual(await subjects('-subject:ë'), [B, C].sort());
    assert.deepEqual(await subjects('-to:ab'), [B, C].sort());
    assert.deepEqual(await subjects('-from:ab'), [A, B, C].sort());
    assert.deepEqual(await subjects('-subject:😀'), [A, B, C].sort());
    assert.deepEqual(await subjects('-subject:☕'), [B, C].sort());
    assert.deepEqual(await subjects('-subject:"☕ "'), [B, C].sort());
    assert.deepEqual(await subjects('-to:"@"'), []);
    assert.deepEqual(await subjects('-from:" "'), []);
    // An empty subject lacks every term: a negation keeps it.
    assert.deepEqual(await subjects('-subject:" "'), [B]);
    assert.deepEqual(await subjects('-subject:e'), [A, B, C].sort());
    // Quotes and backslashes are grams like any other (quoted as tsquery lexemes on PostgreSQL).
    assert.deepEqual(await subjects(`-from:'`), [A, B].sort());
    assert.deepEqual(await subjects(`-from:"'n"`), [A, B].sort());
    assert.deepEqual(await subjects('-subject:\\'), [A, B].sort());
    assert.deepEqual(await subjects('-subject:"\\ "'), [A, B].sort());
    assert.deepEqual(await subjects('-subject:hi'), [A, B].sort());
    assert.deepEqual(await subjects('-subject:i"'), [A, B].sort());
    // A tagged gram is never a free-text one, nor the reverse.
    assert.deepEqual(await subjects('"f:"'), []);
    assert.deepEqual(await subjects('-"s:"'), [A, B, C].sort());
    assert.deepEqual(await subjects('-"f:ë"'), [A, B, C].sort());
  });

  test('field terms of one or two characters, positive and negated, with other terms, paged', async () => {
    assert.deepEqual(await subjects('from:ë'), [A]);
    assert.deepEqual(await subjects('subject:ë'), [A]);
    assert.deepEqual(await subjects('to:ab'), [A]);
    assert.deepEqual(await subjects('subject:😀'), []);
    assert.deepEqual(await subjects('ab -to:ab'), [B]);
    assert.deepEqual(await subjects('ë -subject:ë'), [B]);
    assert.deepEqual(await subjects('-ë -from:q'), [C]);
    assert.deepEqual(await subjects('-from:ë -to:ef'), [B]);
    assert.deepEqual(await subjects('-subject:ë -subject:" "'), [B]);
    assert.deepEqual(await subjects('from:b -to:ab'), [B]);
    assert.deepEqual(await subjects('field -subject:x'), [B, C].sort());
    assert.deepEqual(await subjects('-subject:x is:unread'), [B, C].sort());
    assert.deepEqual(await subjects('-subject:x has:attachment'), []);
    assert.deepEqual(await pagedSubjects(t, '-from:ë'), [C, B]);
  });

  test('the index holds the tagged grams of each field; mail indexed before 0025 is found exactly, and gets them from the indexer at start', async () => {
    const { db } = t.relay.services;
    const [row] = await db.all<{ from_lc: string; to_lc: string; subject_lc: string; snippet_lc: string }>(
      "SELECT from_lc, to_lc, subject_lc, snippet_lc FROM inbox_entries WHERE subject_lc = ''",
    );
    const grams = shortGramsOf([row!.from_lc, row!.to_lc, row!.subject_lc, row!.snippet_lc]);
    for (const gram of ['f:b', 'f:bo', 'f: ', 't:cd', 'ë', 'ab', '😀']) assert.ok(grams.includes(gram), gram);
    for (const gram of ['s:', 's: ', 'f:ë', 't:ab', 'f:😀']) assert.ok(!grams.includes(gram), gram);
    // Mail indexed before 0025 holds its free-text grams only.
    const entries = await db.all<{ message_seq: number; from_lc: string; to_lc: string; subject_lc: string; snippet_lc: string }>(
      'SELECT message_seq, from_lc, to_lc, subject_lc, snippet_lc FROM inbox_entries',
    );
    const untagged = (e: (typeof entries)[number]) => [...freeTextGramsOf([e.from_lc, e.to_lc, e.subject_lc, e.snippet_lc])];
    await db.write(async (tx) => {
      for (const e of entries) {
        if (TEST_BACKEND === 'postgres') await tx.run('UPDATE inbox_entries SET short_grams = array_to_tsvector(CAST(? AS TEXT[])) WHERE message_seq = ?', [untagged(e), e.message_seq]);
        else {
          await tx.run('DELETE FROM inbox_grams WHERE rowid = ?', [e.message_seq]);
          await tx.run('INSERT INTO inbox_grams (rowid, grams) VALUES (?, ?)', [e.message_seq, untagged(e).map(gramToken).join(' ')]);
        }
      }
    });
    const holdingTagged = async () => {
      const sql =
        TEST_BACKEND === 'postgres'
          ? ['SELECT count(*) AS n FROM inbox_entries WHERE short_grams @@ CAST(? AS TSQUERY)', "'f:ë'"]
          : ['SELECT count(*) AS n FROM inbox_grams WHERE inbox_grams MATCH ?', `"${gramToken('f:ë')}"`];
      return Number((await db.get<{ n: number }>(sql[0]!, [sql[1]]))!.n);
    };
    assert.equal(await holdingTagged(), 0);
    const exact = async () => {
      assert.deepEqual(await subjects('from:ë'), [A]);
      assert.deepEqual(await subjects('-from:ë'), [B, C].sort());
      assert.deepEqual(await subjects('-subject:ë'), [B, C].sort());
      assert.deepEqual(await subjects('ab -to:ab'), [B]);
      assert.deepEqual(await subjects('-subject:" "'), [B]);
    };
    await exact();
    // A batch of two (the oldest, A and B), then the rest from where it ended: exact in between.
    const first = await db.write((tx) => addFieldGrams(tx, 2));
    assert.equal(first.count, 2);
    assert.equal(await holdingTagged(), 1);
    await exact();
    assert.equal((await db.write((tx) => addFieldGrams(tx, 2, first.lastSeq))).count, 1);
    await db.write(async (tx) => {
      const [c] = await tx.all<{ message_seq: number }>('SELECT message_seq FROM inbox_entries ORDER BY message_seq DESC LIMIT 1');
      await replaceShortGrams(tx, [{ seq: Number(c!.message_seq), grams: untagged(entries.find((e) => e.message_seq === c!.message_seq)!) }]);
    });
    // The indexer gives the rest theirs at start.
    const indexer = startInboxIndexer(t.relay.services);
    await indexer.idle();
    await indexer.stop();
    assert.equal((await db.write((tx) => addFieldGrams(tx, 2))).count, 0);
    await exact();
  });
});

describe('an entry with more grams than a PostgreSQL tsvector holds (0024, 0025)', () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay();
  });
  after(() => t.stop());

  test('is written, and every short term, negated or not, still finds exactly what contains it', async () => {
    // 80,000 distinct pairs of CJK characters: under 500,000 bytes of free-text grams, but with the
    // subject's tagged grams (0025) 1.1 MB. A tsvector holds 1 MB of lexemes (array_to_tsvector
    // past it returns one that misses some: 3.6 MB, PostgreSQL 15).
    const cjk = (n: number) => String.fromCodePoint(0x4e00 + n);
    const huge = Array.from({ length: 80_000 }, (_, i) => `${cjk(i % 400)}${cjk(400 + Math.floor(i / 400))}`).join(' ');
    const hugeGrams = shortGramsOf([' a@big.test', 'b@big.test', huge, 'x']);
    const bytes = (grams: string[]) => Buffer.byteLength(grams.join(''), 'utf8');
    assert.ok(bytes(hugeGrams.filter((g) => [...g].length <= 2)) < 500_000 && bytes(hugeGrams) > 1_000_000);
    const { db } = t.relay.services;
    await db.write(async (tx) => {
      for (const [n, subject] of [[1, huge], [2, 'plain']] as const) {
        const id = `msg_huge_grams_${n}`;
        await insertCapturedMessages(tx, [
          { id, envelopeFrom: 'a@big.test', headerFrom: 'a@big.test', envelopeTo: ['b@big.test'], subject, raw: Buffer.from('Subject: x\r\n\r\nx\r\n'), emailId: null, projectId: null, receivedAt: new Date().toISOString() },
        ]);
        const row = await tx.get<{ seq: number }>('SELECT seq FROM captured_messages WHERE id = ?', [id]);
        const entry = { id, from_name: '', from_address: 'a@big.test', to: 'b@big.test', subject, snippet: 'x', size: 10, attachments: 0, email_id: null, project_id: null, received_at: new Date().toISOString() };
        assert.equal((await insertInboxEntries(tx, [{ ...entry, seq: Number(row!.seq), message_id_term: '', tag_terms: [] }])).length, 1);
      }
    });
    if (TEST_BACKEND === 'postgres') {
      const stored = await db.all<{ grams: string[] }>('SELECT tsvector_to_array(short_grams) AS grams FROM inbox_entries ORDER BY message_seq');
      assert.deepEqual(stored.map((r) => [...r.grams].sort()), [[EVERY_ENTRY_GRAM, GRAMS_OVERFLOW].sort(), shortGramsOf([' a@big.test', 'b@big.test', 'plain', 'x']).sort()]);
    }
    const found = async (q: string) => (await subjectsFound(t, q)).map((s) => (s === huge ? 'huge' : s)).sort();
    assert.deepEqual(await found(`${cjk(5)}${cjk(400)}`), ['huge']);
    assert.deepEqual(await found(`-${cjk(5)}${cjk(400)}`), ['plain']);
    assert.deepEqual(await found(`-${cjk(5)}`), ['plain']);
    assert.deepEqual(await found('-zq'), ['huge', 'plain']);
    assert.deepEqual(await found('-p'), ['huge']);
    assert.deepEqual(await found('p'), ['plain']);
    assert.deepEqual(await found('-"@"'), []);
    // Field terms: the marker holds for them too.
    const last = `${cjk(79_999 % 400)}${cjk(400 + Math.floor(79_999 / 400))}`;
    assert.deepEqual(await found(`subject:${last}`), ['huge']);
    assert.deepEqual(await found(`to:${last}`), []);
    assert.deepEqual(await found(`-subject:${last}`), ['plain']);
    assert.deepEqual(await found(`-subject:${cjk(5)}`), ['plain']);
    assert.deepEqual(await found(`-from:${cjk(5)}`), ['huge', 'plain']);
    assert.deepEqual(await found('-subject:" "'), ['plain']);
    assert.deepEqual(await found('-subject:p'), ['huge']);
    assert.deepEqual(await found('-from:a'), []);
    assert.deepEqual(await found('-to:x'), ['huge', 'plain']);
  });
});

describe('negated free-text terms of three characters or more (migration 0026: narrow rows)', () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay();
    // Case folding where JavaScript's toLowerCase() (the relay's) and Unicode case folding (FTS5's)
    // differ: the Kelvin sign lowers to k; the long s and the final sigma stay, though they fold
    // to s and σ; ß stays ß. A search matches what the lower-cased fields hold, exactly.
    await sendToSink(t, [
      { from: 'Zoë <zoe@long.test>', to: 'a@long.test', subject: 'Order shipped', text: 'Your order is on its way. Straße 5' },
      { from: 'Max <max@long.test>', to: 'b@long.test', subject: 'Weather report', text: 'ſun and ς, [ok] *x* ?y 5% a_b \\z' },
      { from: 'Ann <ann@long.test>', to: 'c@long.test', subject: '\u212Aelvin CAFÉ', text: 'plain text order' },
    ]);
    await inboxHolds(t, 3);
  });
  after(() => t.stop());

  const subjects = (q: string) => subjectsFound(t, q);
  const all = ['Order shipped', 'Weather report', '\u212Aelvin CAFÉ'].sort();

  test('exactly the mail lacking the term in every field: held by every entry, some, none; case and script', async () => {
    assert.deepEqual(await subjects('-long.test'), []);
    assert.deepEqual(await subjects('-"@long"'), []);
    assert.deepEqual(await subjects('-order'), ['Weather report']);
    assert.deepEqual(await subjects('-ORDER'), ['Weather report']);
    assert.deepEqual(await subjects('-no-such-text'), all);
    assert.deepEqual(await subjects('-kelvin'), ['Order shipped', 'Weather report']);
    assert.deepEqual(await subjects('-\u212Aelvin'), ['Order shipped', 'Weather report']);
    assert.deepEqual(await subjects('-café'), ['Order shipped', 'Weather report']);
    assert.deepEqual(await subjects('-CAFÉ'), ['Order shipped', 'Weather report']);
    assert.deepEqual(await subjects('-cafe'), all);
    assert.deepEqual(await subjects('-sun'), all);
    assert.deepEqual(await subjects('-ſun'), ['Order shipped', '\u212Aelvin CAFÉ']);
    assert.deepEqual(await subjects('-"and σ"'), all);
    assert.deepEqual(await subjects('-"and ς"'), ['Order shipped', '\u212Aelvin CAFÉ']);
    assert.deepEqual(await subjects('-straße'), ['Weather report', '\u212Aelvin CAFÉ']);
    assert.deepEqual(await subjects('-strasse'), all);
    assert.deepEqual(await subjects('-zoë'), ['Weather report', '\u212Aelvin CAFÉ']);
    // The positive terms match the same lower-cased text (FTS5 alone folds ſ to s and ς to σ on SQLite).
    assert.deepEqual(await subjects('sun'), []);
    assert.deepEqual(await subjects('ſun'), ['Weather report']);
    assert.deepEqual(await subjects('"and σ"'), []);
    assert.deepEqual(await subjects('"and ς"'), ['Weather report']);
    assert.deepEqual(await subjects('subject:elvin'), ['\u212Aelvin CAFÉ']);
    assert.deepEqual(await subjects('strasse'), []);
    // GLOB's (SQLite) and LIKE's (PostgreSQL) special characters match themselves.
    for (const term of ['[ok]', '[ok', 'ok]', '*x*', '?y ', '5% ', 'a_b', '\\z']) assert.deepEqual(await subjects(`-"${term}"`), ['Order shipped', '\u212Aelvin CAFÉ'], term);
    for (const term of ['o*d', 'o?d', '[xo]rder', 'o%d', 'o_d', '\\rder']) assert.deepEqual(await subjects(`-"${term}"`), all, term);
    // Never across two fields, also for a term holding the character that joins them in the narrow rows.
    assert.deepEqual(await subjects('-"test a@"'), all);
    assert.deepEqual(await subjects('-"test\u0001a@"'), all);
    assert.deepEqual(await subjects('-"shipped\u0001your"'), all);
  });

  test('with other terms, each index driving, and paged newest first', async () => {
    assert.deepEqual(await subjects('-order -kelvin'), ['Weather report']);
    assert.deepEqual(await subjects('-order -zzz'), ['Weather report']);
    assert.deepEqual(await subjects('-order is:unread'), ['Weather report']);
    assert.deepEqual(await subjects('-order is:read'), []);
    assert.deepEqual(await subjects('-order from:max'), ['Weather report']);
    assert.deepEqual(await subjects('-order -from:max'), []);
    assert.deepEqual(await subjects('-order report'), ['Weather report']);
    assert.deepEqual(await subjects('-order a'), ['Weather report']);
    assert.deepEqual(await subjects('-order -q'), ['Weather report']);
    assert.deepEqual(await subjects('-order -e'), []);
    assert.deepEqual(await subjects('-order has:attachment'), []);
    assert.deepEqual(await subjects(`-order after:2000-01-01`), ['Weather report']);
    const paged = (q: string) => pagedSubjects(t, q);
    assert.deepEqual(await paged('-zzz'), ['\u212Aelvin CAFÉ', 'Weather report', 'Order shipped']);
    assert.deepEqual(await paged('-kelvin'), ['Weather report', 'Order shipped']);
    assert.deepEqual(await paged('-shipped'), ['\u212Aelvin CAFÉ', 'Weather report']);
  });

  test("the narrow rows are what 0026's and 0028's definitions say, and a deleted message takes its row with it", async () => {
    const { db } = t.relay.services;
    const narrow = () => db.all<{ message_seq: number; text: string }>('SELECT message_seq, text FROM inbox_search_text ORDER BY message_seq');
    const defined = await db.all<{ message_seq: number; text: string }>('SELECT message_seq, text FROM inbox_search_text_source ORDER BY message_seq');
    assert.equal(defined.length, 3);
    assert.deepEqual(await narrow(), defined);
    type Fields = { message_seq: number; from_lc: string; to_lc: string; subject_lc: string };
    const fieldRows = () => db.all<Fields>('SELECT message_seq, from_lc, to_lc, subject_lc FROM inbox_search_fields ORDER BY message_seq');
    const definedFields = await db.all<Fields>('SELECT message_seq, from_lc, to_lc, subject_lc FROM inbox_search_fields_source ORDER BY message_seq');
    assert.equal(definedFields.length, 3);
    assert.deepEqual(await fieldRows(), definedFields);
    const entries = await db.all<{ message_seq: number; from_lc: string; to_lc: string; subject_lc: string; snippet_lc: string }>(
      'SELECT message_seq, from_lc, to_lc, subject_lc, snippet_lc FROM inbox_entries ORDER BY message_seq',
    );
    assert.deepEqual(
      defined.map((r) => r.text),
      entries.map((e) => [e.from_lc, e.to_lc, e.subject_lc, e.snippet_lc].join(SEARCH_TEXT_SEPARATOR)),
    );
    assert.deepEqual(definedFields, entries.map(({ message_seq, from_lc, to_lc, subject_lc }) => ({ message_seq, from_lc, to_lc, subject_lc })));
    const [weather] = (await t.admin('GET', `/admin/v1/inbox?q=${encodeURIComponent('-order')}`)).body.messages;
    assert.equal((await t.admin('DELETE', `/admin/v1/messages/${weather.id}`)).status, 204);
    assert.deepEqual(await subjects('-order'), []);
    assert.deepEqual(await subjects('-kelvin'), ['Order shipped']);
    assert.deepEqual((await narrow()).map((r) => Number(r.message_seq)), [entries[0]!, entries[2]!].map((e) => Number(e.message_seq)));
    assert.deepEqual(await subjects('-from:zoë'), ['\u212Aelvin CAFÉ']);
    assert.deepEqual((await fieldRows()).map((r) => Number(r.message_seq)), [entries[0]!, entries[2]!].map((e) => Number(e.message_seq)));
    assert.equal((await t.admin('DELETE', '/admin/v1/messages')).status, 204);
    assert.deepEqual(await narrow(), []);
    assert.deepEqual(await fieldRows(), []);
  });
});

describe('negated field terms of three characters or more (migration 0028: narrow rows of the fields)', () => {
  let t: TestRelay;
  // Entries written as the indexer writes them; the term is in one field and not in another (a
  // check of the wrong column excludes the wrong mail), fields hold the separator that joins them
  // in 0026's joined text (char(1)), and GLOB's and LIKE's special characters (a term holding one
  // would match more than itself unescaped, excluding mail that lacks it).
  const SEP = SEARCH_TEXT_SEPARATOR;
  const fields: Array<{ from_name: string; to: string; subject: string; snippet: string }> = [
    { from_name: 'Shop', to: 'ada@x.test', subject: 'Your receipt 1', snippet: 'thanks' },
    { from_name: 'Receipts', to: 'receipt@x.test', subject: 'hello', snippet: 'no receipt' },
    { from_name: 'Shop', to: 'bob@x.test', subject: 'hi', snippet: `receipt${SEP}more` },
    { from_name: `a${SEP}b`, to: 'receipt@x.test', subject: `x${SEP}receipt`, snippet: 'plain' },
    { from_name: `a${SEP}receipt`, to: 'c@x.test', subject: 'order', snippet: `${SEP}` },
    { from_name: 'Shop', to: `d${SEP}@x.test`, subject: '', snippet: 'receipt' },
    { from_name: '', to: 'e@x.test', subject: 'RECEIPT [ok] 5% a_b', snippet: '' },
  ];
  before(async () => {
    t = await startTestRelay();
    const { db } = t.relay.services;
    await db.write(async (tx) => {
      for (const [n, f] of fields.entries()) {
        const id = `msg_long_field_${n}`;
        await insertCapturedMessages(tx, [
          { id, envelopeFrom: 'a@x.test', headerFrom: 'a@x.test', envelopeTo: ['b@x.test'], subject: f.subject, raw: Buffer.from('Subject: x\r\n\r\nx\r\n'), emailId: null, projectId: null, receivedAt: new Date().toISOString() },
        ]);
        const row = await tx.get<{ seq: number }>('SELECT seq FROM captured_messages WHERE id = ?', [id]);
        const entry = { id, ...f, from_address: `n${n}@from.test`, size: 10, attachments: 0, email_id: null, project_id: null, received_at: new Date().toISOString() };
        assert.equal((await insertInboxEntries(tx, [{ ...entry, seq: Number(row!.seq), message_id_term: '', tag_terms: [] }])).length, 1);
      }
    });
  });
  after(() => t.stop());

  /** The entries (by their place in `fields`) whose field lacks the term, as the scan decides. */
  const lacking = (field: 'from' | 'to' | 'subject', term: string) =>
    fields.flatMap((f, n) => {
      const value = { from: `${f.from_name} n${n}@from.test`, to: f.to, subject: f.subject }[field].toLowerCase();
      return value.includes(term.toLowerCase()) ? [] : [n];
    });
  const found = async (q: string) => {
    const res = await t.admin('GET', `/admin/v1/inbox?q=${encodeURIComponent(q)}`);
    assert.equal(res.status, 200, res.text);
    return res.body.messages.map((m: { id: string }) => Number(m.id.replace('msg_long_field_', ''))).sort((a: number, b: number) => a - b);
  };

  test('are exactly the mail lacking the term in that field, whatever the other fields and their separators hold', async () => {
    for (const field of ['from', 'to', 'subject'] as const) {
      for (const term of [
        'receipt', 'RECEIPT', 'x.test', 'from.test', 'shop', 'no-such', '[ok]', '5% a', 'a_b', '5%', `b n3@`, `x${SEP}receipt`, `a${SEP}b`, `a${SEP}rec`,
        'r?ceipt', 'r*pt', '[rx]eceipt', 'r_ceipt', 're%pt', 'rec\\eipt', '[ok', 'ok]', 'a\\_b',
      ]) {
        assert.deepEqual(await found(`-${field}:"${term}"`), lacking(field, term), `-${field}:${term}`);
      }
    }
    // Beside other terms, paged newest first.
    assert.deepEqual(await found('-subject:receipt -from:shop'), lacking('subject', 'receipt').filter((n) => lacking('from', 'shop').includes(n)));
    assert.deepEqual(await found('-subject:receipt -order'), lacking('subject', 'receipt').filter((n) => n !== 4));
    const paged = await pagedSubjects(t, '-subject:receipt', 10);
    assert.deepEqual(paged, lacking('subject', 'receipt').reverse().map((n) => fields[n]!.subject));
  });
});

describe("the indexer's entries written (migration 0031: one statement on SQLite)", () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay();
  });
  after(async () => {
    await t?.stop();
  });

  test('an entry, its short grams and its tag terms in one statement; a gone message and an entry written already are left out', async () => {
    const { db } = t.relay.services;
    const receivedAt = new Date().toISOString();
    const id = 'msg_intake_one';
    const seq = await db.write(async (tx) => {
      await insertCapturedMessages(tx, [
        { id, envelopeFrom: 'a@intake.test', headerFrom: 'a@intake.test', envelopeTo: ['b@intake.test'], subject: 'Zq intake', raw: Buffer.from('Subject: x\r\n\r\nx\r\n'), emailId: null, projectId: null, receivedAt },
      ]);
      return Number((await tx.get<{ seq: number }>('SELECT seq FROM captured_messages WHERE id = ?', [id]))!.seq);
    });
    const entry = { id, from_name: '', from_address: 'a@intake.test', to: 'b@intake.test', subject: 'Zq intake', snippet: 'x', size: 10, attachments: 0, email_id: null, project_id: null, received_at: receivedAt };
    const gone = { ...entry, id: 'msg_intake_gone', seq: seq + 1_000, message_id_term: '', tag_terms: ['gone'] };
    const statements: string[] = [];
    const counted = (tx: Queryable): Queryable => ({
      dialect: tx.dialect,
      lock: (names) => tx.lock(names),
      run: (sql, params) => (statements.push(sql), tx.run(sql, params)),
      get: (sql, params) => (statements.push(sql), tx.get(sql, params)),
      all: (sql, params) => (statements.push(sql), tx.all(sql, params)),
    });
    const kept = await db.write((tx) => insertInboxEntries(counted(tx), [{ ...entry, seq, message_id_term: 'm1@intake.test', tag_terms: ['kind', 'kind=receipt', 'kind'] }, gone]));
    assert.deepEqual(kept.map((e) => e.id), [id]);
    // SQLite: one trip of the writer (the view's trigger writes the grams and the tags); PostgreSQL: the entries, then their tags.
    assert.equal(statements.length, TEST_BACKEND === 'postgres' ? 2 : 1, statements.join('\n'));
    // Written again (the indexer after a restart, say): nothing kept, nothing doubled.
    assert.deepEqual(await db.write((tx) => insertInboxEntries(tx, [{ ...entry, seq, message_id_term: 'm1@intake.test', tag_terms: ['kind'] }])), []);
    const tags = await db.all<{ term: string }>('SELECT term FROM inbox_tags WHERE message_seq IN (?, ?) ORDER BY term', [seq, seq + 1_000]);
    assert.deepEqual(tags.map((r) => r.term), ['kind', 'kind=receipt']);
    assert.equal(Number((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM inbox_entries'))!.n), 1);
    assert.deepEqual(await subjectsFound(t, 'zq'), ['Zq intake']);
    assert.deepEqual(await subjectsFound(t, 'subject:zq'), ['Zq intake']);
    assert.deepEqual(await subjectsFound(t, 'tag:kind=receipt'), ['Zq intake']);
    assert.deepEqual(await subjectsFound(t, 'message-id:m1@intake.test'), ['Zq intake']);
  });
});
