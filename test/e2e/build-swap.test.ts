// Building breaks a running relay or CLI (issue 20): `npm test` and `npm pack` in sdk/ rebuilt
// sdk/dist by deleting it first, so a relay or `npx ravenctl` running from the same checkout failed
// meanwhile with "Cannot find module .../raven-email-sdk/dist/esm/index.js"; the root build and
// the dashboard's (vite emptying dist/web) did the same. Each build now goes into a fresh folder
// swapped in file by file (scripts/swap-in.mjs). Each test runs a build to its end while a probe
// loads what it rebuilds, again and again, as a process starting meanwhile would. (The root
// build, scripts/build.mjs, swaps the same way and runs at every npm ci.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadStaticFiles } from '../../relay/dashboard/static-files.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));

/** Runs the build script to its end while `probe` runs over and over; answers what the probes saw. */
async function whileBuilding(script: string, probe: () => Promise<void>): Promise<{ failures: string[]; probes: number }> {
  const build = spawn(process.execPath, [path.join(root, script)], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  build.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const state = { running: true };
  const exited = new Promise<number | null>((resolve) =>
    build.once('exit', (code) => {
      state.running = false;
      resolve(code);
    }),
  );
  const failures: string[] = [];
  let probes = 0;
  while (state.running) {
    try {
      await probe();
    } catch (error) {
      failures.push(String((error as { stderr?: string }).stderr || (error as Error).message).slice(0, 400));
    }
    probes++;
  }
  assert.equal(await exited, 0, `${script} failed:\n${stderr}`);
  return { failures, probes };
}

test('building the SDK (npm pack, npm test) while processes load it: never "Cannot find module .../dist/esm/index.js"', { timeout: 300_000 }, async () => {
  const load = [
    "const esm = await import('raven-email-sdk');",
    "const { createRequire } = await import('node:module');",
    "const cjs = createRequire(process.cwd() + '/')('raven-email-sdk');",
    "if (typeof esm.Raven !== 'function' || typeof cjs.Raven !== 'function') throw new Error('no Raven export');",
  ].join('\n');
  const { failures, probes } = await whileBuilding('sdk/scripts/build.mjs', async () => {
    await run(process.execPath, ['--input-type=module', '-e', load], { cwd: root });
  });
  assert.deepEqual(failures, [], `${failures.length} of ${probes} loads failed`);
  assert.ok(probes >= 2, `the build overlapped ${probes} loads`);
});

test('building the dashboard while a relay starts: dist/web always has the page and every asset it names', { timeout: 300_000 }, async () => {
  const { failures, probes } = await whileBuilding('scripts/build-web.mjs', async () => {
    const files = await loadStaticFiles();
    const page = files?.get('/index.html');
    assert.ok(page, 'dist/web/index.html is there');
    for (const [, asset] of page.identity.toString('utf8').matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)) {
      assert.ok(files!.has(asset!), `${asset} is there`);
    }
  });
  assert.deepEqual(failures, [], `${failures.length} of ${probes} loads failed`);
  assert.ok(probes >= 2, `the build overlapped ${probes} loads`);
});
