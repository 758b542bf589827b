// The SDK as its users get it: `npm pack` the sdk/ workspace, install the tarball alone into an
// empty project, offline, then send to the real relay from CommonJS and ESM and type-check against
// the packed declarations, a wrong field included, and its subpaths (raven-email-sdk/webhooks, /enums).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';
import { EVENT_TYPES, VERSION } from '../../sdk/index.js';
import { directorySize, installPackedSdk, npmEnv, packSdk } from '../helpers/sdk-package.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
let t: TestRelay;
let dir: string;
let tarball: string;

before(async () => {
  t = await startTestRelay();
  dir = await mkdtemp(path.join(tmpdir(), 'raven-sdk-consumer-'));
  tarball = await packSdk(dir);
  await installPackedSdk(dir, tarball);
  const body = (from: string) =>
    `{ from: 'App <app@${t.domain}>', to: 'user@${t.domain}', subject: 'from ${from}', text: 'hi' }`;
  await writeFile(
    path.join(dir, 'consumer.cjs'),
    `const { Raven, NotFoundError } = require('raven-email-sdk');
const { signWebhook } = require('raven-email-sdk/webhooks');
const { EVENT_TYPES } = require('raven-email-sdk/enums');
const raven = new Raven({ apiKey: process.env.KEY, baseUrl: process.env.URL });
raven.emails.send(${body('cjs')}).then(async (r) => {
  let notFound = false;
  try { await raven.emails.get('em_missing'); } catch (e) { notFound = e instanceof NotFoundError; }
  console.log(JSON.stringify({ ...r, notFound, signs: typeof signWebhook, events: EVENT_TYPES.length }));
});\n`,
  );
  await writeFile(
    path.join(dir, 'consumer.mjs'),
    `import Raven, { verifyWebhook } from 'raven-email-sdk';
import { signWebhook } from 'raven-email-sdk/webhooks';
import { EVENT_TYPES } from 'raven-email-sdk/enums';
const raven = new Raven({ apiKey: process.env.KEY, baseUrl: process.env.URL });
console.log(JSON.stringify({ ...(await raven.emails.send(${body('esm')})), verify: typeof verifyWebhook, signs: typeof signWebhook, events: EVENT_TYPES.length }));\n`,
  );
  const typed = `import { Raven, type EventType, type SendEmailParams } from 'raven-email-sdk';
import { EVENT_TYPES } from 'raven-email-sdk/enums';
import { signWebhook, verifyWebhook } from 'raven-email-sdk/webhooks';
const params: SendEmailParams = { from: 'a@b.test', to: 'c@b.test', subject: 's', text: 't' };
const raven = new Raven({ apiKey: 'rr_test_x' });
export const p: Promise<{ id: string }> = raven.emails.send(params);
export const first: EventType = EVENT_TYPES[0];
export const signed: Record<string, string> = signWebhook('{}', 'whsec_x').headers;
export const verify: typeof verifyWebhook = verifyWebhook;\n`;
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
    // The subpaths: webhook signing and the API's lists without the client.
    assert.equal(result.signs, 'function');
    assert.equal(result.events, EVENT_TYPES.length);
  });
}

/**
 * The consumers' files type-checked against the packed declarations in one run of tsc (a run is
 * seconds of CPU): the errors it reports, by file, for the tests below to judge.
 */
let typeErrors: Promise<Map<string, string[]>> | undefined;
const typeErrorsIn = async (file: string): Promise<string[]> => {
  typeErrors ??= (async () => {
    const files = ['typed.cts', 'typed.mts', 'wrong.mts', ...(await writeReadmeBlocks())];
    const output = await run(process.execPath, [
      path.join(root, 'node_modules/typescript/bin/tsc'),
      '--noEmit', '--strict', '--target', 'es2022', '--module', 'node16', '--moduleResolution', 'node16',
      '--types', 'node', '--typeRoots', path.join(root, 'node_modules/@types'), ...files,
    ], { cwd: dir }).then(() => '', (error: { stdout: string }) => error.stdout);
    const byFile = new Map<string, string[]>(files.map((f) => [f, []]));
    for (const line of output.split('\n').filter((l) => l.trim() !== '')) {
      const named = files.find((f) => line.startsWith(`${f}(`));
      // A line naming no file of ours (a continuation, a global error) counts against them all.
      for (const f of named ? [named] : files) byFile.get(f)!.push(line);
    }
    return byFile;
  })();
  return (await typeErrors).get(file)!;
};

test('CommonJS and ESM consumers type-check against the packed declarations', async () => {
  assert.deepEqual(await typeErrorsIn('typed.cts'), []);
  assert.deepEqual(await typeErrorsIn('typed.mts'), []);
});

test('a misspelt field is a type error naming it', async () => {
  const errors = await typeErrorsIn('wrong.mts');
  assert.ok(errors.length > 0, 'tsc accepted a misspelt field');
  assert.match(errors.join('\n'), /wrong\.mts.*error TS(2353|2561):.*'subjcet' does not exist/);
});

