// `npm run build:web`: the dashboard (relay/web/vite.config.ts) into a fresh folder, swapped into
// dist/web file by file (swap-in.mjs) instead of vite emptying dist/web first, so a relay running
// from this checkout (or starting meanwhile) never finds the dashboard missing.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { freshBuildDir, swapIn } from './swap-in.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const web = path.join(root, 'dist', 'web');
const fresh = freshBuildDir(web);
await build({ configFile: path.join(root, 'relay/web/vite.config.ts'), build: { outDir: fresh, emptyOutDir: true } });
swapIn(fresh, web);
