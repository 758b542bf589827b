// The cached summary badges of captured mail's checks (migration 0018): read for a page of a list,
// written by relay/inbox/checks/summaries.ts, deleted with their message.
import type { Db, Queryable } from './db.js';
import { inValues, insertRows } from './rows.js';

export interface CheckSummaryRow {
  message_id: string;
  verdict: 'pass' | 'warnings' | 'fail';
  reasons: string[];
  checked_at: string;
}

/** The summaries of these messages computed under `rulesVersion`, by message id. */
export async function checkSummariesOf(db: Pick<Db, 'all' | 'dialect'>, ids: readonly string[], rulesVersion: number): Promise<Map<string, CheckSummaryRow>> {
  if (ids.length === 0) return new Map();
  const ofIds = inValues(db, 'message_id', ids);
  const rows = await db.all<{ message_id: string; verdict: CheckSummaryRow['verdict']; reasons_json: string; checked_at: string }>(
    `SELECT message_id, verdict, reasons_json, checked_at FROM message_check_summaries WHERE ${ofIds.sql} AND rules_version = ?`,
    [...ofIds.params, rulesVersion],
  );
  return new Map(rows.map((r) => [r.message_id, { message_id: r.message_id, verdict: r.verdict, reasons: JSON.parse(r.reasons_json) as string[], checked_at: r.checked_at }]));
}

/** Keeps each summary whose message still exists (a delete may have come first); a newer one replaces the old. */
export async function saveCheckSummaries(tx: Queryable, rows: readonly CheckSummaryRow[], rulesVersion: number): Promise<string[]> {
  if (rows.length === 0) return [];
  const ofIds = inValues(tx, 'id', rows.map((r) => r.message_id));
  const existing = await tx.all<{ id: string }>(`SELECT id FROM captured_messages WHERE ${ofIds.sql}`, ofIds.params);
  const kept = new Set(existing.map((r) => r.id));
  const values = rows
    .filter((r) => kept.has(r.message_id))
    .map((r) => ({ message_id: r.message_id, verdict: r.verdict, reasons_json: JSON.stringify(r.reasons), rules_version: rulesVersion, checked_at: r.checked_at }));
  await insertRows(
    tx,
    'message_check_summaries',
    ['message_id', 'verdict', 'reasons_json', 'rules_version', 'checked_at'],
    values,
    'ON CONFLICT (message_id) DO UPDATE SET verdict = excluded.verdict, reasons_json = excluded.reasons_json, rules_version = excluded.rules_version, checked_at = excluded.checked_at',
  );
  return values.map((v) => v.message_id);
}

/** With one captured message (storage/inbox.ts deleteCapturedMessage), or with them all. */
export async function deleteCheckSummaries(tx: Queryable, id?: string): Promise<void> {
  if (id === undefined) await tx.run('DELETE FROM message_check_summaries');
  else await tx.run('DELETE FROM message_check_summaries WHERE message_id = ?', [id]);
}
