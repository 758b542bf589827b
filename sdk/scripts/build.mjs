// Builds the package into dist/: ES modules (dist/esm) and a CommonJS copy (dist/cjs), each with
// its declarations. The package is "type": "module", so dist/cjs gets its own package.json saying
// "commonjs"; without it Node would read the CommonJS files as ES modules.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdk = fileURLToPath(new URL('..', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
// A stale file from an older build would otherwise be packed and published.
rmSync(join(sdk, 'dist'), { recursive: true, force: true });
for (const config of ['tsconfig.esm.json', 'tsconfig.cjs.json']) {
  execFileSync(process.execPath, [tsc, '-p', join(sdk, config)], { stdio: 'inherit', cwd: sdk });
}
writeFileSync(join(sdk, 'dist/cjs/package.json'), JSON.stringify({ type: 'commonjs' }, null, 2) + '\n');
console.error('raven-email-sdk: built dist/esm and dist/cjs');
