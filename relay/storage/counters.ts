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
// every relay admitting for that workspace would queue behind it. So the batch reads the counters
// with its other reads, holding nothing, decides against them and charges first: one statement,
// committing by itself without waiting for the disk (synchronous_commit off), charges every
// counter only while it still fits, all or nothing (rows taken in scope order, rate windows before
// usage, so two never wait on each other in a circle), and holds each row for that statement
// only. When another relay's charge came in between and one no longer fits, nothing is charged:
// the counters are then taken in a short transaction of their own (locked, decided on again,
// charged, committed at once). What was charged is recorded as a reservation
// (`counter_reservations`, by the charge's own statement) that the batch's own transaction deletes
// as it commits durably; since WAL is written in order, that commit makes the charge durable too.
// A batch that fails gives its recipients back (giveBack); one whose relay died is given back by
// refundAbandoned after ABANDONED_AFTER_MS, and a batch that finds its reservation given back
// already is retried (CountersContended). Rate-window hits are not given back: a failed batch's
// hits keep counting until they slide out, which errs on the side of refusing.
import { randomUUID } from 'node:crypto';
import type { Db, Dialect, Queryable, Reader } from './db.js';
import { inValues, insertRows, type Read } from './rows.js';

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

/** A counter as stored: a rate window's entries, or a usage scope's count this month. */
export interface CounterRow {
  kind: 'rate' | 'usage';
  scope: string;
  at_ms: Array<number | string> | null;
  hits: number[] | null;
  used: number | null;
}

function stateOf(rows: CounterRow[], dialect: Dialect): CounterState {
  const rate = new Map<string, StoredRateEntry[]>();
  const used = new Map<string, number>();
  for (const r of rows) {
    if (r.kind === 'usage') used.set(r.scope, Number(r.used));
    else rate.set(r.scope, (r.at_ms ?? []).map((at, i) => ({ atMs: Number(at), hits: Number(r.hits![i]) })));
  }
  return { rate: dialect === 'postgres' ? rate : undefined, used };
}

/**
 * The read of what the counters hold now, without holding them, to issue with a batch's other
 * reads (readTogether: no trip of its own). Exact on SQLite, whose single writer runs one batch
 * at a time; on PostgreSQL the charge checks every counter again as it charges.
 */
