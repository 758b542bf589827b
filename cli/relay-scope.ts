/**
 * Which workspace or project an admin command acts on when no flag names one: the only one there
 * is (a fresh relay has one of each), else the person picks, else a usage error listing them.
 */
import type { RunContext } from './context.js';
import { UsageError } from './errors.js';

type AdminClient = Awaited<ReturnType<RunContext['admin']>>;

interface Scoped {
  id: string;
  name: string;
}

/** `named` is how the command takes an id (`--workspace`, or an argument such as `<id>`), for the usage error. */
export async function chooseWorkspace(
  ctx: RunContext,
  admin: () => Promise<AdminClient>,
  flag: string | undefined,
  named = '--workspace',
): Promise<string> {
  if (flag) return flag;
  const { workspaces } = await (await admin()).workspaces.list();
  return chooseOne(ctx, workspaces, named, 'workspace', 'ravenctl relay workspaces create --name NAME');
}

/** The project named by --project, else the only one (of --workspace's projects when given, else of every workspace). */
export async function chooseProject(
  ctx: RunContext,
  admin: () => Promise<AdminClient>,
  flag: string | undefined,
  workspaceFlag?: string,
): Promise<string> {
  if (flag) return flag;
  const client = await admin();
  const workspaces = workspaceFlag ? [{ id: workspaceFlag }] : (await client.workspaces.list()).workspaces;
  const projects: Scoped[] = [];
  for (const workspace of workspaces) projects.push(...(await client.projects.list(workspace.id)).projects);
  return chooseOne(ctx, projects, '--project', 'project', 'ravenctl relay projects create --name NAME');
}

async function chooseOne(ctx: RunContext, items: Scoped[], flag: string, noun: string, create: string): Promise<string> {
  if (items.length === 1) return items[0]!.id;
  if (items.length === 0) throw new UsageError(`the relay has no ${noun} yet: create one with ${create}`, 'missing_option');
  const labels = items.map((item) => `${item.id} (${item.name})`);
  if (!ctx.ask.interactive) {
    throw new UsageError(`the relay has ${items.length} ${noun}s: pass ${flag}, one of ${labels.join(', ')}`, 'missing_option');
  }
  const picked = await ctx.ask.select(undefined, flag, `Which ${noun}?`, labels);
  return items[labels.indexOf(picked)]!.id;
}
