// The SDK as its users get it: `npm pack` the sdk/ workspace, install the tarball alone into an
// empty project, offline, then send to the real relay from CommonJS and ESM and type-check against
// the packed declarations, a wrong field included.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';
import { VERSION } from '../../sdk/index.js';
import { directorySize, installPackedSdk, packSdk } from '../helpers/sdk-package.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
let t: TestRelay;
let dir: string;

before(async () => {
  t = await startTestRelay();
  dir = await mkdtemp(path.join(tmpdir(), 'raven-sdk-consumer-'));
  const tarball = await packSdk(dir);
  await installPackedSdk(dir, tarball);
  const body = (from: string) =>
    `{ from: 'App <app@${t.domain}>', to: 'user@${t.domain}', subject: 'from ${from}', text: 'hi' }`;
  await writeFile(
    path.join(dir, 'consumer.cjs'),
    `const { Raven, NotFoundError } = require('raven-email-sdk');
const raven = new Raven({ apiKey: process.env.KEY, baseUrl: process.env.URL });
raven.emails.send(${body('cjs')}).then(async (r) => {
  let notFound = false;
  try { await raven.emails.get('em_missing'); } catch (e) { notFound = e instanceof NotFoundError; }
  console.log(JSON.stringify({ ...r, notFound }));
});\n`,
  );
  await writeFile(
    path.join(dir, 'consumer.mjs'),
    `import Raven, { verifyWebhook } from 'raven-email-sdk';
const raven = new Raven({ apiKey: process.env.KEY, baseUrl: process.env.URL });
console.log(JSON.stringify({ ...(await raven.emails.send(${body('esm')})), verify: typeof verifyWebhook }));\n`,
  );
  const typed = `import { Raven, type SendEmailParams } from 'raven-email-sdk';
const params: SendEmailParams = { from: 'a@b.test', to: 'c@b.test', subject: 's', text: 't' };
const raven = new Raven({ apiKey: 'rr_test_x' });
export const p: Promise<{ id: string }> = raven.emails.send(params);\n`;
  await writeFile(path.join(dir, 'typed.cts'), typed);
  await writeFile(path.join(dir, 'typed.mts'), typed);
  await writeFile(
    path.join(dir, 'wrong.mts'),
    `import { Raven } from 'raven-email-sdk';
await new Raven({ apiKey: 'rr_test_x' }).emails.send({ from: 'a@b.test', to: 'c@b.test', subjcet: 's', text: 't' });\n`,
  );
});

after(async () => {
  await t.stop();
  await rm(dir, { recursive: true, force: true });
});

test('the tarball installs alone: the SDK and undici, no native build, under 4 MB', async () => {
  const installed = (await readdir(path.join(dir, 'node_modules'))).filter((name) => !name.startsWith('.')).sort();
  assert.deepEqual(installed, ['raven-email-sdk', 'undici']);
  for (const name of installed) {
    const manifest = JSON.parse(await readFile(path.join(dir, 'node_modules', name, 'package.json'), 'utf8'));
    assert.ok(!manifest.gypfile && !manifest.scripts?.install && !manifest.scripts?.postinstall, `${name} builds nothing on install`);
  }
  const sdkManifest = JSON.parse(await readFile(path.join(dir, 'node_modules/raven-email-sdk/package.json'), 'utf8'));
  assert.deepEqual(Object.keys(sdkManifest.dependencies), ['undici']);
  assert.equal(sdkManifest.version, VERSION, 'the User-Agent version is the package version');
  const bytes = await directorySize(path.join(dir, 'node_modules'));
  assert.ok(bytes < 4 * 1024 * 1024, `node_modules is ${bytes} bytes`);
});

for (const file of ['consumer.cjs', 'consumer.mjs']) {
  test(`${file} sends to the relay through the installed package`, async () => {
    const { stdout } = await run(process.execPath, [file], { cwd: dir, env: { ...process.env, KEY: t.apiKey, URL: t.url } });
    const result = JSON.parse(stdout);
    assert.equal(result.status, 'queued');
    assert.match(result.id, /^em_/);
    if (file.endsWith('.cjs')) assert.equal(result.notFound, true, 'typed errors work from CommonJS');
    else assert.equal(result.verify, 'function');
  });
}

const tsc = (...files: string[]) =>
  run(process.execPath, [
    path.join(root, 'node_modules/typescript/bin/tsc'),
    '--noEmit', '--strict', '--target', 'es2022', '--module', 'node16', '--moduleResolution', 'node16',
    '--types', 'node', '--typeRoots', path.join(root, 'node_modules/@types'), ...files,
  ], { cwd: dir });

test('CommonJS and ESM consumers type-check against the packed declarations', async () => {
  await tsc('typed.cts', 'typed.mts');
});

test('a misspelt field is a type error naming it', async () => {
  const failure = await tsc('wrong.mts').then(
    () => assert.fail('tsc accepted a misspelt field'),
    (error: { stdout: string }) => error.stdout,
  );
  assert.match(failure, /wrong\.mts.*error TS(2353|2561):.*'subjcet' does not exist/);
});
