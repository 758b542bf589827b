// The counters an admission charges: its rate windows (`rate_windows`, PostgreSQL only) and the
// month's usage (`usage_counters`). The domain decides against what readCounters answers; the
// charge then either fits what the database holds at that moment or is refused whole.
//
// On SQLite one relay owns the file and its single writer runs one admission batch at a time:
// what the batch read is still true when it charges, the rate windows live in the limiter's
// memory, and the charge is the plain upsert it always was. On PostgreSQL several relays admit
// at once and nobody locks a counter while deciding: chargeCounters charges every window and
// usage counter of the batch in one statement that adds to each only if the result stays within
// its cap (rows taken in one order, rate windows before usage, so two batches never wait on each
// other in a circle). The rows are held from that statement to COMMIT and no longer. When a
// charge does not fit (another relay charged since the batch read), chargeCounters throws
// CountersContended, a serialization failure: the database layer rolls the batch back and runs it
// again, and the second run takes the counters first (lockCounters) and decides on what they hold.
import type { Queryable, Reader } from './db.js';
import { inValues, insertRows } from './rows.js';

/** Hits of a rate window standing at one time (the latest of those they stand for). */
export interface StoredRateEntry {
  atMs: number;
  hits: number;
}

export interface RateWindowRef {
  scope: string;
  windowMs: number;
  /** The window's limit: a charge that would pass it is refused. */
  limit: number;
}

export interface RateCharge extends RateWindowRef {
  hits: number;
}

export interface UsageCharge {
  scope: string;
  /** The month's cap of this counter; null when it has none. */
  cap: number | null;
  recipients: number;
}

export interface CounterState {
  /** Each rate window's entries (scopes without any are absent); undefined where the relay keeps them in memory. */
  rate: Map<string, StoredRateEntry[]> | undefined;
  /** The month's count of each usage scope (scopes without a row are absent). */
  used: Map<string, number>;
}

/** A charge that did not fit: the unit of work is rolled back and run again (SQLSTATE 40001). */
export class CountersContended extends Error {
  readonly code = '40001';
  constructor() {
    super('a counter was charged by another relay meanwhile');
    this.name = 'CountersContended';
  }
}

/** Whether err is a charge refused by chargeCounters. */
export const isCountersContended = (err: unknown): err is CountersContended => err instanceof CountersContended;

/** Without a cap, a usage counter is only counted. */
const UNCAPPED = Number.MAX_SAFE_INTEGER;

interface CounterRow {
  kind: 'rate' | 'usage';
  scope: string;
  at_ms: Array<number | string> | null;
  hits: number[] | null;
  used: number | null;
}

function stateOf(rows: CounterRow[]): CounterState {
  const rate = new Map<string, StoredRateEntry[]>();
  const used = new Map<string, number>();
  for (const r of rows) {
    if (r.kind === 'usage') used.set(r.scope, Number(r.used));
    else rate.set(r.scope, (r.at_ms ?? []).map((at, i) => ({ atMs: Number(at), hits: Number(r.hits![i]) })));
  }
  return { rate, used };
}

/** What the counters hold now, without holding them (exact on SQLite; PostgreSQL's is checked again at the charge). */
export async function readCounters(q: Reader, rateScopes: readonly string[], usageScopes: readonly string[], month: string): Promise<CounterState> {
  if (q.dialect === 'postgres') {
    const rows = await q.all<CounterRow>(
      `SELECT 'rate' AS kind, scope, at_ms, hits, NULL AS used FROM rate_windows WHERE scope = ANY(?)
       UNION ALL SELECT 'usage', scope, NULL, NULL, used FROM usage_counters WHERE scope = ANY(?) AND month = ?`,
      [rateScopes, usageScopes, month],
    );
    return stateOf(rows);
  }
  const where = inValues(q, 'scope', usageScopes);
  const rows = await q.all<{ scope: string; used: number }>(`SELECT scope, used FROM usage_counters WHERE ${where.sql} AND month = ?`, [
    ...where.params,
    month,
  ]);
  return { rate: undefined, used: new Map(rows.map((r) => [r.scope, Number(r.used)])) };
}

