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
  /** A rate window's entries, oldest first: the latest time of each. */
  at_ms: Array<number | string> | null;
  /** The window's running count of hits through each entry, modulo RUNNING_WRAP. */
  upto: Array<number | string> | null;
  /** The running count before the first of those entries. */
  base: number | string | null;
  used: number | string | null;
  /** A rate window's row version as read (PostgreSQL's xmin): a charge finding it unchanged need not count the window again. */
  version: string | null;
}

/**
 * What the counters' rows say at nowMs. A rate window read as a count only (counterRead: far from
 * its cap) stands as one entry of that count at nowMs, which the batch's decisions at nowMs count
 * whole; it never comes near the cap within the batch, so no Retry-After is computed from it.
 */
function stateOf(rows: CounterRow[], dialect: Dialect, nowMs: number): CounterState {
  const rate = new Map<string, StoredRateEntry[]>();
  const used = new Map<string, number>();
  for (const r of rows) {
    if (r.kind === 'usage') used.set(r.scope, Number(r.used));
    else if (r.at_ms === null) rate.set(r.scope, Number(r.used) > 0 ? [{ atMs: nowMs, hits: Number(r.used) }] : []);
    else rate.set(r.scope, entriesOf(r));
  }
  return { rate: dialect === 'postgres' ? rate : undefined, used };
}

/**
 * A rate window's running counts are kept modulo 2^31 (they fit its integer arrays however long
 * the window lives); a difference of two is exact while the hits between them are fewer, which
 * every window's are (its cap is far lower).
 */
const RUNNING_WRAP = 2 ** 31;

/** A rate window's entries as read: each one's hits are its running count less the one before. */
const entriesOf = (r: CounterRow): StoredRateEntry[] =>
  (r.at_ms ?? []).map((at, i) => ({
    atMs: Number(at),
    hits: (Number(r.upto![i]) - Number(i === 0 ? r.base : r.upto![i - 1]) + RUNNING_WRAP) % RUNNING_WRAP,
  }));

/** SQL: the hits between two running counts (`later` less `earlier`, modulo RUNNING_WRAP). */
const hitsBetween = (later: string, earlier: string) => `((CAST(${later} AS bigint) - ${earlier} + ${RUNNING_WRAP}) % ${RUNNING_WRAP})`;
/** SQL: a running count raised by n hits (modulo RUNNING_WRAP). */
const runningPlus = (count: string, n: string) => `CAST((CAST(${count} AS bigint) + ${n}) % ${RUNNING_WRAP} AS integer)`;

/** What counterRead reads of the rate windows (PostgreSQL): their time, and how far a batch can charge one. */
interface RateRead {
  windows: readonly RateWindowRef[];
  /** The clock before the read: entries at or before a window's length earlier are left out. */
  atMs: number;
  /** The most hits the batch can charge one window (one per admission); undefined: every entry is read. */
  maxHits: number | undefined;
}

/**
 * The read of what the counters hold now, without holding them, to issue with a batch's other
 * reads (readTogether: no trip of its own). Exact on SQLite, whose single writer runs one batch
 * at a time; on PostgreSQL the charge checks every counter again as it charges.
 *
 * On PostgreSQL a rate window's row keeps two windows of entries (see chargeCtes), oldest first,
 * each with the window's running count of hits through it; only those inside the window at the
 * read's time are read (width_bucket finds the first by binary search; their count is the last
 * running count less the one before them), and of a window whose count then stays within its cap
 * whatever the batch charges, only that count (`used`, with at_ms, upto and base NULL): a batch through twenty workspaces
 * touches sixty windows of 50 – 100 entries each, which it would otherwise read, parse and adopt
 * every time.
 */
