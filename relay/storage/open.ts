// Which backend a relay stores into: SQLite in the data directory, or PostgreSQL when a
// postgres:// URL is configured (CONTRACT section 6).
import path from 'node:path';
import type { RelayConfig } from '../config.js';
import type { Logger } from '../log.js';
import { openDatabase, type Db } from './db.js';
import { openPostgres, type PostgresDb } from './postgres/db.js';

export type Storage = Db & { notifier?: PostgresDb['notifier'] };

export function openStorage(config: Pick<RelayConfig, 'dataDir' | 'database'>, log: Logger): Promise<Storage> {
  if (config.database === undefined) return openDatabase(path.join(config.dataDir, 'raven.sqlite'));
  return openPostgres({
    url: config.database,
    onError: (error) => log.warn('db', 'postgres connection lost', { error: error.message }),
  });
}
