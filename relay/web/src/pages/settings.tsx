// The dashboard's operations (the specification's "done in a dashboard"), one page each.
import type { Tenancy } from '../tenancy';
import { ClockPage } from './clock';
import { DomainsPage } from './domains';
import { KeysPage } from './keys';
import { SuppressionsPage } from './suppressions';
import { UsagePage } from './usage';
import { WebhooksPage } from './webhooks';
import { WorkspacesPage } from './workspaces';

export const SETTINGS_PAGES = [
  { id: 'workspaces', label: 'Workspaces', Page: WorkspacesPage },
  { id: 'domains', label: 'Domains', Page: DomainsPage },
  { id: 'keys', label: 'API keys', Page: KeysPage },
  { id: 'webhooks', label: 'Webhooks', Page: WebhooksPage },
  { id: 'suppressions', label: 'Suppressions', Page: SuppressionsPage },
  { id: 'usage', label: 'Usage', Page: UsagePage },
  { id: 'clock', label: 'Test clock', Page: ClockPage },
] as const;

export function SettingsPage({ page, tenancy }: { page: string; tenancy: Tenancy }) {
  const found = SETTINGS_PAGES.find((p) => p.id === page);
  if (!found) return <p class="empty">No such page.</p>;
  return <found.Page tenancy={tenancy} />;
}
