// The many-rows helpers of relay/storage/rows.ts on a real SQLite file: every row arrives, across
// the JSON size cap too; ON CONFLICT clauses apply; IN lists match exactly their values; submitted
// messages go many to a statement, split at the size cap; reads that name their columns come back
// from one statement as they would from their own.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase, type Db, type Params, type Queryable } from '../../relay/storage/db.js';
import { insertEmails, insertSubmissions, type NewEmailRow } from '../../relay/storage/emails.js';
import { bySize, inTextPairs, insertRows, inValues, readTogether, type Read } from '../../relay/storage/rows.js';

let dir: string;
let db: Db;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'raven-rows-'));
  db = await openDatabase(path.join(dir, 'raven.sqlite'));
});

after(async () => {
  await db.close();
  await rm(dir, { recursive: true, force: true });
});

const settings = async (prefix: string) =>
  db.all<{ name: string; value: string }>("SELECT name, value FROM settings WHERE name LIKE ? || '%' ORDER BY name", [prefix]);

test('insertRows stores every row, also when their JSON passes one statement\'s size cap', async () => {
  // Three values of 3 MiB: past the 8 MiB cap of one statement's JSON.
  const big = (c: string) => c.repeat(3 * 1024 * 1024);
  await db.write((tx) => insertRows(tx, 'settings', ['name', 'value'], [{ name: 'big:a', value: big('a') }, { name: 'big:b', value: big('b') }, { name: 'big:c', value: big('c') }]));
  const rows = await settings('big:');
  assert.deepEqual(
    rows.map((r) => [r.name, r.value.length, r.value[0]]),
    [['big:a', 3 * 1024 * 1024, 'a'], ['big:b', 3 * 1024 * 1024, 'b'], ['big:c', 3 * 1024 * 1024, 'c']],
  );
});

test('insertRows of no rows runs nothing, and its ON CONFLICT clause applies', async () => {
  await db.write((tx) => insertRows(tx, 'settings', ['name', 'value'], []));
  await db.write((tx) => insertRows(tx, 'settings', ['name', 'value'], [{ name: 'c:1', value: 'one' }, { name: 'c:2', value: 'two' }]));
  await db.write((tx) =>
    insertRows(tx, 'settings', ['name', 'value'], [{ name: 'c:1', value: 'uno' }, { name: 'c:3', value: 'tres' }], 'ON CONFLICT (name) DO UPDATE SET value = excluded.value'),
  );
  assert.deepEqual(await settings('c:'), [
    { name: 'c:1', value: 'uno' },
    { name: 'c:2', value: 'two' },
    { name: 'c:3', value: 'tres' },
  ]);
});

test('inValues and inTextPairs match exactly the values given, and nothing for an empty list', async () => {
  await db.write((tx) => insertRows(tx, 'settings', ['name', 'value'], [{ name: 'in:a', value: 'x' }, { name: 'in:b', value: 'y' }, { name: 'in:c', value: 'x' }]));
  const byName = async (names: string[]) => {
    const where = inValues(db, 'name', names);
    return (await db.all<{ name: string }>(`SELECT name FROM settings WHERE ${where.sql} ORDER BY name`, where.params)).map((r) => r.name);
  };
  assert.deepEqual(await byName(['in:a', 'in:c', 'in:zz']), ['in:a', 'in:c']);
  assert.deepEqual(await byName([]), []);

  const byPair = async (pairs: Array<[string, string]>) => {
    const where = inTextPairs(db, ['name', 'value'], pairs);
    return (await db.all<{ name: string }>(`SELECT name FROM settings WHERE ${where.sql} ORDER BY name`, where.params)).map((r) => r.name);
  };
  assert.deepEqual(await byPair([['in:a', 'x'], ['in:b', 'x'], ['in:c', 'x']]), ['in:a', 'in:c']);
  assert.deepEqual(await byPair([]), []);
});

test('bySize keeps the order, fills each run up to the cap, and gives an item over the cap a run of its own', () => {
  const runs = (sizes: number[]) => [...bySize(sizes, (n) => n, 10)];
  assert.deepEqual(runs([]), []);
  assert.deepEqual(runs([4, 6, 1, 9, 3]), [[4, 6], [1, 9], [3]]);
  assert.deepEqual(runs([2, 25, 3, 11]), [[2], [25], [3], [11]]);
});

