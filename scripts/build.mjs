// `npm run build` of the CLI and relay into dist/ (the SDK and the dashboard are built by their own
// scripts): tsc, the CLI bundle and the post-build steps write into a fresh folder, which is then
// swapped in file by file (swap-in.mjs), so a relay or `npx ravenctl` running from this checkout
// keeps working while it rebuilds. dist/web belongs to the dashboard's build and is left alone.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freshBuildDir, swapIn } from './swap-in.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const dist = path.join(root, 'dist');
const fresh = freshBuildDir(dist);
const node = (args) => execFileSync(process.execPath, args, { stdio: 'inherit', cwd: root });

node([tsc, '-p', 'tsconfig.build.json', '--outDir', fresh]);
node(['scripts/bundle-cli.mjs', fresh]);
node(['scripts/postbuild.mjs', fresh]);
swapIn(fresh, dist, { keep: ['web'] });
