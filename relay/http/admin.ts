// /admin/v1: the dashboard's operations on tenancy, and the test clock.
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
import { adminBody, param as p } from './route-helpers.js';
import type { Handler } from './router.js';

export function adminHandlers(s: RelayServices) {
  const checkDns = createDnsChecker(s.config.dns.servers);
  const created = (body: unknown) => ({ status: 201, body });
  const ok = (body: unknown) => ({ status: 200, body });
  const noContent = () => ({ status: 204 });

  return {
    createWorkspace: async (ctx) => created(await createWorkspace(s, await adminBody(ctx))),
    listWorkspaces: async () => ok(await listWorkspaces(s)),
    activateWorkspace: async (ctx) => ok(await activateWorkspace(s, p(ctx, 'workspace_id'))),
    createProject: async (ctx) =>
      created(await createProject(s, p(ctx, 'workspace_id'), await adminBody(ctx))),
    listProjects: async (ctx) => ok(await listProjects(s, p(ctx, 'workspace_id'))),
    connectDomain: async (ctx) =>
      created(await connectDomain(s, p(ctx, 'project_id'), await adminBody(ctx))),
    listDomains: async (ctx) => ok(await listDomains(s, p(ctx, 'project_id'))),
    verifyDomain: async (ctx) =>
      ok(await verifyDomain(s, p(ctx, 'domain_id'), await adminBody(ctx), checkDns)),
    createKey: async (ctx) =>
      created(await createKey(s, p(ctx, 'project_id'), await adminBody(ctx))),
    listKeys: async (ctx) => ok(await listKeys(s, p(ctx, 'project_id'))),
    revokeKey: async (ctx) => {
      await revokeKey(s, p(ctx, 'key_id'));
      return noContent();
    },
    listSuppressions: async (ctx) =>
      ok(await listSuppressions(s, p(ctx, 'workspace_id'))),
    addSuppression: async (ctx) =>
      created(await addSuppression(s, p(ctx, 'workspace_id'), await adminBody(ctx))),
    removeSuppression: async (ctx) => {
      await removeSuppression(s, p(ctx, 'workspace_id'), p(ctx, 'email'));
      return noContent();
    },
    usage: async (ctx) => ok(await workspaceUsage(s, p(ctx, 'workspace_id'))),
    clock: async () => {
      requireTestClock(s);
      return ok(clockView(s));
    },
    advanceClock: async (ctx) => {
      requireTestClock(s);
      const body = await adminBody(ctx);
      const seconds = body.seconds;
      if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < 0) {
        throw validationError([{ field: 'seconds', message: 'must be a non-negative integer' }]);
      }
      // Every timestamp is ISO 8601 with a four-digit year: the clock may not pass the last one.
      if (s.clock.nowMs() + seconds * 1000 > LAST_TIMESTAMP_MS) {
        throw validationError([{ field: 'seconds', message: `must keep the clock before the year 10000 (at most ${Math.floor((LAST_TIMESTAMP_MS - s.clock.nowMs()) / 1000)} now)` }]);
      }
      // Added in the database, not to this relay's offset: relays sharing it advance one clock.
      const offsetMs = await s.db.write((tx) => addToSetting(tx, CLOCK_OFFSET_SETTING, seconds * 1000));
      s.clock.setOffset(offsetMs);
      return ok(clockView(s));
    },
  } satisfies Record<string, Handler>;
}

const LAST_TIMESTAMP_MS = Date.parse('9999-12-31T23:59:59.999Z');

function requireTestClock(s: RelayServices): void {
  if (!s.clock.adjustable) throw new ApiError('not_found', 'The test clock is only available when the relay runs with --test-clock.');
}

function clockView(s: RelayServices) {
  return { now: s.clock.iso(), unix: s.clock.unix() };
}
