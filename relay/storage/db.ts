// SQLite access: one read connection and one writer that group-commits.
//
// Every write goes through `db.write(fn)`. Calls that arrive while a commit is in flight wait and
// are then run together in one transaction, so concurrent admissions share one fsync instead of
// paying one each. Each fn runs inside its own SAVEPOINT: a failing fn is rolled back alone and
// its caller gets the error, the rest of the group still commits. `db.write` resolves only after
// COMMIT has returned, so a caller that answers 202 afterwards has its rows on disk.
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import sqlite3 from 'sqlite3';

export type Params = ReadonlyArray<unknown> | Record<string, unknown>;

export interface RunResult {
  changes: number;
  lastID: number;
}

export interface Queryable {
  run(sql: string, params?: Params): Promise<RunResult>;
  get<T>(sql: string, params?: Params): Promise<T | undefined>;
  all<T>(sql: string, params?: Params): Promise<T[]>;
}

export interface Db extends Pick<Queryable, 'get' | 'all'> {
  /** Runs fn in the next group-committed transaction; resolves after COMMIT. */
  write<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
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

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
// Most groups are small; the cap bounds how long one transaction holds the write lock.
const MAX_GROUP = 512;

function open(file: string): Promise<sqlite3.Database> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, (err) => (err ? reject(err) : resolve(db)));
  });
}

/** A connection wrapped in promises, with a cache of prepared statements. */
class Connection implements Queryable {
  private readonly statements = new Map<string, sqlite3.Statement>();
  constructor(readonly raw: sqlite3.Database) {}

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
    return new Promise((resolve, reject) => {
      this.statement(sql).run(params, function (this: sqlite3.RunResult, err: Error | null) {
        if (err) reject(err);
        else resolve({ changes: this.changes, lastID: this.lastID });
      });
    });
  }

  // Through all(): a half-stepped statement would keep a read snapshot open on the connection.
  async get<T>(sql: string, params: Params = []): Promise<T | undefined> {
    return (await this.all<T>(sql, params))[0];
  }

  all<T>(sql: string, params: Params = []): Promise<T[]> {
    return new Promise((resolve, reject) => {
      this.statement(sql).all(params, (err: Error | null, rows: T[]) => (err ? reject(err) : resolve(rows)));
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

interface PendingWrite {
  fn: (tx: Queryable) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

class GroupCommitWriter {
  private queue: PendingWrite[] = [];
  private running = false;
  private closed = false;

  constructor(private readonly conn: Connection) {}

  write<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new StorageUnavailableError(new Error('database closed')));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const group = this.queue.splice(0, MAX_GROUP);
        await this.commitGroup(group);
      }
    } finally {
      this.running = false;
    }
  }

  private async commitGroup(group: PendingWrite[]): Promise<void> {
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      await this.conn.run('BEGIN IMMEDIATE');
    } catch (error) {
      for (const w of group) w.reject(new StorageUnavailableError(error));
      return;
    }
    try {
      for (const w of group) {
        await this.conn.run('SAVEPOINT w');
        try {
          const value = await w.fn(this.conn);
          await this.conn.run('RELEASE w');
          outcomes.push({ ok: true, value });
        } catch (error) {
          // After a storage fault SQLite may have rolled the whole transaction back itself: then
          // ROLLBACK TO fails, and so does the whole group, with the fault as the cause.
          await this.conn.run('ROLLBACK TO w').catch((rollbackError: unknown) => {
            throw isStorageFault(error) ? error : rollbackError;
          });
          await this.conn.run('RELEASE w');
          outcomes.push({ ok: false, error: isStorageFault(error) ? new StorageUnavailableError(error) : error });
        }
      }
      await this.conn.run('COMMIT');
    } catch (error) {
      // COMMIT (or a savepoint) failed: nothing of this group is durable.
      await this.conn.run('ROLLBACK').catch(() => undefined);
      for (const w of group) w.reject(new StorageUnavailableError(error));
      return;
    }
    group.forEach((w, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) w.resolve(outcome.value);
      else w.reject(outcome.error);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    while (this.running || this.queue.length > 0) await new Promise((r) => setTimeout(r, 5));
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
  await writerConn.exec(
    'PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;',
  );
  await migrate(writerConn);
  const readerConn = new Connection(await open(file));
  await readerConn.exec('PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000; PRAGMA query_only = ON;');
  const writer = new GroupCommitWriter(writerConn);

  return {
    file,
    get: (sql, params) => readerConn.get(sql, params),
    all: (sql, params) => readerConn.all(sql, params),
    write: (fn) => writer.write(fn),
    async close() {
      await writer.close();
      await readerConn.close();
      await writerConn.exec('PRAGMA wal_checkpoint(TRUNCATE)').catch(() => undefined);
      await writerConn.close();
    },
  };
}
