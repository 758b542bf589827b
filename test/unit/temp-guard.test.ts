// The teardown check of test/helpers/temp-guard.ts: a test file that leaves something in the temp
// folder fails, one that cleans up passes, and the folder is gone either way.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const guard = fileURLToPath(new URL('../helpers/temp-guard.ts', import.meta.url));
const dir = mkdtempSync(path.join(tmpdir(), 'raven-guard-'));
after(() => rmSync(dir, { recursive: true, force: true }));
// Started as test/run.ts starts a test file: in a process of its own, the guard switched on.
const fileEnv = { ...process.env, RAVEN_TEST_TEMP_GUARD: '1' };

/** What the guard made in tmp (the nested runner's tsx cache aside). */
const ownFolders = (tmp: string) => readdirSync(tmp).filter((name) => !name.startsWith('tsx-'));

function runTestFile(name: string, body: string): Promise<{ code: number; output: string; tmp: string }> {
  const file = path.join(dir, name);
  writeFileSync(file, `import { test } from 'node:test';\nimport { mkdtempSync, rmSync } from 'node:fs';\nimport { tmpdir } from 'node:os';\nimport path from 'node:path';\n${body}\n`);
  const tmp = mkdtempSync(path.join(dir, 'tmp-'));
  return new Promise((resolve) =>
    execFile(process.execPath, ['--import', 'tsx', '--import', guard, file], { env: { ...fileEnv, TMPDIR: tmp } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code) : 0, output: stdout + stderr, tmp }),
    ),
  );
}

test('a test file that leaves a temp folder behind fails, naming it', async () => {
  const run = await runTestFile('leaves.test.mjs', `test('forgets', () => { mkdtempSync(path.join(tmpdir(), 'forgotten-')); });`);
  assert.equal(run.code, 1, run.output);
  assert.match(run.output, /temp-guard: the tests left forgotten-\w+ in the temp folder/);
  assert.deepEqual(ownFolders(run.tmp), [], 'the guard removes the folder it gave the file');
});

test('a test file that cleans up passes', async () => {
  const run = await runTestFile('cleans.test.mjs', `test('cleans', () => { rmSync(mkdtempSync(path.join(tmpdir(), 'tidy-')), { recursive: true }); });`);
  assert.equal(run.code, 0, run.output);
  assert.deepEqual(ownFolders(run.tmp), []);
});
