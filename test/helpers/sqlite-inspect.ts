// Opens a relay's SQLite file from the test on a connection of its own (another process, when the
// relay runs as a child), to see what is really committed whatever the API answered, to hold
// locks against the relay, and to check the file's integrity.
import sqlite3 from 'sqlite3';

export interface Inspector {
  all<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
}

export function openInspector(file: string): Promise<Inspector> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, sqlite3.OPEN_READWRITE, (openError) => {
      if (openError) return reject(openError);
      resolve({
        all: <T>(sql: string, params: unknown[] = []) =>
          new Promise<T[]>((ok, fail) => db.all<T>(sql, params, (error, rows) => (error ? fail(error) : ok(rows)))),
        exec: (sql) => new Promise<void>((ok, fail) => db.exec(sql, (error) => (error ? fail(error) : ok()))),
        close: () => new Promise<void>((ok, fail) => db.close((error) => (error ? fail(error) : ok()))),
      });
    });
  });
}

/** `PRAGMA integrity_check` on a connection of its own: ['ok'] when the file is sound. */
export async function integrityCheck(file: string): Promise<string[]> {
  const db = await openInspector(file);
  try {
    return (await db.all<{ integrity_check: string }>('PRAGMA integrity_check')).map((r) => r.integrity_check);
  } finally {
    await db.close();
  }
}
