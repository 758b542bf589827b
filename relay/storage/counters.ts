// The counters an admission charges: its rate windows (`rate_windows`, PostgreSQL only) and the
// month's usage (`usage_counters`). takeCounters reads them, lets the caller decide against them,
// and charges what it decided.
//
// On SQLite one relay owns the file and its single writer runs one admission batch at a time:
// that all happens inside the batch's own transaction, the rate windows living in the limiter's
// memory and the charge being the plain upsert it always was. There the counters are read together
// with the batch's other reads, and charged together with its rows (confirm), so they cost the
// batch no trip of their own to the sqlite3 thread pool. On PostgreSQL several relays admit
// at once. A counter held until the batch's COMMIT would be held through its flush to disk, and
// every relay admitting for that workspace would queue behind it: so the counters are taken in a
// short transaction of their own (rows locked in scope order, rate windows before usage, so two
// never wait on each other in a circle), decided on, charged and committed without waiting for
// the disk (synchronous_commit off), which releases them at once. What was charged is recorded as
// a reservation (`counter_reservations`) that the batch's own transaction deletes as it commits
// durably; since WAL is written in order, that commit makes the charge durable too. A batch that
// fails gives its recipients back (giveBack); one whose relay died is given back by
// refundAbandoned after ABANDONED_AFTER_MS, and a batch that finds its reservation given back already is
// retried (CountersContended). Rate-window hits are not given back: a failed batch's hits keep
// counting until they slide out, which errs on the side of refusing.
import { randomUUID } from 'node:crypto';
import type { Db, Queryable, Reader } from './db.js';
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

/** A charge's record in counter_reservations, written by the charge's own statement. */
interface Reservation {
  id: string;
  month: string;
  usageJson: string;
  createdAt: string;
}

// Written ahead of the charge in its statement (a data-modifying WITH always runs; a charge refused
// throws and rolls it back), with the transaction's commit set not to wait for the disk: one trip
// instead of three.
const RESERVE_SQL = `WITH reserve AS (
  INSERT INTO counter_reservations (id, month, usage_json, created_at)
  SELECT CAST(? AS text), CAST(? AS text), CAST(? AS text), CAST(? AS text) FROM (SELECT set_config('synchronous_commit', 'off', true)) AS s
), `;

type ChargeArgs = [tx: Queryable, month: string, atMs: number, rate: readonly RateCharge[], usage: readonly UsageCharge[], reservation?: Reservation];

