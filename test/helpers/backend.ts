// The storage backend the relay tests run against: RAVEN_TEST_BACKEND=sqlite (the default) or
// postgres. On postgres every test relay gets a database of its own, on the server named by
// RAVEN_TEST_DATABASE_URL, or else on a server this process starts (and stops when it exits).
import { constants, existsSync } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import { createTestDatabase, startPostgresServer, type PostgresServer } from './postgres-server.js';

export type TestBackend = 'sqlite' | 'postgres';

export const TEST_BACKEND: TestBackend = process.env.RAVEN_TEST_BACKEND === 'postgres' ? 'postgres' : 'sqlite';
if (process.env.RAVEN_TEST_BACKEND !== undefined && !['sqlite', 'postgres'].includes(process.env.RAVEN_TEST_BACKEND)) {
  throw new Error(`RAVEN_TEST_BACKEND must be sqlite or postgres, got "${process.env.RAVEN_TEST_BACKEND}"`);
}

let ownServer: Promise<PostgresServer> | undefined;

/** This process's own server (for tests that restart it), started on first use. */
export function ownPostgresServer(): Promise<PostgresServer> {
  ownServer ??= startPostgresServer();
  return ownServer;
}

/** URL of a PostgreSQL server's maintenance database for creating test databases. */
export async function postgresServerUrl(): Promise<string> {
  return process.env.RAVEN_TEST_DATABASE_URL ?? (await ownPostgresServer()).url;
}

/**
 * A fresh database for one test relay (or one group of relays sharing it). Under `npm test` it is a
 * copy of the run's migrated template (RAVEN_TEST_DATABASE_TEMPLATE, made once by test/run.ts on
 * RAVEN_TEST_DATABASE_URL's server), so the relay finds every migration applied instead of running
 * them all again; `migrated: false` (relays migrating one empty database together), or a file run
 * on its own, gives an empty one.
 */
export async function freshPostgresDatabase(options: { migrated?: boolean } = {}): Promise<{ url: string; drop(): Promise<void> }> {
  const template = options.migrated === false || process.env.RAVEN_TEST_DATABASE_URL === undefined ? undefined : process.env.RAVEN_TEST_DATABASE_TEMPLATE;
  return createTestDatabase(await postgresServerUrl(), { template });
}

/**
 * Gives a data directory that has no database yet the one a relay would make in it on SQLite:
 * under `npm test` a copy of the run's migrated database (RAVEN_TEST_SQLITE_TEMPLATE, made once by
 * test/run.ts), so the relay opening it finds every migration applied. Run on its own, or for a
 * directory not made yet or with a database already, it does nothing (the relay migrates as usual).
 */
export async function seedSqliteDataDir(dataDir: string): Promise<void> {
  const template = process.env.RAVEN_TEST_SQLITE_TEMPLATE;
  // The file relay/storage/open.ts opens in the data directory.
  const file = path.join(dataDir, 'raven.sqlite');
  if (template && existsSync(dataDir) && !existsSync(file)) await copyFile(template, file, constants.COPYFILE_EXCL);
}
