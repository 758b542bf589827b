// The storage backend the relay tests run against: RAVEN_TEST_BACKEND=sqlite (the default) or
// postgres. On postgres every test relay gets a database of its own, on the server named by
// RAVEN_TEST_DATABASE_URL, or else on a server this process starts (and stops when it exits).
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

/** A fresh database for one test relay (or one group of relays sharing it). */
export async function freshPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  return createTestDatabase(await postgresServerUrl());
}
