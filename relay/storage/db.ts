// SQLite access: one read connection and one writer that group-commits.
//
// Every write goes through `db.write(fn)` or `db.writeBatched(batch, item)`. Writes that arrive
// while a commit is in flight wait and then commit together, so concurrent admissions share one
// fsync instead of paying one each. Each fn runs inside its own SAVEPOINT: a failing fn is rolled
// back alone and its caller gets the error, the rest of the group still commits. The items of one
// WriteBatch are handed to its run() together, under one savepoint, so a hundred admissions cost a
// handful of statements rather than a hundred times a dozen (every statement is a trip to the
// sqlite3 thread pool and back through the event loop); a batch marked `ahead` (admissions) commits
// before the other writes that queued with it, cuts into a transaction of other writes already
// under way, and joins one still running its statements (see GroupCommitWriter.drain). Both
// resolve only after COMMIT has returned, so a caller that answers 202 afterwards has its rows on
// disk.
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import sqlite3 from 'sqlite3';

export type Params = ReadonlyArray<unknown> | Record<string, unknown>;

export interface RunResult {
  changes: number;
  lastID: number;
}

/** The SQL a backend speaks, for the few statements that must differ between them. */
export type Dialect = 'sqlite' | 'postgres';

/**
 * A connection or a unit of work. Repositories (relay/storage/*.ts) are the only callers: they
 * write SQL both backends accept where they can (`?` placeholders, ON CONFLICT, RETURNING, times
 * and ids from the relay) and branch on `dialect` where they cannot.
 */
export interface Queryable {
  readonly dialect: Dialect;
  run(sql: string, params?: Params): Promise<RunResult>;
  get<T>(sql: string, params?: Params): Promise<T | undefined>;
  all<T>(sql: string, params?: Params): Promise<T[]>;
  /**
   * Serialises this unit of work with every other one that takes the same lock, across relays,
   * until it ends (PostgreSQL: a transaction-scoped advisory lock). Several names are taken in
   * the order given, in one trip; statements of the unit issued after it, even before it has
   * resolved, run once it is held (PostgreSQL runs a unit's statements in the order issued, one
   * trip for all). Idempotency keys take one before their check-then-write.
   * SQLite has a single writer that already serialises every unit of work, so there it does
   * nothing.
   */
  lock(names: string | readonly string[]): Promise<void>;
}

/** What a read needs: the read connection (`db`) or a unit of work (`tx`, which sees its own writes). */
export type Reader = Pick<Queryable, 'dialect' | 'get' | 'all'>;

/**
 * Writes of one kind that are cheaper together. run() gets every item of the group, in arrival
 * order, and settles each one; a throw rolls back the whole batch and rejects all its items.
 */
export interface WriteBatch<I, R> {
  run(tx: Queryable, items: I[]): Promise<Array<PromiseSettledResult<R>>>;
  /**
   * Commits ahead of the other writes queued with it, and into a transaction of other writes
   * already under way rather than after it (admissions: a client is waiting for the commit).
   */
  ahead?: boolean;
  /**
   * True when run() stores these items in one statement and runs nothing else. A group that is
   * this batch alone then runs it without BEGIN and COMMIT: SQLite commits a statement by itself,
   * atomically (its triggers included) and durably (synchronous=FULL), in one trip to the sqlite3
   * thread pool instead of three (captures: a client waits for each before its 250). Within a
   * group it runs without a savepoint of its own (see commitGroup), one trip fewer. On SQLite
   * only: the PostgreSQL writer does not ask.
   */
  oneStatement?(items: I[]): boolean;
}

export interface Db extends Pick<Queryable, 'dialect' | 'get' | 'all'> {
  /** Runs fn in the next group-committed transaction; resolves after COMMIT. */
  write<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Adds item to the batch's run in the next group-committed transaction; resolves after COMMIT. */
  writeBatched<I, R>(batch: WriteBatch<I, R>, item: I): Promise<R>;
  close(): Promise<void>;
  readonly file: string;
}

/** Thrown when the database cannot commit (disk full, locked): answered as 503. */
export class StorageUnavailableError extends Error {
  constructor(cause: unknown) {
    super('storage unavailable', { cause });
    this.name = 'StorageUnavailableError';
  }
}

/**
 * True for the SQLite results that say the storage cannot serve right now (locked by another
 * process past busy_timeout, disk or max_page_count full, an I/O error) rather than that the
 * statement is wrong: a retry later may succeed, so callers answer 503, not 500.
 */
