// Migrations are applied by number (schema_migrations.version): two files with one number would
// leave one of them unapplied forever. Regression: 0013 was given twice when two branches landed
// together (webhook operations and the inbox's trigram indexes).
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const dir = (relative: string) => fileURLToPath(new URL(`../../relay/storage/${relative}`, import.meta.url));
const migrations = (relative: string) => readdirSync(dir(relative)).filter((f) => /^\d{4}_.+\.sql$/.test(f));

test('every migration has a number of its own', () => {
  const files = migrations('migrations');
  const byNumber = new Map<string, string[]>();
  for (const file of files) byNumber.set(file.slice(0, 4), [...(byNumber.get(file.slice(0, 4)) ?? []), file]);
  assert.deepEqual([...byNumber.values()].filter((f) => f.length > 1), []);
});

test("every PostgreSQL port stands for a migration of SQLite's list, under the same name", () => {
  const shared = new Set(migrations('migrations'));
  assert.deepEqual(migrations('postgres/migrations').filter((f) => !shared.has(f)), []);
});
