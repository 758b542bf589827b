// What /readyz and /metrics ask the database: whether it answers, and row counts by state.
import type { Reader } from './db.js';

export async function ping(q: Reader): Promise<void> {
  await q.get('SELECT 1 AS ok');
}

export interface Gauges {
  jobs: Array<{ state: string; n: number }>;
  emails: Array<{ status: string; n: number }>;
  webhookDeliveries: Array<{ state: string; n: number }>;
  domains: Array<{ status: string; n: number }>;
}

// COUNT(*) comes back as a string from PostgreSQL (a bigint): every count goes through Number().
async function countBy<K extends string>(q: Reader, table: string, column: K): Promise<Array<Record<K, string> & { n: number }>> {
  const rows = await q.all<Record<K, string> & { n: number | string }>(`SELECT ${column}, COUNT(*) AS n FROM ${table} GROUP BY ${column}`);
  return rows.map((r) => ({ ...r, n: Number(r.n) }));
}

export async function gauges(q: Reader): Promise<Gauges> {
  const [jobs, emails, webhookDeliveries, domains] = await Promise.all([
    countBy(q, 'jobs', 'state'),
    countBy(q, 'emails', 'status'),
    countBy(q, 'webhook_deliveries', 'state'),
    countBy(q, 'domains', 'status'),
  ]);
  return { jobs, emails, webhookDeliveries, domains };
}
