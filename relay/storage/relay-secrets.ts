// Where the relay's secrets (admin token, secret key) are kept: on PostgreSQL in `settings`, so
// every relay on the database answers the same; on SQLite as files in the data directory (mode
// 0600), next to the database they protect.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Db } from './db.js';
import { readOrCreateSetting } from './settings.js';

export interface Secret {
  value: string;
  /** True when this start made the value. */
  created: boolean;
  /** Writes a value made by this start to its file (mode 0600); does nothing for one read back or stored. */
  persist(): Promise<void>;
}

/** The file a secret is kept in, or null when the database keeps it. */
export function secretFile(db: Pick<Db, 'dialect'>, dataDir: string, name: string): string | null {
  return db.dialect === 'postgres' ? null : path.join(dataDir, name);
}

/**
 * The secret's value, or one made by `make`: stored at once in the database, or by persist() in
 * its file (a start that fails before it listens must not use up the one start that prints it).
 */
export async function readOrMakeSecret(db: Db, dataDir: string, name: string, make: () => string): Promise<Secret> {
  const file = secretFile(db, dataDir, name);
  if (file === null) return { ...(await readOrCreateSetting(db, name, make)), persist: async () => {} };
  try {
    return { value: (await readFile(file, 'utf8')).trim(), created: false, persist: async () => {} };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const value = make();
    return { value, created: true, persist: () => writeFile(file, `${value}\n`, { mode: 0o600, flag: 'wx' }) };
  }
}
