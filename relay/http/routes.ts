// The whole route table, in one place.
import type { RelayServices } from '../services.js';
import { adminRoutes } from './admin.js';
import { adminEmailRoutes } from './admin-emails.js';
import { adminInboxRoutes } from './admin-inbox.js';
import { adminMessageRoutes } from './admin-messages.js';
import { adminSessionRoutes } from './admin-session.js';
import { dashboardRoutes } from './dashboard.js';
import { adminWebhookRoutes } from './admin-webhooks.js';
import { emailRoutes } from './emails.js';
import { opsRoutes } from './ops.js';
import type { Route } from './router.js';

export function buildRoutes(services: RelayServices): Route[] {
  return [...opsRoutes(services), ...emailRoutes(services), ...adminRoutes(services), ...adminWebhookRoutes(services), ...adminMessageRoutes(services),
    ...adminInboxRoutes(services), ...adminSessionRoutes(services), ...adminEmailRoutes(services), ...dashboardRoutes(services)];
}
