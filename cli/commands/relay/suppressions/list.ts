/** ravenctl relay suppressions list --workspace W */
import type { Command } from 'commander';
import { adminAction, renderList } from '../../../admin.js';
import { chooseWorkspace } from '../../../relay-scope.js';

export function register(cmd: Command): void {
  cmd.option('--workspace <id>', 'workspace id, ws_... (default: the only workspace)');
  adminAction<{ workspace?: string; adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay suppressions list --workspace ws_...'] },
    async (ctx, admin, opts) => {
      const workspace = await chooseWorkspace(ctx, admin, opts.workspace);
      const list = await (await admin()).suppressions.list(workspace);
      ctx.out.result(list, () =>
        renderList(
          list.suppressions,
          [
            { header: 'EMAIL', value: (s) => s.email },
            { header: 'REASON', value: (s) => s.reason },
            { header: 'CREATED', value: (s) => s.created_at },
          ],
          'No suppressions.',
          ctx.out.paint,
        ),
      );
    },
  );
}
