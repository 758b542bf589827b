// Small named values: the test clock's offset, and on PostgreSQL the relay secrets every relay on
// the database shares (admin token, secret key).
import type { Db, Queryable } from './db.js';

/** The test clock's offset in milliseconds (CONTRACT section 6: it survives a restart). */
export const CLOCK_OFFSET_SETTING = 'clock_offset_ms';

export function readSetting(db: Pick<Queryable, 'get'>, name: string): Promise<string | undefined> {
  return db.get<{ value: string }>('SELECT value FROM settings WHERE name = ?', [name]).then((row) => row?.value);
}

/**
 * Takes the test clock's offset as the database holds it (CONTRACT section 6: relays sharing a
 * database answer the same). Another relay's advance reaches this one over NOTIFY too, but a
 * request that follows the advance may arrive first: with --test-clock each request reads it. An
 * SQLite file has one relay, whose own advances set its clock: nothing to read there.
 */
export async function syncClockOffset(db: Pick<Queryable, 'get' | 'dialect'>, clock: { setOffset(offsetMs: number): void }): Promise<void> {
  if (db.dialect === 'sqlite') return;
  clock.setOffset(Number((await readSetting(db, CLOCK_OFFSET_SETTING)) ?? 0));
}

/**
 * The setting's value, storing `make()` first when it has none. `created` says whether this call
 * stored it: of relays starting together on one database exactly one creates it.
 */
export async function readOrCreateSetting(db: Db, name: string, make: () => string): Promise<{ value: string; created: boolean }> {
  const existing = await readSetting(db, name);
  if (existing !== undefined) return { value: existing, created: false };
  const candidate = make();
  return db.write(async (tx) => {
    const inserted = await tx.run('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING', [name, candidate]);
    if (inserted.changes > 0) return { value: candidate, created: true };
    return { value: (await readSetting(tx, name))!, created: false };
  });
}

/** Adds delta to an integer setting (0 when absent) and returns the new value, atomically. */
export async function addToSetting(tx: Queryable, name: string, delta: number): Promise<number> {
  await tx.lock(`setting:${name}`);
  const next = Number((await readSetting(tx, name)) ?? 0) + delta;
  await tx.run('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value', [name, String(next)]);
  return next;
}

/**
 * Whether this relay bootstraps an empty database: relays starting together on one empty
 * PostgreSQL database, only the one that claims it; on SQLite (one relay per file) always.
 */
export async function claimBootstrap(db: Db, now: string): Promise<boolean> {
  return db.dialect !== 'postgres' || (await readOrCreateSetting(db, 'bootstrap_claimed_at', () => now)).created;
}
