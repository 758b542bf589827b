// The many-rows helpers of relay/storage/rows.ts on a real SQLite file: every row arrives, across
// the JSON size cap too; ON CONFLICT clauses apply; IN lists match exactly their values.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase, type Db } from '../../relay/storage/db.js';
import { inTextPairs, insertRows, inValues } from '../../relay/storage/rows.js';

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
