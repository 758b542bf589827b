// takeCounters on SQLite: the counters are read together with the batch's own reads and charged by
// confirm, inside the batch's transaction, so they cost the batch no trip of their own; a batch
// rolled back after its confirm has charged nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Queryable } from '../../relay/storage/db.js';
import { takeCounters, type CounterRow } from '../../relay/storage/counters.js';
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
