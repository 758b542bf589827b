// The SQLite writer's group commit on a real file: a write batch marked `ahead` (admissions, whose
// clients wait for the commit) that arrives while a transaction of other writes is under way cuts
// into it at the next unit boundary; the transaction commits right after it, and the other writes
// it had not reached commit afterwards, in their order, without being cut in front of again. A
// failure of the cut-in batch stays its own. A one-statement batch alone commits without a
// transaction, all or nothing, and inside a group fails alone without a savepoint. The WAL is copied into the database file by the
// checkpointer's connection, not by a COMMIT past SQLite's 1,000 pages. A unit's savepoint journal stays in memory.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readlink, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase, StorageUnavailableError, type Db, type Queryable, type WriteBatch } from '../../relay/storage/db.js';
import { openInspector } from '../helpers/sqlite-inspect.js';

let dir: string;
let db: Db;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'raven-group-commit-'));
  db = await openDatabase(path.join(dir, 'raven.sqlite'));
  await db.write(async (tx) => {
    await tx.run('CREATE TABLE log (seq INTEGER PRIMARY KEY AUTOINCREMENT, what TEXT NOT NULL UNIQUE)');
  });
});

after(async () => {
  await db.close();
  await rm(dir, { recursive: true, force: true });
});

const logged = async () => (await db.all<{ what: string }>('SELECT what FROM log ORDER BY seq')).map((r) => r.what);

/** A batch that logs each item, in one statement per item; an item named 'dup:*' is logged twice (a UNIQUE violation). */
function loggingBatch(ahead: boolean): WriteBatch<string, string> {
  return {
    ahead,
    async run(tx: Queryable, items: string[]) {
      for (const what of items) await tx.run('INSERT INTO log (what) VALUES (?)', [what]);
      if (items.some((w) => w.startsWith('dup:'))) await tx.run('INSERT INTO log (what) VALUES (?)', [items.find((w) => w.startsWith('dup:'))]);
      return items.map((value) => ({ status: 'fulfilled' as const, value }));
    },
  };
}

/**
 * As the sink's captures: ahead, one multi-row INSERT per group, so a group of it alone runs
 * without BEGIN/COMMIT (WriteBatch.oneStatement, commitAlone).
 */
const oneInsert: WriteBatch<string, string> = {
  ahead: true,
  oneStatement: () => true,
  async run(tx: Queryable, items: string[]) {
    await tx.run(`INSERT INTO log (what) VALUES ${items.map(() => '(?)').join(', ')}`, items);
    return items.map((value) => ({ status: 'fulfilled' as const, value }));
  },
};

/** A write that holds the writer inside its transaction until released. */
function heldWrite(what: string) {
  let entered!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  let release!: () => void;
  const done = db.write(async (tx) => {
    await tx.run('INSERT INTO log (what) VALUES (?)', [what]);
    entered();
    await new Promise<void>((resolve) => (release = resolve));
  });
  return { inside, release: () => release(), done };
}

test('an ahead batch cuts into the transaction of other writes under way and commits before the writes it had not reached', async () => {
  const admissions = loggingBatch(true);
  const holder = heldWrite('held');
  await holder.inside;
  // Queued behind the held write: one transaction of other writes, the held one's successor group.
  const first = heldWrite('other-1');
  const second = db.write((tx) => tx.run("INSERT INTO log (what) VALUES ('other-2')"));
  holder.release();
  await holder.done;
  await first.inside; // the transaction of other writes is under way, inside its first unit
  const admitted = db.writeBatched(admissions, 'admitted');
  let secondDone = false;
  void second.then(() => (secondDone = true));
  first.release();
  assert.equal(await admitted, 'admitted');
  assert.equal(secondDone, false, 'the admission committed before the other write it cut in front of ran');
  await Promise.all([first.done, second]);
  assert.deepEqual((await logged()).slice(-4), ['held', 'other-1', 'admitted', 'other-2']);
});

test('a cut-in batch that fails rolls back alone; the unit before it and the writes not reached still commit', async () => {
  const admissions = loggingBatch(true);
  const holder = heldWrite('held-2');
  await holder.inside;
  const first = heldWrite('before-cut');
  const later = db.write((tx) => tx.run("INSERT INTO log (what) VALUES ('after-cut')"));
  holder.release();
  await holder.done;
  await first.inside;
  const failing = db.writeBatched(admissions, 'dup:cut');
  first.release();
  await assert.rejects(failing, /UNIQUE/);
  await Promise.all([first.done, later]);
  const all = await logged();
  assert.deepEqual(all.slice(-3), ['held-2', 'before-cut', 'after-cut']);
  assert.ok(!all.includes('dup:cut'), 'the failed batch left no row');
});

