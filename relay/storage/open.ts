// Which backend a relay stores into: SQLite in the data directory, or PostgreSQL when a
// postgres:// URL is configured (CONTRACT section 6).
import path from 'node:path';
import type { RelayConfig } from '../config.js';
import type { Logger } from '../log.js';
import { openDatabase, type Db } from './db.js';

/**
 * How relays sharing one database reach each other (PostgreSQL's LISTEN/NOTIFY): publish sends a
 * JSON-serialisable message of any size, resolving false when it could not be sent (no
 * connection); the other relays' messages arrive as 'message', this relay's own do not.
 */
export interface RelayNotifier {
  publish(message: unknown): Promise<boolean>;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
}

/** A database, and its notifier when other relays may share it. */
export type Storage = Db & { notifier?: RelayNotifier };

export async function openStorage(config: Pick<RelayConfig, 'dataDir' | 'database'>, log: Logger): Promise<Storage> {
  if (config.database === undefined) return openDatabase(path.join(config.dataDir, 'raven.sqlite'));
  // Loaded only here: a relay on SQLite (the default) never loads pg.
  const { openPostgres } = await import('./postgres/db.js');
  return openPostgres({
    url: config.database,
    onError: (error) => log.warn('db', 'postgres connection lost', { error: error.message }),
  });
}
