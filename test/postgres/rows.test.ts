// The many-rows INSERTs of relay/storage/rows.ts on PostgreSQL (issue 24): one statement text per
// table whatever the number of rows, with one parameter, so a relay prepares it once per
// connection instead of parsing and planning a multi-row VALUES for every batch size; and what
// arrives is what was given (every column, NULLs, numbers, text a JSON escape would change, the
// recipients' email_seq, ON CONFLICT).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Db, Params, Queryable, RunResult } from '../../relay/storage/db.js';
import { insertEmails, insertRecipients, type NewEmailRow } from '../../relay/storage/emails.js';
import { insertRows } from '../../relay/storage/rows.js';
import { openPostgres } from '../../relay/storage/postgres/db.js';
import { freshPostgresDatabase } from '../helpers/backend.js';

let fresh: Awaited<ReturnType<typeof freshPostgresDatabase>> | undefined;
let db: Db;
before(async () => {
  fresh = await freshPostgresDatabase();
  db = await openPostgres({ url: fresh.url });
  // The tenancy rows the emails refer to.
  const at = new Date().toISOString();
  await db.write(async (tx) => {
    await tx.run('INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)', ['w1', 'w1', at]);
    await tx.run("INSERT INTO projects (id, workspace_id, name, environment, created_at) VALUES (?, ?, ?, 'development', ?)", ['p1', 'w1', 'p1', at]);
    await tx.run(
      "INSERT INTO api_keys (id, project_id, name, prefix, permission, secret_hash, last4, created_at) VALUES (?, ?, ?, 'rr_test_', 'email:send', ?, 'xxxx', ?)",
      ['k1', 'p1', 'k1', 'k1', at],
    );
  });
});
after(async () => {
  await db?.close();
  await fresh?.drop();
});

/** The transaction's statements as they are issued: their SQL and how many parameters each bound. */
function recording(tx: Queryable, seen: Array<{ sql: string; params: number }>): Queryable {
  const note = (sql: string, params?: Params) => seen.push({ sql, params: Array.isArray(params) ? params.length : 0 });
  return {
    dialect: tx.dialect,
    run: (sql: string, params?: Params): Promise<RunResult> => (note(sql, params), tx.run(sql, params)),
    get: <T>(sql: string, params?: Params) => (note(sql, params), tx.get<T>(sql, params)),
    all: <T>(sql: string, params?: Params) => (note(sql, params), tx.all<T>(sql, params)),
    lock: (names: string | readonly string[]) => tx.lock(names),
  };
}

let n = 0;
function email(overrides: Partial<NewEmailRow> = {}): NewEmailRow {
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString();
  return {
    id: `em_rows_${String(n++).padStart(4, '0')}`,
    project_id: 'p1',
    workspace_id: 'w1',
    key_id: 'k1',
    status: 'queued',
    from_address: 'Sender <sender@rows.test>',
    to_json: '["a@rows.test"]',
    cc_json: '[]',
    bcc_json: '[]',
    reply_to: null,
    subject: 'Re: "quoted", back\\slash, tab\t, é, 🙂',
    text_body: 'line one\nline two',
    html_body: null,
    headers_json: '{"X-Order":"1"}',
    tags_json: '{"category":"receipt"}',
    metadata_json: '{}',
    test_mode: 1,
    suppression_reason: null,
    created_at: at,
    updated_at: at,
    terminal_at: null,
    ...overrides,
  };
}

/** Writes these emails and one recipient each, recording the statements. */
async function write(emails: NewEmailRow[]): Promise<Array<{ sql: string; params: number }>> {
  const seen: Array<{ sql: string; params: number }> = [];
  await db.write(async (tx) => {
    const q = recording(tx, seen);
    await insertEmails(q, emails);
    await insertRecipients(
      q,
      emails.map((e) => ({ email_id: e.id, position: 0, address: 'A@rows.test', address_lc: 'a@rows.test', type: 'to', status: 'queued', updated_at: e.created_at })),
    );
  });
  return seen;
}

test('a batch of 1 and one of 24 rows run the same two statements, each with one parameter', async () => {
  const one = await write([email()]);
  const many = await write(Array.from({ length: 24 }, () => email()));
  assert.equal(one.length, 2);
  assert.deepEqual(
    many.map((s) => s.sql),
    one.map((s) => s.sql),
  );
  assert.deepEqual(
    [...one, ...many].map((s) => s.params),
    [1, 1, 1, 1],
  );
});

test('every column arrives as given, NULLs and numbers too, and each recipient carries its email\'s seq', async () => {
  const given = email({ reply_to: 'Reply <r@rows.test>', html_body: '<p>hi</p>', suppression_reason: 'complaint', status: 'suppressed', terminal_at: '2026-01-02T00:00:00.000Z', test_mode: 0 });
  await write([given, email()]);
  const stored = await db.get<Record<string, unknown>>('SELECT * FROM emails WHERE id = ?', [given.id]);
  for (const [column, value] of Object.entries(given)) assert.equal(stored![column], value, column);
  const pairs = await db.all<{ seq: number; email_seq: number }>('SELECT e.seq, r.email_seq FROM emails e JOIN recipients r ON r.email_id = e.id');
  assert.ok(pairs.length >= 27);
  for (const p of pairs) assert.equal(p.email_seq, p.seq);
});

test('an ON CONFLICT clause applies to the rows of one parameter', async () => {
  const scope = 'ws:rows-test';
  const charge = (used: number) =>
    db.write((tx) =>
      insertRows(tx, 'usage_counters', ['scope', 'month', 'used'], [{ scope, month: '2026-01', used }, { scope: `${scope}-2`, month: '2026-01', used }], 'ON CONFLICT (scope, month) DO UPDATE SET used = usage_counters.used + excluded.used'),
    );
  await charge(2);
  await charge(3);
  const rows = await db.all<{ scope: string; used: number }>("SELECT scope, used FROM usage_counters WHERE scope LIKE 'ws:rows-test%' ORDER BY scope");
  assert.deepEqual(rows, [
    { scope, used: 5 },
    { scope: `${scope}-2`, used: 5 },
  ]);
});
