// The checks' summary badge of a captured message (pass, warnings, fail), as the inbox list shows
// it: computed by the relay in the background, so a row may have none yet and get it later over
// the inbox WebSocket ('checked' frames). Its reasons are the badge's tooltip.
import type { InboxEntry, Schemas } from './api';

type CheckSummary = Schemas['CheckSummary'];

const LABELS: Record<CheckSummary['verdict'], string> = { pass: 'pass', warnings: 'warnings', fail: 'fail' };

export function CheckBadge({ checks }: { checks: Pick<CheckSummary, 'verdict' | 'reasons'> | null | undefined }) {
  if (!checks) return null;
  const label = LABELS[checks.verdict];
  const why = checks.reasons.length > 0 ? checks.reasons.join('\n') : 'Every check that counts for the badge passed.';
  return (
    <span class={`badge badge-checks-${checks.verdict}`} data-checks={checks.verdict} title={`Checks: ${label}\n${why}`} aria-label={`Checks: ${label}`}>
      {label}
    </span>
  );
}

/**
 * The badges 'checked' frames brought, kept for the pages that load after them: a list's page
 * queues its messages, and a badge computed quickly may arrive before the page itself.
 */
export class SeenChecks {
  private readonly byId = new Map<string, CheckSummary>();

  /** Remembers a frame's badges; answers the rows with them applied. */
  add(rows: InboxEntry[], computed: Array<{ id: string; checks: CheckSummary }>): InboxEntry[] {
    for (const c of computed) this.byId.set(c.id, c.checks);
    return this.apply(rows);
  }

  /** The rows, each with the badge a frame brought when it has none. */
  apply(rows: InboxEntry[]): InboxEntry[] {
    return rows.some((r) => !r.checks && this.byId.has(r.id)) ? rows.map((r) => (!r.checks && this.byId.has(r.id) ? { ...r, checks: this.byId.get(r.id)! } : r)) : rows;
  }
}
