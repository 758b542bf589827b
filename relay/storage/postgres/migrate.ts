// PostgreSQL migrations: SQLite's list (relay/storage/migrations/NNNN_name.sql), applied in order
// and recorded in schema_migrations. A migration whose SQL differs between the two has its
// PostgreSQL port under the same name in postgres/migrations/, which is applied instead; the others
// are one file for both. Relays starting together on one empty database take an advisory lock so
// exactly one of them applies each migration.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';

const here = path.dirname(fileURLToPath(import.meta.url));
const SHARED_DIR = path.join(here, '..', 'migrations');
const PORTS_DIR = path.join(here, 'migrations');
const MIGRATION_FILE = /^\d{4}_.+\.sql$/;

/** Each migration's file name and the path PostgreSQL applies: its port, or the shared file. */
async function migrationFiles(): Promise<Array<{ file: string; sqlPath: string }>> {
  const ports = new Set((await readdir(PORTS_DIR)).filter((f) => MIGRATION_FILE.test(f)));
  const files = (await readdir(SHARED_DIR)).filter((f) => MIGRATION_FILE.test(f)).sort();
  return files.map((file) => ({ file, sqlPath: path.join(ports.has(file) ? PORTS_DIR : SHARED_DIR, file) }));
}
const MIGRATION_LOCK = 'raven.migrations';

export async function migratePostgres(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [MIGRATION_LOCK]);
    try {
      await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
      const applied = new Set((await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
      for (const { file, sqlPath } of await migrationFiles()) {
        const version = Number(file.slice(0, 4));
        if (applied.has(version)) continue;
        const sql = await readFile(sqlPath, 'utf8');
        await client.query('BEGIN');
        try {
          await client.query(sql);
          await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [version, file, new Date().toISOString()]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw new Error(`migration ${file} failed: ${(error as Error).message}`);
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [MIGRATION_LOCK]).catch(() => undefined);
    }
  } finally {
    client.release();
  }
}
