// `ravenctl relay start` as a person first sees it (issue 20): the start-up output reads as one
// banner, then the logs (never interleaved); with an upstream the SMTP listener is not called a
// sink; and the banner's `New API key` command works when the admin token came from the
// environment (an EnvironmentFile, as the README recommends), where no token file exists.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TEST_BACKEND, freshPostgresDatabase } from '../helpers/backend.js';
import { ravenctlCommand, ravenctlEnv } from '../helpers/ravenctl.js';

const dir = mkdtempSync(path.join(tmpdir(), 'ravenctl-startup-'));
const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const cleanup of cleanups) await cleanup();
  rmSync(dir, { recursive: true, force: true });
});

const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

/** Starts the relay with stdout and stderr on one pipe, in the order a terminal shows them. */
async function startMerged(args: string[], env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; output: () => string; until(pattern: RegExp): Promise<void>; stop(): Promise<void> }> {
  const database = TEST_BACKEND === 'postgres' ? await freshPostgresDatabase() : undefined;
  if (database) cleanups.push(() => database.drop());
  const words = ravenctlCommand(['relay', 'start', '--port', '0', '--smtp-port', '0', ...(database ? ['--database', database.url] : []), ...args]);
  const child = spawn('sh', ['-c', `exec ${words.map(quote).join(' ')} 2>&1`], { env: ravenctlEnv(env, dir), cwd: dir });
  let output = '';
  const waiters: Array<{ pattern: RegExp; resolve: () => void }> = [];
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    output += d;
    for (const w of [...waiters]) if (w.pattern.test(output)) waiters.splice(waiters.indexOf(w), 1) && w.resolve();
  });
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  return {
    child,
    output: () => output,
    until: (pattern) =>
      pattern.test(output)
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            waiters.push({ pattern, resolve });
            void closed.then(() => reject(new Error(`exited before ${pattern}:\n${output}`)));
          }),
    stop: async () => {
      child.kill('SIGTERM');
      assert.equal(await closed, 0, output);
    },
  };
}

describe('start-up output', () => {
  test('reads as one banner, then the logs', { timeout: 120_000 }, async () => {
    const relay = await startMerged(['--data-dir', path.join(dir, 'banner')], { HOME: dir, RAVEN_LOG_LEVEL: 'info' });
    await relay.until(/"msg":"ready"/);
    await relay.stop();
    const out = relay.output();
    const banner = out.slice(0, out.indexOf('Press Ctrl-C to stop.'));
    assert.match(banner, /^Raven relay ready\n/, out);
    assert.doesNotMatch(banner, /\{"t":/, 'no log line inside the banner');
    assert.match(out.slice(banner.length), /^Press Ctrl-C to stop\.\n\{"t":.*"msg":"smtp sink listening"/m, 'the logs follow');
  });

  test('with an upstream the SMTP listener is the bounce and complaint MX, not a sink', { timeout: 120_000 }, async () => {
    const relay = await startMerged(['--data-dir', path.join(dir, 'upstream'), '--upstream', 'smtp://127.0.0.1:9'], { HOME: dir, RAVEN_LOG_LEVEL: 'info' });
    await relay.until(/"msg":"ready"/);
    await relay.stop();
    assert.doesNotMatch(relay.output(), /smtp sink listening/);
    assert.match(relay.output(), /"msg":"smtp bounce and complaint MX listening"/);
  });
});

describe('the banner with the admin token from the environment', () => {
  test("its New API key command works from the environment file, with no token file anywhere", { timeout: 120_000 }, async () => {
    const token = 'env-file-admin-token-0123456789';
    const relay = await startMerged(['--data-dir', path.join(dir, 'env-token'), '--json'], { HOME: dir, RAVEN_ADMIN_TOKEN: token, RAVEN_LOG_LEVEL: 'error' });
    await relay.until(/"new_key_command"/);
    const ready = JSON.parse(relay.output().slice(relay.output().indexOf('{'), relay.output().lastIndexOf('}') + 1));
    assert.equal(ready.new_key_command, `npx ravenctl relay keys create --name NAME --admin-token "$RAVEN_ADMIN_TOKEN" --base-url ${ready.http_url}`);
    assert.doesNotMatch(relay.output(), new RegExp(token), 'the token is never printed');

    // As an operator would: source the service's environment file (no export), run the command elsewhere.
    const elsewhere = mkdtempSync(path.join(dir, 'shell-'));
    writeFileSync(path.join(elsewhere, 'raven.env'), `RAVEN_ADMIN_TOKEN=${token}\n`);
    const command = ready.new_key_command.replace('npx ravenctl', ravenctlCommand([]).map(quote).join(' ')).replace('NAME', 'laptop');
    const run = spawn('sh', ['-c', `. ./raven.env && ${command} --json`], { env: ravenctlEnv({}, elsewhere), cwd: elsewhere });
    let stdout = '';
    let stderr = '';
    run.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    run.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => run.on('close', resolve));
    await relay.stop();
    assert.equal(code, 0, stderr);
    assert.match(JSON.parse(stdout).key, /^rr_test_/);
  });
});
