// Domains connected to projects, their DNS records and DKIM keys.
import type { Domain } from 'raven-email-sdk';
import type { Queryable, Reader } from './db.js';
import { inTextPairs, inValues, type Read } from './rows.js';

export interface DomainRow {
  id: string;
  project_id: string;
  name: string;
  status: Domain['status'];
  dkim_selector: string;
  dkim_public_key: string | null;
  records_json: string;
  created_at: string;
  verified_at: string | null;
  last_checked_at: string | null;
}

/** A verified domain's DKIM key as delivery signs with it (the private key sealed). */
export interface DomainKeyRow {
  project_id: string;
  name: string;
  dkim_selector: string;
  dkim_private_key: string | null;
}

const COLUMNS = 'id, project_id, name, status, dkim_selector, dkim_public_key, records_json, created_at, verified_at, last_checked_at';

/**
 * `sealedPrivateKey` is the DKIM private key encrypted with the relay's secret key. False when the
 * project already has the name: the unique key decides, so concurrent requests (or relays) agree.
 */
export async function insertDomain(tx: Queryable, row: DomainRow, sealedPrivateKey: string): Promise<boolean> {
  const { changes } = await tx.run(
    `INSERT INTO domains (id, project_id, name, status, dkim_selector, dkim_public_key, dkim_private_key, records_json, created_at, verified_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (project_id, name) DO NOTHING`,
    [row.id, row.project_id, row.name, row.status, row.dkim_selector, row.dkim_public_key, sealedPrivateKey, row.records_json, row.created_at, row.verified_at],
  );
  return changes > 0;
}

export async function isDomainConnected(q: Reader, projectId: string, name: string): Promise<boolean> {
  return (await q.get<{ id: string }>('SELECT id FROM domains WHERE project_id = ? AND name = ?', [projectId, name])) !== undefined;
}

export function listDomains(q: Reader, projectId: string): Promise<DomainRow[]> {
  return q.all<DomainRow>(`SELECT ${COLUMNS} FROM domains WHERE project_id = ? ORDER BY created_at, id`, [projectId]);
}

export function getDomain(q: Reader, id: string): Promise<DomainRow | undefined> {
  return q.get<DomainRow>(`SELECT ${COLUMNS} FROM domains WHERE id = ?`, [id]);
}

/** Stores a DNS check's records; a verified check verifies the domain (kept at its first time). */
export async function recordDomainCheck(tx: Queryable, id: string, recordsJson: string, verified: boolean, now: string): Promise<void> {
  if (verified) {
    await tx.run(
      "UPDATE domains SET records_json = ?, last_checked_at = ?, status = 'verified', verified_at = COALESCE(verified_at, ?) WHERE id = ?",
      [recordsJson, now, now, id],
    );
  } else {
    await tx.run('UPDATE domains SET records_json = ?, last_checked_at = ? WHERE id = ?', [recordsJson, now, id]);
  }
}

/** The verified domain names of these projects. */
export function verifiedDomainsOf(q: Pick<Reader, 'dialect'>, projectIds: readonly string[]): Read<{ project_id: string; name: string }> {
  const where = inValues(q, 'project_id', projectIds);
  return { sql: `SELECT project_id, name FROM domains WHERE ${where.sql} AND status = 'verified'`, params: where.params, columns: ['project_id', 'name'] };
}

/** The verified ones of these (project, domain name) pairs, with their keys: by the unique (project_id, name) key. */
export function signingKeysOf(q: Pick<Reader, 'dialect' | 'all'>, pairs: ReadonlyArray<readonly [string, string]>): Promise<DomainKeyRow[]> {
  const distinct = [...new Map(pairs.map((p) => [JSON.stringify(p), p])).values()];
  if (distinct.length === 0) return Promise.resolve([]);
  const where = inTextPairs(q, ['project_id', 'name'], distinct);
  return q.all<DomainKeyRow>(
    `SELECT project_id, name, dkim_selector, dkim_private_key FROM domains WHERE ${where.sql} AND status = 'verified'`,
    where.params,
  );
}

/** The DNS records the relay gave every project that connected one of these domain names. */
export function recordsOfDomainsNamed(q: Reader, names: readonly string[]): Promise<Array<{ project_id: string; name: string; records_json: string }>> {
  const where = inValues(q, 'name', names);
  return q.all(`SELECT project_id, name, records_json FROM domains WHERE ${where.sql} ORDER BY created_at, id`, where.params);
}

/** Whether some project has connected the domain. */
export async function isDomainKnown(q: Reader, name: string): Promise<boolean> {
  return (await q.get('SELECT 1 AS found FROM domains WHERE name = ? LIMIT 1', [name])) !== undefined;
}

/** Pending domains last checked at or before `cutoff` (never checked first). */
export async function pendingDomainsCheckedBefore(q: Reader, cutoff: string, limit: number): Promise<string[]> {
  const rows = await q.all<{ id: string }>(
    `SELECT id FROM domains WHERE status = 'pending' AND (last_checked_at IS NULL OR last_checked_at <= ?)
      ORDER BY last_checked_at, id LIMIT ?`,
    [cutoff, limit],
  );
  return rows.map((r) => r.id);
}

/** How many domains are pending, and the oldest last check among them ('' for never checked). */
export function pendingDomainsSummary(q: Reader): Promise<{ pending: number; oldest: string | null } | undefined> {
  return q.get<{ pending: number; oldest: string | null }>(
    "SELECT COUNT(*) AS pending, MIN(COALESCE(last_checked_at, '')) AS oldest FROM domains WHERE status = 'pending'",
  );
}
