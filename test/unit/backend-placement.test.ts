// "The backend is storage's secret": which database a relay stores into is decided under
// relay/storage/ (repositories branch on the dialect there, next to their SQL). This fails when
// any other relay file reads `dialect` or imports the PostgreSQL backend's modules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RELAY = path.join(ROOT, 'relay');
const STORAGE = path.join(RELAY, 'storage');

function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/** What in `source` knows the backend, or undefined. */
export function findBackendKnowledge(source: string): string | undefined {
  const code = withoutComments(source);
  const dialect = /\bdialect\b/.exec(code);
  if (dialect) return code.slice(Math.max(0, dialect.index - 30), dialect.index + 30).trim();
  const postgres = /\bfrom\s+['"][^'"]*storage\/postgres\/[^'"]*['"]|import\(\s*['"][^'"]*storage\/postgres\/[^'"]*['"]/.exec(code);
  return postgres?.[0];
}

test('no relay file outside relay/storage/ reads the dialect or imports storage/postgres/', async () => {
  const offenders: string[] = [];
  const entries = await readdir(RELAY, { withFileTypes: true, recursive: true });
  for (const entry of entries) {
    const file = path.join(entry.parentPath, entry.name);
    if (!entry.isFile() || file.startsWith(STORAGE + path.sep) || !/\.(ts|tsx|js|mjs|cjs)$/.test(file)) continue;
    const found = findBackendKnowledge(await readFile(file, 'utf8'));
    if (found) offenders.push(`${path.relative(ROOT, file).split(path.sep).join('/')}: ${JSON.stringify(found)}`);
  }
  assert.deepEqual(offenders, [], 'the backend belongs to relay/storage/: ask a repository what the domain needs');
});

test('the detector finds a dialect branch and a postgres import, and ignores prose', () => {
  assert.ok(findBackendKnowledge("if (tx.dialect === 'postgres') return;"));
  assert.ok(findBackendKnowledge("import { claim } from '../storage/postgres/queue.js';"));
  assert.ok(findBackendKnowledge("const m = await import('./storage/postgres/db.js');"));
  assert.equal(findBackendKnowledge('// on PostgreSQL the dialect differs\nconst a = 1;'), undefined);
  assert.equal(findBackendKnowledge("import { claimDueJobs } from '../storage/jobs.js';"), undefined);
});
