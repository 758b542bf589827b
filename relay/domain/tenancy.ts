// The workspace usage view. The tenancy aggregates have a file each: workspaces.ts, projects.ts,
// sending-domains.ts (with DKIM keys and DNS records), api-keys.ts, suppressions.ts, first-run.ts.
import { utcMonth } from '../clock.js';
import type { RelayServices } from '../services.js';
import { keyUsageInWorkspace, usedInMonth, workspaceScope } from '../storage/usage.js';
import { findWorkspace } from './workspaces.js';

export async function usage(s: RelayServices, workspaceId: string) {
  await findWorkspace(s, workspaceId);
  const month = utcMonth(s.clock.nowMs());
  const [used, keyUsage] = await Promise.all([
    usedInMonth(s.db, workspaceScope(workspaceId), month),
    keyUsageInWorkspace(s.db, workspaceId, month),
  ]);
  return {
    month,
    workspace: { used, limit: s.config.limits.workspaceMonthlyRecipients },
    keys: keyUsage.map((k) => ({
      id: k.id,
      used: k.used,
      limit: k.prefix === 'rr_test_' ? s.config.limits.testKeyMonthlyRecipients : null,
    })),
  };
}