async function chargeOnPostgres(...[tx, month, atMs, rate, usage, reservation]: ChargeArgs): Promise<CounterState | undefined> {
  const caps = usage.map((u) => Math.floor(u.cap ?? UNCAPPED));
  const sql = reservation ? RESERVE_SQL + CHARGE_SQL.trimStart().slice('WITH '.length) : CHARGE_SQL;
  const rows = await tx.all<CounterRow>(sql, [
    ...(reservation ? [reservation.id, reservation.month, reservation.usageJson, reservation.createdAt] : []),
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

/** Charges the counters (PostgreSQL: each only if it still fits; false if one did not). */
async function charge(...[tx, month, atMs, rate, usage, reservation]: ChargeArgs): Promise<boolean> {
  const rateCharges = rate.filter((r) => r.hits > 0);
  const usageCharges = usage.filter((u) => u.recipients > 0);
  if (tx.dialect === 'postgres') {
    return rateCharges.length + usageCharges.length === 0 || (await chargeOnPostgres(tx, month, atMs, rateCharges, usageCharges, reservation)) !== undefined;
  }
  await insertRows(
    tx,
    'usage_counters',
    ['scope', 'month', 'used'],
    usageCharges.map((u) => ({ scope: u.scope, month, used: u.recipients })),
    'ON CONFLICT (scope, month) DO UPDATE SET used = usage_counters.used + excluded.used',
  );
  return true;
}

/** Locks the counters until the unit of work ends and reads them (a charge of nothing). */
async function lockCounters(tx: Queryable, month: string, windows: readonly RateWindowRef[], usageScopes: readonly string[]): Promise<CounterState> {
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

/** What the caller decided against the counters: its own result and what to charge. */
export interface CounterDecision<T> {
  value: T;
  rate: RateCharge[];
  usage: UsageCharge[];
}

export interface TakenCounters<T> {
  value: T;
  /** In the batch's transaction, with or after its rows: the charge becomes part of it. */
  confirm(tx: Queryable): Promise<void>;
  /** The batch failed: its recipients are given back (best effort; refundAbandoned otherwise). */
  giveBack(): void;
}

/**
 * Reads the counters of these windows and usage scopes, has `decide` decide against them (and
 * against what `read` read in `tx`) at the time it is given, and charges what it returns, so that
 * no other admission can charge them in between. `tx` is the batch's transaction; on PostgreSQL
 * the counters are taken in a short one of their own (see above); the batch must call confirm(tx)
 * before it commits.
 */
export async function takeCounters<T, R>(
  db: Db,
  tx: Queryable,
  counters: { windows: readonly RateWindowRef[]; usageScopes: readonly string[]; nowMs: () => number },
  read: () => Promise<R>,
  decide: (state: CounterState, read: R, nowMs: number, month: string) => CounterDecision<T>,
): Promise<TakenCounters<T>> {
  const monthOf = (ms: number) => new Date(ms).toISOString().slice(0, 7);
  if (tx.dialect !== 'postgres') {
    // The single writer runs one unit of work at a time: between this read and the charge nothing
    // else can charge, so both ride with the batch's own statements.
    const nowMs = counters.nowMs();
    const month = monthOf(nowMs);
    const [state, done] = await Promise.all([readCounters(tx, counters.windows.map((w) => w.scope), counters.usageScopes, month), read()]);
    const decided = decide(state, done, nowMs, month);
    return {
      value: decided.value,
      confirm: async (batch) => void (await charge(batch, month, nowMs, decided.rate, decided.usage)),
      giveBack: () => undefined,
    };
  }
  const done = await read();
  const id = randomUUID();
  let reserved = false;
  const value = await db.write(async (t) => {
    const month = monthOf(counters.nowMs());
    const state = await lockCounters(t, month, counters.windows, counters.usageScopes);
    // Read once the counters are held: no other charge can come with a later time before this one.
    const nowMs = counters.nowMs();
    if (monthOf(nowMs) !== month) throw new CountersContended(); // the month turned meanwhile: again
    const decided = decide(state, done, nowMs, month);
    const usage = decided.usage.filter((u) => u.recipients > 0).map((u) => ({ scope: u.scope, recipients: u.recipients }));
    reserved = usage.length > 0;
    // Durable with the batch's COMMIT, which is written after it: the reservation's statement says
    // so itself; without one, a statement of its own.
    if (!reserved) await t.run('SET LOCAL synchronous_commit = off');
    const reservation = reserved ? { id, month, usageJson: JSON.stringify(usage), createdAt: new Date().toISOString() } : undefined;
    if (!(await charge(t, month, nowMs, decided.rate, decided.usage, reservation))) throw new Error('a charge of counters held was refused');
    return decided.value;
  });
  return {
    value,
    async confirm(batch) {
      if (reserved && (await batch.run('DELETE FROM counter_reservations WHERE id = ?', [id])).changes !== 1) throw new CountersContended();
    },
    giveBack() {
      if (reserved) void db.write((t) => refund(t, [id], undefined)).catch(() => undefined);
    },
  };
}

/** Gives back the recipients of these reservations, or of those made before `before` (ISO, real time). */
async function refund(tx: Queryable, ids: string[] | undefined, before: string | undefined): Promise<number> {
  const rows = await tx.all<{ n: number }>(
    `WITH given AS (
       DELETE FROM counter_reservations WHERE ${ids ? 'id = ANY(?)' : 'created_at < ?'} RETURNING month, usage_json
     ), back AS (
       SELECT g.month, e->>'scope' AS scope, SUM(CAST(e->>'recipients' AS integer)) AS n
         FROM given g, json_array_elements(CAST(g.usage_json AS json)) AS e GROUP BY g.month, e->>'scope'
     ), updated AS (
       UPDATE usage_counters u SET used = u.used - b.n FROM back b WHERE u.scope = b.scope AND u.month = b.month RETURNING 1
     )
     SELECT COUNT(*) AS n FROM given`,
    [ids ?? before],
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * A reservation this old (real time) belongs to a batch that never committed. A batch still alive
 * past it (seconds between its counters and its COMMIT, which only a stalled relay takes) finds
 * its reservation given back and runs again, so shorter only costs such a batch a retry, while
 * every abandoned charge keeps refusing admissions until it is given back.
 */
const ABANDONED_AFTER_MS = 15_000;

/**
 * Gives back what batches charged and never committed (their relay died, or their transaction
 * failed at COMMIT): reservations older than ABANDONED_AFTER_MS. Answers how many. Nothing to do
 * on SQLite.
 */
export function refundAbandoned(tx: Queryable, realNowMs: number): Promise<number> {
  if (tx.dialect !== 'postgres') return Promise.resolve(0);
  return refund(tx, undefined, new Date(realNowMs - ABANDONED_AFTER_MS).toISOString());
}
