/** ravenctl relay workspaces create --name N */
import type { Command } from 'commander';
import { adminAction, renderResource } from '../../../admin.js';

export function register(cmd: Command): void {
  cmd.option('--name <name>', 'workspace name');
  adminAction<{ name?: string; adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay workspaces create --name Acme', 'ravenctl relay workspaces create --name Acme --json'] },
    async (ctx, admin, opts) => {
      const name = await ctx.ask.text(opts.name, '--name', 'Workspace name');
      const workspace = await (await admin()).workspaces.create({ name });
      ctx.out.result(workspace, () => renderResource(workspace, ctx.out.paint));
    },
  );
}
