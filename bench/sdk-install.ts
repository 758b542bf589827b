// The "sdk" section of `npm run bench`: what installing the SDK costs an application. Packs sdk/,
// installs the tarball alone into an empty project (offline, from the npm cache) and prints the
// time, the size on disk and the packages it brought.
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { directorySize, installPackedSdk, packSdk } from '../test/helpers/sdk-package.js';

export async function sdkInstall(): Promise<void> {
  console.log('\nSDK package: npm pack, then the tarball installed alone into an empty project, offline');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'raven-bench-sdk-'));
  try {
    const tarball = await packSdk(dir);
    const started = performance.now();
    await installPackedSdk(dir, tarball);
    const installMs = performance.now() - started;
    const modules = path.join(dir, 'node_modules');
    const packages = (await readdir(modules)).filter((name) => !name.startsWith('.')).sort();
    const manifest = JSON.parse(await readFile(path.join(modules, 'raven-email-sdk/package.json'), 'utf8'));
    const kB = (bytes: number) => `${(bytes / 1024).toFixed(0)} kB`;
    console.log(`install time              ${installMs.toFixed(0)} ms (npm ci --offline)`);
    console.log(`size on disk              ${kB(await directorySize(modules))} in node_modules (tarball ${kB((await stat(path.join(dir, tarball))).size)})`);
    console.log(`dependencies              ${Object.keys(manifest.dependencies ?? {}).length} direct; ${packages.length} packages installed (${packages.join(', ')})`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