export function isStorageFault(error: unknown): boolean {
  if (error instanceof StorageUnavailableError) return true;
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && /^SQLITE_(BUSY|FULL|IOERR)/.test(code);
}

/**
 * True for the results after which SQLite may have rolled the whole transaction back rather than
 * the failed statement alone ("Response To Errors Within A Transaction" in its documentation).
 */
function mayEndTransaction(error: unknown): boolean {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code !== 'string' || /^SQLITE_(BUSY|FULL|IOERR|NOMEM|INTERRUPT|CORRUPT|NOTADB|ABORT)/.test(code);
}

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
// Most groups are small; the cap bounds how long one transaction holds the write lock.
const MAX_GROUP = 512;
/**
 * WAL pages past which the writer checkpoints inside its own COMMIT (SQLite's default is 1000):
 * only a bound for when the side connection cannot keep up (see Checkpointer), about 32 MiB.
 */
const WRITER_AUTOCHECKPOINT_PAGES = 8000;
/**
 * While writes commit, the side connection checkpoints this often at most. Each checkpoint copies
 * the newest version of every page written since the last one, so the pages every commit rewrites
 * (the tails of the hot tables and indexes) are copied once a second instead of four times: under
 * the end-to-end bench 12-15 % fewer bytes written and 8-11 % fewer read calls than at 250 ms.
 */
const CHECKPOINT_EVERY_MS = 1000;

function open(file: string): Promise<sqlite3.Database> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, (err) => (err ? reject(err) : resolve(db)));
  });
}

/**
 * Rejects with a cached statement's error once the statement is reset. SQLite leaves a statement
 * stopped by SQLITE_BUSY resumable, still counted as running: until something resets it (node's
 * sqlite3 does only when the same SQL runs again), every SAVEPOINT on its connection fails ("cannot
 * open savepoint - SQL statements in progress"), so a capture refused while another process held
 * the write lock went on refusing every write long after the lock was gone.
 */
function resetThenReject(stmt: sqlite3.Statement, err: Error, reject: (reason: unknown) => void): void {
  stmt.reset(() => reject(err));
}

/** A connection wrapped in promises, with a cache of prepared statements. */
class Connection implements Queryable {
  readonly dialect = 'sqlite';
  private readonly statements = new Map<string, sqlite3.Statement>();
  constructor(readonly raw: sqlite3.Database) {}

  // The one writer connection runs one unit of work at a time: it is already serialised.
  async lock(): Promise<void> {}

