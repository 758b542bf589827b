// A SQLite database in a directory of its own for one test file (under `npm test` a copy of the
// run's migrated one): opened before its tests, closed and removed after them.
import { after, before } from 'node:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase, type Db } from '../../relay/storage/db.js';
import { seedSqliteDataDir } from './backend.js';

/** Call at the top of a test file; the function it returns gives the open database inside a test. */
export function tempDatabase(prefix: string): () => Db {
  let dir: string | undefined;
  let db: Db | undefined;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), prefix));
    await seedSqliteDataDir(dir);
    db = await openDatabase(path.join(dir, 'raven.sqlite'));
  });
  after(async () => {
    await db?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return () => {
    if (!db) throw new Error('the temporary database is open only inside the tests');
    return db;
  };
}
