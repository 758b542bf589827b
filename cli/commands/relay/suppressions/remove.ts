/** ravenctl relay suppressions remove --workspace W --email E */
import type { Command } from 'commander';
import { adminAction } from '../../../admin.js';
import { chooseWorkspace } from '../../../relay-scope.js';

export function register(cmd: Command): void {
  cmd.option('--workspace <id>', 'workspace id, ws_... (default: the only workspace)').option('--email <address>', 'address to unblock');
  adminAction<{ workspace?: string; email?: string; adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay suppressions remove --workspace ws_... --email ada@example.test'] },
    async (ctx, admin, opts) => {
      const workspace = await chooseWorkspace(ctx, admin, opts.workspace);
      const email = await ctx.ask.text(opts.email, '--email', 'Address to unblock');
      await (await admin()).suppressions.delete(workspace, email);
      ctx.out.result({ email, removed: true }, () => `Removed suppression of ${email}`);
    },
  );
}
