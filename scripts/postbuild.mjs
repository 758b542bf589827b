// Runs after `tsc -p tsconfig.build.json`: makes the CLI entry executable and copies the SQL
// migrations, which tsc does not emit, next to the compiled storage code; in the build folder given
// as the argument (scripts/build.mjs passes its fresh one), else dist/.
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = process.argv[2] ? resolve(process.argv[2]) : join(root, 'dist');

const cliEntry = join(dist, 'cli/main.js');
if (existsSync(cliEntry)) {
  // npm links `bin` entries as they are: without the shebang the OS cannot run the file.
  // cli/main.ts carries it and tsc keeps it; add it if it ever goes missing.
  const source = readFileSync(cliEntry, 'utf8');
  if (!source.startsWith('#!')) writeFileSync(cliEntry, `#!/usr/bin/env node\n${source}`);
  chmodSync(cliEntry, 0o755);
}

// SQLite's and PostgreSQL's migrations, each next to the compiled code that applies them.
for (const dir of ['relay/storage/migrations', 'relay/storage/postgres/migrations']) {
  const migrationsSource = join(root, dir);
  const migrationsTarget = join(dist, dir);
  if (!existsSync(migrationsSource)) continue;
  mkdirSync(migrationsTarget, { recursive: true });
  for (const name of readdirSync(migrationsSource).filter((n) => n.endsWith('.sql')).sort()) {
    copyFileSync(join(migrationsSource, name), join(migrationsTarget, name));
  }
}