export function counterRead(q: Pick<Reader, 'dialect'>, rate: RateRead, usageScopes: readonly string[], month: string): Read<CounterRow> {
  if (q.dialect === 'postgres') {
    return {
      sql: `SELECT 'rate' AS kind, r.scope, CASE WHEN i.near THEN r.at_ms[b.k + 1:] END AS at_ms, CASE WHEN i.near THEN r.upto[b.k + 1:] END AS upto,
                   CASE WHEN i.near THEN b.base END AS base, i.n AS used, CAST(r.xmin AS text) AS version
              FROM unnest(CAST(? AS text[]), CAST(? AS bigint[]), CAST(? AS bigint[])) AS c(scope, window_ms, cap)
              JOIN rate_windows r ON r.scope = c.scope
             CROSS JOIN LATERAL (SELECT k, COALESCE(r.upto[k], r.before_first) AS base
                                   FROM (SELECT width_bucket(CAST(? AS bigint) - c.window_ms, r.at_ms) AS k) AS w) AS b
             CROSS JOIN LATERAL (SELECT n, n + CAST(? AS bigint) > c.cap AS near
                                   FROM (SELECT ${hitsBetween('COALESCE(r.upto[cardinality(r.upto)], r.before_first)', 'b.base')} AS n) AS t) AS i
            UNION ALL SELECT 'usage', scope, NULL, NULL, NULL, used, NULL FROM usage_counters WHERE scope = ANY(?) AND month = ?`,
      params: [
        rate.windows.map((w) => w.scope),
        rate.windows.map((w) => w.windowMs),
        rate.windows.map((w) => Math.floor(w.limit)),
        rate.atMs,
        rate.maxHits ?? Number.MAX_SAFE_INTEGER,
        usageScopes,
        month,
      ],
    };
  }
  // SQLite keeps its rate windows in the limiter's memory. The columns named, the read joins the
  // batch's other reads in one statement (readTogether) rather than being one beside them: a work
  // item of the sqlite3 thread pool and an answer of the event loop fewer a batch.
  const where = inValues(q, 'scope', usageScopes);
  return {
    sql: `SELECT 'usage' AS kind, scope, NULL AS at_ms, NULL AS upto, NULL AS base, used, NULL AS version FROM usage_counters WHERE ${where.sql} AND month = ?`,
    params: [...where.params, month],
    columns: ['kind', 'scope', 'at_ms', 'upto', 'base', 'used', 'version'],
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
//
// What that costs a window stays small however many entries it holds (a batch through twenty
// workspaces charges sixty windows of 50 – 100 entries): nothing sums or walks its entries. They
// stay oldest first, one per 1/50th, each holding the window's running count of hits through it
// (`upto`, modulo 2^31; `before_first` is the count before the first kept one, migration 0030), so the hits
// from any time on are the last running count less the one before that time's entry, found by
// binary search (width_bucket). A charge no older than the last entry's 1/50th (every charge of
// one relay, most of several) joins it or follows it, dropping the entries that slid out (found
// by the same search), without regrouping the row; an older one (another relay's) regroups the
// entries, which yields the same entries for the others (test/postgres/counters.test.ts compares
// the two). A window whose row is still the version the batch read (xmin: nothing charged it
// since) is checked against the count the batch read (SeenWindows) instead of counting again.
// What a charge needs of each counter beyond its row (that count, a usage counter's cap) is found
// by scope in a JSON object (binary search), not by a walk of an array per counter.
/** A charge's entries are grouped by this 1/50th of its window. */
const SLICE = 'GREATEST(1, excluded.window_ms / 50)';
/** How many of the window's first entries a charge drops (those two windows or more before it; entries are oldest first). */
const DROPPED = 'width_bucket(excluded.kept_after_ms, w.at_ms)';
/** The window's running count through its last entry. */
const TOTAL = 'COALESCE(w.upto[cardinality(w.upto)], w.before_first)';
/** The charge falls in the 1/50th of the window's last entry. */
const SAME_SLICE = `excluded.at_ms[1] / ${SLICE} = w.at_ms[cardinality(w.at_ms)] / ${SLICE}`;
/** The charge falls after the 1/50th of the window's last entry (or the window has none). */
const IN_ORDER = `(cardinality(w.at_ms) = 0 OR excluded.at_ms[1] / ${SLICE} > w.at_ms[cardinality(w.at_ms)] / ${SLICE})`;
/**
 * What a charge out of order makes of the window (a 1/50th before its last entry's): one entry
 * per 1/50th, the charge joining its own (a new entry's running count starting from the entry
 * before it), and every running count from its 1/50th on raised by the charge.
 */
const REGROUPED = `(SELECT MAX(e.a) AS a,
                          ${runningPlus('(array_agg(e.u ORDER BY e.added))[1]', `CASE WHEN e.s >= excluded.at_ms[1] / ${SLICE} THEN excluded.upto[1] ELSE 0 END`)} AS u
                     FROM (SELECT x.a, x.u, x.a / ${SLICE} AS s, false AS added FROM unnest(w.at_ms, w.upto) AS x(a, u) WHERE x.a > excluded.kept_after_ms
                           UNION ALL
                           SELECT excluded.at_ms[1], COALESCE((SELECT y.u FROM unnest(w.at_ms, w.upto) AS y(a, u)
                                                                WHERE y.a / ${SLICE} < excluded.at_ms[1] / ${SLICE} ORDER BY y.a DESC LIMIT 1), w.before_first),
                                  excluded.at_ms[1] / ${SLICE}, true) AS e
                    GROUP BY e.s)`;
/** The charge's rows as its statement answers them: with their entries (lockCounters reads them), or only their scope. */
const chargeCtes = (entries: boolean) => `
rate AS (
  INSERT INTO rate_windows AS w (scope, window_ms, cap, kept_after_ms, at_ms, upto, before_first)
  SELECT c.scope, c.window_ms, c.cap, CAST(? AS bigint) - 2 * c.window_ms, ARRAY[CAST(? AS bigint)], ARRAY[c.n], 0
    FROM unnest(CAST(? AS text[]), CAST(? AS bigint[]), CAST(? AS bigint[]), CAST(? AS integer[])) AS c(scope, window_ms, cap, n)
   WHERE c.n <= c.cap
   ORDER BY c.scope
  ON CONFLICT (scope) DO UPDATE SET window_ms = excluded.window_ms, cap = excluded.cap,
    kept_after_ms = GREATEST(w.kept_after_ms, excluded.kept_after_ms),
    before_first = CASE WHEN excluded.upto[1] = 0 THEN w.before_first ELSE COALESCE(w.upto[${DROPPED}], w.before_first) END,
    at_ms = CASE WHEN excluded.upto[1] = 0 THEN w.at_ms
                 WHEN ${SAME_SLICE} THEN w.at_ms[${DROPPED} + 1:cardinality(w.at_ms) - 1] || GREATEST(w.at_ms[cardinality(w.at_ms)], excluded.at_ms[1])
                 WHEN ${IN_ORDER} THEN w.at_ms[${DROPPED} + 1:] || excluded.at_ms[1]
                 ELSE (SELECT array_agg(g.a ORDER BY g.a) FROM ${REGROUPED} AS g) END,
    upto = CASE WHEN excluded.upto[1] = 0 THEN w.upto
                WHEN ${SAME_SLICE} THEN w.upto[${DROPPED} + 1:cardinality(w.upto) - 1] || ${runningPlus(TOTAL, 'excluded.upto[1]')}
                WHEN ${IN_ORDER} THEN w.upto[${DROPPED} + 1:] || ${runningPlus(TOTAL, 'excluded.upto[1]')}
                ELSE (SELECT array_agg(g.u ORDER BY g.a) FROM ${REGROUPED} AS g) END
   WHERE excluded.upto[1] = 0
      OR (excluded.at_ms[1] - excluded.window_ms >= w.kept_after_ms
          AND CASE WHEN CAST(w.xmin AS text) = (CAST(? AS jsonb) -> excluded.scope ->> 0)
                   THEN CAST((CAST(? AS jsonb) -> excluded.scope ->> 1) AS bigint)
                   ELSE ${hitsBetween(TOTAL, 'COALESCE(w.upto[width_bucket(excluded.at_ms[1] - excluded.window_ms, w.at_ms)], w.before_first)')} END
              + excluded.upto[1] <= excluded.cap)
  RETURNING w.scope${entries ? ', w.at_ms, w.upto, w.before_first' : ''}
), usage AS (
  INSERT INTO usage_counters AS u (scope, month, used)
  SELECT c.scope, CAST(? AS text), c.n
    FROM unnest(CAST(? AS text[]), CAST(? AS integer[]), CAST(? AS bigint[])) AS c(scope, n, cap)
   WHERE c.n <= c.cap AND (SELECT COUNT(*) FROM rate) = CAST(? AS integer)
   ORDER BY c.scope
  ON CONFLICT (scope, month) DO UPDATE SET used = u.used + excluded.used
   WHERE excluded.used = 0 OR CAST(u.used AS bigint) + excluded.used <= CAST((CAST(? AS jsonb) ->> excluded.scope) AS bigint)
  RETURNING u.scope, u.used
)`;
const CHARGE_SQL = `WITH ${chargeCtes(true)}
SELECT 'rate' AS kind, scope, at_ms, upto, before_first AS base, NULL AS used, NULL AS version FROM rate
UNION ALL SELECT 'usage', scope, NULL, NULL, NULL, used, NULL FROM usage`;

// The charge and its reservation in one statement, all or nothing: the reservation's id is NULL,
// which its table refuses, unless every counter took its charge, so a charge that does not fit
// fails the statement whole (and whatever it had charged with it). The reservation carries the
// transaction's commit not waiting for the disk (it is made durable by the batch's, see above).
// Alone (autocommit) this is chargeFirst's one trip; in lockCounters' transaction, its charge. It
// answers only how many counters it charged: their entries, a hundred numbers a window, would be
// parsed for nothing.
const RESERVED_CHARGE_SQL = `WITH ${chargeCtes(false)}, reserve AS (
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

/**
 * The rate windows as the batch read them, by scope: the row's version and its hits inside the
 * window at the charge's time. A charge finding a window's row at that version (nothing charged it
 * since) checks its cap against that count instead of counting the row's entries again.
 */
type SeenWindows = ReadonlyMap<string, { version: string; inWindow: number }>;

const chargeParams = (month: string, atMs: number, rate: readonly RateCharge[], usage: readonly UsageCharge[], seen: SeenWindows) => {
  const caps = usage.map((u) => Math.floor(u.cap ?? UNCAPPED));
  // Looked up by scope in the charge of each counter (a JSON object's keys are found by binary search).
  const seenByScope = JSON.stringify(Object.fromEntries(rate.flatMap((r) => {
    const s = seen.get(r.scope);
    return s ? [[r.scope, [s.version, s.inWindow]]] : [];
  })));
  return [
    atMs,
    atMs,
    rate.map((r) => r.scope),
    rate.map((r) => r.windowMs),
    rate.map((r) => Math.floor(r.limit)),
    rate.map((r) => r.hits),
    seenByScope,
    seenByScope,
    month,
    usage.map((u) => u.scope),
    usage.map((u) => u.recipients),
    caps,
    rate.length,
    JSON.stringify(Object.fromEntries(usage.map((u, i) => [u.scope, caps[i]]))),
  ];
};

/** What the batch read of its rate windows (SeenWindows), counted at atMs. */
function seenWindows(rows: readonly CounterRow[], windows: readonly RateWindowRef[], atMs: number): SeenWindows {
  const windowMs = new Map(windows.map((w) => [w.scope, w.windowMs]));
  const seen = new Map<string, { version: string; inWindow: number }>();
  for (const r of rows) {
    const ms = windowMs.get(r.scope);
    if (r.kind !== 'rate' || r.version === null || ms === undefined) continue;
    // Read as a count: that of an earlier time (the read's), which counts at least as much.
    let inWindow = r.at_ms === null ? Number(r.used) : 0;
    for (const e of entriesOf(r)) if (e.atMs > atMs - ms) inWindow += e.hits;
    seen.set(r.scope, { version: r.version, inWindow });
  }
  return seen;
}

/**
 * Charges the counters on PostgreSQL with a reservation, all or nothing: a counter that does not
 * fit fails the statement (RESERVED_CHARGE_SQL).
 */
async function chargeReserved(
  q: Reader,
  month: string,
  atMs: number,
  rate: readonly RateCharge[],
  usage: readonly UsageCharge[],
  reservation: Reservation,
  seen: SeenWindows = new Map(),
): Promise<void> {
  const [row] = await q.all<{ charged: number }>(RESERVED_CHARGE_SQL, [
    ...chargeParams(month, atMs, rate, usage, seen),
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
      new Map(),
    ),
  );
  if (rows.length !== windows.length + usageScopes.length) throw new Error('a charge of nothing was refused');
  return stateOf(rows, 'postgres', 0);
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
  counters: {
    windows: readonly RateWindowRef[];
    usageScopes: readonly string[];
    nowMs: () => number;
    /** The most hits the batch can charge one window (its number of admissions); undefined: not known. */
    maxHits?: number;
  },
  read: (counters: Read<CounterRow>) => Promise<readonly [R, CounterRow[]]>,
  decide: (state: CounterState, read: R, nowMs: number, month: string) => CounterDecision<T>,
): Promise<TakenCounters<T>> {
  if (tx.dialect !== 'postgres') {
    // The single writer runs one unit of work at a time: between this read and the charge nothing
    // else can charge, so both ride with the batch's own statements.
    const nowMs = counters.nowMs();
    const month = monthOf(nowMs);
    const [done, rows] = await read(counterRead(tx, { windows: [], atMs: nowMs, maxHits: undefined }, counters.usageScopes, month));
    const decided = decide(stateOf(rows, tx.dialect, nowMs), done, nowMs, month);
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
  const readAtMs = counters.nowMs();
  const month = monthOf(readAtMs);
  const [done, rows] = await read(counterRead(tx, { windows: counters.windows, atMs: readAtMs, maxHits: counters.maxHits }, counters.usageScopes, month));
  const id = randomUUID();
  // Never before the read's time: the read left out what had slid out of the windows by then.
  const nowMs = Math.max(readAtMs, counters.nowMs());
  if (monthOf(nowMs) === month) {
    const decided = decide(stateOf(rows, 'postgres', nowMs), done, nowMs, month);
    const charged = await chargeFirst(db, id, month, nowMs, decided, seenWindows(rows, counters.windows, nowMs));
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
async function chargeFirst(db: Db, id: string, month: string, nowMs: number, decided: CounterDecision<unknown>, seen: SeenWindows): Promise<'charged' | 'nothing' | 'refused'> {
  const { rate, usage } = charges(decided.rate, decided.usage);
  if (rate.length + usage.length === 0) return 'nothing';
  try {
    // The pool's own connection, not a transaction: a statement of its own is one.
    await chargeReserved(db, month, nowMs, rate, usage, { id, month, createdAt: new Date().toISOString() }, seen);
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
