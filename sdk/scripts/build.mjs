// Builds the package into dist/: ES modules (dist/esm) and a CommonJS copy (dist/cjs), each with
// its declarations. The package is "type": "module", so dist/cjs gets its own package.json saying
// "commonjs"; without it Node would read the CommonJS files as ES modules. The build goes into a
// fresh folder swapped in file by file (scripts/swap-in.mjs of the repository): a relay or ravenctl
// running from this checkout keeps loading the SDK while `npm pack` or `npm test` rebuilds it, and
// no stale file of an older build is left to be packed.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCommand } from '../../scripts/run-command.mjs';
import { freshBuildDir, swapIn } from '../../scripts/swap-in.mjs';

const sdk = fileURLToPath(new URL('..', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const dist = join(sdk, 'dist');
const fresh = freshBuildDir(dist);
// The two compilations side by side: 5.0 s one after the other.
await Promise.all(
  [['tsconfig.esm.json', 'esm'], ['tsconfig.cjs.json', 'cjs']].map(([config, out]) =>
    runCommand(process.execPath, [tsc, '-p', join(sdk, config), '--outDir', join(fresh, out)], sdk),
  ),
);
writeFileSync(join(fresh, 'cjs/package.json'), JSON.stringify({ type: 'commonjs' }, null, 2) + '\n');
swapIn(fresh, dist);
console.error('raven-email-sdk: built dist/esm and dist/cjs');