test('a one-statement ahead batch alone commits by itself: a failing statement rejects all its items and leaves no row', async () => {
  // The first write of each line starts a group alone; the two after it queue meanwhile and are the next group.
  assert.deepEqual(await Promise.all(['alone-0', 'alone-1', 'alone-2'].map((w) => db.writeBatched(oneInsert, w))), ['alone-0', 'alone-1', 'alone-2']);
  const [first, ...failing] = ['alone-3', 'alone-4', 'alone-1'].map((w) => db.writeBatched(oneInsert, w));
  assert.equal(await first, 'alone-3');
  for (const f of failing) await assert.rejects(f!, /UNIQUE/);
  const all = await logged();
  assert.deepEqual(all.slice(-4), ['alone-0', 'alone-1', 'alone-2', 'alone-3']);
  assert.ok(!all.includes('alone-4'), 'the failed statement left no row');
});

test('a one-statement batch refused by another process holding the write lock leaves the writer able to commit once the lock is gone', { timeout: 30_000 }, async () => {
  // SQLite leaves a statement stopped by SQLITE_BUSY resumable, so still counted as writing: until
  // reset, every SAVEPOINT of the connection failed with "cannot open savepoint - SQL statements
  // in progress", and the relay refused all mail long after the lock was released (a capture
  // refused during the lock, CI session 14).
  const holder = await openInspector(path.join(dir, 'raven.sqlite'));
  try {
    await holder.exec('BEGIN EXCLUSIVE');
    await assert.rejects(db.writeBatched(oneInsert, 'during-lock'), (error: unknown) => error instanceof StorageUnavailableError);
    await holder.exec('ROLLBACK');
  } finally {
    await holder.close();
  }
  await db.write(async (tx) => {
    await tx.run('INSERT INTO log (what) VALUES (?)', ['after-lock']);
  });
  assert.equal(await db.writeBatched(oneInsert, 'after-lock-alone'), 'after-lock-alone');
  const all = await logged();
  assert.deepEqual(all.slice(-2), ['after-lock', 'after-lock-alone']);
  assert.ok(!all.includes('during-lock'), 'the refused statement left no row');
});

test('a one-statement batch inside a group takes no savepoint: when it fails, the units before and after it still commit', async () => {
  // Without a savepoint of its own, a ROLLBACK TO after its failure would undo the unit before it.
  const inGroup: WriteBatch<string, string> = { ...oneInsert, ahead: false };
  const holder = heldWrite('g-held');
  await holder.inside;
  const before = db.write((tx) => tx.run("INSERT INTO log (what) VALUES ('g-before')"));
  const failing = Promise.allSettled(['g-fails', 'g-held'].map((w) => db.writeBatched(inGroup, w))); // g-held is logged already
  const after = db.write((tx) => tx.run("INSERT INTO log (what) VALUES ('g-after')"));
  holder.release();
  await Promise.all([holder.done, before, after]);
  for (const f of await failing) assert.match(f.status === 'rejected' ? String(f.reason) : 'fulfilled', /UNIQUE/);
  const all = await logged();
  assert.deepEqual(all.slice(-3), ['g-held', 'g-before', 'g-after']);
  assert.ok(!all.includes('g-fails'), 'the failed statement left no row');
  // Alone, the same batch commits by itself (a claim of the delivery worker).
  assert.equal(await db.writeBatched(inGroup, 'g-alone'), 'g-alone');
  assert.deepEqual((await logged()).slice(-1), ['g-alone']);
});

test('writes an admission was cut in front of once are not cut in front of again', async () => {
  const admissions = loggingBatch(true);
  const holder = heldWrite('h');
  await holder.inside;
  const first = heldWrite('o1');
  const second = heldWrite('o2');
  const third = db.write((tx) => tx.run("INSERT INTO log (what) VALUES ('o3')"));
  holder.release();
  await holder.done;
  await first.inside;
  const a1 = db.writeBatched(admissions, 'a1');
  first.release();
  await a1; // cut in after o1: o2 and o3 deferred
  await second.inside; // the next transaction starts with the deferred writes
  const a2 = db.writeBatched(admissions, 'a2');
  second.release();
  await Promise.all([a2, second.done, third]);
  assert.deepEqual((await logged()).slice(-6), ['h', 'o1', 'a1', 'o2', 'o3', 'a2']);
});