  private statement(sql: string): sqlite3.Statement {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      // A statement that fails to prepare reports through its own calls; forget it so it is retried.
      stmt = this.raw.prepare(sql, (err: Error | null) => {
        if (err) this.statements.delete(sql);
      });
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  run(sql: string, params: Params = []): Promise<RunResult> {
    const stmt = this.statement(sql);
    return new Promise((resolve, reject) => {
      stmt.run(params, function (this: sqlite3.RunResult, err: Error | null) {
        if (err) resetThenReject(stmt, err, reject);
        else resolve({ changes: this.changes, lastID: this.lastID });
      });
    });
  }

  // Through all(): a half-stepped statement would keep a read snapshot open on the connection.
  async get<T>(sql: string, params: Params = []): Promise<T | undefined> {
    return (await this.all<T>(sql, params))[0];
  }

  all<T>(sql: string, params: Params = []): Promise<T[]> {
    const stmt = this.statement(sql);
    return new Promise((resolve, reject) => {
      stmt.all(params, (err: Error | null, rows: T[]) => (err ? resetThenReject(stmt, err, reject) : resolve(rows)));
    });
  }

  exec(sql: string): Promise<void> {
    return new Promise((resolve, reject) => this.raw.exec(sql, (err) => (err ? reject(err) : resolve())));
  }

  async close(): Promise<void> {
    await Promise.all(
      [...this.statements.values()].map((s) => new Promise<void>((resolve) => s.finalize(() => resolve()))),
    );
    this.statements.clear();
    await new Promise<void>((resolve, reject) => this.raw.close((err) => (err ? reject(err) : resolve())));
  }
}

type Settle = { resolve: (value: unknown) => void; reject: (reason: unknown) => void };
type PendingWrite = Settle & { deferred?: boolean } & ({ fn: (tx: Queryable) => Promise<unknown> } | { batch: WriteBatch<unknown, unknown>; item: unknown });

/** What one savepoint covers: a single write, or every item of one batch in the group. */
interface Unit {
  /** The pending writes it settles, in arrival order. */
  readonly writes: PendingWrite[];
  run(tx: Queryable): Promise<void>;
  /** After COMMIT: hand out the results. */
  settle(): void;
  fail(error: unknown): void;
  /** True when run() is one statement that may commit by itself (WriteBatch.oneStatement). */
  oneStatement(): boolean;
}

function singleUnit(w: Settle & { fn: (tx: Queryable) => Promise<unknown> }): Unit {
  let value: unknown;
  return {
    writes: [w],
    run: async (tx) => {
      value = await w.fn(tx);
    },
    settle: () => w.resolve(value),
    fail: w.reject,
    oneStatement: () => false,
  };
}

type BatchedWrite = Extract<PendingWrite, { batch: unknown }>;

function batchUnit(batch: WriteBatch<unknown, unknown>, members: BatchedWrite[]): Unit {
  let outcomes: Array<PromiseSettledResult<unknown>> = [];
  return {
    writes: members,
    run: async (tx) => {
      outcomes = await batch.run(tx, members.map((m) => m.item));
    },
    settle: () =>
      members.forEach((m, i) => {
        const outcome = outcomes[i];
        if (outcome?.status === 'fulfilled') m.resolve(outcome.value);
        else m.reject(outcome ? outcome.reason : new Error('the write batch returned no outcome for this item'));
      }),
    fail: (error) => members.forEach((m) => m.reject(error)),
    oneStatement: () => batch.oneStatement?.(members.map((m) => m.item)) === true,
  };
}

/** Single writes in arrival order; a batch at the place of its first item. */
function unitsOf(group: PendingWrite[]): Unit[] {
  const units: Unit[] = [];
  const batches = new Map<WriteBatch<unknown, unknown>, BatchedWrite[]>();
  for (const w of group) {
    if ('fn' in w) {
      units.push(singleUnit(w));
      continue;
    }
    let members = batches.get(w.batch);
    if (!members) {
      members = [];
      batches.set(w.batch, members);
      units.push(batchUnit(w.batch, members));
    }
    members.push(w);
  }
  return units;
}

const isAhead = (w: PendingWrite): boolean => 'batch' in w && w.batch.ahead === true;

class GroupCommitWriter {
  private queue: PendingWrite[] = [];
  private running = false;
  private closed = false;

  constructor(
    private readonly conn: Connection,
    private readonly checkpointer: Checkpointer,
  ) {}

  write<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.enqueue<T>((settle) => ({ fn, ...settle }));
  }

  writeBatched<I, R>(batch: WriteBatch<I, R>, item: I): Promise<R> {
    return this.enqueue<R>((settle) => ({ batch: batch as WriteBatch<unknown, unknown>, item, ...settle }));
  }

  private enqueue<T>(make: (settle: Settle) => PendingWrite): Promise<T> {
    if (this.closed) return Promise.reject(new StorageUnavailableError(new Error('database closed')));
    return new Promise<T>((resolve, reject) => {
      this.queue.push(make({ resolve: resolve as (v: unknown) => void, reject }));
      if (!this.running) void this.drain();
    });
  }

  /** Takes the writes of `ahead` batches out of the queue (admissions whose clients wait). */
  private takeAhead(): PendingWrite[] {
    const waiting = this.queue.filter(isAhead);
    if (waiting.length > 0) this.queue = this.queue.filter((w) => !isAhead(w));
    return waiting;
  }

