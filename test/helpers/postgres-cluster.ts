// Several relay processes on one PostgreSQL database, for the multi-relay tests: each a real
// `ravenctl relay start --database ...` child, the first one bootstrapping the database.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freshPostgresDatabase } from './backend.js';
import { createTestDatabase } from './postgres-server.js';
import { startRelayProcess, type RelayProcess } from './relay-process.js';
import { call, type CallResult } from './start-relay.js';

export const ADMIN_TOKEN = 'cluster-admin-token-0123456789';

export interface Cluster {
  relays: RelayProcess[];
  apiKey: string;
  domain: string;
  workspaceId: string;
  projectId: string;
  databaseUrl: string;
  /** A connection of the test's own to the database, to see what is really committed. */
  sql<T = any>(text: string, params?: unknown[]): Promise<T[]>;
  send(relay: number, fields?: Record<string, unknown>, options?: { key?: string; idempotencyKey?: string }): Promise<CallResult>;
  admin(relay: number, method: string, urlPath: string, body?: unknown): Promise<CallResult>;
  /** Starts one more relay on the same database (after a kill, for instance). */
  addRelay(): Promise<RelayProcess>;
  /** Starts relay i again on its own data directory (after kill9 or stop), in its place in `relays`. */
  restartRelay(i: number): Promise<RelayProcess>;
  stop(): Promise<void>;
}

export interface ClusterOptions {
  relays: number;
  /** Merged into the relays' JSON config file. */
  config?: Record<string, unknown>;
  extraArgs?: string[];
  /** Arguments for the i-th relay only (its own upstream, for instance). */
  relayArgs?: (i: number) => string[];
  /** The server to create the database on (default: the test run's). */
  serverUrl?: string;
}

/** Limits lifted so a test can send thousands of emails; a test may put them back. */
const RELAXED_LIMITS = {
  testKeyPerMinute: 1_000_000,
  keyPerSecond: 1_000_000,
  workspacePerSecond: 1_000_000,
  testKeyMonthlyRecipients: 1_000_000,
  workspaceMonthlyRecipients: 1_000_000,
};

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  // Empty: the relays starting together on it migrate it (one of them each migration).
  const database = options.serverUrl ? await createTestDatabase(options.serverUrl) : await freshPostgresDatabase({ migrated: false });
  const dir = await mkdtemp(path.join(tmpdir(), 'raven-cluster-'));
  const { limits, ...rest } = (options.config ?? {}) as { limits?: Record<string, number> };
  const configFile = path.join(dir, 'relay.json');
  await writeFile(configFile, JSON.stringify({ limits: { ...RELAXED_LIMITS, ...limits }, ...rest }));
  const pool = new pg.Pool({ connectionString: database.url, max: 2 });
  // Its idle connections drop when a test restarts the server; the next query reconnects.
  pool.on('error', () => undefined);
  let count = 0;
  const relays: RelayProcess[] = [];

  const startAt = (i: number) =>
    startRelayProcess({
      dataDir: path.join(dir, `relay-${i}`),
      adminToken: ADMIN_TOKEN,
      config: configFile,
      extraArgs: ['--database', database.url, ...(options.extraArgs ?? []), ...(options.relayArgs?.(i) ?? [])],
      // Started beside relays under load (a restart in the chaos test) on a small machine.
      startTimeoutMs: 60_000,
    });
  const addRelay = async () => {
    const i = count++;
    const relay = await startAt(i);
    relays[i] = relay;
    return relay;
  };

  try {
    const first = await addRelay();
    const boot = first.ready.bootstrap;
    if (!boot) throw new Error(`the first relay did not bootstrap the database: ${JSON.stringify(first.ready)}`);
    await Promise.all(Array.from({ length: options.relays - 1 }, addRelay));
    const cluster: Cluster = {
      relays,
      apiKey: boot.api_key,
      domain: boot.domain,
      workspaceId: boot.workspace_id,
      projectId: boot.project_id,
      databaseUrl: database.url,
      sql: async (text, params = []) => (await pool.query(text, params)).rows,
      send: (i, fields = {}, o = {}) =>
        call(relays[i]!.httpUrl, 'POST', '/v1/emails', {
          token: o.key ?? boot.api_key,
          body: { from: `Raven <sender@${boot.domain}>`, to: `user@${boot.domain}`, subject: 'Hello', text: 'Hi', ...fields },
          headers: o.idempotencyKey ? { 'idempotency-key': o.idempotencyKey } : undefined,
        }),
      admin: (i, method, urlPath, body) => call(relays[i]!.httpUrl, method, urlPath, { token: ADMIN_TOKEN, body }),
      addRelay,
      async restartRelay(i) {
        const relay = await startAt(i);
        relays[i] = relay;
        return relay;
      },
      async stop() {
        await Promise.all(relays.map((r) => r.stop().catch(() => r.kill9())));
        await pool.end();
        await database.drop();
        await rm(dir, { recursive: true, force: true });
      },
    };
    return cluster;
  } catch (error) {
    await Promise.all(relays.map((r) => r.kill9()));
    await pool.end();
    await database.drop();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Runs task(i) for i in [0, n) with at most `parallel` at once; resolves with the results in order. */
export async function inParallel<T>(n: number, parallel: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(n);
  let next = 0;
  const lane = async () => {
    while (next < n) {
      const i = next++;
      results[i] = await task(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, n) }, lane));
  return results;
}

/** Polls probe until it returns a value (not undefined/false); fails after timeoutMs. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
