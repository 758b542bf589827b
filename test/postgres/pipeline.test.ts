// A transaction's statements issued together go to PostgreSQL at once (relay/storage/postgres/db.ts:
// the transactions' connections are pipelined), not each after the answer to the one before: an
// admission batch's cost per batch is counted in such trips (ARCHITECTURE.md, "PostgreSQL and
// several relays"). Measured through a proxy that holds every answer of the server back a while:
// the unit's time is then its trips.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import type { Db } from '../../relay/storage/db.js';
import { openPostgres } from '../../relay/storage/postgres/db.js';
import { allStatements } from '../../relay/storage/rows.js';
import { freshPostgresDatabase } from '../helpers/backend.js';

/** How long the proxy holds each of the server's answers back, once the test measures. */
const TRIP_MS = 150;

let fresh: Awaited<ReturnType<typeof freshPostgresDatabase>> | undefined;
let db: Db | undefined;
let proxy: net.Server | undefined;
const sockets = new Set<net.Socket>();
let delayMs = 0;

before(async () => {
  fresh = await freshPostgresDatabase();
  const target = new URL(fresh.url);
  proxy = net.createServer((client) => {
    const server = net.connect(Number(target.port), target.hostname);
    sockets.add(client).add(server);
    client.on('data', (chunk) => server.write(chunk));
    server.on('data', (chunk) => {
      if (delayMs === 0) client.write(chunk);
      else setTimeout(() => client.write(chunk), delayMs);
    });
    const end = () => {
      client.destroy();
      server.destroy();
    };
    client.on('error', end).on('close', end);
    server.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => proxy!.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(fresh.url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((proxy.address() as net.AddressInfo).port);
  db = await openPostgres({ url: proxied.toString(), poolSize: 1 });
  // The pool's connection opened before the answers are held back.
  await db.write((tx) => tx.get('SELECT 1'));
});

after(async () => {
  await db?.close();
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => proxy?.close(resolve));
  await fresh?.drop();
});

test("a transaction's statements issued together take one trip, BEGIN with them, COMMIT one more", async () => {
  delayMs = TRIP_MS;
  try {
    const started = performance.now();
    const rows = await db!.write(async (tx) => {
      const reads = [1, 2, 3, 4, 5].map((n) => tx.get<{ n: number }>('SELECT CAST(? AS integer) AS n', [n]));
      await allStatements(reads);
      return Promise.all(reads);
    });
    const ms = performance.now() - started;
    assert.deepEqual(rows.map((r) => r?.n), [1, 2, 3, 4, 5], 'each statement answers its own rows, in order');
    // Two trips (BEGIN and the five; COMMIT): 300 ms. One after the other they were seven: 1,050 ms.
    assert.ok(ms >= 2 * TRIP_MS - 20, `${ms.toFixed(0)} ms`);
    assert.ok(ms < 4.5 * TRIP_MS, `${ms.toFixed(0)} ms for what is two trips pipelined, seven one after the other`);
  } finally {
    delayMs = 0;
  }
});

test('a failing statement aborts the transaction: the caller sees it, not the statements failing after it, and nothing is kept', async () => {
  await db!.write((tx) => tx.run('CREATE TABLE IF NOT EXISTS pipeline_probe (n integer PRIMARY KEY)'));
  await assert.rejects(
    db!.write(async (tx) =>
      allStatements([
        tx.run('INSERT INTO pipeline_probe (n) VALUES (?)', [1]),
        tx.run('INSERT INTO pipeline_probe (n) VALUES (?)', [1]),
        tx.run('INSERT INTO pipeline_probe (n) VALUES (?)', [2]),
      ]),
    ),
    (error: { code?: string }) => error.code === '23505',
  );
  assert.deepEqual(await db!.all('SELECT n FROM pipeline_probe'), []);
});