  // Batches marked `ahead` (admissions) commit before the other writes that queued with them: a
  // client waiting on an admission then waits for its batch's few statements, not also for the
  // delivery worker's. Admissions that arrive while the other writes' transaction is under way
  // cut into it at the next unit boundary and it commits right after them; the units it had not
  // reached go back to the head of the queue, and are not cut in front of again (so a burst of
  // admissions delays another write by one transaction at most). A client then waits for at most
  // one unit of other writes, and its admission shares their COMMIT (one fsync) instead of
  // following it with one of its own. A few SMTP sessions, each waiting for its own commit before
  // sending the next message, otherwise wait for a whole transaction of delivery writes a round.
  // Admissions that arrive while an admission group runs its statements join it before its
  // COMMIT, once (see commitGroup): they wait for one unit and share its fsync, instead of waiting
  // for its COMMIT and then for a whole transaction of their own.
  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const group = this.queue.splice(0, MAX_GROUP);
        const first = group.filter(isAhead);
        if (first.length > 0) await this.commit(unitsOf(first), false);
        const rest = group.filter((w) => !isAhead(w));
        if (rest.length === 0) continue;
        const unreached = (await this.commit(unitsOf(rest), true)).flatMap((u) => u.writes);
        for (const w of unreached) w.deferred = true;
        this.queue.unshift(...unreached);
      }
    } finally {
      this.running = false;
    }
  }

  /** A group of one one-statement unit alone (commitAlone), any other in a transaction (commitGroup). */
  // Not async: returns the commit's own promise, adding no step before the writer is idle again.
  private commit(units: Unit[], cutIn: boolean): Promise<Unit[]> {
    return units.length === 1 && units[0]!.oneStatement() ? this.commitAlone(units[0]!) : this.commitGroup(units, cutIn);
  }

  // One statement in autocommit: it commits (or rolls back) by itself, as its transaction would.
  // Writes that arrive meanwhile form the next group; none is left unreached.
  private async commitAlone(unit: Unit): Promise<Unit[]> {
    try {
      await unit.run(this.conn);
    } catch (error) {
      unit.fail(isStorageFault(error) ? new StorageUnavailableError(error) : error);
      return [];
    }
    this.checkpointer.committed();
    unit.settle();
    return [];
  }

  // The savepoint bookkeeping rides in the same exec as its neighbour where it can (each exec is
  // one trip to the thread pool): BEGIN with the first SAVEPOINT, each RELEASE with the next
  // SAVEPOINT; a failed unit's ROLLBACK TO leaves its savepoint in place for the next unit, and
  // COMMIT ends the last one. Writes that may not wait (takeAhead) are let into the transaction
  // once: after its last unit, before COMMIT, and with `cutIn` also between units (before any that
  // holds a write deferred once already). Between units they run next, the transaction commits
  // after them, and the units not reached are returned (to be queued again); after the last unit
  // they are simply its last unit. Once, so the writes already in it wait for one more unit at most.
  private async commitGroup(units: Unit[], cutIn: boolean): Promise<Unit[]> {
    let unreached: Unit[] = [];
    let letIn = false;
    try {
      await this.conn.exec('BEGIN IMMEDIATE; SAVEPOINT w');
    } catch (error) {
      await this.conn.exec('ROLLBACK').catch(() => undefined); // in case BEGIN got through
      for (const u of units) u.fail(new StorageUnavailableError(error));
      return unreached;
    }
    const failures = new Map<Unit, unknown>();
    let clean = true; // whether savepoint w starts where the current state is
    try {
      for (let i = 0; ; i++) {
        const boundary = i === units.length || (cutIn && i > 0 && !units[i]!.writes.some((w) => w.deferred));
        const waiting = !letIn && boundary ? this.takeAhead() : [];
        if (waiting.length > 0) {
          unreached = units.splice(i, units.length - i, ...unitsOf(waiting));
          letIn = true;
        }
        if (i === units.length) break;
        const unit = units[i]!;
        // A one-statement unit needs no savepoint of its own: SQLite undoes a failed statement by
        // itself (its statement journal) and leaves the transaction as it was, so the trip that
        // would set one is saved. Only the faults after which SQLite may have rolled the whole
        // transaction back make it fail the group (no ROLLBACK TO can tell, without undoing the
        // units before it).
        const oneStatement = unit.oneStatement();
        if (!clean && !oneStatement) await this.conn.exec('RELEASE w; SAVEPOINT w');
        try {
          await unit.run(this.conn);
          clean = false;
        } catch (error) {
          if (oneStatement && !mayEndTransaction(error)) {
            failures.set(unit, error);
            continue;
          }
          if (oneStatement && !clean) throw error;
          // After a storage fault SQLite may have rolled the whole transaction back itself: then
          // ROLLBACK TO fails, and so does the whole group, with the fault as the cause.
          failures.set(unit, isStorageFault(error) ? new StorageUnavailableError(error) : error);
          await this.conn.exec('ROLLBACK TO w').catch((rollbackError: unknown) => {
            throw isStorageFault(error) ? error : rollbackError;
          });
          clean = true;
        }
      }
      await this.conn.exec('COMMIT');
      this.checkpointer.committed();
    } catch (error) {
      // COMMIT (or a savepoint) failed: nothing of this group is durable.
      await this.conn.exec('ROLLBACK').catch(() => undefined);
      for (const u of units) u.fail(new StorageUnavailableError(error));
      return unreached;
    }
    for (const u of units) {
      if (failures.has(u)) u.fail(failures.get(u));
      else u.settle();
    }
    return unreached;
  }

  async close(): Promise<void> {
    this.closed = true;
    while (this.running || this.queue.length > 0) await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * Copies the WAL's committed pages into the database file from a connection of its own, so no
 * COMMIT pays for it. With SQLite's default the writer did, in the COMMIT that took the WAL past
 * 1,000 pages: one commit in about fifty took 15 – 93 ms instead of 1 – 3, while every client of
 * its group and of the groups queued behind it waited (BENCHMARKS.md, issue 24). A PASSIVE
 * checkpoint takes no lock a writer or reader waits for; it runs on the sqlite3 thread pool beside
 * the writer's statements, at most every CHECKPOINT_EVERY_MS while commits come, and once more
 * after the last. The writer restarts the WAL from its start once a checkpoint has copied it
 * all; under a write load that never pauses that may not happen, hence the writer's own bound.
 */
class Checkpointer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** A COMMIT came while a checkpoint ran: its pages need the next one. */
  private committedSince = false;
  private last = -Infinity;
  private closed = false;

  constructor(private readonly conn: Connection) {}

  /** After a COMMIT: a checkpoint now, or when the interval has passed. */
  committed(): void {
    if (this.closed || this.timer) return;
    if (this.running) {
      this.committedSince = true;
      return;
    }
    const wait = CHECKPOINT_EVERY_MS - (performance.now() - this.last);
    if (wait <= 0) return this.run();
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.run();
    }, wait);
    this.timer.unref();
  }

  private run(): void {
    if (this.closed || this.running) return;
    this.last = performance.now();
    // A failure (SQLITE_BUSY while the writer checkpoints past its bound) leaves it to the next one.
    this.running = this.conn
      .exec('PRAGMA wal_checkpoint(PASSIVE)')
      .catch(() => undefined)
      .finally(() => {
        this.running = undefined;
        if (this.committedSince) {
          this.committedSince = false;
          this.committed();
        }
      });
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    await this.conn.close();
  }
}

