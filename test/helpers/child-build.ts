// The CLI, the relay, the SDK and the tests as plain JavaScript: test/run.ts transpiles the
// checkout's sources once per `npm test`, file by file with esbuild and tsx's own settings, into a
// temporary folder, and names it in RAVEN_TEST_CHILD_BUILD. The processes the tests start run from
// it (helpers/ravenctl.ts runs cli/main.js there, bundled as `npm run build` bundles it), the
// worker threads of a relay a test runs in its own process too (helpers/threads-booted.ts), and so
// do most test files themselves (run.ts says which). Through tsx, each of them loaded the loader
// and went through it for its whole module graph: about half a CPU second for a command, two for a
// relay with its worker threads, one and a half for a test file, hundreds of them a run. A test file run without the runner has no such
// folder, and all of it runs through tsx as before.
//
// The folder mirrors the checkout (cli/, relay/, sdk/, test/, with every other file of theirs
// copied, the SQL migrations and the test fixtures among them; with the contract's validators
// compiled, helpers/contract.ts) and links what the code finds
// around itself: dist/ (the dashboard's build, made by `npm test`'s pretest), the package.json (the
// version), openapi.yaml (the tests' contract), test-artifacts/ (the browser tests' screenshots,
// kept in the checkout), node_modules (each package linked, except raven-email-sdk, which is the
// transpiled sdk/ here, as tsconfig.json's paths make it for tsx).
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { writeCompiledContract } from './contract.js';

/** What is not the CLI's, the relay's, the SDK's or the tests' code at run time. */
const LEFT_OUT = new Set(['relay/web', 'sdk/dist', 'sdk/node_modules', 'sdk/scripts']);

function sourceFiles(root: string, dir: string): { code: string[]; other: string[] } {
  const code: string[] = [];
  const other: string[] = [];
  for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = path.posix.join(dir, entry.name);
    if (LEFT_OUT.has(rel)) continue;
    if (entry.isDirectory()) {
      const inner = sourceFiles(root, rel);
      code.push(...inner.code);
      other.push(...inner.other);
    } else if (entry.name.endsWith('.d.ts') || (entry.name.endsWith('.test.ts') && !rel.startsWith('test/'))) continue;
    else if (entry.name.endsWith('.ts')) code.push(rel);
    else other.push(rel);
  }
  return { code, other };
}

/** Builds the folder `into` (which must not exist) from the checkout at `root`. */
export async function buildChildTree(root: string, into: string): Promise<void> {
  const files = ['cli', 'relay', 'sdk', 'test'].map((dir) => sourceFiles(root, dir));
  await build({
    entryPoints: files.flatMap((f) => f.code).map((rel) => path.join(root, rel)),
    outdir: into,
    outbase: root,
    bundle: false,
    platform: 'node',
    format: 'esm',
    // What tsx gives esbuild for each file it loads.
    target: `node${process.versions.node}`,
    keepNames: true,
    tsconfig: path.join(root, 'tsconfig.json'),
    logLevel: 'warning',
  });
  for (const rel of files.flatMap((f) => f.other)) {
    mkdirSync(path.dirname(path.join(into, rel)), { recursive: true });
    copyFileSync(path.join(root, rel), path.join(into, rel));
  }
  const sdk = JSON.parse(readFileSync(path.join(root, 'sdk/package.json'), 'utf8')) as { name: string; version: string };
  writeFileSync(path.join(into, 'sdk/package.json'), JSON.stringify({ name: sdk.name, version: sdk.version, type: 'module', exports: { '.': './index.js', './enums': './enums.js', './webhooks': './webhooks.js', './package.json': './package.json' } }));
  copyFileSync(path.join(root, 'package.json'), path.join(into, 'package.json'));
  symlinkSync(path.join(root, 'dist'), path.join(into, 'dist'));
  symlinkSync(path.join(root, 'openapi.yaml'), path.join(into, 'openapi.yaml'));
  mkdirSync(path.join(root, 'test-artifacts'), { recursive: true });
  symlinkSync(path.join(root, 'test-artifacts'), path.join(into, 'test-artifacts'));
  mkdirSync(path.join(into, 'node_modules'));
  for (const name of readdirSync(path.join(root, 'node_modules'))) {
    if (name === sdk.name || name.startsWith('.')) continue;
    symlinkSync(path.join(root, 'node_modules', name), path.join(into, 'node_modules', name));
  }
  symlinkSync(path.join(into, 'sdk'), path.join(into, 'node_modules', sdk.name));
  writeCompiledContract(path.join(into, 'test/helpers'));
  // ravenctl as it ships: cli/main.js the bundle of `npm run build` (its start-up, the SDK and undici
  // in chunks; the relay this folder's), in place of the file transpiled above.
  await promisify(execFile)(process.execPath, [path.join(root, 'scripts/bundle-cli.mjs'), into]);
}