test('insertSubmissions stores many messages in one statement, splits at the size cap, and keeps every byte', async () => {
  const now = new Date().toISOString();
  // The rows an email refers to.
  await db.write(async (tx) => {
    await tx.run("INSERT INTO workspaces (id, name, created_at) VALUES ('ws_rows', 'rows', ?)", [now]);
    await tx.run("INSERT INTO projects (id, workspace_id, name, environment, created_at) VALUES ('prj_rows', 'ws_rows', 'rows', 'development', ?)", [now]);
    await tx.run(
      "INSERT INTO api_keys (id, project_id, name, prefix, permission, secret_hash, last4, created_at) VALUES ('key_rows', 'prj_rows', 'rows', 'rr_test_', 'email:send', 'x', 'xxxx', ?)",
      [now],
    );
  });
  const email = (id: string): NewEmailRow => ({
    id, project_id: 'prj_rows', workspace_id: 'ws_rows', key_id: 'key_rows', status: 'queued',
    from_address: 'a@example.test', to_json: '[]', cc_json: '[]', bcc_json: '[]', reply_to: null, subject: 's', text_body: null, html_body: null,
    headers_json: '{}', tags_json: '{}', metadata_json: '{}', test_mode: 1, suppression_reason: null, created_at: now, updated_at: now, terminal_at: null,
  });
  // The transaction the writer hands out, counting the statements run on it.
  let runs = 0;
  const counted = (tx: Queryable): Queryable => Object.assign(Object.create(tx) as Queryable, { run: (sql: string, params?: Params) => (runs++, tx.run(sql, params)) });
  const small = Array.from({ length: 20 }, (_, i) => ({ emailId: `em_small${i}`, raw: Buffer.from(`Subject: ${i}\r\n\r\n\u00e9\x00${i}`, 'latin1') }));
  // Three of 3 MiB: past the 8 MiB cap of one statement.
  const big = ['a', 'b', 'c'].map((c) => ({ emailId: `em_big${c}`, raw: Buffer.alloc(3 * 1024 * 1024, c) }));
  const statements = await db.write(async (tx) => {
    await insertEmails(tx, [...small, ...big].map((s) => email(s.emailId)));
    await insertSubmissions(counted(tx), small);
    const one = runs;
    await insertSubmissions(counted(tx), big);
    return [one, runs - one];
  });
  assert.deepEqual(statements, [1, 2]);
  const stored = await db.all<{ email_id: string; size: number; raw: Buffer }>("SELECT email_id, size, raw FROM submissions WHERE email_id LIKE 'em_small%' OR email_id LIKE 'em_big%'");
  const byId = new Map(stored.map((r) => [r.email_id, r]));
  for (const s of [...small, ...big]) {
    assert.equal(byId.get(s.emailId)?.size, s.raw.length, s.emailId);
    assert.ok(byId.get(s.emailId)?.raw.equals(s.raw), `${s.emailId} is stored byte for byte`);
  }
});

test('readTogether of reads that name their columns (in one statement) and of one that does not gives each its rows as its own statement would: in order, numbers, nulls and text kept', async () => {
  await db.write((tx) =>
    insertRows(tx, 'settings', ['name', 'value'], [
      { name: 'rt:b', value: 'say "hi", \\ [1, 2] ' },
      { name: 'rt:a', value: '\u00e9t\u00e9 \u{1F4E8}' },
      { name: 'rt:c', value: '' },
    ]),
  );
  const byName: Read<{ name: string; value: string; n: number; none: null }> = {
    sql: "SELECT name, value, length(value) AS n, NULL AS none FROM settings WHERE name LIKE ? || '%' ORDER BY name DESC",
    params: ['rt:'],
    columns: ['name', 'value', 'n', 'none'],
  };
  const count: Read<{ n: number }> = { sql: "SELECT COUNT(*) AS n FROM settings WHERE name LIKE ? || '%'", params: ['rt:'], columns: ['n'] };
  const nothing: Read<{ name: string }> = { sql: 'SELECT name FROM settings WHERE name = ?', params: ['rt:none'], columns: ['name'] };
  const unnamed: Read<{ name: string }> = { sql: "SELECT name FROM settings WHERE name = ? || 'a'", params: ['rt:'] }; // a statement of its own
  const together = await readTogether(db, [byName, undefined, count, nothing, unnamed] as const);
  const alone = await Promise.all([byName, count, nothing, unnamed].map((r) => db.all(r.sql, r.params)));
  assert.deepEqual(together, [alone[0], [], alone[1], [], alone[3]]);
  assert.deepEqual(alone[3], [{ name: 'rt:a' }]);
  assert.deepEqual(together[0].map((r) => r.name), ['rt:c', 'rt:b', 'rt:a']);
  assert.equal(typeof together[2][0]!.n, 'number');
});
