// ravenctl relay start as a real process: prints its addresses and the bootstrap key once,
// serves, and stops cleanly (exit 0) on SIGTERM; a second start on the same data dir does not
// print the key again.
import assert from 'node:assert/strict';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { firstJsonDocument, ravenctl, spawnRavenctl } from '../helpers/ravenctl.js';
import { openRawSmtp } from '../helpers/smtp-raw.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'ravenctl-relay-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

interface Started {
  child: ChildProcessWithoutNullStreams;
  ready: Record<string, any>;
  exit: Promise<number | null>;
}

async function start(args: string[]): Promise<Started> {
  const child = spawnRavenctl(['relay', 'start', ...args], { env: { HOME: dataDir, RAVEN_LOG_LEVEL: 'error' } });
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const ready = (await firstJsonDocument(child)) as Record<string, any>;
  return { child, ready, exit };
}

describe('ravenctl relay start', () => {
  test('--json: one document with the addresses and, on a fresh data dir, the bootstrap key; SIGTERM exits 0', async () => {
    const { child, ready, exit } = await start(['--data-dir', dataDir, '--port', '0', '--smtp-port', '0', '--json']);
    assert.equal(ready.status, 'ready');
    assert.match(ready.http_url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(ready.smtp_url, /^smtp:\/\/127\.0\.0\.1:\d+$/);
    assert.match(ready.submission_url, /^smtp:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(ready.submission_port, 7587, 'beside ports given by flag, a free submission port');
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
    const child = spawnRavenctl(['relay', 'start', '--data-dir', dir, '--port', '0', '--smtp-port', '0', '--admin-token', 'given-token', '--no-json'], {
      env: { HOME: dir, RAVEN_LOG_LEVEL: 'error' },
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
    assert.match(stdout, /^Raven relay ready\n {2}HTTP +http:\/\/127\.0\.0\.1:\d+\n {2}SMTP +smtp:\/\/127\.0\.0\.1:\d+\n {2}Submission +smtp:\/\/127\.0\.0\.1:\d+ .*\n {2}Data +\S+\n/);
    // The Submission line prints the port actually bound (CONTRACT section 9): it greets as the submission listener.
    const printedPort = Number(/\n {2}Submission +smtp:\/\/127\.0\.0\.1:(\d+) /.exec(stdout)![1]);
    const greeter = await openRawSmtp(printedPort, '127.0.0.1');
    try {
      assert.match(await greeter.reply(), /^220 .*Raven SMTP submission/);
    } finally {
      greeter.destroy();
    }
    assert.match(stdout, /\n {2}Dashboard +http:\/\/127\.0\.0\.1:\d+\/#signin=[\w-]+ {2}\(a one-time sign-in link/, 'the one-time dashboard link');
    assert.match(stdout, /\n {2}Admin token +set by --admin-token, RAVEN_ADMIN_TOKEN or --config\n/);
    assert.doesNotMatch(stdout, /given-token/, 'a token given by flag is not printed');
    child.kill('SIGTERM');
    assert.equal(await exit, 0);
    rmSync(dir, { recursive: true, force: true });
  });

  test("README's banner is the banner a first start prints", async () => {
    const home = mkdtempSync(join(tmpdir(), 'ravenctl-relay-banner-'));
    const child = spawnRavenctl(['relay', 'start', '--port', '0', '--smtp-port', '0'], { cwd: home, env: { HOME: home, RAVEN_LOG_LEVEL: 'error' } });
    const exit = new Promise<number | null>((resolve) => child.on('close', resolve));
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    await new Promise<void>((resolve) =>
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
        if (stderr.includes('Press Ctrl-C to stop.')) resolve();
      }),
    );
    child.kill('SIGTERM');
    assert.equal(await exit, 0);
    rmSync(home, { recursive: true, force: true });

    const http = /HTTP +(http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)![1]!;
    const smtp = /SMTP +(smtp:\/\/127\.0\.0\.1:\d+)/.exec(stdout)![1]!;
    const submission = /Submission +(smtp:\/\/127\.0\.0\.1:\d+)/.exec(stdout)![1]!;
    // What differs between runs becomes what README shows: its paths, default ports and elided secrets.
    const printed = (stdout + 'Press Ctrl-C to stop.\n')
      .replaceAll(join(home, '.raven'), '/home/me/raven/.raven')
      .replaceAll(` --base-url ${http}`, '')
      .replaceAll(http, 'http://127.0.0.1:7700')
      .replaceAll(smtp, 'smtp://127.0.0.1:7725')
      .replaceAll(submission, 'smtp://127.0.0.1:7587')
      .replace(/#signin=[\w-]+/, '#signin=...')
      .replace(/\b(rat|rr_test|ws|prj|key)_[\w-]+/g, '$1_...');
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const block = /<!-- banner:[^\n]*-->\n *```text\n([\s\S]*?\n) *```/.exec(readme)![1]!;
    assert.equal(printed, block.replace(/^ {3}/gm, ''));
  });

  test('a bad flag value is a usage error (exit 2)', async () => {
    const { code } = await ravenctl(['relay', 'start', '--port', 'http']);
    assert.equal(code, 2);
  });
});
