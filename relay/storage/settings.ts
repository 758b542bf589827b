// Small named values that must survive a restart (the test clock's offset).
import type { Queryable, Reader } from './db.js';

const CLOCK_OFFSET = 'clock_offset_ms';

async function getSetting(q: Reader, name: string): Promise<string | undefined> {
  return (await q.get<{ value: string }>('SELECT value FROM settings WHERE name = ?', [name]))?.value;
}

async function putSetting(tx: Queryable, name: string, value: string): Promise<void> {
  await tx.run('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value', [name, value]);
}

/** The test clock's offset from real time in milliseconds (0 until it is advanced). */
export async function readClockOffsetMs(q: Reader): Promise<number> {
  return Number((await getSetting(q, CLOCK_OFFSET)) ?? 0);
}

export function storeClockOffsetMs(tx: Queryable, offsetMs: number): Promise<void> {
  return putSetting(tx, CLOCK_OFFSET, String(offsetMs));
}
