// Packs the SDK workspace and installs the tarball into a project of its own, the way a user's
// application gets it. Shared by the package test and `npm run bench`.
import { execFile } from 'node:child_process';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));

/** `npm pack` of sdk/ (its prepack builds dist/ afresh) into dir; answers the tarball's file name. */
export async function packSdk(dir: string): Promise<string> {
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: path.join(root, 'sdk'), env: npmEnv() });
  const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as [{ filename: string }];
  return packed.filename;
}

/**
 * Installs the tarball into dir with no network: `npm ci --offline`. The lockfile pins undici to
 * the version (and integrity) of the repository's own lockfile, whose tarball the repository's
 * `npm ci` has already put in the npm cache; without it npm would need undici's registry
 * metadata, which `npm ci` never downloads.
 */
export async function installPackedSdk(dir: string, tarball: string): Promise<void> {
  const rootLock = JSON.parse(await readFile(path.join(root, 'package-lock.json'), 'utf8'));
  const { version, resolved, integrity, license, engines } = rootLock.packages['node_modules/undici'];
  const sdk = JSON.parse(await readFile(path.join(root, 'sdk/package.json'), 'utf8'));
  const spec = `file:${tarball}`;
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'sdk-consumer', private: true, dependencies: { [sdk.name]: spec } }));
  const lock = {
    name: 'sdk-consumer',
    lockfileVersion: 3,
    requires: true,
    packages: {
      '': { name: 'sdk-consumer', dependencies: { [sdk.name]: spec } },
      [`node_modules/${sdk.name}`]: { version: sdk.version, resolved: spec, license: sdk.license, dependencies: sdk.dependencies },
      'node_modules/undici': { version, resolved, integrity, license, engines },
    },
  };
  await writeFile(path.join(dir, 'package-lock.json'), JSON.stringify(lock, null, 2));
  await run('npm', ['ci', '--offline', '--no-audit', '--no-fund'], { cwd: dir, env: npmEnv() });
}

/** Bytes of every file below dir (what the install costs on disk, before block rounding). */
export async function directorySize(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(path.join(entry.parentPath, entry.name))).size;
  }
  return total;
}

/** The environment without the npm_* variables of an enclosing `npm test` (its workspace and prefix settings). */
function npmEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')));
}
