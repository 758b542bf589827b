// The note a project-scoped page shows until a project is picked (domains, keys, webhooks).
import type { Tenancy } from '../tenancy';

export function NeedsProject({ tenancy }: { tenancy: Tenancy }) {
  return tenancy.project ? null : <p class="empty">Pick or create a project first (Workspaces).</p>;
}
