// takeCounters on PostgreSQL charges first (issue 24): the batch decides against the counters as
// its reads found them and charges in one statement, all or nothing. When another relay charged a
// counter in between so that the charge no longer fits, nothing of that statement stays charged
// (not the rate window that still fitted either), and the batch is decided again against the
// counters locked; a refusal then charges nothing at all.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Db, Queryable } from '../../relay/storage/db.js';
import { takeCounters, type CounterDecision, type CounterRow, type CounterState } from '../../relay/storage/counters.js';
import { openPostgres } from '../../relay/storage/postgres/db.js';
import { freshPostgresDatabase } from '../helpers/backend.js';

let db: Db;
let drop: () => Promise<void>;
before(async () => {
  const fresh = await freshPostgresDatabase();
  drop = fresh.drop;
  db = await openPostgres({ url: fresh.url });
});
after(async () => {
  await db?.close();
  await drop?.();
});

const WINDOW = { scope: 'ws:counters', windowMs: 60_000, limit: 100 };
const USAGE = 'month:counters';
const CAP = 5;

/** One batch: charges `recipients` (one hit of the window) if they fit under CAP; `between` runs after its reads. */
async function batch(recipients: number, between?: () => Promise<void>): Promise<{ seen: number[]; admitted: boolean }> {
  const seen: number[] = [];
  const value = await db.write(async (tx: Queryable) => {
    const taken = await takeCounters(
      db,
      tx,
      { windows: [WINDOW], usageScopes: [USAGE], nowMs: () => Date.now() },
      async (counters) => {
        const rows = await tx.all<CounterRow>(counters.sql, counters.params);
        await between?.();
        return [undefined, rows] as const;
      },
      (state: CounterState): CounterDecision<boolean> => {
        const used = state.used.get(USAGE) ?? 0;
        seen.push(used);
        const fits = used + recipients <= CAP;
        return {
          value: fits,
          rate: [{ ...WINDOW, hits: fits ? 1 : 0 }],
          usage: [{ scope: USAGE, cap: CAP, recipients: fits ? recipients : 0 }],
        };
      },
    );
    await taken.confirm(tx);
    return taken.value;
  });
  return { seen, admitted: value };
}

async function counters(): Promise<{ used: number; hits: number; reservations: number }> {
  const [usage] = await db.all<{ used: number }>('SELECT used FROM usage_counters WHERE scope = ?', [USAGE]);
  const [rate] = await db.all<{ hits: number[] }>('SELECT hits FROM rate_windows WHERE scope = ?', [WINDOW.scope]);
  const [left] = await db.all<{ n: number }>('SELECT COUNT(*) AS n FROM counter_reservations');
  return { used: usage?.used ?? 0, hits: (rate?.hits ?? []).reduce((n, h) => n + h, 0), reservations: left!.n };
}

test('a charge that fits is decided once and charged whole; its reservation goes with the batch commit', async () => {
  assert.deepEqual(await batch(2), { seen: [0], admitted: true });
  assert.deepEqual(await counters(), { used: 2, hits: 1, reservations: 0 });
});

test('a counter charged by another relay after the reads: nothing of the first charge stays, the batch is decided again', async () => {
  // Read at 2 used; another relay then takes 2 more, so 2 + 2 + 2 would pass the cap of 5.
  const raced = await batch(2, async () => assert.deepEqual(await batch(2), { seen: [2], admitted: true }));
  assert.deepEqual(raced, { seen: [2, 4], admitted: false });
  // The refused charge left nothing: not its usage, not its hit of the window (which fitted).
  assert.deepEqual(await counters(), { used: 4, hits: 2, reservations: 0 });
  // Decided again against what is there, a charge that fits goes through.
  assert.deepEqual(await batch(1, async () => assert.deepEqual(await batch(0), { seen: [4], admitted: true })), { seen: [4], admitted: true });
  assert.deepEqual(await counters(), { used: 5, hits: 4, reservations: 0 });
});