test('an admission that arrives while an admission group runs its statements joins it before its COMMIT', async () => {
  // The first item of this batch holds its transaction open until released; each item notes
  // whether the item before it was already committed (visible on the read connection) when it ran.
  let entered!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const seenCommitted = new Map<string, boolean>();
  const admissions: WriteBatch<string, string> = {
    ahead: true,
    async run(tx, items) {
      for (const what of items) {
        await tx.run('INSERT INTO log (what) VALUES (?)', [what]);
        seenCommitted.set(what, (await db.get("SELECT what FROM log WHERE what = 'join-1'")) !== undefined);
        if (what === 'join-1') {
          entered();
          await held;
        }
      }
      return items.map((value) => ({ status: 'fulfilled' as const, value }));
    },
  };
  const first = db.writeBatched(admissions, 'join-1');
  await inside;
  const second = db.writeBatched(admissions, 'join-2');
  release();
  assert.deepEqual(await Promise.all([first, second]), ['join-1', 'join-2']);
  assert.equal(seenCommitted.get('join-2'), false, 'join-2 ran in join-1\'s transaction, before its COMMIT');
  assert.deepEqual((await logged()).slice(-2), ['join-1', 'join-2']);
});

test('committed pages reach the database file from the checkpointer, with no COMMIT taking the WAL past a checkpoint bound', async () => {
  const file = path.join(dir, 'raven.sqlite');
  const { size: before } = await stat(file);
  // About 40 pages: far below the writer's own checkpoint bound (SQLite's default of 1,000 included).
  for (let i = 0; i < 10; i++) {
    await db.write(async (tx) => {
      await tx.run('INSERT INTO log (what) VALUES (?)', [`ckpt:${i}:${'x'.repeat(16_000)}`]);
    });
  }
  // Until the checkpointer has copied them into the file (it runs shortly after the commits).
  const until = Date.now() + 10_000;
  // Every commit's pages, also those of commits that came while a checkpoint ran (the next one takes them).
  while ((await stat(file)).size <= before + 10 * 16_000 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  assert.ok((await stat(file)).size > before + 10 * 16_000, 'the database file holds the committed rows');
  assert.equal((await logged()).filter((w) => w.startsWith('ckpt:')).length, 10);
});

test('a unit that changes many pages keeps its savepoint journal in memory, and a failing unit still rolls back alone', { skip: process.platform !== 'linux' && 'reads /proc/self/fd' }, async () => {
  // SQLite spills a savepoint journal past 64 KiB to a temporary file (deleted on open: seen in
  // /proc/self/fd only), a write call for each page; the writer keeps it in memory instead.
  await db.write(async (tx) => {
    for (let i = 0; i < 40; i++) await tx.run('INSERT INTO log (what) VALUES (?)', [`journal:${i}:${'y'.repeat(3_000)}`]);
  });
  const tempFiles = async () => {
    const links = await Promise.all((await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
    return links.filter((l) => /etilqs_/.test(l));
  };
  let during: string[] = [];
  await db.write(async (tx) => {
    await tx.run("UPDATE log SET what = replace(what, 'journal:', 'journaled:') WHERE what LIKE 'journal:%'");
    during = await tempFiles();
  });
  assert.deepEqual(during, [], 'no temporary file held the savepoint journal');
  // The journal still undoes a failing unit of the same group, and only it.
  const failing = db.write(async (tx) => {
    await tx.run("UPDATE log SET what = replace(what, 'journaled:', 'undone:') WHERE what LIKE 'journaled:%'");
    await tx.run("INSERT INTO log (what) VALUES ('twice')");
    await tx.run("INSERT INTO log (what) VALUES ('twice')"); // UNIQUE
  });
  const next = db.write((tx) => tx.run("INSERT INTO log (what) VALUES ('after-journal')"));
  await assert.rejects(failing, /UNIQUE/);
  await next;
  const all = await logged();
  assert.equal(all.filter((w) => w.startsWith('journaled:')).length, 40);
  assert.ok(!all.some((w) => w.startsWith('undone:') || w === 'twice'), 'the failed unit changed nothing');
  assert.deepEqual(all.slice(-1), ['after-journal']);
});
