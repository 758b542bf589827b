// Many rows in few statements, in each backend's own way.
import type { Queryable, Reader } from './db.js';

// A statement's rows stay under this many bytes (of JSON, or of raw messages): a batch of large
// emails (up to 10 MiB each) must not build one string past V8's limit, nor hold it twice (the
// driver copies it) all at once.
export const MAX_STATEMENT_BYTES = 8 * 1024 * 1024;
// The most parameters one statement takes: PostgreSQL's wire protocol numbers them with 16 bits;
// SQLite's SQLITE_MAX_VARIABLE_NUMBER defaults to 32,766.
const MAX_PARAMS = { postgres: 65_535, sqlite: 32_766 } as const;

/**
 * The items in order, in runs whose sizes add up to at most `max` (an item larger than that runs
 * alone): what one statement of many rows carries.
 */
export function* bySize<T>(items: Iterable<T>, sizeOf: (item: T) => number, max: number): Generator<T[]> {
  let chunk: T[] = [];
  let size = 0;
  for (const item of items) {
    const n = sizeOf(item);
    if (chunk.length > 0 && size + n > max) {
      yield chunk;
      chunk = [];
      size = 0;
    }
    chunk.push(item);
    size += n;
  }
  if (chunk.length > 0) yield chunk;
}

/**
 * Runs sql, whose one parameter is a JSON array of rows (read with json_each, which the
 * PostgreSQL backend reads with json_array_elements), over all the rows: one prepared statement
 * whatever their number, in as few executions as the size cap allows. Each row is an object and
 * the SQL reads its fields by name (`value->>'email_id'`, as graphile-worker does), never by
 * position. On PostgreSQL each field is text: numbers need a CAST (which SQLite accepts too).
 */
export async function runWithRows(tx: Queryable, sql: string, rows: readonly object[]): Promise<void> {
  const json = rows.map((row) => JSON.stringify(row));
  const chunks = bySize(json, (j) => j.length + 1, MAX_STATEMENT_BYTES);
  // PostgreSQL: every chunk issued at once, so that statements issued after this call run after
  // all of its rows are in (afterFirst), not between its chunks (a transaction's connection runs
  // its statements in the order issued). SQLite: one chunk's string at a time.
  if (tx.dialect === 'postgres') return allStatements([...chunks].map((chunk) => tx.run(sql, [`[${chunk.join(',')}]`])));
  for (const chunk of chunks) await tx.run(sql, [`[${chunk.join(',')}]`]);
}

/**
 * The rows of a JSON array parameter as SQLite reads them field by field (a multi-row INSERT,
 * pairs of keys): `jsonb_each` hands each row over in SQLite's binary JSON, so each
 * `value->>'column'` reads it as it is, where `json_each` renders every row as text and the first
 * `->>` of each row parses that text again. A 21-column email row cost 28 – 34 us of the sqlite3
 * thread that way, 17 – 20 this way (BENCHMARKS.md, issue 24, session 10); the values read are
 * the same. SQLite only: PostgreSQL takes multi-row VALUES and arrays.
 */
export const SQLITE_ROWS = 'jsonb_each(?)';

/** PostgreSQL: the rows of a JSON array parameter as rows of `table` (a field left out reads as NULL). */
export const postgresRows = (table: string) => `json_populate_recordset(CAST(NULL AS ${table}), CAST(? AS json))`;

/** A row to insert: a value for each of its columns, by column name. */
export type ColumnValues<C extends string> = { readonly [K in C]: unknown };

/**
 * INSERT of many rows, each an object of `columns`, from one JSON parameter: SQLite reads each
 * field with `->>`, PostgreSQL reads the rows as the table's own row type (json_populate_recordset:
 * each field by its column's name, with its column's type). Either way the statement's text is the
 * same whatever the number of rows, so PostgreSQL prepares it once per connection (postgres/db.ts)
 * and the driver binds one parameter: a multi-row VALUES was a statement of its own for every
 * batch size (an admission batch of 24 emails, 504 parameters), parsed and planned every time.
 * Values are strings, numbers and nulls (raw bytes go with insertValues). `onConflict` is an
 * optional `ON CONFLICT ...` clause both accept.
 */
export async function insertRows<C extends string>(
  tx: Queryable,
  table: string,
  columns: readonly C[],
  rows: ReadonlyArray<ColumnValues<C>>,
  onConflict = '',
): Promise<void> {
  if (rows.length === 0) return;
  if (tx.dialect === 'postgres') {
    const list = columns.join(', ');
    await runWithRows(tx, `INSERT INTO ${table} (${list}) SELECT ${list} FROM ${postgresRows(table)} ${onConflict}`, rows);
    return;
  }
  const values = columns.map((c) => `value->>'${c}'`).join(', ');
  // WHERE true: without it SQLite would read ON CONFLICT as part of the SELECT's join.
  // A field left undefined is absent from the JSON, which reads as NULL.
  await runWithRows(tx, `INSERT INTO ${table} (${columns.join(', ')}) SELECT ${values} FROM ${SQLITE_ROWS} WHERE true ${onConflict}`, rows);
}

/**
 * `head` followed by one `tuple` per row (one `?` per value of the row, in the tuple's order), in
 * as few statements as the parameter limit allows: PostgreSQL's way for typed columns, and either
 * backend's for values JSON cannot carry (a raw message).
 */
