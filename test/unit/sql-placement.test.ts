// "Transports translate, the domain decides, storage persists": every SQL statement lives in a
// repository module under relay/storage/. This fails when any other relay file holds SQL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RELAY = path.join(ROOT, 'relay');
const STORAGE = path.join(RELAY, 'storage');

// Statements as code writes them (keywords in capitals); comments are removed first, so prose
// that mentions a table or says "select" does not count.
const SQL = [
  /\bSELECT\b[\s\S]{0,400}?\bFROM\b/,
  /\bINSERT\s+(OR\s+\w+\s+)?INTO\b/,
  /\bUPDATE\s+\w+\s+SET\b/,
  /\bDELETE\s+FROM\b/,
  /\b(CREATE|DROP|ALTER)\s+(TABLE|INDEX|VIEW|TRIGGER)\b/,
  /\bON\s+CONFLICT\b/,
  /\bPRAGMA\b/,
  /\b(BEGIN|COMMIT|ROLLBACK|SAVEPOINT)\b\s*['";`]/,
  /\bjson_each\b/,
];

function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

export function findSql(source: string): string | undefined {
  const code = withoutComments(source);
  for (const pattern of SQL) {
    const match = pattern.exec(code);
    if (match) return match[0].slice(0, 80);
  }
  return undefined;
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

test('no file outside relay/storage/ contains SQL', async () => {
  const offenders: string[] = [];
  for (const file of await filesUnder(RELAY)) {
    if (file.startsWith(STORAGE + path.sep)) continue;
    const relative = path.relative(ROOT, file).split(path.sep).join('/');
    if (file.endsWith('.sql')) {
      offenders.push(`${relative}: an SQL file`);
      continue;
    }
    if (!/\.(ts|js|mjs|cjs)$/.test(file)) continue;
    const sql = findSql(await readFile(file, 'utf8'));
    if (sql) offenders.push(`${relative}: ${JSON.stringify(sql)}`);
  }
  assert.deepEqual(offenders, [], 'SQL belongs in a repository module under relay/storage/');
});

test('the detector finds statements and ignores prose', () => {
  assert.ok(findSql("db.get('SELECT id FROM workspaces WHERE id = ?', [id])"));
  assert.ok(findSql('tx.run(`INSERT INTO t (a) VALUES (?)`)'));
  assert.ok(findSql("tx.run('UPDATE jobs SET state = ? WHERE id = ?')"));
  assert.ok(findSql("tx.run('DELETE FROM suppressions')"));
  assert.ok(findSql("sql = 'x ON CONFLICT (a) DO NOTHING'"));
  assert.equal(findSql('// SELECT the oldest rows FROM the outbox\nconst a = 1;'), undefined);
  assert.equal(findSql('/* UPDATE jobs SET nothing */ const b = 2;'), undefined);
  assert.equal(findSql("const help = 'select a workspace from the list';"), undefined);
});
