/** ravenctl relay suppressions add --workspace W --email E: a manual block across the workspace. */
import type { Command } from 'commander';
import { adminAction, renderResource } from '../../../admin.js';
import { chooseWorkspace } from '../../../relay-scope.js';

export function register(cmd: Command): void {
  cmd.option('--workspace <id>', 'workspace id, ws_... (default: the only workspace)').option('--email <address>', 'address to block');
  adminAction<{ workspace?: string; email?: string; adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay suppressions add --workspace ws_... --email ada@example.test'] },
    async (ctx, admin, opts) => {
      const workspace = await chooseWorkspace(ctx, admin, opts.workspace);
      const email = await ctx.ask.text(opts.email, '--email', 'Address to suppress');
      const suppression = await (await admin()).suppressions.create(workspace, { email, reason: 'manual' });
      ctx.out.result(suppression, () => renderResource(suppression, ctx.out.paint));
    },
  );
}