async function migrate(conn: Connection): Promise<void> {
  await conn.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const applied = new Set(
    (await conn.all<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => r.version),
  );
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{4}_.+\.sql$/.test(f)).sort();
  for (const file of files) {
    const version = Number(file.slice(0, 4));
    if (applied.has(version)) continue;
    const sql = await readFile(path.join(MIGRATIONS_DIR, file), 'utf8');
    await conn.exec('BEGIN IMMEDIATE');
    try {
      await conn.exec(sql);
      await conn.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [
        version,
        file,
        new Date().toISOString(),
      ]);
      await conn.exec('COMMIT');
    } catch (error) {
      await conn.exec('ROLLBACK').catch(() => undefined);
      throw new Error(`migration ${file} failed: ${(error as Error).message}`);
    }
  }
}

export async function openDatabase(file: string): Promise<Db> {
  const writerConn = new Connection(await open(file));
  // WAL lets readers run beside the writer; synchronous=FULL makes every COMMIT durable.
  // temp_store=MEMORY keeps each unit's SAVEPOINT journal (the pages it changed, as they were) in
  // memory: past 64 KiB SQLite spills it to a temporary file, a write system call for each page
  // header and each page, about a fifth of the relay's write calls under load, for a journal that
  // only a ROLLBACK TO reads and that no recovery needs (the WAL keeps commits durable).
  await writerConn.exec(
    `PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000; PRAGMA temp_store = MEMORY; PRAGMA wal_autocheckpoint = ${WRITER_AUTOCHECKPOINT_PAGES};`,
  );
  await migrate(writerConn);
  const readerConn = new Connection(await open(file));
  await readerConn.exec('PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000; PRAGMA query_only = ON;');
  const checkpointConn = new Connection(await open(file));
  await checkpointConn.exec('PRAGMA synchronous = FULL;');
  const checkpointer = new Checkpointer(checkpointConn);
  const writer = new GroupCommitWriter(writerConn, checkpointer);

  return {
    file,
    dialect: 'sqlite',
    get: (sql, params) => readerConn.get(sql, params),
    all: (sql, params) => readerConn.all(sql, params),
    write: (fn) => writer.write(fn),
    writeBatched: (batch, item) => writer.writeBatched(batch, item),
    async close() {
      await writer.close();
      await checkpointer.close();
      await readerConn.close();
      await writerConn.exec('PRAGMA wal_checkpoint(TRUNCATE)').catch(() => undefined);
      await writerConn.close();
    },
  };
}
