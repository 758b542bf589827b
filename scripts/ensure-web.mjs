// Before `npm test`: the relay the tests start serves the dashboard from dist/web, so it must be
// built from the sources checked out. `npm ci` has just built it (prepare runs `npm run build`),
// and building again costs seconds for nothing, so this builds (scripts/build-web.mjs) only when
// dist/web/index.html is missing or older than anything the build reads: the dashboard's folder,
// the SDK's sources it imports, the lock file (its packages) and the build scripts.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const built = path.join(root, 'dist/web/index.html');
const LEFT_OUT = new Set(['node_modules', 'dist']);

/** The newest modification time of a file, or of any file below a folder. */
function newest(file) {
  const stat = statSync(file);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const name of readdirSync(file)) if (!LEFT_OUT.has(name)) latest = Math.max(latest, newest(path.join(file, name)));
  return latest;
}

const inputs = ['relay/web', 'sdk', 'package.json', 'package-lock.json', 'scripts/build-web.mjs', 'scripts/swap-in.mjs'];
const stale = !existsSync(built) || inputs.some((input) => newest(path.join(root, input)) > statSync(built).mtimeMs);
if (stale) await import('./build-web.mjs');
