// PostgreSQL behind the same Db interface as SQLite: a pool of connections, each write(fn) one
// transaction on one pooled connection. Several relays may share the database; what must hold
// across them is made atomic by the database itself (tx.lock takes a transaction-scoped advisory
// lock, claims use FOR UPDATE SKIP LOCKED), never by this process's memory.
//
// A lost connection (server restarted, network cut) fails the callers with StorageUnavailableError
// (answered 503 with Retry-After); the pool opens fresh connections on the next call, so the relay
// recovers by itself once the server is back.
import pg from 'pg';
import { StorageUnavailableError, type Db, type Params, type Queryable, type RunResult, type WriteBatch } from '../db.js';
import { migratePostgres } from './migrate.js';
import { isPostgresFault } from './faults.js';
import { toPostgresPlaceholders } from './sql.js';
import { PostgresNotifier } from './notify.js';

// int8 (counts, sums, identity columns) and numeric come back as strings by default; every one
// of ours fits a double, and SQLite hands them back as numbers.
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20 || oid === 1700 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

// A deadlock or a serialization failure is the database asking to try the unit of work again.
const RETRYABLE = new Set(['40001', '40P01']);
const MAX_ATTEMPTS = 5;
/** The longest a batch waits for the clients its previous transaction answered (see drainBatch). */
const GATHER_MAX_MS = 10;

export interface PostgresDb extends Db {
  readonly notifier: PostgresNotifier;
}

function values(params: Params | undefined): unknown[] {
  if (params === undefined) return [];
  if (Array.isArray(params)) return params as unknown[];
  throw new Error('the PostgreSQL backend takes positional (?) parameters only');
}

// Statements the relay runs again and again (admission's reads, its counters' charge, the claims)
// are prepared once per connection under a name and then only bound and executed: PostgreSQL
// parses and plans a statement's text afresh on every run otherwise, for every admission batch. A
// statement is named when it has parameters (BEGIN and COMMIT stay simple queries) but not too
// many: a multi-row INSERT comes in as many texts as there are batch sizes, each to be planned
// anyway. A name, once given, always means its one text (the driver refuses a name reused for
// another), so past MAX_NAMED texts the rest run unnamed.
const MAX_NAMED = 500;
const MAX_NAMED_PARAMS = 64;
const statementNames = new Map<string, string>();

function statementName(text: string, params: readonly unknown[]): string | undefined {
  if (params.length === 0 || params.length > MAX_NAMED_PARAMS) return undefined;
  let name = statementNames.get(text);
  if (name === undefined && statementNames.size < MAX_NAMED) {
    name = `raven_${statementNames.size}`;
    statementNames.set(text, name);
  }
  return name;
}

/**
 * A connection (or the pool) speaking the repositories' SQL.
 *
 * A transaction's connection is pipelined (pg's `pipeline` mode): statements issued together
 * (Promise.all, allStatements) go on the wire at once, each with its own Sync, and the server runs
 * them one after the other in the order issued, answering in that order; a statement that fails
 * aborts the transaction, so every one after it fails too (25P02) and the first failure in order
 * is the one the caller sees. Until session 16 each waited for the answer of the one before it:
 * an admission batch was about twelve round trips (BEGIN, its lock, its reads, its charge, each
 * INSERT, COMMIT), each a wake-up of the relay and of its backend, paid once a batch, so three
 * times as often per request by three relays with a third of the clients each.
 */
class PgQueryable implements Queryable {
  readonly dialect = 'postgres';
  constructor(private readonly client: pg.Pool | pg.PoolClient) {}

  private query(text: string, values: unknown[]): Promise<pg.QueryResult> {
    return this.client.query({ text, values, name: statementName(text, values) });
  }

  async run(sql: string, params?: Params): Promise<RunResult> {
    const result = await this.query(toPostgresPlaceholders(sql), values(params));
    return { changes: result.rowCount ?? 0, lastID: 0 };
  }

  async get<T>(sql: string, params?: Params): Promise<T | undefined> {
    return (await this.all<T>(sql, params))[0];
  }

  async all<T>(sql: string, params?: Params): Promise<T[]> {
    const result = await this.query(toPostgresPlaceholders(sql), values(params));
    return result.rows as T[];
  }

  async lock(names: string | readonly string[]): Promise<void> {
    if (typeof names === 'string') await this.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [names]);
    // unnest yields the names in the array's order, and each lock is taken as its row is.
    else if (names.length > 0) await this.query('SELECT pg_advisory_xact_lock(hashtextextended(n, 0)) FROM unnest($1::text[]) AS n', [names]);
  }
}

/** Wraps a driver failure: a fault of the server or the connection is a 503, anything else stays. */
function storageError(error: unknown): unknown {
  return isPostgresFault(error) ? new StorageUnavailableError(error) : error;
}

export interface PostgresOptions {
  url: string;
  /** Connections in the pool (default 10). */
  poolSize?: number;
  onError?: (error: Error) => void;
}

