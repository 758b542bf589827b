// The published package from both module systems: a CommonJS and an ESM consumer resolve
// `raven` through package.json "exports", send to the real relay, and type-check.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
let t: TestRelay;
let dir: string;

before(async () => {
  t = await startTestRelay();
  dir = await mkdtemp(path.join(tmpdir(), 'raven-consumer-'));
  await mkdir(path.join(dir, 'node_modules'));
  await symlink(root, path.join(dir, 'node_modules', 'raven'), 'dir');
  const body = (from: string) =>
    `{ from: 'App <app@${t.domain}>', to: 'user@${t.domain}', subject: 'from ${from}', text: 'hi' }`;
  await writeFile(
    path.join(dir, 'consumer.cjs'),
    `const { Raven, NotFoundError } = require('raven');
const raven = new Raven({ apiKey: process.env.KEY, baseUrl: process.env.URL });
raven.emails.send(${body('cjs')}).then(async (r) => {
  let notFound = false;
  try { await raven.emails.get('em_missing'); } catch (e) { notFound = e instanceof NotFoundError; }
  console.log(JSON.stringify({ ...r, notFound }));
});\n`,
  );
  await writeFile(
    path.join(dir, 'consumer.mjs'),
    `import { Raven } from 'raven';
const raven = new Raven({ apiKey: process.env.KEY, baseUrl: process.env.URL });
console.log(JSON.stringify(await raven.emails.send(${body('esm')})));\n`,
  );
  await writeFile(
    path.join(dir, 'typed.cts'),
    `import { Raven, type SendEmailParams } from 'raven';
const params: SendEmailParams = { from: 'a@b.test', to: 'c@b.test', subject: 's', text: 't' };
const raven = new Raven({ apiKey: 'rr_test_x' });
export const p: Promise<{ id: string }> = raven.emails.send(params);\n`,
  );
  await writeFile(path.join(dir, 'typed.mts'), (await import('node:fs')).readFileSync(path.join(dir, 'typed.cts'), 'utf8'));
});

after(async () => {
  await t.stop();
  await rm(dir, { recursive: true, force: true });
});

for (const file of ['consumer.cjs', 'consumer.mjs']) {
  test(`${file} sends through the package entry`, async () => {
    const { stdout } = await run(process.execPath, [file], { cwd: dir, env: { ...process.env, KEY: t.apiKey, URL: t.url } });
    const result = JSON.parse(stdout);
    assert.equal(result.status, 'queued');
    assert.match(result.id, /^em_/);
    if (file.endsWith('.cjs')) assert.equal(result.notFound, true, 'typed errors work from CommonJS');
  });
}

test('CommonJS and ESM consumers type-check against the published declarations', async () => {
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  await run(process.execPath, [tsc, '--noEmit', '--strict', '--module', 'node16', '--moduleResolution', 'node16', '--types', 'node', '--typeRoots', path.join(root, 'node_modules/@types'), 'typed.cts', 'typed.mts'], { cwd: dir });
});
