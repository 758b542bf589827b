// The monthly quota (CONTRACT section 2, check 11): accepted recipients are counted per UTC month
// for the workspace and for the key; the workspace has a cap, and so does each development
// (rr_test_) key. A request that would pass a cap is refused whole with quota_exceeded until the
// next month starts. The counters' SQL lives in storage/usage.ts.
import { nextUtcMonthStart, utcMonth } from '../clock.js';
import type { LimitsConfig } from '../config.js';
import { ApiError } from '../errors.js';
import type { RelayServices } from '../services.js';
import { keyScope, keyUsageInWorkspace, usedInMonth, workspaceScope } from '../storage/usage.js';
import type { KeyPrincipal } from './auth.js';
import { findWorkspace } from './workspaces.js';

/** The counters a key's admissions are charged to: its workspace's and its own. */
export const chargedScopes = (key: Pick<KeyPrincipal, 'workspaceId' | 'keyId'>) => [workspaceScope(key.workspaceId), keyScope(key.keyId)];

/** A key's own monthly cap: development keys have one, live keys none (null). */
const keyMonthlyLimit = (limits: LimitsConfig, testMode: boolean) => (testMode ? limits.testKeyMonthlyRecipients : null);

/** This month's counts as an admission batch sees them, and the charges it will write with their caps. */
export interface QuotaCounts {
  used: Map<string, number>;
  charges: Map<string, number>;
  /** The cap of each charged scope (null: counted, not capped); storage refuses a charge past it. */
  caps: Map<string, number | null>;
}

/** Check 11: refuse the whole request if it would pass a monthly cap; otherwise charge it. */
export function chargeQuota(limits: LimitsConfig, counts: QuotaCounts, key: KeyPrincipal, recipients: number, nowMs: number): void {
  const caps: Array<{ scope: string; limit: number; label: string }> = [
    { scope: workspaceScope(key.workspaceId), limit: limits.workspaceMonthlyRecipients, label: 'workspace' },
  ];
  const keyLimit = keyMonthlyLimit(limits, key.testMode);
  if (keyLimit !== null) caps.push({ scope: keyScope(key.keyId), limit: keyLimit, label: 'development key' });
  for (const cap of caps) {
    const used = counts.used.get(cap.scope) ?? 0;
    if (used + recipients > cap.limit) {
      const resetMs = nextUtcMonthStart(nowMs);
      const retryAfter = Math.max(1, Math.ceil((resetMs - nowMs) / 1000));
      throw new ApiError(
        'quota_exceeded',
        `The monthly allowance of ${cap.limit} recipients for this ${cap.label} is used up (${used} used, ${recipients} requested); ` +
          `it resets at ${new Date(resetMs).toISOString()}, in ${retryAfter} seconds.`,
        { retryAfter },
      );
    }
  }
  // Live keys have no cap of their own, but their usage is still counted for the usage view.
  for (const scope of chargedScopes(key)) {
    counts.used.set(scope, (counts.used.get(scope) ?? 0) + recipients);
    counts.charges.set(scope, (counts.charges.get(scope) ?? 0) + recipients);
    counts.caps.set(scope, caps.find((c) => c.scope === scope)?.limit ?? null);
  }
}

/** GET /admin/v1/workspaces/{id}/usage: this month's counts and caps of the workspace and its keys. */
export async function workspaceUsage(s: RelayServices, workspaceId: string) {
  await findWorkspace(s, workspaceId);
  const month = utcMonth(s.clock.nowMs());
  const [used, keyUsage] = await Promise.all([
    usedInMonth(s.db, workspaceScope(workspaceId), month),
    keyUsageInWorkspace(s.db, workspaceId, month),
  ]);
  return {
    month,
    workspace: { used, limit: s.config.limits.workspaceMonthlyRecipients },
    keys: keyUsage.map((k) => ({ id: k.id, used: k.used, limit: keyMonthlyLimit(s.config.limits, k.prefix === 'rr_test_') })),
  };
}
