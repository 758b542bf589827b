// ravenctl relay start as a real process: prints its addresses and the bootstrap key once,
// serves, and stops cleanly (exit 0) on SIGTERM; a second start on the same data dir does not
// print the key again.
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'ravenctl-relay-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

interface Started {
  child: ChildProcessWithoutNullStreams;
  ready: Record<string, any>;
  exit: Promise<number | null>;
}

function start(args: string[]): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'cli/main.ts'), 'relay', 'start', ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: dataDir, NO_COLOR: '1', RAVEN_LOG_LEVEL: 'error' },
  });
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => reject(new Error(`relay did not start:\n${stdout}\n${stderr}`)), 20_000);
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      try {
        const ready = JSON.parse(stdout) as Record<string, any>;
        clearTimeout(timer);
        resolve({ child, ready, exit });
      } catch {
        // not a whole document yet
      }
    });
    void exit.then((code) => reject(new Error(`relay exited ${code}:\n${stdout}\n${stderr}`)));
  });
}

describe('ravenctl relay start', () => {
  test('--json: one document with the addresses and, on a fresh data dir, the bootstrap key; SIGTERM exits 0', async () => {
    const { child, ready, exit } = await start(['--data-dir', dataDir, '--port', '0', '--smtp-port', '0', '--json']);
    assert.equal(ready.status, 'ready');
    assert.match(ready.http_url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(ready.smtp_url, /^smtp:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(ready.data_dir, dataDir);
    assert.match(ready.admin_token, /\S{16,}/);
    assert.match(ready.bootstrap.api_key, /^rr_test_/);
    assert.match(ready.bootstrap.workspace_id, /^ws_/);
    assert.equal(ready.bootstrap.domain, 'example.test');

    const live = await fetch(`${ready.http_url}/livez`);
    assert.equal(live.status, 200);

    child.kill('SIGTERM');
    assert.equal(await exit, 0);
  });

  test('a restart on the same data dir prints no key and no generated token', async () => {
    const { child, ready, exit } = await start(['--data-dir', dataDir, '--port', '0', '--smtp-port', '0', '--json']);
    assert.equal(ready.bootstrap, null);
    assert.equal(ready.admin_token, undefined);
    child.kill('SIGINT');
    assert.equal(await exit, 0);
  });

  test('human output names HTTP, SMTP and Data', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ravenctl-relay-human-'));
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'cli/main.ts'), 'relay', 'start', '--data-dir', dir, '--port', '0', '--smtp-port', '0', '--admin-token', 'given-token', '--no-json'], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: dir, NO_COLOR: '1', RAVEN_LOG_LEVEL: 'error' },
    });
    const exit = new Promise<number | null>((resolve) => child.on('close', resolve));
    let stdout = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(stdout)), 20_000);
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        stdout += d;
        if (/API key \(shown once\): rr_test_\S+\n/.test(stdout)) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    assert.match(stdout, /^Raven relay ready\n {2}HTTP {3}http:\/\/127\.0\.0\.1:\d+\n {2}SMTP {3}smtp:\/\/127\.0\.0\.1:\d+\n {2}Data {3}\S+\n/);
    assert.match(stdout, /\n {2}Web {4}http:\/\/127\.0\.0\.1:\d+\/#signin=[\w-]+ {2}\(dashboard/, 'the one-time dashboard link');
    assert.doesNotMatch(stdout, /Admin token/, 'a token given by flag is not printed');
    child.kill('SIGTERM');
    assert.equal(await exit, 0);
    rmSync(dir, { recursive: true, force: true });
  });

  test('a bad flag value is a usage error (exit 2)', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'cli/main.ts'), 'relay', 'start', '--port', 'http'], { cwd: root });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 2);
  });
});
