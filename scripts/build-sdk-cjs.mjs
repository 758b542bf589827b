// Builds the CommonJS copy of the SDK (dist/cjs/sdk) next to the ESM build (dist/sdk).
// Node 20 cannot require() an ES module without a flag, so `require('raven')` needs this copy.
// The package is "type": "module", so dist/cjs gets its own package.json saying "commonjs".
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.sdk-cjs.json')], { stdio: 'inherit', cwd: root });
mkdirSync(join(root, 'dist/cjs'), { recursive: true });
writeFileSync(join(root, 'dist/cjs/package.json'), JSON.stringify({ type: 'commonjs' }, null, 2) + '\n');
console.error('sdk: CommonJS build written to dist/cjs/sdk');