export async function insertValues(tx: Queryable, head: string, tuple: string, rows: readonly unknown[][], tail = ''): Promise<void> {
  if (rows.length === 0) return;
  const perStatement = Math.max(1, Math.floor(MAX_PARAMS[tx.dialect] / rows[0]!.length));
  for (let i = 0; i < rows.length; i += perStatement) {
    const chunk = rows.slice(i, i + perStatement);
    await tx.run(`${head} ${chunk.map(() => tuple).join(', ')} ${tail}`, chunk.flat());
  }
}

export interface SqlPart {
  sql: string;
  params: unknown[];
}

/** A read to issue with others (readTogether): its SQL and parameters; its rows are T. */
export interface Read<T> extends SqlPart {
  /** Never set: carries the row type. */
  readonly row?: T;
  /**
   * The names of the columns its SQL selects (SQLite cannot turn a row into JSON without them):
   * on SQLite, reads that all name theirs are one statement, as on PostgreSQL.
   */
  readonly columns?: readonly string[];
}

type RowsOf<R extends ReadonlyArray<Read<unknown> | undefined>> = { -readonly [K in keyof R]: R[K] extends Read<infer T> | undefined ? T[] : never };

/**
 * Several reads in one trip: one statement whose columns are each read's rows as a JSON array
 * (its columns by name; a number stays a number, text stays text). On SQLite only the reads that
 * name their columns (Read.columns) share it, the others are a statement each, all issued
 * together: statements issued together still run one after the other on the one connection, each
 * a work item of the sqlite3 thread pool on a thread woken for it and an answer the event loop
 * hands back. A read left undefined has no rows.
 */
export async function readTogether<R extends ReadonlyArray<Read<unknown> | undefined>>(q: Reader, reads: R): Promise<RowsOf<R>> {
  const asked = reads.flatMap((r, i) => (r ? [{ r, i }] : []));
  const out: unknown[][] = reads.map(() => []);
  let joined = q.dialect === 'postgres' ? asked : asked.filter(({ r }) => r.columns !== undefined);
  if (q.dialect !== 'postgres' && joined.length < 2) joined = [];
  const alone = asked.filter((a) => !joined.includes(a));
  await allStatements([
    ...(joined.length > 0 ? [readJoined(q, joined, out)] : []),
    ...alone.map(async ({ r, i }) => {
      out[i] = await q.all(r.sql, r.params);
    }),
  ]);
  return out as RowsOf<R>;
}

/** The reads' rows from one statement, into `out` at each read's place. */
async function readJoined(q: Reader, reads: ReadonlyArray<{ r: Read<unknown>; i: number }>, out: unknown[][]): Promise<void> {
  const columns = reads.map(({ r }, n) => `(SELECT ${jsonRows(q.dialect, r)} FROM (${r.sql}) AS t) AS r${n}`);
  const [row] = await q.all<Record<string, unknown>>(`SELECT ${columns.join(', ')}`, reads.flatMap(({ r }) => r.params));
  // SQLite hands its JSON over as text.
  reads.forEach(({ i }, n) => {
    const rows = row![`r${n}`];
    out[i] = typeof rows === 'string' ? (JSON.parse(rows) as unknown[]) : (rows as unknown[]);
  });
}

/** A read's rows (`t`) as one JSON array, in the read's order. */
function jsonRows(dialect: Reader['dialect'], read: Read<unknown>): string {
  if (dialect === 'postgres') return "COALESCE(json_agg(t), '[]')";
  return `json_group_array(json_object(${read.columns!.map((c) => `'${c}', t.${c}`).join(', ')}))`;
}

/**
 * `column IN (values)` as one parameter whatever the number of values, so the statement stays
 * one prepared statement: a JSON array read with json_each (SQLite), an array (PostgreSQL).
 */
export function inValues(q: Pick<Queryable, 'dialect'>, column: string, values: readonly unknown[]): SqlPart {
  return q.dialect === 'postgres'
    ? { sql: `${column} = ANY(?)`, params: [values] }
    : { sql: `${column} IN (SELECT value FROM json_each(?))`, params: [JSON.stringify(values)] };
}

/** `(a, b) IN (pairs)` of two text columns, as inValues does it. */
export function inTextPairs(q: Pick<Queryable, 'dialect'>, columns: readonly [string, string], pairs: ReadonlyArray<readonly [string, string]>): SqlPart {
  const [a, b] = columns;
  return q.dialect === 'postgres'
    ? { sql: `(${a}, ${b}) IN (SELECT * FROM unnest(?::text[], ?::text[]))`, params: [pairs.map((p) => p[0]), pairs.map((p) => p[1])] }
    : { sql: `(${a}, ${b}) IN (SELECT value->>0, value->>1 FROM ${SQLITE_ROWS})`, params: [JSON.stringify(pairs)] };
}

/**
 * Waits for statements issued together and throws the first failure, only once every one has
 * settled: a caller's ROLLBACK TO must not overtake a statement still running.
 */
export async function allStatements(statements: ReadonlyArray<Promise<unknown>>): Promise<void> {
  const failed = (await Promise.allSettled(statements)).find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/**
 * `first`, then the statements `rest` issues, which need its rows (they refer to them): on
 * PostgreSQL they go on the wire right behind it, since a transaction's connection runs its
 * statements in the order issued (postgres/db.ts: one trip for all, not one for `first` and one
 * for the rest); on SQLite, whose statements issued together are not ordered, once it has run.
 * Throws the first failure once every statement issued has settled (allStatements).
 */
export async function afterFirst(q: Pick<Queryable, 'dialect'>, first: Promise<unknown>, rest: () => ReadonlyArray<Promise<unknown>>): Promise<void> {
  if (q.dialect === 'postgres') return allStatements([first, ...rest()]);
  await first;
  await allStatements(rest());
}