test("the relay's own tarball bundles the SDK, so `npm install -g raven-0.1.0.tgz` needs no registry copy of it", async () => {
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, env: npmEnv() });
  const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as [{ files: Array<{ path: string }>; bundled: string[] }];
  assert.ok(packed.bundled.includes('raven-email-sdk'));
  const files = packed.files.map((f) => f.path);
  for (const entry of ['node_modules/raven-email-sdk/dist/esm/index.js', 'node_modules/raven-email-sdk/dist/cjs/index.js', 'dist/cli/main.js']) {
    assert.ok(files.includes(entry), `${entry} is in the tarball`);
  }
});

const sdkReadme = () => readFile(path.join(root, 'sdk/README.md'), 'utf8');

test("the SDK README's install lines: a path dependency that works offline, and the tarball npm pack names", async () => {
  const block = /<!-- sdk-install:[^\n]*-->\n```sh\n([\s\S]*?)```/.exec(await sdkReadme())![1]!;
  const lines = block.split('\n').map((line) => line.replace(/\s+#.*$/, '').trim()).filter(Boolean);
  const checkout = root.replace(/\/$/, '');
  assert.deepEqual(lines, [
    'npm install /path/to/raven/sdk',
    '(cd /path/to/raven/sdk && npm pack)',
    `npm install /path/to/raven/sdk/${tarball}`,
  ], 'the tarball named is the one npm pack writes');

  // The path dependency, run as written from an empty application (no registry needed).
  const app = await mkdtemp(path.join(tmpdir(), 'raven-sdk-path-dep-'));
  try {
    await writeFile(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    const [npm, ...args] = lines[0]!.replace('/path/to/raven', checkout).split(' ');
    await run(npm!, [...args, '--offline', '--no-audit', '--no-fund'], { cwd: app, env: npmEnv() });
    await writeFile(path.join(app, 'send.js'), `import { Raven } from 'raven-email-sdk';
const raven = new Raven({ apiKey: process.env.KEY, baseUrl: process.env.URL });
console.log(JSON.stringify(await raven.emails.send({ from: 'App <app@${t.domain}>', to: 'user@${t.domain}', subject: 'path dependency', text: 'hi' })));\n`);
    const { stdout } = await run(process.execPath, ['send.js'], { cwd: app, env: { ...process.env, KEY: t.apiKey, URL: t.url } });
    assert.equal(JSON.parse(stdout).status, 'queued');
  } finally {
    await rm(app, { recursive: true, force: true });
  }
});

/**
 * Names a README block may use without defining them (defined in an earlier block, or by the
 * reader's own application), declared with their real types so the block still type-checks strictly.
 */
const README_GIVENS: Record<string, string> = {
  raven: 'declare const raven: import("raven-email-sdk").Raven;',
  id: 'declare const id: string;',
  userId: 'declare const userId: string;',
  params: 'declare const params: import("raven-email-sdk").SendEmailParams;',
  express: 'declare const express: { raw(options: { type: string }): unknown };',
  app: `declare const app: { post(path: string, middleware: unknown, handler: (
  req: { body: Buffer; headers: Record<string, string | string[] | undefined> },
  res: { sendStatus(code: number): void; status(code: number): { send(body: string): void } },
) => void): void };`,
};

/** Writes each TypeScript block of the SDK README as a file of its own; answers their names. */
async function writeReadmeBlocks(): Promise<string[]> {
  const blocks = [...(await sdkReadme()).matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const files: string[] = [];
  for (const [i, block] of blocks.entries()) {
    const defines = (name: string) =>
      new RegExp(`\\b(const|let)\\s+(${name}\\b|\\{[^}]*\\b${name}\\b[^}]*\\})|\\bimport\\s+(${name}\\b|\\{[^}]*\\b${name}\\b)`).test(block);
    const uses = (name: string) => new RegExp(`\\b${name}\\b`).test(block);
    const givens = Object.entries(README_GIVENS).filter(([name]) => uses(name) && !defines(name)).map(([, declaration]) => declaration);
    const file = `readme-${i + 1}.mts`;
    await writeFile(path.join(dir, file), `${givens.join('\n')}\n${block}\nexport {};\n`);
    files.push(file);
  }
  return files;
}

test("every TypeScript block of the SDK README type-checks against the packed declarations (signWebhook's included)", async () => {
  const readme = await sdkReadme();
  assert.ok(/```ts\n[^`]*signWebhook\(/.test(readme), 'the README shows signWebhook');
  const blocks = [...readme.matchAll(/```ts\n/g)].length;
  assert.ok(blocks > 0, 'the README has TypeScript blocks');
  for (let i = 1; i <= blocks; i++) assert.deepEqual(await typeErrorsIn(`readme-${i}.mts`), [], `README block ${i}`);
});