export function counterRead(q: Pick<Reader, 'dialect'>, rateScopes: readonly string[], usageScopes: readonly string[], month: string): Read<CounterRow> {
  if (q.dialect === 'postgres') {
    return {
      sql: `SELECT 'rate' AS kind, scope, at_ms, hits, NULL AS used FROM rate_windows WHERE scope = ANY(?)
            UNION ALL SELECT 'usage', scope, NULL, NULL, used FROM usage_counters WHERE scope = ANY(?) AND month = ?`,
      params: [rateScopes, usageScopes, month],
    };
  }
  // SQLite keeps its rate windows in the limiter's memory.
  const where = inValues(q, 'scope', usageScopes);
  return {
    sql: `SELECT 'usage' AS kind, scope, NULL AS at_ms, NULL AS hits, used FROM usage_counters WHERE ${where.sql} AND month = ?`,
    params: [...where.params, month],
  };
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
const CHARGE_CTES = `
rate AS (
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
)`;
const CHARGED = `
SELECT 'rate' AS kind, scope, at_ms, hits, NULL AS used FROM rate
UNION ALL SELECT 'usage', scope, NULL, NULL, used FROM usage`;
const CHARGE_SQL = `WITH ${CHARGE_CTES}${CHARGED}`;

// The charge and its reservation in one statement, all or nothing: the reservation's id is NULL,
// which its table refuses, unless every counter took its charge, so a charge that does not fit
// fails the statement whole (and whatever it had charged with it). The reservation carries the
// transaction's commit not waiting for the disk (it is made durable by the batch's, see above).
// Alone (autocommit) this is chargeFirst's one trip; in lockCounters' transaction, its charge. It
// answers only how many counters it charged: their entries, a hundred numbers a window, would be
// parsed for nothing.
const RESERVED_CHARGE_SQL = `WITH ${CHARGE_CTES}, reserve AS (
  INSERT INTO counter_reservations (id, month, usage_json, created_at)
  SELECT CASE WHEN (SELECT COUNT(*) FROM rate) + (SELECT COUNT(*) FROM usage) = CAST(? AS integer) THEN CAST(? AS text) END,
         CAST(? AS text), CAST(? AS text), CAST(? AS text)
    FROM (SELECT set_config('synchronous_commit', 'off', true)) AS s
)
SELECT (SELECT COUNT(*) FROM rate) + (SELECT COUNT(*) FROM usage) AS charged`;

/** A charge's record in counter_reservations, written by the charge's own statement. */
interface Reservation {
  id: string;
  month: string;
  createdAt: string;
}

/** What a charge charges: only counters with something to add. */
const charges = (rate: readonly RateCharge[], usage: readonly UsageCharge[]) => ({
  rate: rate.filter((r) => r.hits > 0),
  usage: usage.filter((u) => u.recipients > 0),
});

const chargeParams = (month: string, atMs: number, rate: readonly RateCharge[], usage: readonly UsageCharge[]) => {
  const caps = usage.map((u) => Math.floor(u.cap ?? UNCAPPED));
  return [
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
  ];
};

/**
 * Charges the counters on PostgreSQL with a reservation, all or nothing: a counter that does not
 * fit fails the statement (RESERVED_CHARGE_SQL).
 */
async function chargeReserved(q: Reader, month: string, atMs: number, rate: readonly RateCharge[], usage: readonly UsageCharge[], reservation: Reservation): Promise<void> {
  const [row] = await q.all<{ charged: number }>(RESERVED_CHARGE_SQL, [
    ...chargeParams(month, atMs, rate, usage),
    rate.length + usage.length,
    reservation.id,
    reservation.month,
    JSON.stringify(usage.map((u) => ({ scope: u.scope, recipients: u.recipients }))),
    reservation.createdAt,
  ]);
  if (Number(row?.charged) !== rate.length + usage.length) throw new Error('a charge did not charge every counter');
}

/** Whether err is RESERVED_CHARGE_SQL refusing a charge that did not fit. */
const isRefusedCharge = (err: unknown) => {
  const e = err as { code?: string; table?: string } | undefined;
  return e?.code === '23502' && e.table === 'counter_reservations';
};

/** Locks the counters until the unit of work ends and reads them (a charge of nothing). */
async function lockCounters(tx: Queryable, month: string, windows: readonly RateWindowRef[], usageScopes: readonly string[]): Promise<CounterState> {
  const rows = await tx.all<CounterRow>(
    CHARGE_SQL,
    chargeParams(
      month,
      0,
      windows.map((w) => ({ ...w, hits: 0 })),
      usageScopes.map((scope) => ({ scope, cap: null, recipients: 0 })),
    ),
  );
  if (rows.length !== windows.length + usageScopes.length) throw new Error('a charge of nothing was refused');
  return stateOf(rows, 'postgres');
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

const monthOf = (ms: number) => new Date(ms).toISOString().slice(0, 7);

/**
 * Reads the counters of these windows and usage scopes (with the batch's own reads: `read` is
 * handed the counters' Read to issue with its others, and answers what it read and the
 * counters' rows), has `decide` decide against them (and against what `read` read in `tx`) at the
 * time it is given, and charges what it returns, so that no other admission can charge them in
 * between. `tx` is the batch's transaction; the batch must call confirm(tx) before it commits.
 *
 * On PostgreSQL the charge comes first: the decision is made against the counters as read, and
 * charged in one statement that commits by itself, all or nothing, checking every counter again
 * as it charges it (RESERVED_CHARGE_SQL), so a counter's row is held for that statement only.
 * When another relay charged one meanwhile so that it no longer fits, the counters are locked in
 * a short transaction of their own (see above) and the batch decided again against what they
 * hold. `decide` may therefore run twice: it must not keep anything of a first run.
 */
export async function takeCounters<T, R>(
  db: Db,
  tx: Queryable,
  counters: { windows: readonly RateWindowRef[]; usageScopes: readonly string[]; nowMs: () => number },
  read: (counters: Read<CounterRow>) => Promise<readonly [R, CounterRow[]]>,
  decide: (state: CounterState, read: R, nowMs: number, month: string) => CounterDecision<T>,
): Promise<TakenCounters<T>> {
  const rateScopes = counters.windows.map((w) => w.scope);
  if (tx.dialect !== 'postgres') {
    // The single writer runs one unit of work at a time: between this read and the charge nothing
    // else can charge, so both ride with the batch's own statements.
    const nowMs = counters.nowMs();
    const month = monthOf(nowMs);
    const [done, rows] = await read(counterRead(tx, rateScopes, counters.usageScopes, month));
    const decided = decide(stateOf(rows, tx.dialect), done, nowMs, month);
    const { usage } = charges([], decided.usage);
    return {
      value: decided.value,
      confirm: (batch) =>
        insertRows(
          batch,
          'usage_counters',
          ['scope', 'month', 'used'],
          usage.map((u) => ({ scope: u.scope, month, used: u.recipients })),
          'ON CONFLICT (scope, month) DO UPDATE SET used = usage_counters.used + excluded.used',
        ),
      giveBack: () => undefined,
    };
  }
  const month = monthOf(counters.nowMs());
  const [done, rows] = await read(counterRead(tx, rateScopes, counters.usageScopes, month));
  const id = randomUUID();
  const nowMs = counters.nowMs();
  if (monthOf(nowMs) === month) {
    const decided = decide(stateOf(rows, 'postgres'), done, nowMs, month);
    const charged = await chargeFirst(db, id, month, nowMs, decided);
    if (charged !== 'refused') return taken(db, id, decided.value, charged === 'charged');
  }
  let reserved = false;
  const value = await db.write(async (t) => {
    const month = monthOf(counters.nowMs());
    const state = await lockCounters(t, month, counters.windows, counters.usageScopes);
    // Read once the counters are held: no other charge can come with a later time before this one.
    const nowMs = counters.nowMs();
    if (monthOf(nowMs) !== month) throw new CountersContended(); // the month turned meanwhile: again
    const decided = decide(state, done, nowMs, month);
    const { rate, usage } = charges(decided.rate, decided.usage);
    reserved = rate.length + usage.length > 0;
    // Durable with the batch's COMMIT, which is written after it: the reservation's statement says
    // so itself; without one, a statement of its own.
    if (reserved) await chargeReserved(t, month, nowMs, rate, usage, { id, month, createdAt: new Date().toISOString() });
    else await t.run('SET LOCAL synchronous_commit = off');
    return decided.value;
  });
  return taken(db, id, value, reserved);
}

/**
 * The charge first (PostgreSQL): one statement committing by itself, all or nothing. Answers
 * 'refused' when a counter did not fit (another relay charged it meanwhile), or the statement
 * deadlocked with another relay's; 'nothing' when there was nothing to charge.
 */
async function chargeFirst(db: Db, id: string, month: string, nowMs: number, decided: CounterDecision<unknown>): Promise<'charged' | 'nothing' | 'refused'> {
  const { rate, usage } = charges(decided.rate, decided.usage);
  if (rate.length + usage.length === 0) return 'nothing';
  try {
    // The pool's own connection, not a transaction: a statement of its own is one.
    await chargeReserved(db, month, nowMs, rate, usage, { id, month, createdAt: new Date().toISOString() });
    return 'charged';
  } catch (error) {
    if (isRefusedCharge(error) || (error as { code?: string }).code === '40P01') return 'refused';
    // Whether it committed is unknown (the connection dropped): given back if it did.
    giveBack(db, id);
    throw error;
  }
}

function giveBack(db: Db, id: string): void {
  void db.write((t) => refund(t, [id], undefined)).catch(() => undefined);
}

/** The counters taken: the batch's COMMIT makes the charge durable by deleting its reservation. */
function taken<T>(db: Db, id: string, value: T, reserved: boolean): TakenCounters<T> {
  return {
    value,
    async confirm(batch) {
      if (reserved && (await batch.run('DELETE FROM counter_reservations WHERE id = ?', [id])).changes !== 1) throw new CountersContended();
    },
    giveBack() {
      if (reserved) giveBack(db, id);
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
