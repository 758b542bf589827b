// takeCounters on SQLite: the counters are read together with the batch's own reads and charged by
// confirm, inside the batch's transaction, so they cost the batch no trip of their own; a batch
// rolled back after its confirm has charged nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Queryable } from '../../relay/storage/db.js';
import { takeCounters, type CounterRow } from '../../relay/storage/counters.js';
import { readTogether, type Read } from '../../relay/storage/rows.js';
import { tempDatabase } from '../helpers/temp-database.js';

const database = tempDatabase('raven-counters-');

/** A batch charging `recipients` to one usage scope; what it saw: the count before, and its own read. */
async function charge(tx: Queryable, recipients: number): Promise<{ used: number; read: string }> {
  const taken = await takeCounters(
    database(),
    tx,
    { windows: [], usageScopes: ['ws_counters'], nowMs: () => Date.now() },
    async (counters) => ['the batch read', await tx.all<CounterRow>(counters.sql, counters.params)] as const,
    (state, read) => ({ value: { used: state.used.get('ws_counters') ?? 0, read }, rate: [], usage: [{ scope: 'ws_counters', cap: null, recipients }] }),
  );
  await taken.confirm(tx);
  return taken.value;
}

test('the usage counters are charged in the batch transaction: a batch rolled back charges nothing', async () => {
  const db = database();
  assert.deepEqual(await db.write((tx) => charge(tx, 3)), { used: 0, read: 'the batch read' });
  await assert.rejects(
    db.write(async (tx) => {
      await charge(tx, 5);
      throw new Error('the batch fails after its charge');
    }),
    /the batch fails/,
  );
  assert.deepEqual(await db.write((tx) => charge(tx, 2)), { used: 3, read: 'the batch read' });
  assert.equal((await db.write((tx) => charge(tx, 0))).used, 5);
});

test("the counters' read joins the batch's other reads in one statement (readTogether), with the rows it reads alone", async () => {
  const db = database();
  await db.write((tx) => charge(tx, 4));
  let statements = 0;
  const seen = await db.write(async (tx) => {
    const counted: Queryable = { ...tx, dialect: tx.dialect, lock: (n) => tx.lock(n), run: (s, p) => tx.run(s, p), get: (s, p) => tx.get(s, p), all: (s, p) => (statements++, tx.all(s, p)) };
    const other: Read<{ n: number }> = { sql: 'SELECT COUNT(*) AS n FROM usage_counters', params: [], columns: ['n'] };
    const taken = await takeCounters(
      db,
      counted,
      { windows: [], usageScopes: ['ws_counters', 'ws_none'], nowMs: () => Date.now() },
      async (counters) => {
        const [others, rows] = await readTogether(counted, [other, counters] as const);
        const alone = await tx.all<CounterRow>(counters.sql, counters.params);
        assert.deepEqual(rows, alone);
        return [others, rows] as const;
      },
      (state) => ({ value: state.used.get('ws_counters'), rate: [], usage: [] }),
    );
    return taken.value;
  });
  const stored = await db.get<{ used: number }>("SELECT used FROM usage_counters WHERE scope = 'ws_counters'");
  assert.ok(seen !== undefined && seen >= 4 && seen === stored?.used, `${seen}`);
  assert.equal(statements, 1);
});
