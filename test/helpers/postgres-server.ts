// A real PostgreSQL server for tests and benchmarks: initdb in a temporary directory, started on a
// free port, stopped and removed at the end. PostgreSQL refuses to run as root (and CI runs as
// root), so as root the server runs as the unprivileged `postgres` user, created when missing.
// The binaries come from the machine (Debian's postgresql package; scripts/ensure-postgres.mjs
// installs it when missing): when they are absent this fails, it never skips.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface PostgresServer {
  /** URL of the server's `postgres` database, as the superuser `raven`. */
  url: string;
  port: number;
  /** Stops the server (fast shutdown) and removes its directory. */
  stop(): Promise<void>;
  /** Stops the server, then starts it again on the same port and data. */
  restart(options?: { downMs?: number; onDown?: () => Promise<void> | void }): Promise<void>;
  /** Stops the server without removing anything (start() brings it back). */
  halt(): Promise<void>;
  start(): Promise<void>;
}

const SUPERUSER = 'raven';

/** The directory with initdb and postgres: Debian's newest, or whatever PATH has. */
export function findPostgresBin(): string | undefined {
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((v) => existsSync(path.join(debian, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return path.join(debian, versions[0], 'bin');
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  const initdb = which.stdout.trim();
  return which.status === 0 && initdb ? path.dirname(initdb) : undefined;
}

/** uid and gid to run the server as: ours, or as root an unprivileged user's. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const lookup = () => spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  let found = lookup();
  if (found.status !== 0) {
    const made = spawnSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres'], { encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`cannot create the postgres user to run PostgreSQL as: ${made.stderr}`);
    found = lookup();
  }
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  return { uid: Number(found.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** pg's Client, loaded on first use: every test process imports this module, the SQLite ones never connect. */
const pgClient = async () => (await import('pg')).default.Client;

async function waitUntilAccepting(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`postgres exited with ${child.exitCode}: ${log()}`);
    const client = new (await pgClient())({ connectionString: url, connectionTimeoutMillis: 2_000 });
    try {
      await client.connect();
      await client.end();
      return;
    } catch {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) throw new Error(`postgres did not accept connections within 30 s: ${log()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

export interface PostgresServerOptions {
  /** fsync each commit (benchmarks); tests run without it, which survives a server restart but not a machine crash. */
  durable?: boolean;
  /** More server settings (`name=value`), e.g. the bench's diagnostic shared_preload_libraries. */
  settings?: string[];
}

export async function startPostgresServer(options: PostgresServerOptions = {}): Promise<PostgresServer> {
  const bin = findPostgresBin();
  if (!bin) throw new Error('PostgreSQL is not installed: run `node scripts/ensure-postgres.mjs` (as root it installs Debian\'s postgresql package)');
  const user = serverUser();
  const dir = await mkdtemp(path.join(tmpdir(), 'raven-pg-'));
  const data = path.join(dir, 'data');
  await mkdir(data, { mode: 0o700 });
  if (user) {
    await chown(dir, user.uid, user.gid);
    await chown(data, user.uid, user.gid);
  }
  const asUser = user ? { uid: user.uid, gid: user.gid } : {};
  const init = spawnSync(path.join(bin, 'initdb'), ['-D', data, '-U', SUPERUSER, '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'], {
    encoding: 'utf8',
    cwd: dir,
    ...asUser,
  });
  if (init.status !== 0) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
  }

  let port = await freePort();
  let child: ChildProcess | undefined;
  let output = '';
  const settings = [
    '-c', 'listen_addresses=127.0.0.1',
    '-c', `unix_socket_directories=${dir}`,
    '-c', 'max_connections=400',
    '-c', `fsync=${options.durable ? 'on' : 'off'}`,
    '-c', 'full_page_writes=off',
    '-c', 'shared_buffers=128MB',
    ...(options.settings ?? []).flatMap((setting) => ['-c', setting]),
  ];
  // Whatever way this process ends, the server ends with it and its directory goes.
  const killOnExit = () => {
    const pid = child?.pid;
    if (child && child.exitCode === null && pid !== undefined) {
      child.kill('SIGQUIT'); // immediate shutdown
      spawnSync('sh', ['-c', `while kill -0 ${pid} 2>/dev/null; do sleep 0.05; done`], { timeout: 10_000 });
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', killOnExit);

  const start = async () => {
    for (let tries = 0; ; tries++) {
      output = '';
      const started = spawn(path.join(bin, 'postgres'), ['-D', data, '-p', String(port), ...settings], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], ...asUser });
      started.stdout!.on('data', (c: Buffer) => (output += c.toString()));
      started.stderr!.on('data', (c: Buffer) => (output += c.toString()));
      child = started;
      // The server must not keep this process alive: its owner stops it, or the exit hook does.
      started.unref();
      (started.stdout as unknown as { unref?: () => void }).unref?.();
      (started.stderr as unknown as { unref?: () => void }).unref?.();
      try {
        await waitUntilAccepting(`postgres://${SUPERUSER}@127.0.0.1:${port}/postgres`, started, () => output);
        return;
      } catch (error) {
        // Another process took the port between our probe and the bind: try another one.
        if (tries < 3 && /could not (bind|create listen)/i.test(output)) {
          port = await freePort();
          continue;
        }
        throw error;
      }
    }
  };
  const halt = async () => {
    const running = child;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    running.ref(); // waiting for it keeps this process alive
    running.kill('SIGINT'); // fast shutdown: disconnects clients, checkpoints, exits
    await exited;
  };

  try {
    await start();
  } catch (error) {
    killOnExit();
    process.off('exit', killOnExit);
    throw error;
  }
  const server: PostgresServer = {
    get url() {
      return `postgres://${SUPERUSER}@127.0.0.1:${port}/postgres`;
    },
    get port() {
      return port;
    },
    start,
    halt,
    async restart(o = {}) {
      await halt();
      await o.onDown?.();
      if (o.downMs) await new Promise((r) => setTimeout(r, o.downMs));
      await start();
    },
    async stop() {
      await halt();
      process.off('exit', killOnExit);
      await rm(dir, { recursive: true, force: true });
    },
  };
  return server;
}

/**
 * A fresh database on the server at serverUrl: empty, or a copy of the database named `template`
 * (which nothing may be connected to); drop() removes it (closing its connections).
 */
export async function createTestDatabase(serverUrl: string, options: { template?: string } = {}): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `raven_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = async (sql: string) => {
    const client = new (await pgClient())({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}${options.template ? ` TEMPLATE ${options.template}` : ''}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