// One statement: the rate windows first (in scope order), then, only if every one of them took its
// charge, the usage counters (in scope order). A window is charged only when its hits inside the
// window (entries later than the window's start, later hits included) plus the charge stay within
// its cap, and only if the row still holds every entry that window needs: each charge drops the
// entries two windows older than its time, so one of a batch that read its clock more than a
// window before another relay's charge is refused (it runs again, later). The charge joins the
// entry of its 1/50th of the window, or starts one. A charge of 0 always succeeds and drops
// nothing (its time is 0): that is how lockCounters takes the rows. A usage counter is charged
// when its count plus the charge stays within its cap.
const CHARGE_SQL = `
WITH rate AS (
  INSERT INTO rate_windows AS w (scope, window_ms, cap, kept_after_ms, at_ms, hits)
  SELECT c.scope, c.window_ms, c.cap, CAST(? AS bigint) - 2 * c.window_ms, ARRAY[CAST(? AS bigint)], ARRAY[c.n]
    FROM unnest(CAST(? AS text[]), CAST(? AS bigint[]), CAST(? AS bigint[]), CAST(? AS integer[])) AS c(scope, window_ms, cap, n)
   WHERE c.n <= c.cap
   ORDER BY c.scope
  ON CONFLICT (scope) DO UPDATE SET window_ms = excluded.window_ms, cap = excluded.cap,
    kept_after_ms = GREATEST(w.kept_after_ms, excluded.kept_after_ms), (at_ms, hits) = (
      SELECT COALESCE(array_agg(g.a ORDER BY g.a), '{}'), COALESCE(array_agg(g.h ORDER BY g.a), '{}')
        FROM (SELECT MAX(e.a) AS a, CAST(SUM(e.h) AS integer) AS h
                FROM (SELECT x.a, x.h FROM unnest(w.at_ms, w.hits) AS x(a, h) WHERE x.a > excluded.kept_after_ms
                      UNION ALL SELECT excluded.at_ms[1], excluded.hits[1] WHERE excluded.hits[1] > 0) AS e
               GROUP BY e.a / GREATEST(1, excluded.window_ms / 50)) AS g)
   WHERE excluded.hits[1] = 0
      OR (excluded.at_ms[1] - excluded.window_ms >= w.kept_after_ms
          AND (SELECT COALESCE(SUM(x.h), 0) FROM unnest(w.at_ms, w.hits) AS x(a, h) WHERE x.a > excluded.at_ms[1] - excluded.window_ms)
              + excluded.hits[1] <= excluded.cap)
  RETURNING w.scope, w.at_ms, w.hits
), usage AS (
  INSERT INTO usage_counters AS u (scope, month, used)
  SELECT c.scope, CAST(? AS text), c.n
    FROM unnest(CAST(? AS text[]), CAST(? AS integer[]), CAST(? AS bigint[])) AS c(scope, n, cap)
   WHERE c.n <= c.cap AND (SELECT COUNT(*) FROM rate) = CAST(? AS integer)
   ORDER BY c.scope
  ON CONFLICT (scope, month) DO UPDATE SET used = u.used + excluded.used
   WHERE excluded.used = 0
      OR CAST(u.used AS bigint) + excluded.used
         <= (SELECT c.cap FROM unnest(CAST(? AS text[]), CAST(? AS bigint[])) AS c(scope, cap) WHERE c.scope = excluded.scope)
  RETURNING u.scope, u.used
)
SELECT 'rate' AS kind, scope, at_ms, hits, NULL AS used FROM rate
UNION ALL SELECT 'usage', scope, NULL, NULL, used FROM usage`;

async function chargeOnPostgres(tx: Queryable, month: string, atMs: number, rate: readonly RateCharge[], usage: readonly UsageCharge[]): Promise<CounterState | undefined> {
  const caps = usage.map((u) => Math.floor(u.cap ?? UNCAPPED));
  const rows = await tx.all<CounterRow>(CHARGE_SQL, [
    atMs,
    atMs,
    rate.map((r) => r.scope),
    rate.map((r) => r.windowMs),
    rate.map((r) => Math.floor(r.limit)),
    rate.map((r) => r.hits),
    month,
    usage.map((u) => u.scope),
    usage.map((u) => u.recipients),
    caps,
    rate.length,
    usage.map((u) => u.scope),
    caps,
  ]);
  return rows.length === rate.length + usage.length ? stateOf(rows) : undefined;
}

/**
 * Charges the batch's hits and recipients. On PostgreSQL each charge must still fit what the
 * database holds (another relay may have charged since readCounters); if one does not, nothing
 * is charged and CountersContended is thrown (the unit of work is retried).
 */
export async function chargeCounters(tx: Queryable, month: string, atMs: number, rate: readonly RateCharge[], usage: readonly UsageCharge[]): Promise<void> {
  const rateCharges = rate.filter((r) => r.hits > 0);
  const usageCharges = usage.filter((u) => u.recipients > 0);
  if (tx.dialect === 'postgres') {
    if (rateCharges.length + usageCharges.length === 0) return;
    if (!(await chargeOnPostgres(tx, month, atMs, rateCharges, usageCharges))) throw new CountersContended();
    return;
  }
  await insertRows(
    tx,
    'usage_counters',
    ['scope', 'month', 'used'],
    usageCharges.map((u) => ({ scope: u.scope, month, used: u.recipients })),
    'ON CONFLICT (scope, month) DO UPDATE SET used = usage_counters.used + excluded.used',
  );
}

/**
 * Takes the counters until the unit of work ends and reads them: what a batch decides on after
 * its charge was refused, so its second run cannot be refused again. The caller reads its clock
 * after this (no charge can then come with an earlier time). On SQLite: readCounters.
 */
export async function lockCounters(tx: Queryable, month: string, windows: readonly RateWindowRef[], usageScopes: readonly string[]): Promise<CounterState> {
  if (tx.dialect !== 'postgres') return readCounters(tx, windows.map((w) => w.scope), usageScopes, month);
  const state = await chargeOnPostgres(
    tx,
    month,
    0,
    windows.map((w) => ({ ...w, hits: 0 })),
    usageScopes.map((scope) => ({ scope, cap: null, recipients: 0 })),
  );
  if (!state) throw new Error('a charge of nothing was refused');
  return state;
}
