/** ravenctl relay projects list --workspace W */
import type { Command } from 'commander';
import { adminAction, renderList } from '../../../admin.js';
import { chooseWorkspace } from '../../../relay-scope.js';

export function register(cmd: Command): void {
  cmd.option('--workspace <id>', 'workspace id, ws_... (default: the only workspace)');
  adminAction<{ workspace?: string; adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay projects list --workspace ws_...'] },
    async (ctx, admin, opts) => {
      const workspace = await chooseWorkspace(ctx, admin, opts.workspace);
      const list = await (await admin()).projects.list(workspace);
      ctx.out.result(list, () =>
        renderList(
          list.projects,
          [
            { header: 'ID', value: (p) => p.id },
            { header: 'NAME', value: (p) => p.name },
            { header: 'ENVIRONMENT', value: (p) => p.environment },
            { header: 'CREATED', value: (p) => p.created_at },
          ],
          'No projects.',
          ctx.out.paint,
        ),
      );
    },
  );
}
