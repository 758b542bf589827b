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

/** A rate window's entries as stored: their times, and each one's hits (its running count less the one before). */
async function storedHits(scope: string): Promise<Array<{ at: number; hits: number }>> {
  const [row] = await db.all<{ at_ms: string[]; upto: string[]; before_first: string }>('SELECT at_ms, upto, before_first FROM rate_windows WHERE scope = ?', [scope]);
  return (row?.at_ms ?? []).map((a, i) => ({ at: Number(a), hits: (Number(row!.upto[i]) - Number(i === 0 ? row!.before_first : row!.upto[i - 1]) + 2 ** 31) % 2 ** 31 }));
}

async function counters(): Promise<{ used: number; hits: number; reservations: number }> {
  const [usage] = await db.all<{ used: number }>('SELECT used FROM usage_counters WHERE scope = ?', [USAGE]);
  const rate = await storedHits(WINDOW.scope);
  const [left] = await db.all<{ n: number }>('SELECT COUNT(*) AS n FROM counter_reservations');
  return { used: usage?.used ?? 0, hits: rate.reduce((n, e) => n + e.hits, 0), reservations: left!.n };
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

test('a charge keeps a window as the regrouping of its entries would: in order, out of order, after a pause', async () => {
  // The charge joins or follows the last entry without regrouping the row when it can (most
  // charges); the row must then hold what regrouping every entry would: entries of the last two
  // windows, one per 1/50th of the window at its latest time, oldest first.
  const window = { scope: 'key:regrouped', windowMs: 1_000, limit: 1_000_000 };
  const slice = window.windowMs / 50;
  let model: Array<{ at: number; hits: number }> = [];
  const base = 1_000_000_000_000;
  const charges: Array<[number, number]> = [
    [0, 1], [5, 2], [19, 1], [20, 1], [45, 1], [30, 3], [46, 1], [47, 0], [1_500, 1], [2_030, 1], [2_031, 2], [2_060, 1], [2_100, 1], [5_000, 1], [5_001, 1],
  ];
  for (const [offset, hits] of charges) {
    const at = base + offset;
    await db.write(async (tx: Queryable) => {
      const taken = await takeCounters(
        db,
        tx,
        { windows: [window], usageScopes: [], nowMs: () => at },
        async (counters) => [undefined, await tx.all<CounterRow>(counters.sql, counters.params)] as const,
        () => ({ value: undefined, rate: [{ ...window, hits }], usage: [] }),
      );
      await taken.confirm(tx);
    });
    if (hits > 0) {
      const groups = new Map<number, { at: number; hits: number }>();
      for (const e of [...model.filter((x) => x.at > at - 2 * window.windowMs), { at, hits }]) {
        const g = groups.get(Math.floor(e.at / slice));
        groups.set(Math.floor(e.at / slice), g ? { at: Math.max(g.at, e.at), hits: g.hits + e.hits } : { ...e });
      }
      model = [...groups.values()].sort((a, b) => a.at - b.at);
    }
    const stored = await storedHits(window.scope);
    assert.deepEqual(stored, model, `after the charge of ${hits} at +${offset} ms`);
  }
});

type Window = { scope: string; windowMs: number; limit: number };

/** One batch charging n hits to a window if they fit under its limit (as its reads found it); `between` runs after its reads. */
const chargeWindow = (window: Window, n: number, between?: () => Promise<unknown>) =>
  db.write(async (tx: Queryable) => {
    const taken = await takeCounters(
      db,
      tx,
      { windows: [window], usageScopes: [], nowMs: () => Date.now(), maxHits: n },
      async (counters) => {
        const rows = await tx.all<CounterRow>(counters.sql, counters.params);
        await between?.();
        return [undefined, rows] as const;
      },
      (state) => {
        const fits = (state.rate?.get(window.scope) ?? []).reduce((h, e) => h + e.hits, 0) + n <= window.limit;
        return { value: fits, rate: [{ ...window, hits: fits ? n : 0 }], usage: [] };
      },
    );
    await taken.confirm(tx);
    return taken.value;
  });

const inWindow = async (scope: string) => (await storedHits(scope)).reduce((n, e) => n + e.hits, 0);

test('a rate window charged by another relay after the reads is counted again: its cap holds', async () => {
  // The charge trusts the count the batch read only while the window's row is as it was read.
  const window = { scope: 'ws:raced-window', windowMs: 60_000, limit: 3 };
  assert.equal(await chargeWindow(window, 1), true);
  assert.equal(await chargeWindow(window, 1), true);
  // Read at 2 of 3; another relay then takes the third: the first is refused, decided again, and admits nothing.
  assert.equal(await chargeWindow(window, 1, async () => assert.equal(await chargeWindow(window, 1), true)), false);
  assert.equal(await inWindow(window.scope), 3);
});

test("a rate window's running count wraps past 2^31 and still counts exactly", async () => {
  // Running counts are kept modulo 2^31 (integer arrays): a window whose count passes it keeps
  // counting its hits exactly, as read and as the charge counts them again.
  const window = { scope: 'key:wrapping', windowMs: 60_000, limit: 6 };
  assert.equal(await chargeWindow(window, 2), true);
  // After this charge's read, as if 2^31 - 1 hits had gone before (its row changed: the charge counts again).
  const wrapped = () => db.all('UPDATE rate_windows SET before_first = 2147483645, upto = ARRAY[2147483647] WHERE scope = ?', [window.scope]);
  assert.equal(await chargeWindow(window, 2, wrapped), true);
  assert.equal(await inWindow(window.scope), 4);
  const [row] = await db.all<{ upto: number[] }>('SELECT upto FROM rate_windows WHERE scope = ?', [window.scope]);
  assert.ok(Number(row!.upto.at(-1)) < 2 ** 30, 'the running count wrapped');
  assert.equal(await chargeWindow(window, 2), true);
  assert.equal(await inWindow(window.scope), 6);
  assert.equal(await chargeWindow(window, 2), false);
  assert.equal(await inWindow(window.scope), 6);
});