export async function openPostgres(options: PostgresOptions): Promise<PostgresDb> {
  const newPool = (max: number, pipeline: boolean) => {
    const made = new pg.Pool({
      connectionString: options.url,
      max,
      types,
      pipeline,
      connectionTimeoutMillis: 5_000,
      // Idle connections to a restarted server are dropped and reopened on demand.
      idleTimeoutMillis: 30_000,
    });
    // An idle client losing its connection must not crash the process: the next query reconnects.
    made.on('error', (error) => options.onError?.(error));
    return made;
  };
  // Transactions and plain reads draw from pools of their own: a unit of work that reads outside
  // its transaction while every connection is held by such units would otherwise wait forever.
  // The transactions' connections are pipelined (PgQueryable); a plain read is one statement on
  // a connection of its own.
  const pool = newPool(options.poolSize ?? 10, true);
  const readPool = newPool(Math.max(2, Math.ceil((options.poolSize ?? 10) / 2)), false);
  let closed = false;

  try {
    await migratePostgres(pool);
  } catch (error) {
    await Promise.all([pool.end(), readPool.end()]).catch(() => undefined);
    throw error;
  }
  const reader = new PgQueryable(readPool);
  const notifier = new PostgresNotifier(options.url, types, options.onError);
  await notifier.start().catch(async (error: unknown) => {
    await Promise.all([pool.end(), readPool.end()]).catch(() => undefined);
    throw error;
  });

  async function transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    if (closed) throw new StorageUnavailableError(new Error('database closed'));
    for (let attempt = 1; ; attempt++) {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw new StorageUnavailableError(error);
      }
      let broken = false;
      // A checked-out client whose connection drops emits 'error': unheard, it would end the
      // process. The query in flight fails with it, which is what the caller hears.
      const onError = () => {
        broken = true;
      };
      client.on('error', onError);
      try {
        // BEGIN goes on the wire with the unit's first statements, not a trip ahead of them.
        const begun = client.query('BEGIN');
        begun.catch(() => undefined);
        const value = await fn(new PgQueryable(client));
        await begun;
        await client.query('COMMIT');
        return value;
      } catch (error) {
        broken = isPostgresFault(error);
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        const code = (error as { code?: string }).code;
        if (code !== undefined && RETRYABLE.has(code) && attempt < MAX_ATTEMPTS) continue;
        throw storageError(error);
      } finally {
        client.off('error', onError);
        // A connection that failed mid-transaction is thrown away rather than reused.
        client.release(broken);
      }
    }
  }

  // Items of one batch that arrive while that batch's transaction is in flight commit together
  // in the next one: the group commit of the SQLite writer, one batch at a time per relay.
  //
  // A batch that clients wait for (`ahead`: admissions, the sink's captures) also waits a moment
  // for the clients its previous transaction just answered: each sends its next request as soon as
  // it has its answer, and a transaction started on the first of them alone would leave the others
  // to the one after it, so the batches of a relay with sixteen clients alternated between a few
  // and most of them, every one paying a transaction's fixed cost (its trips, its counters, its
  // flush). It waits until as many wait as the previous transaction held, or a quarter of that
  // transaction's time (GATHER_MAX_MS at most) has passed.
  interface BatchQueue {
    items: Array<{ item: unknown; resolve: (v: unknown) => void; reject: (e: unknown) => void }>;
    running: boolean;
    /** Members and milliseconds of the previous transaction. */
    last: { members: number; ms: number };
    /** Called once the queue holds as many as the previous transaction did (or the wait is over). */
    gathered?: () => void;
  }
  const batchQueues = new Map<WriteBatch<unknown, unknown>, BatchQueue>();

  function gather(queue: BatchQueue): Promise<void> | undefined {
    const wait = Math.min(GATHER_MAX_MS, queue.last.ms / 4);
    if (queue.items.length >= queue.last.members || wait < 0.5) return undefined;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => queue.gathered?.(), wait);
      queue.gathered = () => {
        clearTimeout(timer);
        queue.gathered = undefined;
        resolve();
      };
    });
  }

  async function drainBatch(batch: WriteBatch<unknown, unknown>): Promise<void> {
    const queue = batchQueues.get(batch)!;
    queue.running = true;
    try {
      while (queue.items.length > 0) {
        if (batch.ahead && !closed) await gather(queue);
        const members = queue.items.splice(0, 512);
        const started = performance.now();
        try {
          const outcomes = await transaction((tx) => batch.run(tx, members.map((m) => m.item)));
          members.forEach((m, i) => {
            const outcome = outcomes[i];
            if (outcome?.status === 'fulfilled') m.resolve(outcome.value);
            else m.reject(outcome ? outcome.reason : new Error('the write batch returned no outcome for this item'));
          });
        } catch (error) {
          for (const m of members) m.reject(error);
        }
        queue.last = { members: members.length, ms: performance.now() - started };
      }
    } finally {
      queue.running = false;
    }
  }

  return {
    file: options.url.replace(/\/\/[^@/]*@/, '//'),
    dialect: 'postgres',
    notifier,
    get: <T>(sql: string, params?: Params) => reader.get<T>(sql, params).catch((error: unknown) => Promise.reject<T>(storageError(error))),
    all: <T>(sql: string, params?: Params) => reader.all<T>(sql, params).catch((error: unknown) => Promise.reject<T[]>(storageError(error))),
    write: transaction,
    writeBatched<I, R>(batch: WriteBatch<I, R>, item: I): Promise<R> {
      if (closed) return Promise.reject(new StorageUnavailableError(new Error('database closed')));
      const key = batch as WriteBatch<unknown, unknown>;
      let queue = batchQueues.get(key);
      if (!queue) {
        queue = { items: [], running: false, last: { members: 0, ms: 0 } };
        batchQueues.set(key, queue);
      }
      const q = queue;
      return new Promise<R>((resolve, reject) => {
        q.items.push({ item, resolve: resolve as (v: unknown) => void, reject });
        if (!q.running) void drainBatch(key);
        else if (q.gathered && q.items.length >= q.last.members) q.gathered();
      });
    },
    async close() {
      closed = true;
      for (const q of batchQueues.values()) q.gathered?.();
      while ([...batchQueues.values()].some((q) => q.running || q.items.length > 0)) await new Promise((r) => setTimeout(r, 5));
      await notifier.stop();
      await Promise.all([pool.end(), readPool.end()]);
    },
  };
}
