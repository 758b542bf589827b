// /admin/v1: the dashboard's operations on tenancy, and the test clock.
import { asBody } from '../domain/admin-body.js';
import { createKey, listKeys, revokeKey } from '../domain/api-keys.js';
import { createDnsChecker } from '../domain/dns-check.js';
import { createProject, listProjects } from '../domain/projects.js';
import { workspaceUsage } from '../domain/quota.js';
import { connectDomain, listDomains, verifyDomain } from '../domain/sending-domains.js';
import { addSuppression, listSuppressions, removeSuppression } from '../domain/suppressions.js';
import { activateWorkspace, createWorkspace, listWorkspaces } from '../domain/workspaces.js';
import { ApiError, validationError } from '../errors.js';
import type { RelayServices } from '../services.js';
import { addToSetting, CLOCK_OFFSET_SETTING } from '../storage/settings.js';
import type { RequestContext } from './context.js';
import { adminRoute } from './route-helpers.js';
import type { Route } from './router.js';

const ADMIN_BODY_LIMIT = 64 * 1024;

/** Admin bodies are small JSON objects; an empty body counts as {}. */
async function adminBody(ctx: RequestContext): Promise<Record<string, unknown>> {
  const raw = await ctx.readBody(ADMIN_BODY_LIMIT);
  if (raw.length === 0) return {};
  return asBody(await ctx.readJson(ADMIN_BODY_LIMIT));
}

export function adminRoutes(s: RelayServices): Route[] {
  const checkDns = createDnsChecker(s.config.dns.servers);
  const p = (ctx: RequestContext, name: string) => ctx.params[name]!;
  const created = (body: unknown) => ({ status: 201, body });
  const ok = (body: unknown) => ({ status: 200, body });
  const noContent = () => ({ status: 204 });

  return [
    adminRoute(s, 'POST', '/admin/v1/workspaces', async (ctx) => created(await createWorkspace(s, await adminBody(ctx)))),
    adminRoute(s, 'GET', '/admin/v1/workspaces', async () => ok(await listWorkspaces(s))),
    adminRoute(s, 'POST', '/admin/v1/workspaces/:workspace_id/activate', async (ctx) => ok(await activateWorkspace(s, p(ctx, 'workspace_id')))),
    adminRoute(s, 'POST', '/admin/v1/workspaces/:workspace_id/projects', async (ctx) =>
      created(await createProject(s, p(ctx, 'workspace_id'), await adminBody(ctx))),
    ),
    adminRoute(s, 'GET', '/admin/v1/workspaces/:workspace_id/projects', async (ctx) => ok(await listProjects(s, p(ctx, 'workspace_id')))),
    adminRoute(s, 'POST', '/admin/v1/projects/:project_id/domains', async (ctx) =>
      created(await connectDomain(s, p(ctx, 'project_id'), await adminBody(ctx))),
    ),
    adminRoute(s, 'GET', '/admin/v1/projects/:project_id/domains', async (ctx) => ok(await listDomains(s, p(ctx, 'project_id')))),
    adminRoute(s, 'POST', '/admin/v1/domains/:domain_id/verify', async (ctx) =>
      ok(await verifyDomain(s, p(ctx, 'domain_id'), await adminBody(ctx), checkDns)),
    ),
    adminRoute(s, 'POST', '/admin/v1/projects/:project_id/keys', async (ctx) =>
      created(await createKey(s, p(ctx, 'project_id'), await adminBody(ctx))),
    ),
    adminRoute(s, 'GET', '/admin/v1/projects/:project_id/keys', async (ctx) => ok(await listKeys(s, p(ctx, 'project_id')))),
    adminRoute(s, 'DELETE', '/admin/v1/keys/:key_id', async (ctx) => {
      await revokeKey(s, p(ctx, 'key_id'));
      return noContent();
    }),
    adminRoute(s, 'GET', '/admin/v1/workspaces/:workspace_id/suppressions', async (ctx) =>
      ok(await listSuppressions(s, p(ctx, 'workspace_id'))),
    ),
    adminRoute(s, 'POST', '/admin/v1/workspaces/:workspace_id/suppressions', async (ctx) =>
      created(await addSuppression(s, p(ctx, 'workspace_id'), await adminBody(ctx))),
    ),
    adminRoute(s, 'DELETE', '/admin/v1/workspaces/:workspace_id/suppressions/:email', async (ctx) => {
      await removeSuppression(s, p(ctx, 'workspace_id'), p(ctx, 'email'));
      return noContent();
    }),
    adminRoute(s, 'GET', '/admin/v1/workspaces/:workspace_id/usage', async (ctx) => ok(await workspaceUsage(s, p(ctx, 'workspace_id')))),
    adminRoute(s, 'GET', '/admin/v1/clock', async () => {
      requireTestClock(s);
      return ok(clockView(s));
    }),
    adminRoute(s, 'POST', '/admin/v1/clock/advance', async (ctx) => {
      requireTestClock(s);
      const body = await adminBody(ctx);
      const seconds = body.seconds;
      if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < 0) {
        throw validationError([{ field: 'seconds', message: 'must be a non-negative integer' }]);
      }
      // Added in the database, not to this relay's offset: relays sharing it advance one clock.
      const offsetMs = await s.db.write((tx) => addToSetting(tx, CLOCK_OFFSET_SETTING, seconds * 1000));
      s.clock.setOffset(offsetMs);
      return ok(clockView(s));
    }),
  ];
}

function requireTestClock(s: RelayServices): void {
  if (!s.clock.adjustable) throw new ApiError('not_found', 'The test clock is only available when the relay runs with --test-clock.');
}

function clockView(s: RelayServices) {
  return { now: s.clock.iso(), unix: s.clock.unix() };
}
